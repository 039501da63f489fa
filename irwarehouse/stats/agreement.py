"""Agreement of two judgment sets (SPEC section 5): Cohen's and weighted kappa,
Krippendorff's alpha, their intervals over topics; competition ranks, Kendall's tau of
the top k, and the test of a group's mean against random groups.
"""

from __future__ import annotations


import numpy as np
from scipy import stats as _sps

from .correlations import _as_pair_of_vectors, kendall_tau
from .intervals import _check_level
from .pairs import _TIE_RTOL, _check_B, chunk_elements, rng_of

# --------------------------------------------------------------------------------------
# Agreement of two judgment sets (SPEC section 5)
# --------------------------------------------------------------------------------------

AGREEMENT_STATISTICS = ("agreement", "kappa", "kappa_linear", "kappa_quadratic",
                        "alpha_nominal", "alpha_ordinal")


def _alpha(O: np.ndarray, delta2: np.ndarray) -> np.ndarray:
    """Krippendorff's alpha from coincidence matrices ``O`` (..., K, K) and squared distances
    ``delta2`` (K x K, or broadcasting): 1 - (N - 1) sum O delta2 / sum n_c n_k delta2, N =
    sum O (every value pairable); NaN where the expected disagreement is 0."""
    n = O.sum(axis=-1)
    N = n.sum(axis=-1)
    observed = (O * delta2).sum(axis=(-2, -1))
    expected = (n[..., :, None] * n[..., None, :] * delta2).sum(axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(expected > 0, 1.0 - (N - 1.0) * observed / np.where(expected > 0, expected, 1.0),
                        np.nan)


def ordinal_distances(n: np.ndarray) -> np.ndarray:
    """Krippendorff's ordinal metric (2011) for the value counts ``n`` (..., K) of categories
    in their order: delta2[c, k] = (sum_{g=c..k} n_g - (n_c + n_k) / 2)^2, which equals
    (S_k - S_c + (n_c - n_k) / 2)^2 for either order of c and k (S the running sum of n)."""
    n = np.asarray(n, dtype=np.float64)
    S = np.cumsum(n, axis=-1)
    diff = S[..., None, :] - S[..., :, None] + (n[..., :, None] - n[..., None, :]) / 2.0
    return diff * diff


def agreement(C, grades, rel_level=1) -> dict:
    """Agreement of two judgment sets over the documents both judged, from confusion
    matrices ``C`` (..., K, K) of document counts: rows the first set's grade, columns the
    second's, both ``grades`` (K grades, ascending). Every statistic has the leading shape of
    C (one confusion matrix per topic, say, or per bootstrap sample):

    - ``both`` (n), ``relevant_a`` and ``relevant_b`` (grade >= rel_level in each set);
    - ``agreement``: the fraction of documents on whose binary label (grade >= rel_level)
      the sets agree (p_o);
    - ``kappa``: Cohen's kappa on the binary labels, (p_o - p_e) / (1 - p_e), p_e from the
      two marginals, computed in counts: (n O - S) / (n^2 - S), O the agreeing documents and
      S the sum over labels of the product of the two sets' counts;
    - ``kappa_linear`` and ``kappa_quadratic``: weighted kappa on the grades, 1 - n sum w C /
      sum w r c (r, c the marginals), with the disagreement weights |i - j| and (i - j)^2 of
      the grades i and j themselves;
    - ``alpha_nominal`` (binary labels) and ``alpha_ordinal`` (grades): Krippendorff's alpha
      for two coders and no missing values, from the coincidence matrix O = C + C^T of the
      2n pairable values (:func:`_alpha`); nominal on binary data it is
      1 - (2n - 1) (disagreeing documents) / (n_0 n_1).

    A statistic whose denominator is 0 (e.g. kappa when both sets give every document the
    same label) is NaN: undefined."""
    C = np.asarray(C, dtype=np.float64)
    g = np.asarray(grades, dtype=np.float64).ravel()
    if C.shape[-2:] != (g.size, g.size):
        raise ValueError(f"confusion matrices of shape {C.shape} do not match {g.size} grades")
    relevant = g >= rel_level
    M = np.stack([~relevant, relevant], axis=1).astype(np.float64)  # K x 2: grade -> label
    C2 = M.T @ C @ M  # (..., 2, 2): binary confusion
    n = C.sum(axis=(-2, -1))
    r2, c2 = C2.sum(axis=-1), C2.sum(axis=-2)
    agree = C2[..., 0, 0] + C2[..., 1, 1]
    S = (r2 * c2).sum(axis=-1)
    out = {"both": n, "relevant_a": r2[..., 1], "relevant_b": c2[..., 1]}
    with np.errstate(divide="ignore", invalid="ignore"):
        out["agreement"] = np.where(n > 0, agree / np.where(n > 0, n, 1.0), np.nan)
        denom = n * n - S
        out["kappa"] = np.where(denom > 0, (n * agree - S) / np.where(denom > 0, denom, 1.0), np.nan)
        r, c = C.sum(axis=-1), C.sum(axis=-2)
        expected = r[..., :, None] * c[..., None, :]
        for name, w in (("kappa_linear", np.abs(g[:, None] - g[None, :])),
                        ("kappa_quadratic", (g[:, None] - g[None, :]) ** 2)):
            e = (w * expected).sum(axis=(-2, -1))
            o = (w * C).sum(axis=(-2, -1))
            out[name] = np.where(e > 0, 1.0 - n * o / np.where(e > 0, e, 1.0), np.nan)
    O2 = C2 + np.swapaxes(C2, -1, -2)
    out["alpha_nominal"] = _alpha(O2, 1.0 - np.eye(2))
    O = C + np.swapaxes(C, -1, -2)
    out["alpha_ordinal"] = _alpha(O, ordinal_distances(O.sum(axis=-1)))
    return out


def agreement_intervals(C, grades, rel_level=1, B=1000, seed=0, level=0.95) -> dict:
    """Bootstrap percentile intervals over topics of the overall agreement statistics:
    ``C`` (topics, K, K) holds one confusion matrix per topic; sample b draws the topics
    with replacement (``rng.integers(0, T, size=(B, T))``, seeded), sums their matrices and
    computes :func:`agreement`. Returns {statistic: (low, high)} at ``level``, over the
    samples where the statistic is defined, with ``"defined"``: how many those are."""
    C = np.asarray(C, dtype=np.float64)
    if C.ndim != 3 or C.shape[0] < 1:
        raise ValueError(f"need confusion matrices of shape (topics, K, K), got {C.shape}")
    B = _check_B(B)
    level = _check_level(level)
    T = C.shape[0]
    idx = rng_of(seed).integers(0, T, size=(B, T))
    counts = np.bincount((idx + T * np.arange(B)[:, None]).ravel(), minlength=B * T).reshape(B, T)
    stats_b = agreement(np.tensordot(counts.astype(np.float64), C, axes=(1, 0)), grades, rel_level)
    out = {}
    for name in AGREEMENT_STATISTICS:
        values = stats_b[name]
        ok = ~np.isnan(values)
        if ok.any():
            low, high = np.quantile(values[ok], [(1.0 - level) / 2.0, (1.0 + level) / 2.0])
        else:
            low = high = np.nan
        out[name] = (float(low), float(high), int(ok.sum()))
    return out


def competition_ranks(X) -> np.ndarray:
    """Each item's rank by score, higher first, along the last axis: 1 + the number of
    items scoring strictly higher (ties share the better rank)."""
    X = np.asarray(X, dtype=np.float64)
    return (_sps.rankdata(-X, method="min", axis=-1)).astype(np.int64)


def kendall_tau_top(x, y, k) -> float:
    """Kendall's tau-b between x and y over the items x ranks within the top ``k`` (rank by
    :func:`competition_ranks`, so items tied at rank k all count); NaN with fewer than two."""
    x, y = _as_pair_of_vectors(x, y)
    keep = competition_ranks(x) <= int(k)
    if keep.sum() < 2:
        return float("nan")
    return kendall_tau(x[keep], y[keep], "b")


def group_mean_test(values, groups, B=10000, seed=0) -> dict:
    """Permutation test of the mean of each group of items against the means of random
    groups of the same size drawn from all items (without replacement).

    ``values`` (rows x items, e.g. measures x runs: rank shifts) and ``groups`` (one label
    per item). Sample b draws one uniform random permutation of the items
    (``argsort(rng.random(n))``, seeded, the same for every row), and the random group of
    size g is its first g items. Two-sided: with mu the mean over all items (the expected
    mean of a random group), p = #{|mean*_b - mu| >= |mean - mu|} / B (no +1 smoothing; the
    comparison is up to a relative 1e-9, as the other Monte Carlo tests). Returns ``labels``
    (the distinct groups, sorted), ``size``, ``mean`` and ``p`` (rows x groups), ``mu``."""
    V = np.atleast_2d(np.asarray(values, dtype=np.float64))
    labels_of = np.asarray(list(groups), dtype=object)
    if V.shape[1] != labels_of.size:
        raise ValueError(f"{labels_of.size} group labels for {V.shape[1]} items")
    if V.shape[1] < 2:
        raise ValueError(f"need at least two items, got {V.shape[1]}")
    if not np.isfinite(V).all():
        raise ValueError("values must be finite (no NaN or infinity)")
    B = _check_B(B)
    labels, code = np.unique(labels_of.astype(str), return_inverse=True)
    size = np.bincount(code, minlength=labels.size)
    sums = np.zeros((V.shape[0], labels.size))
    np.add.at(sums.T, code, V.T)
    mean = sums / size
    mu = V.mean(axis=1, keepdims=True)
    scale = np.maximum(np.abs(V - mu).max(axis=1, keepdims=True), np.finfo(float).tiny)
    threshold = np.abs(mean - mu) - _TIE_RTOL * scale  # (rows, groups)
    rng = rng_of(seed)
    n = V.shape[1]
    hits = np.zeros(mean.shape, dtype=np.int64)
    chunk = int(max(1, min(B, chunk_elements() // max(1, n * V.shape[0]))))
    for s in range(0, B, chunk):
        e = min(B, s + chunk)
        perm = np.argsort(rng.random((e - s, n)), axis=1)
        running = np.cumsum(V[:, perm], axis=2)  # (rows, c, n): sums of the first g items
        null = running[:, :, size - 1] / size  # (rows, c, groups)
        hits += (np.abs(null - mu[:, :, None]) >= threshold[:, None, :]).sum(axis=1)
    return {"labels": list(labels), "size": size, "mean": mean, "p": hits / B, "mu": mu[:, 0]}
