"""The paired t-test and the Wilcoxon signed-rank test of every run pair.
"""

from __future__ import annotations


import numpy as np
from scipy import stats as _sps

from .intervals import _interval_extra, t_interval_of_pairs
from .pairs import (
    PairResult, _as_matrix, _check_alpha, _is_zero_sd, _pairs, _result, chunk_elements,
    pair_indices, pair_moments,
)

# --------------------------------------------------------------------------------------
# Paired t-test
# --------------------------------------------------------------------------------------


def paired_t(X, alpha=None, level=None) -> PairResult:
    """Two-tailed paired t-test of every run pair over the topics.

    Zero-variance pairs are undefined (stat and p NaN).  Elsewhere the p-values equal
    ``scipy.stats.ttest_rel(X[i], X[j])``.  With ``level`` (or ``alpha``: the level
    ``1 - alpha``), ``extra`` also holds the t-interval of each mean difference at that
    level (``ci_low``, ``ci_high``; see :func:`t_interval_of_pairs`).
    """
    X = _as_matrix(X)
    n = X.shape[1]
    i, j = pair_indices(X.shape[0])
    mean, sd, undefined = pair_moments(X, i, j)
    se = np.where(undefined, np.nan, sd / np.sqrt(n))
    t = mean / se
    p = 2.0 * _sps.t.sf(np.abs(t), n - 1)
    extra = {"df": n - 1, "n_topics": n, "undefined": undefined, "sd": sd}
    if alpha is not None and level is None:
        level = 1.0 - _check_alpha(alpha)
        extra["alpha"] = 1.0 - level
    if level is not None:
        extra.update(_interval_extra(level, *t_interval_of_pairs(mean, sd, n, level, undefined)))
    return _result(i, j, X, mean, t, p, "paired_t", extra)


# --------------------------------------------------------------------------------------
# Wilcoxon signed-rank test
# --------------------------------------------------------------------------------------


def _wilcoxon_exact_permutation(D: np.ndarray):
    """Two-sided Wilcoxon test by enumerating all 2^n sign flips (small n, ties allowed).

    Reproduces ``scipy.stats.wilcoxon(..., method=PermutationMethod())`` when 2^n is at most
    its 9,999 resamples (an exact test): zero differences are dropped from the ranking
    (zero_method='wilcox'), the null distribution of W+ = sum of the mid-ranks of |d| over
    positive d is taken over every sign vector, and p = 2 min(P(W+ <= w), P(W+ >= w)),
    capped at 1, with scipy's relative tolerance of 100 eps on the comparisons.
    """
    n_pairs, n = D.shape
    nonzero = D != 0
    ranks = _sps.rankdata(np.where(nonzero, np.abs(D), np.nan), axis=1, nan_policy="omit")
    ranks = np.where(nonzero, ranks, 0.0)
    total = ranks.sum(axis=1)
    signed = ranks * np.sign(D)  # (pairs, n)
    observed = np.sum(ranks * (D > 0), axis=1)
    # Every sign vector: W+(s) = (sum of ranks + sum_t s_t sign(d_t) rank_t) / 2.
    signs = 1.0 - 2.0 * ((np.arange(2**n)[:, None] >> np.arange(n)) & 1)  # (2^n, n)
    gamma = 100 * np.finfo(float).eps * np.abs(observed)
    n_le = np.empty(n_pairs, dtype=np.int64)
    n_ge = np.empty(n_pairs, dtype=np.int64)
    step = max(1, chunk_elements() // signs.shape[0])
    for s in range(0, n_pairs, step):
        sl = slice(s, s + step)
        null = (total[sl] + signs @ signed[sl].T) / 2.0  # (2^n, chunk)
        n_le[sl] = np.sum(null <= (observed[sl] + gamma[sl]), axis=0)
        n_ge[sl] = np.sum(null >= (observed[sl] - gamma[sl]), axis=0)
    p = np.clip(2.0 * np.minimum(n_le, n_ge) / signs.shape[0], 0.0, 1.0)
    return np.minimum(observed, total - observed), p


def wilcoxon(X, level=None) -> PairResult:
    """Two-sided Wilcoxon signed-rank test (zero_method='wilcox') of every pair.

    Results equal ``scipy.stats.wilcoxon(X[i], X[j])`` pair by pair.  scipy's default
    ``method='auto'`` picks, *per sample*: the exact distribution when n <= 50 and there are
    no zero or tied differences; otherwise an exact permutation distribution when n <= 13,
    and the normal approximation (tie-corrected, no continuity correction) beyond.  Called on
    a whole (pairs, topics) array scipy would make that choice once for the array, so the
    pairs are grouped by the choice scipy makes for each of them and each group is tested
    with the method made explicit: scipy (vectorized over the group) for the exact and normal
    methods, a vectorized enumeration of the 2^n sign flips for the permutation case.
    ``stat`` is scipy's statistic, min(W+, W-).  Pairs whose differences are all zero are
    undefined.  With ``level``, ``extra`` holds the t-interval of each mean difference
    (:func:`t_interval_of_pairs`): the test's own interval is of the pseudo-median, not of
    the mean.
    """
    X = _as_matrix(X)
    n = X.shape[1]
    i, j, D, scale = _pairs(X)
    n_pairs = len(i)
    stat = np.full(n_pairs, np.nan)
    p = np.full(n_pairs, np.nan)

    all_zero = ~(D != 0).any(axis=1)
    has_zero = (D == 0).any(axis=1)
    A = np.sort(np.abs(D), axis=1)
    # Ties among the non-zero |d| (zeros already send the pair to the non-exact methods).
    has_tie = ((A[:, 1:] == A[:, :-1]) & (A[:, 1:] != 0)).any(axis=1)
    irregular = has_zero | has_tie
    if n > 50:
        groups = {"asymptotic": ~all_zero}
    else:
        groups = {
            "exact": ~irregular,
            "permutation" if n <= 13 else "asymptotic": irregular & ~all_zero,
        }
    for method, mask in groups.items():
        rows = np.flatnonzero(mask)
        if rows.size == 0:
            continue
        if method == "permutation":
            # scipy's permutation_test is not vectorized for this statistic (seconds per
            # pair); the same exact enumeration, done as a matrix product:
            stat[rows], p[rows] = _wilcoxon_exact_permutation(D[rows])
        else:
            res = _sps.wilcoxon(D[rows], axis=1, method=method)
            stat[rows], p[rows] = res.statistic, res.pvalue
    extra = {"n_topics": n, "undefined": all_zero}
    mean = D.mean(axis=1)
    if level is not None:
        sd = D.std(axis=1, ddof=1)
        extra.update(_interval_extra(level, *t_interval_of_pairs(mean, sd, n, level,
                                                                _is_zero_sd(sd, scale))))
    return _result(i, j, X, mean, stat, p, "wilcoxon", extra)
