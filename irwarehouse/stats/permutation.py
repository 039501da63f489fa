"""The randomization (sign-flip permutation) test and the randomized Tukey HSD test
(Carterette 2012) of every run pair.
"""

from __future__ import annotations


import numpy as np

from .intervals import _interval_extra, _kth_of
from .pairs import (
    PairResult, Progress, _TIE_RTOL, _as_matrix, _check_B, _chunk_size, _pairs, _result,
    chunk_elements, pair_indices, rng_of,
)

# --------------------------------------------------------------------------------------
# Randomization (sign-flip permutation) test
# --------------------------------------------------------------------------------------


def randomization(X, B=10000, seed=0, progress: Progress = None, level=None) -> PairResult:
    """Paired randomization test: under the null each topic's difference is equally likely
    to have either sign.  ``stat`` = mean difference; ``p`` = #{|mean*_b| >= |mean|} / B
    (no +1 smoothing; a p of 0 means below 1/B).  Defined for every pair.

    With ``level``, ``extra`` holds the test's inverted interval (``ci_low``, ``ci_high``):
    the shifts delta whose test (of the differences d - delta, with the same B sign vectors)
    gives p >= 1 - level.  Replicate b flips signs s_b; with a_b = s_b . d / n,
    c_b = sum(s_b) / n and e_b = a_b - mean c_b (the flipped centred differences), it counts
    at delta when |a_b - delta c_b| >= |mean - delta|: a concave quadratic inequality in
    delta that holds on [mean - |e_b| / (1 - sgn(e_b) c_b), mean + |e_b| / (1 + sgn(e_b) c_b)]
    (all of the line when every sign is equal).  So the interval is exact in closed form:
    mean minus / plus the k-th largest of those half-widths, k = ceil((1 - level) B) -- no
    search.  It excludes 0 exactly when p < 1 - level (up to the tie tolerance).

    The pairs are processed in blocks, each against all B sign vectors at once (one matrix
    product), so memory stays flat in the number of pairs; ``progress(done, total)`` counts
    pairs.
    """
    X = _as_matrix(X)
    B = _check_B(B)
    n = X.shape[1]
    i, j = pair_indices(X.shape[0])
    n_pairs = len(i)
    rng = rng_of(seed)
    signs = 1.0 - 2.0 * rng.integers(0, 2, size=(B, n))  # (B, n) of +1 / -1
    ST = np.ascontiguousarray(signs.T)  # (n, B)
    c = signs.sum(axis=1) / n  # (B,)
    k = None if level is None else _kth_of(level, B)
    obs = np.empty(n_pairs)
    hits = np.empty(n_pairs, dtype=np.int64)
    low = np.empty(n_pairs) if k else None
    high = np.empty(n_pairs) if k else None
    step = max(1, chunk_elements() // B)
    rows = min(step, n_pairs)
    # the (block, B) arrays, allocated once: a new array of this size per block would cost
    # fresh pages each time
    work = [np.empty((rows, B)) for _ in range(3 if k else 2)]
    mask = np.empty((rows, B), dtype=bool)
    report = max(step, n_pairs // 200)
    for s in range(0, n_pairs, step):
        e = min(n_pairs, s + step)
        D = X[i[s:e]] - X[j[s:e]]
        m = D.mean(axis=1)
        obs[s:e] = m
        # Tolerance in the statistic's own units: its largest possible value is mean(|d|).
        threshold = np.abs(m) - _TIE_RTOL * np.abs(D).mean(axis=1)
        null, scratch, *more = (w[:e - s] for w in work)
        np.matmul(D, ST, out=null)
        null /= n  # (block, B): a_b
        np.abs(null, out=scratch)
        hits[s:e] = np.count_nonzero(np.greater_equal(scratch, threshold[:, None], out=mask[:e - s]), axis=1)
        if k:
            low[s:e], high[s:e] = _randomization_interval(null, m, c, k, scratch, more[0])
        if progress is not None and (e == n_pairs or e // report != s // report):
            progress(e, n_pairs)
    extra = {"B": B, "seed": seed, "n_topics": n}
    if k:
        extra.update(_interval_extra(level, low, high))
    return _result(i, j, X, obs, obs, hits / B, "randomization", extra)


def _randomization_interval(null: np.ndarray, m: np.ndarray, c: np.ndarray, k: int,
                            P: np.ndarray, up: np.ndarray):
    """The randomization test's inverted interval of each row (see :func:`randomization`):
    ``null`` the (pairs, B) flipped means a_b (overwritten), ``m`` the pairs' means, ``c`` the
    sign vectors' means, k the rank of the endpoints; ``P`` and ``up`` work arrays of
    null's shape.

    With e_b = a_b - m c_b, P = e_b / (1 + c_b) and M = -e_b / (1 - c_b), the half-widths
    are |e_b| / (1 + sgn(e_b) c_b) = max(P, M) above the mean and |e_b| / (1 - sgn(e_b) c_b)
    = -min(P, M) below it; a replicate whose signs are all equal counts at every shift."""
    B = null.shape[1]
    whole = np.abs(c) >= 1.0
    with np.errstate(divide="ignore"):
        plus, minus = 1.0 / (1.0 + c), -1.0 / (1.0 - c)
    E = null
    np.multiply(m[:, None], c[None, :], out=P)
    E -= P
    with np.errstate(invalid="ignore"):  # 0 x inf where every sign is equal: set below
        np.multiply(E, plus, out=P)
        E *= minus  # M
        np.maximum(P, E, out=up)
        low = np.minimum(P, E, out=P)  # minus the half-widths below the mean
    if whole.any():
        up[:, whole] = np.inf
        low[:, whole] = -np.inf
    up.partition(B - k, axis=1)  # the k-th largest half-width above
    low.partition(k - 1, axis=1)  # the k-th largest below (the k-th smallest of its negative)
    return m + low[:, k - 1], m + up[:, B - k]


# --------------------------------------------------------------------------------------
# Randomized Tukey HSD (Carterette 2012)
# --------------------------------------------------------------------------------------


def tukey_hsd(X, B=10000, seed=0, progress: Progress = None, level=None) -> PairResult:
    """Randomized Tukey HSD over all runs at once.

    Replicate b permutes each topic's scores at random across the runs (independently per
    topic) and records the range max - min of the resulting run means.  A pair's p-value is
    the fraction of replicates whose range is >= the pair's observed |mean difference|, so
    one null distribution controls the family-wise error over all pairs.  ``stat`` is the
    signed mean difference; ``extra['null_range']`` holds the B sorted ranges.

    With ``level``, ``extra`` holds the simultaneous interval the test inverts
    (``ci_low``, ``ci_high``): diff -/+ the k-th largest null range, k =
    ceil((1 - level) B); over all pairs at once they cover the true differences with
    probability ``level`` (under exchangeability), and a pair's excludes 0 exactly when
    p < 1 - level (up to the tie tolerance).
    """
    X = _as_matrix(X)
    B = _check_B(B)
    n_runs, n = X.shape
    i, j, D, _ = _pairs(X)
    XT = X.T  # (topics, runs): row t holds topic t's scores across runs

    rng = rng_of(seed)
    ranges = np.empty(B)
    chunk = _chunk_size(n_runs * n, B)
    for s in range(0, B, chunk):
        e = min(B, s + chunk)
        keys = rng.random((e - s, n, n_runs))
        perm = np.argsort(keys, axis=2)  # a uniform random permutation per (replicate, topic)
        shuffled = np.take_along_axis(np.broadcast_to(XT, keys.shape), perm, axis=2)
        means = shuffled.mean(axis=1)  # (c, runs)
        ranges[s:e] = means.max(axis=1) - means.min(axis=1)
        if progress is not None:
            progress(e, B)
    ranges.sort()

    obs = D.mean(axis=1)
    tol = _TIE_RTOL * max(np.abs(X).max(), np.finfo(float).tiny)
    # Number of ranges >= |obs| (up to tol) via binary search in the sorted null.
    hits = B - np.searchsorted(ranges, np.abs(obs) - tol, side="left")
    extra = {"B": B, "seed": seed, "n_topics": n, "null_range": ranges}
    if level is not None:
        half = ranges[B - _kth_of(level, B)]
        extra.update(_interval_extra(level, obs - half, obs + half))
    return _result(i, j, X, obs, obs, hits / B, "tukey_hsd", extra)
