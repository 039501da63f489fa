"""Rank correlations of system orderings (Kendall's tau, tau_AP, RBO, Pearson), their
matrices over many orderings, and correlations of p-value orderings.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats as _sps

from .pairs import _p_of, chunk_elements, pair_indices

# --------------------------------------------------------------------------------------
# Rank correlations
# --------------------------------------------------------------------------------------


def _as_pair_of_vectors(x, y, min_len: int = 2):
    x = np.asarray(x, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    if x.shape != y.shape:
        raise ValueError(f"x and y must have the same length, got {x.size} and {y.size}")
    if x.size < min_len:
        raise ValueError(f"need at least {min_len} items, got {x.size}")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("scores must be finite (no NaN or infinity)")
    return x, y


def _cmp_sign(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """sign(a - b) as int8, broadcasting; exact (no subtraction)."""
    return (a > b).astype(np.int8) - (a < b).astype(np.int8)


def _tied_pairs(x: np.ndarray) -> int:
    _, counts = np.unique(x, return_counts=True)
    counts = counts.astype(np.int64)
    return int(np.sum(counts * (counts - 1) // 2))


def _inversions(v: np.ndarray) -> int:
    """The number of pairs i < j with v[i] > v[j] (v: integers >= 0), exactly."""
    return int(_earlier_greater(v).sum())


def _earlier_greater(V) -> np.ndarray:
    """For each row of V (rows x n, integers >= 0) and each position i of it: the number of
    positions j < i of the row with V[j] > V[i] -- exactly, in O(n log^2 n) per row: a
    bottom-up merge sort of all rows at once, one vectorized step per level.  At width w each
    row is sorted within blocks of w; each element of the right half of a 2w-block counts the
    elements of the left half above it (one ``searchsorted`` over all blocks of all rows,
    keys ``block * base + value``), then the 2w-blocks are sorted, each element keeping its
    original position (``ids``) so that its counts land there."""
    V = np.atleast_2d(np.asarray(V, dtype=np.int64))
    K, n = V.shape
    counts = np.zeros(K * n, dtype=np.int64)
    if n < 2 or K == 0:
        return counts.reshape(K, n)
    base = int(V.max()) + 1
    pos = np.tile(np.arange(n, dtype=np.int64), K)
    row = np.repeat(np.arange(K, dtype=np.int64), n)
    a = V.ravel().copy()
    ids = np.arange(K * n)
    w = 1
    while w < n:
        block = row * n + pos // (2 * w)  # increasing along the flattened rows
        right = (pos % (2 * w)) >= w
        key = block * base + a
        left_keys = key[~right]  # sorted: the left halves are sorted blocks, in block order
        block_end = np.searchsorted(left_keys, (block[right] + 1) * base, side="left")
        counts[ids[right]] += block_end - np.searchsorted(left_keys, key[right], side="right")
        order = np.argsort(key, kind="stable")  # the keys sorted stay grouped by block
        ids = ids[order]
        a = key[order] - block * base
        w *= 2
    return counts.reshape(K, n)


def _concordance(x: np.ndarray, y: np.ndarray) -> int:
    """S = (#concordant - #discordant) pairs, exactly, in O(n log^2 n) (Knight 1966): with
    the items sorted by (x, y), the discordant pairs are the inversions of y, and
    S = n0 - n1 - n2 + n3 - 2 #discordant (n1 / n2 pairs tied in x / y, n3 in both)."""
    _, rx = np.unique(x, return_inverse=True)
    _, ry = np.unique(y, return_inverse=True)
    order = np.lexsort((ry, rx))
    discordant = _inversions(ry[order])
    n0 = x.size * (x.size - 1) // 2
    both = _tied_pairs(rx.astype(np.int64) * (int(ry.max()) + 1) + ry)
    return n0 - _tied_pairs(x) - _tied_pairs(y) + both - 2 * discordant


def kendall_tau(x, y, variant="b") -> float:
    """Kendall's tau between two score vectors over the same items.

    tau-b = S / sqrt((n0 - n1)(n0 - n2)) and tau-a = S / n0 with S = concordant - discordant,
    n0 = n(n-1)/2, n1 / n2 the pairs tied in x / y.  NaN when tau-b's denominator is 0.
    """
    variant = str(variant).lower()
    if variant not in ("a", "b"):
        raise ValueError(f"variant must be 'a' or 'b', got {variant!r}")
    x, y = _as_pair_of_vectors(x, y)
    n0 = x.size * (x.size - 1) // 2
    S = _concordance(x, y)
    if variant == "a":
        return S / n0
    denom = (n0 - _tied_pairs(x)) * (n0 - _tied_pairs(y))
    if denom == 0:
        return float("nan")
    return float(S / np.sqrt(float(denom)))


def kendall_tau_many(A, b) -> np.ndarray:
    """Kendall's tau-b between each row of ``A`` (samples x systems) and the vector ``b``:
    sum(sign_a * sign_b) / sqrt(sum|sign_a| * sum|sign_b|) over system pairs i < j -- the
    same as ``scipy.stats.kendalltau`` (NaN when a ranking is all ties)."""
    A = np.atleast_2d(np.asarray(A, dtype=np.float64))
    b = np.asarray(b, dtype=np.float64).ravel()
    i, j = np.triu_indices(A.shape[1], k=1)
    sb = np.sign(b[i] - b[j])
    sa = np.sign(A[:, i] - A[:, j])
    with np.errstate(divide="ignore", invalid="ignore"):
        return (sa @ sb) / np.sqrt(np.abs(sa).sum(axis=1) * np.abs(sb).sum())


def tau_ap(x, y) -> float:
    """AP correlation tau_AP (Yilmaz, Aslam, Robertson 2008) of ranking y against the
    reference ranking x (both given as scores, higher = top).

    Without ties: walk down y's ranking; at position i >= 2, C(i) = number of the i - 1 items
    above it (in y) that x also ranks above it; tau_AP = 2/(N-1) sum_i C(i)/(i-1) - 1.

    Ties: the expected tau_AP when ties in x and in y are broken uniformly at random
    (independently).  Because C(i)/(i-1) has a fixed denominator the expectation is exact:
    an item above in y but tied with the item in x counts 1/2, and inside a tie group of y
    occupying positions s+1..s+g, E[C(i)] = mean over the group of the items' "correct above
    the group" counts + (i - s - 1)/2.  With ties in y only this equals Urbano & Marrero's
    tau_AP,a; identical rankings with ties give less than 1.
    """
    x, y = _as_pair_of_vectors(x, y)
    return float(tau_ap_many(x, y[None, :])[0])


def tau_ap_many(x, Y) -> np.ndarray:
    """:func:`tau_ap` of each row of ``Y`` (rows x items) against the reference scores ``x``,
    vectorized over the rows."""
    x = np.asarray(x, dtype=np.float64).ravel()
    Y = np.atleast_2d(np.asarray(Y, dtype=np.float64))
    K, N = Y.shape
    if N != x.size or N < 2:
        raise ValueError(f"tau_AP needs rankings of the same {x.size} >= 2 items, got {N}")
    if not (np.isfinite(x).all() and np.isfinite(Y).all()):
        raise ValueError("scores must be finite (no NaN or infinity)")
    # a[k, u] = sum over v strictly above u in Y[k] of [x_v > x_u] + 1/2 [x_v == x_u]
    #         = G + (A - G - L) / 2, with A the items strictly above u in Y[k] and G / L those
    # of them with x above / below x_u: each a count of earlier items in a sorted order
    # (Y descending; within ties of Y, x ascending for G, descending for L, so that no item
    # tied with u in Y is counted)
    rx = np.broadcast_to(np.unique(x, return_inverse=True)[1].astype(np.int64), (K, N))

    def earlier_above(ranks):  # items before u in the order (Y desc, ranks asc) ranked above u
        by = np.lexsort((ranks, -Y), axis=1)
        out = np.empty((K, N))
        np.put_along_axis(out, by, _earlier_greater(np.take_along_axis(ranks, by, axis=1)), axis=1)
        return out

    greater, less = earlier_above(rx), earlier_above(int(rx.max()) - rx)
    above_in_y = _sps.rankdata(-Y, method="min", axis=1) - 1.0
    a = greater + (above_in_y - greater - less) / 2.0
    # each row's ranking, with its tie groups: group id and start (items strictly above)
    order = np.argsort(-Y, axis=1, kind="stable")
    sv = np.take_along_axis(Y, order, axis=1)
    new = np.ones((K, N), dtype=bool)
    new[:, 1:] = sv[:, 1:] != sv[:, :-1]
    pos = np.arange(N)  # 0-based position k; (k) items above it
    gid = np.cumsum(new, axis=1) - 1 + (np.arange(K) * N)[:, None]  # ids unique over rows
    start = np.maximum.accumulate(np.where(new, pos, 0), axis=1)
    a_sorted = np.take_along_axis(a, order, axis=1)
    group_mean = (np.bincount(gid.ravel(), weights=a_sorted.ravel(), minlength=K * N)
                  / np.maximum(np.bincount(gid.ravel(), minlength=K * N), 1))
    expected_c = group_mean[gid] + (pos - start) / 2.0
    total = np.sum(expected_c[:, 1:] / pos[1:], axis=1)
    return 2.0 * total / (N - 1) - 1.0


def _prefix_membership(V: np.ndarray) -> np.ndarray:
    """For each row of V (rows x items, scores, higher = top): P(item u is in the top d)
    under uniformly random tie-breaking, as rows x items x depths d = 1..N."""
    V = np.atleast_2d(V)
    above = _sps.rankdata(-V, method="min", axis=1) - 1.0  # items strictly above u
    size = _sps.rankdata(-V, method="max", axis=1) - above  # u's tie group, u included
    depths = np.arange(1, V.shape[1] + 1, dtype=np.float64)
    return np.clip((depths[None, None, :] - above[:, :, None]) / size[:, :, None], 0.0, 1.0)


def rbo(x, y, p=0.9) -> float:
    """Rank-biased overlap, extrapolated (Webber, Moffat, Zobel 2010, eq. 32) of the two
    rankings of the same N items given by scores x and y (higher = top).

    For two full rankings of length N the overlap at depth N is N, and RBO_ext reduces to
    ``A_N p^N + (1-p)/p sum_{d=1}^N A_d p^d`` with A_d = X_d / d, X_d the size of the overlap
    of the two top-d prefixes.  Identical rankings give 1.  With ties, X_d is replaced by its
    expectation under uniformly random tie-breaking (independent in each list), i.e.
    sum_u P(u in x's top d) P(u in y's top d) (the expectation is exact since RBO is linear
    in X_d).
    """
    x, y = _as_pair_of_vectors(x, y, min_len=1)
    return float(rbo_many(x, y[None, :], p)[0])


def rbo_many(x, Y, p=0.9) -> np.ndarray:
    """:func:`rbo` of the reference scores ``x`` against each row of ``Y`` (rows x items),
    vectorized over the rows."""
    p = float(p)
    if not 0.0 < p < 1.0:
        raise ValueError(f"RBO persistence p must be strictly between 0 and 1, got {p}")
    x = np.asarray(x, dtype=np.float64).ravel()
    Y = np.atleast_2d(np.asarray(Y, dtype=np.float64))
    N = x.size
    if N < 1 or Y.shape[1] != N:
        raise ValueError(f"RBO needs rankings of the same {N} >= 1 items, got {Y.shape[1]}")
    px = _prefix_membership(x)[0]
    depths = np.arange(1, N + 1, dtype=np.float64)
    weights = p**depths
    out = np.empty(Y.shape[0])
    step = max(1, chunk_elements() // (N * N))
    for s in range(0, Y.shape[0], step):
        overlap = np.einsum("ud,kud->kd", px, _prefix_membership(Y[s : s + step]))
        agreement = overlap / depths
        out[s : s + step] = agreement[:, -1] * p**N + (1.0 - p) / p * np.sum(agreement * weights, axis=1)
    return out


def pearson(x, y) -> float:
    """Pearson's r of two score vectors; NaN when either is constant."""
    x, y = _as_pair_of_vectors(x, y)
    return float(_pearson_many(x, y[None, :])[0])


def _pearson_many(x: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Pearson's r of x and each row of Y; NaN where either is constant."""
    dx = x - x.mean()
    dY = Y - Y.mean(axis=1, keepdims=True)
    denom = np.sqrt(np.sum(dx * dx) * np.sum(dY * dY, axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.clip(np.sum(dx[None, :] * dY, axis=1) / denom, -1.0, 1.0)
    return np.where(denom == 0, np.nan, r)


def row_means(X) -> np.ndarray:
    """The mean of each row of X (runs x topics) as ``irw eval`` computes a run's mean: the
    exactly rounded sum (``math.fsum``) divided by n.  Runs whose scores have equal sums
    therefore get equal means whatever the order of the values -- the ties of grid-valued
    measures such as P@10 stay ties, where a floating-point sum in another order can split
    them by one unit in the last place and so change Kendall's tau."""
    X = np.atleast_2d(np.asarray(X, dtype=np.float64))
    return np.array([math.fsum(row) / row.size for row in X])


def rank_correlations(x, y, rbo_p=0.9) -> dict:
    """All correlations between two system orderings given as mean scores; x is the
    reference for tau_AP."""
    x, y = _as_pair_of_vectors(x, y)
    return {
        "kendall_tau": kendall_tau(x, y, "b"),
        "kendall_tau_a": kendall_tau(x, y, "a"),
        "tau_ap": tau_ap(x, y),
        "rbo": rbo(x, y, rbo_p),
        "pearson": pearson(x, y),
        "n_systems": int(x.size),
    }


def pvalue_order_tau(p_a, p_b) -> float:
    """Kendall's tau-b between two orderings of the same pairs by p-value (Webber et al.
    2010).  Pairs undefined (NaN) under either condition are left out; NaN if fewer than
    two pairs remain."""
    p_a = np.asarray(_p_of(p_a), dtype=np.float64).ravel()
    p_b = np.asarray(_p_of(p_b), dtype=np.float64).ravel()
    if p_a.shape != p_b.shape:
        raise ValueError(f"p-value arrays differ in length: {p_a.size} and {p_b.size}")
    keep = ~(np.isnan(p_a) | np.isnan(p_b))
    if keep.sum() < 2:
        return float("nan")
    return kendall_tau(p_a[keep], p_b[keep], "b")


def rank_correlation_matrix(M, rbo_p=0.9) -> dict:
    """:func:`rank_correlations` of every two rows of ``M`` (conditions x systems, mean
    scores): ``out[statistic][a, b]`` is the statistic of row a (the reference for tau_AP)
    against row b, for ``kendall_tau``, ``kendall_tau_a``, ``tau_ap``, ``rbo`` and
    ``pearson`` -- the same numbers, to the last bit.  Kendall's tau takes one product of
    the conditions' sign matrices over all system pairs; the others one call per
    reference row, vectorized over the rows it is compared with."""
    M = np.atleast_2d(np.asarray(M, dtype=np.float64))
    C, N = M.shape
    if N < 2:
        raise ValueError(f"need at least 2 systems, got {N}")
    if not np.isfinite(M).all():
        raise ValueError("scores must be finite (no NaN or infinity)")
    i, j = pair_indices(N)
    S = np.zeros((C, C))
    untied = np.zeros(C)
    step = max(1, chunk_elements() // C)
    for s in range(0, i.size, step):  # sums of integers: exact in float64
        G = _cmp_sign(M[:, i[s : s + step]], M[:, j[s : s + step]]).astype(np.float64)
        S += G @ G.T
        untied += np.abs(G).sum(axis=1)
    denom = np.outer(untied, untied)  # (n0 - n1)(n0 - n2) of kendall_tau
    with np.errstate(divide="ignore", invalid="ignore"):
        tau_b = np.where(denom == 0, np.nan, S / np.sqrt(denom))
    out = {"kendall_tau": tau_b, "kendall_tau_a": S / i.size,
           "tau_ap": np.empty((C, C)), "rbo": np.empty((C, C)), "pearson": np.empty((C, C))}
    for a in range(C):
        out["tau_ap"][a] = tau_ap_many(M[a], M)
        out["rbo"][a] = rbo_many(M[a], M, rbo_p)
        out["pearson"][a] = _pearson_many(M[a], M)
    return out


PVALUE_STATISTICS = ("kendall_tau", "kendall_tau_a", "tau_ap")


def pvalue_correlation_matrix(P, statistics=PVALUE_STATISTICS) -> tuple[dict, np.ndarray]:
    """Rank correlations between the orderings of the same items (run pairs) by p-value
    under every two conditions, the rows of ``P`` (conditions x run pairs, NaN = undefined):
    ``out[statistic][a, b]`` for ``kendall_tau`` (tau-b, :func:`pvalue_order_tau`),
    ``kendall_tau_a`` and ``tau_ap`` (row a the reference), each as :func:`kendall_tau` and
    :func:`tau_ap` define it for scores, over the items defined under both conditions (NaN
    if fewer than two).  An ordering puts the smallest p-value, the most significant pair,
    on top (tau_AP's weight; the tau are symmetric); ties are ties.  Also returned: the
    number of items defined under both conditions."""
    P = np.atleast_2d(np.asarray(P, dtype=np.float64))
    unknown = [x for x in statistics if x not in PVALUE_STATISTICS]
    if unknown:
        raise ValueError(f"unknown statistic {unknown[0]!r}; valid: {', '.join(PVALUE_STATISTICS)}")
    C = P.shape[0]
    defined = ~np.isnan(P)
    n = defined.astype(np.int64) @ defined.T.astype(np.int64)
    out = {name: np.full((C, C), np.nan) for name in statistics}
    for a in range(C):
        for b in range(a, C):
            keep = defined[a] & defined[b]
            if keep.sum() < 2:
                continue
            if "kendall_tau" in out:
                out["kendall_tau"][a, b] = out["kendall_tau"][b, a] = kendall_tau(P[a, keep], P[b, keep], "b")
            if "kendall_tau_a" in out:
                out["kendall_tau_a"][a, b] = out["kendall_tau_a"][b, a] = kendall_tau(P[a, keep], P[b, keep], "a")
        if "tau_ap" in out:  # against every row at once, per set of items defined under both
            masks, group = np.unique(defined & defined[a], axis=0, return_inverse=True)
            for g, keep in enumerate(masks):
                rows = np.flatnonzero(group.ravel() == g)
                if keep.sum() >= 2:
                    out["tau_ap"][a, rows] = tau_ap_many(-P[a, keep], -P[np.ix_(rows, keep)])
    return out, n
