"""Significance tests, multiple comparisons and rank correlations over score matrices.

Everything here works on a per-topic score matrix ``X`` of shape ``(n_runs, n_topics)``
(runs x topics, float64, the same topics for every run) and is vectorized over *all* run
pairs at once: 129 runs give 8,256 pairs, and no function loops over pairs in Python.
The randomization and Tukey tests loop over chunks of replicates, each chunk vectorized
over every pair, with the chunk size chosen so that working memory stays around a few
hundred MB; the bootstrap loops over blocks of pairs, each vectorized over all replicates,
so that its memory does not grow with the number of pairs (1,290 runs = 831,405 pairs).

Conventions (SPEC section 5)
----------------------------
Pairs
    ``pair_indices(n)`` lists the pairs ``i < j`` in row-major order (0,1), (0,2), ...,
    (1,2), ...  For every test, ``mean_diff = mean_t(X[i, t] - X[j, t])``: a positive
    difference favours run ``i``.

p-values
    All tests are two-tailed.  Monte Carlo p-values are the plain fraction
    ``#{null statistic >= observed} / B`` used by the SPEC (no ``+1`` smoothing), so a
    p-value of 0 means "below 1/B".  A null statistic counts as ``>=`` the observed one when
    it is larger or equal up to floating-point rounding (relative tolerance ``1e-9``): the
    same number computed along two summation orders must count as a tie.

Undefined pairs
    A pair whose per-topic differences have zero variance (all differences equal, up to
    rounding: standard deviation <= 1e-10 x the magnitude of the two runs' scores) has no
    t statistic.  For the paired t-test and the bootstrap such a pair is *undefined*: its
    statistic and p-value are NaN.  The Wilcoxon test is undefined when every difference is
    zero.  Undefined pairs are never significant (``NaN < alpha`` is False), are counted
    separately by ``discriminative_power`` and are left out of the family size of
    ``adjust``.  The randomization and Tukey tests are defined for every pair (a pair with
    identical scores gets p = 1).

Random numbers
    Every Monte Carlo test takes a ``seed`` and is deterministic given it
    (``numpy.random.default_rng(seed)``); results do not depend on the chunk size.
    - Bootstrap: all indices are drawn at once, ``rng.integers(0, n, size=(B, n))``;
      replicate ``b`` resamples topics ``idx[b]``, and *the same resampled topics are used
      for every pair* in replicate ``b`` (the standard paired-topic bootstrap over a
      matrix; it also makes the test a matrix product).
    - Randomization: ``rng.integers(0, 2, size=(B, n))``; replicate ``b`` flips the sign of
      topic ``t``'s difference when the draw is 1, for every pair at once.
    - Tukey HSD: replicate ``b`` draws ``rng.random((n, n_runs))`` (in replicate order) and
      topic ``t``'s scores are permuted across runs by ``argsort`` of row ``t``.

Bootstrap (Sakai 2006)
    ``z`` = per-topic differences, ``t(Z) = mean(z) / (sd(z) / sqrt(n))`` with ``sd`` using
    ``n - 1``; ``w = z - mean(z)``; ``t*_b`` is the same statistic on the resampled ``w``.
    A replicate whose resampled values are all equal (``sd*_b = 0`` up to rounding) gets
    ``t*_b = 0`` if its mean is 0 and ``t*_b = +/-inf`` otherwise (the limit of
    ``mean / (sd / sqrt(n))`` as ``sd -> 0``); such replicates occur when two runs differ on
    only a few topics.  The estimated difference required for significance at ``alpha`` is,
    per pair, ``|t*_b| * sd*_b / sqrt(n)`` (= ``|mean*_b|``) of the replicate whose ``|t*_b|``
    is the ``k``-th largest, ``k = max(1, round(B * alpha))``; among replicates whose
    ``|t*_b|`` are equal (up to the relative tolerance ``1e-9``, as for the p-value: on
    grid-valued scores such as P@10 many replicates tie in exact arithmetic) the one with
    the larger ``|mean*_b|`` ranks higher.

Rank correlations
    System orderings are by score, higher = better = top rank.  Kendall's tau-b (ties) and
    tau-a are computed exactly from concordant/discordant pair counts (tau-b equals
    ``scipy.stats.kendalltau``).  tau_AP and RBO are defined on strict rankings; with ties
    we report their *expected value when ties are broken uniformly at random*, independently
    in each list.  For tau_AP with ties only in the second list this is Urbano & Marrero's
    (2017) tau_AP,a; with no ties both reduce to the published definitions.  A consequence:
    two identical rankings *with ties* give tau_AP < 1 and RBO < 1 (tau-b gives 1).

Agreement of two judgment sets
    :func:`agreement` takes confusion matrices of document counts (any leading shape: one
    per topic, one per bootstrap sample) and gives Cohen's kappa on the binary labels,
    weighted kappa on the grades and Krippendorff's alpha (nominal, ordinal) for each at
    once; :func:`agreement_intervals` resamples topics; :func:`group_mean_test` tests the
    mean of each group of items (a team's rank shifts) against random groups of its size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd
from scipy import stats as _sps

from .errors import check_seed

__all__ = [
    "PairResult",
    "pair_indices",
    "paired_t",
    "paired_bootstrap",
    "estimated_difference_summary",
    "randomization",
    "wilcoxon",
    "tukey_hsd",
    "adjust",
    "discriminative_power",
    "compare_to_reference",
    "kendall_tau",
    "tau_ap",
    "rbo",
    "rbo_many",
    "pearson",
    "row_means",
    "rank_correlations",
    "rank_correlation_matrix",
    "tau_ap_many",
    "pvalue_order_tau",
    "pvalue_correlation_matrix",
    "kendall_tau_many",
    "mean_ci",
    "diff_ci",
    "agreement",
    "agreement_intervals",
    "ordinal_distances",
    "competition_ranks",
    "kendall_tau_top",
    "group_mean_test",
]

Progress = Callable[[int, int], None] | None

# A standard deviation at most this fraction of the scores' magnitude is zero: differences
# that are equal in exact arithmetic can differ by a few ulps once computed in floating point.
_ZERO_SD_RTOL = 1e-10
# Relative tolerance of the ">=" between a null statistic and the observed one.
_TIE_RTOL = 1e-9
# The one-pass variance used on the bootstrap fast path loses precision when the sum of
# squared deviations is a tiny fraction of the sum of squares (a nearly constant sample);
# such entries are recomputed exactly with the two-pass formula.
_CANCEL_RTOL = 1e-4
# Target number of float64 elements in one chunk's main working array (~8 MB each).
_CHUNK_ELEMENTS = 1 << 20


# --------------------------------------------------------------------------------------
# Result type
# --------------------------------------------------------------------------------------


@dataclass
class PairResult:
    """The outcome of a test over all run pairs ``(i[k], j[k])``.

    ``mean_diff[k] = mean(X[i[k]] - X[j[k]])``; ``stat`` is the test statistic (NaN when
    undefined); ``p`` the two-tailed p-value (NaN = undefined); ``means`` the run means (used
    by :meth:`to_frame`); ``extra`` test-specific arrays and parameters.
    """

    i: np.ndarray
    j: np.ndarray
    mean_diff: np.ndarray
    stat: np.ndarray
    p: np.ndarray
    test: str
    extra: dict = field(default_factory=dict)
    means: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.p)

    @property
    def n_runs(self) -> int:
        return 0 if self.means is None else len(self.means)

    def to_frame(self, run_ids, method: str | None = None) -> pd.DataFrame:
        """One row per pair: run_a, run_b, mean_a, mean_b, diff, statistic, p_value
        (and p_adjusted, adjusted over all pairs, when ``method`` is given)."""
        run_ids = np.asarray(list(run_ids), dtype=object)
        if self.means is None:
            raise ValueError("this PairResult carries no run means; cannot build a frame")
        if len(run_ids) != len(self.means):
            raise ValueError(
                f"got {len(run_ids)} run ids for a result over {len(self.means)} runs"
            )
        frame = pd.DataFrame(
            {
                "run_a": run_ids[self.i],
                "run_b": run_ids[self.j],
                "mean_a": self.means[self.i],
                "mean_b": self.means[self.j],
                "diff": self.mean_diff,
                "statistic": self.stat,
                "p_value": self.p,
            }
        )
        if method is not None:
            frame["p_adjusted"] = adjust(self.p, method)
        return frame


# --------------------------------------------------------------------------------------
# Input validation and shared helpers
# --------------------------------------------------------------------------------------



def rng_of(*seeds) -> "np.random.Generator":
    """``numpy.random.default_rng`` of the seed(s), each checked (an integer >= 0: a negative
    seed is an IrwError, not numpy's ValueError)."""
    checked = [check_seed(s) for s in seeds]
    return np.random.default_rng(checked[0] if len(checked) == 1 else checked)

def _as_matrix(X) -> np.ndarray:
    try:
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"score matrix is not numeric: {exc}") from None
    if X.ndim != 2:
        raise ValueError(
            f"score matrix must be 2-D (runs x topics), got shape {X.shape}"
        )
    n_runs, n_topics = X.shape
    if n_runs < 2:
        raise ValueError(f"need at least two runs to compare, got {n_runs}")
    if n_topics < 2:
        raise ValueError(f"need at least two topics per run, got {n_topics}")
    bad = ~np.isfinite(X)
    if bad.any():
        r, t = np.argwhere(bad)[0]
        what = "NaN" if np.isnan(X[r, t]) else "an infinite value"
        raise ValueError(
            f"score matrix holds {what} (first at run index {r}, topic index {t}; "
            f"{int(bad.sum())} in all); every run needs a score on every topic "
            "(a run that lacks a topic scores 0)"
        )
    return X


def _check_alpha(alpha, name: str = "alpha") -> float:
    alpha = float(alpha)
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"{name} must be strictly between 0 and 1, got {alpha}")
    return alpha


def _check_B(B) -> int:
    if isinstance(B, bool) or int(B) != B:
        raise ValueError(f"B must be an integer number of replicates, got {B!r}")
    B = int(B)
    if B < 100:
        raise ValueError(f"B must be at least 100 replicates, got {B}")
    return B


def pair_indices(n_runs) -> tuple[np.ndarray, np.ndarray]:
    """All pairs ``i < j`` of ``range(n_runs)`` in row-major order (0,1), (0,2), ..."""
    n_runs = int(n_runs)
    if n_runs < 0:
        raise ValueError(f"n_runs must be >= 0, got {n_runs}")
    i, j = np.triu_indices(n_runs, k=1)
    return i.astype(np.intp), j.astype(np.intp)


def _pairs(X: np.ndarray):
    """Pair indices, the (pairs, topics) difference matrix, and each pair's score magnitude."""
    i, j = pair_indices(X.shape[0])
    D = X[i] - X[j]
    absmax = np.abs(X).max(axis=1)
    scale = np.maximum(absmax[i], absmax[j])
    return i, j, D, scale


def _is_zero_sd(sd: np.ndarray, scale: np.ndarray) -> np.ndarray:
    return sd <= _ZERO_SD_RTOL * scale


def _chunk_size(n_pairs: int, B: int) -> int:
    return int(max(1, min(B, _CHUNK_ELEMENTS // max(1, n_pairs))))


def _result(i, j, X, mean_diff, stat, p, test, extra) -> PairResult:
    return PairResult(
        i=i,
        j=j,
        mean_diff=mean_diff,
        stat=np.asarray(stat, dtype=np.float64),
        p=np.asarray(p, dtype=np.float64),
        test=test,
        extra=extra,
        means=X.mean(axis=1),
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
# Paired bootstrap (Sakai 2006)
# --------------------------------------------------------------------------------------


def _replicate_counts(idx: np.ndarray, n: int) -> np.ndarray:
    """(B, n) matrix: how many times replicate b drew topic t."""
    B = idx.shape[0]
    flat = (idx + n * np.arange(B)[:, None]).ravel()
    return np.bincount(flat, minlength=B * n).reshape(B, n).astype(np.float64)


def _exact_moments(W, idx, rows, cols, n):
    """Two-pass mean and sum of squared deviations of the resampled values W[rows, idx[cols]].

    Used for the entries where the fast one-pass formula may have lost precision; processed in
    batches of entries (never per pair) to bound memory.
    """
    mean = np.empty(len(rows))
    ss = np.empty(len(rows))
    step = max(1, _CHUNK_ELEMENTS // (4 * n))
    for s in range(0, len(rows), step):
        r, c = rows[s : s + step], cols[s : s + step]
        G = W[r[:, None], idx[c]]  # (entries, n) resampled values
        m = G.mean(axis=1)
        mean[s : s + step] = m
        ss[s : s + step] = ((G - m[:, None]) ** 2).sum(axis=1)
    return mean, ss


def _t_of_r(r, n: int):
    """|t*| from r = S1^2 / S2 (see _bootstrap_block); r = n is a constant resample."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(r >= n, np.inf, np.sqrt((n - 1) * r / (n - r)))


def _r_of_t(t, n: int):
    """The inverse of _t_of_r."""
    with np.errstate(invalid="ignore"):
        return np.where(np.isinf(t), float(n), n * t * t / (n - 1 + t * t))


def _select_kth(r: np.ndarray, abs_mean: Callable[[np.ndarray, np.ndarray], np.ndarray],
                k: int, n: int, part: np.ndarray, mask: np.ndarray):
    """Per row of ``r`` (an increasing function of |t*|, see _bootstrap_block): the column
    of an entry holding its k-th largest value, and the column of the k-th replicate in
    the order of (|t*|, |mean*|), where |t*| equal up to the relative tolerance _TIE_RTOL
    are ties ranked by the larger ``abs_mean(rows, cols)`` (``part``, ``mask``: work arrays
    of r's shape)."""
    B = r.shape[1]
    np.copyto(part, r)
    part.partition(B - k, axis=1)
    kr = part[:, B - k].copy()  # the k-th largest value of each row
    np.equal(r, kr[:, None], out=mask)
    kth = np.argmax(mask, axis=1)
    chosen = kth.copy()
    kt = _t_of_r(kr, n)
    lo, hi = _r_of_t(kt * (1.0 - _TIE_RTOL), n), _r_of_t(kt * (1.0 + _TIE_RTOL), n)
    # rows where another replicate ties with the k-th: below it in the partition but >= lo,
    # or above it but <= hi
    tied_rows = np.flatnonzero((part[:, : B - k].max(axis=1, initial=-np.inf) >= lo)
                               | (part[:, B - k + 1 :].min(axis=1, initial=np.inf) <= hi))
    if tied_rows.size:
        sub = r[tied_rows]
        lo_, hi_ = lo[tied_rows, None], hi[tied_rows, None]
        above = np.count_nonzero(sub > hi_, axis=1)  # fewer than k
        rank = k - above  # the wanted replicate's rank among the tied (1 = largest |mean*|)
        cols = np.broadcast_to(np.arange(B), sub.shape)
        key = np.where((sub >= lo_) & (sub <= hi_),
                       abs_mean(np.broadcast_to(tied_rows[:, None], sub.shape), cols), -np.inf)
        order = np.argsort(-key, axis=1, kind="stable")
        chosen[tied_rows] = order[np.arange(tied_rows.size), rank - 1]
    return kth, chosen


class _Workspace:
    """The (pairs, B) arrays of one block, allocated once and reused by every block."""

    def __init__(self, pairs: int, B: int):
        self.arrays = [np.empty((pairs, B)) for _ in range(4)]
        self.mask = np.empty((pairs, B), dtype=bool)

    def views(self, pairs: int):
        return [a[:pairs] for a in self.arrays] + [self.mask[:pairs]]


def _bootstrap_block(W, sc, t_obs, idx, CT, k, work: _Workspace, percentiles=None):
    """Hits #{|t*_b| >= |t(Z)|} and the k-th largest (|t*|, |mean*|) of the pairs whose
    shifted differences are the rows of W, over all B replicates at once.

    With S1, S2 the resampled sums and sums of squares (two matrix products with the (n, B)
    replicate counts CT), m = S1 / n and ss = S2 - S1 m: |t*|^2 = (n - 1) r / (n - r) for
    r = S1^2 / S2, an increasing function of r. So the hits compare r with the threshold
    mapped the same way, the k-th largest |t*| is at the k-th largest r, and |t*| itself is
    computed for the selected replicate only. Entries where the one-pass variance could
    suffer cancellation (ss <= _CANCEL_RTOL S2, i.e. r close to n; or a sum of squares near
    the zero-variance tolerance) are computed exactly from the resampled values, with the
    module's rules for constant resamples.

    ``percentiles`` (:func:`_percentile_positions`): also the two percentiles of each row's
    resampled means of W (S1 / n), for the bootstrap percentile interval.
    """
    n = W.shape[1]
    sqrt_n = np.sqrt(n)
    S1, S2, r, part, mask = work.views(len(W))
    np.matmul(W, CT, out=S1)
    np.matmul(W * W, CT, out=S2)
    np.multiply(S1, S1, out=r)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.divide(r, S2, out=r)
    thr = np.abs(t_obs) * (1.0 - _TIE_RTOL)
    r_thr = _r_of_t(thr, n)  # |t*| >= thr  <=>  r >= r_thr

    near_n = n * (1.0 - _CANCEL_RTOL)
    tiny = (n - 1) * (100.0 * _ZERO_SD_RTOL * sc) ** 2 / _CANCEL_RTOL
    rough = np.flatnonzero((np.max(r, axis=1) >= near_n) | (np.min(S2, axis=1) <= tiny))
    np.greater_equal(r, r_thr[:, None], out=mask)
    hits = np.count_nonzero(mask, axis=1)
    # the exactly computed entries, by flat index row * B + col (ascending)
    ex_key, ex_t, ex_m = np.empty(0, dtype=np.intp), np.empty(0), np.empty(0)
    if rough.size:
        rows, cols = np.nonzero((r[rough] >= near_n) | (S2[rough] <= tiny[rough, None]))
        rows = rough[rows]
        m, ss = _exact_moments(W, idx, rows, cols, n)
        sd_star = np.sqrt(np.maximum(ss, 0.0) / (n - 1))
        const = _is_zero_sd(sd_star, sc[rows])  # resample with all values equal
        zero_mean = np.abs(m) <= _ZERO_SD_RTOL * sc[rows]
        with np.errstate(divide="ignore", invalid="ignore"):
            ex_t = np.abs(m) / (sd_star / sqrt_n)
        # Constant resample: t* = 0 if its mean is 0, else the limit +inf.
        ex_t = np.where(const, np.where(zero_mean, 0.0, np.inf), ex_t)
        ex_m = np.where(const & zero_mean, 0.0, np.abs(m))
        ex_key = rows * r.shape[1] + cols
        # their hits follow |t*| >= thr itself; their r is mapped back from |t*|
        np.add.at(hits, rows, (ex_t >= thr[rows]).astype(np.intp)
                  - (r[rows, cols] >= r_thr[rows]).astype(np.intp))
        r[rows, cols] = _r_of_t(ex_t, n)

    def exact_at(rows, cols):
        """Where (rows, cols) were computed exactly, and their index in ex_t / ex_m."""
        key = rows * r.shape[1] + cols
        pos = np.minimum(np.searchsorted(ex_key, key), max(0, ex_key.size - 1))
        found = (ex_key[pos] == key) if ex_key.size else np.zeros(key.shape, dtype=bool)
        return found, pos

    def abs_mean(rows, cols):
        found, pos = exact_at(rows, cols)
        return np.where(found, ex_m[pos] if ex_m.size else 0.0, np.abs(S1[rows, cols] / n))

    rows = np.arange(len(W))
    kth, chosen = _select_kth(r, abs_mean, k, n, part, mask)
    # |t*| of the replicate at the k-th largest r, in the one-pass form (or exactly)
    s1, s2 = S1[rows, kth], S2[rows, kth]
    m = s1 / n
    sd_star = np.sqrt(np.maximum(s2 - s1 * m, 0.0) / (n - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        kth_t = np.abs(m) / (sd_star / sqrt_n)
    found, pos = exact_at(rows, kth)
    if found.any():
        kth_t[found] = ex_t[pos[found]]
    kth_m = abs_mean(rows, chosen)
    if percentiles is None:
        return hits, kth_t, kth_m, None
    # the order statistics x[f], x[f + 1] of each end: a partition at the upper end's f, then
    # one of the values below it at the lower end's f + 1 (numpy partitions at one index
    # each far faster than at several at once); the outer ones are the largest below / the
    # smallest above
    (f_lo, w_lo), (f_hi, w_hi) = percentiles
    B = part.shape[1]
    np.copyto(part, S1)
    if f_lo + 1 < f_hi < B - 1:
        part.partition(f_hi, axis=1)
        hi_a, hi_b = part[:, f_hi], part[:, f_hi + 1:].min(axis=1)
        below = part[:, :f_hi]
        below.partition(f_lo + 1, axis=1)
        lo_a, lo_b = below[:, :f_lo + 1].max(axis=1), below[:, f_lo + 1]
    else:  # a level so low, or so few samples, that the ends meet
        part.sort(axis=1)
        lo_a, lo_b = part[:, f_lo], part[:, min(f_lo + 1, B - 1)]
        hi_a, hi_b = part[:, f_hi], part[:, min(f_hi + 1, B - 1)]
    return hits, kth_t, kth_m, [_lerp(lo_a, lo_b, w_lo) / n, _lerp(hi_a, hi_b, w_hi) / n]


def _percentile_positions(B: int, level: float) -> list[tuple[int, float]]:
    """Where the (1 - level)/2 and (1 + level)/2 quantiles of B sorted values lie, as numpy's
    default ('linear') quantile puts them: (index f, weight w) of x[f] + w (x[f + 1] - x[f])."""
    out = []
    for q in (0.5 - level / 2.0, 0.5 + level / 2.0):
        h = (B - 1) * q
        f = int(np.floor(h))
        out.append((f, h - f))
    return out


def _lerp(a, b, w):
    """a + w (b - a), as numpy's quantile computes it (from the nearer end)."""
    return np.where(w >= 0.5, b - (b - a) * (1.0 - w), a + (b - a) * w)


def paired_bootstrap(X, B=1000, seed=0, alpha=0.05, progress: Progress = None,
                     level=None) -> PairResult:
    """Sakai's (2006) paired bootstrap test over every run pair (see the module notes).

    ``stat`` = t(Z), ``p`` = #{|t*_b| >= |t(Z)|} / B; zero-variance pairs are undefined.
    ``extra['estimated_diff']``: per pair, the difference required for significance at
    ``alpha`` (NaN for undefined pairs); summarise with :func:`estimated_difference_summary`.
    ``extra['critical_t']``: the k-th largest |t*_b| itself (when B alpha is an integer, a
    pair has p < alpha exactly when |t(Z)| exceeds it).  With ``level``, ``extra`` holds the
    bootstrap percentile interval of each mean difference (``ci_low``, ``ci_high``): the
    (1 - level)/2 and (1 + level)/2 quantiles (numpy's default, linear) of the B resampled
    means of the differences themselves (not shifted), over the same resampled topic sets;
    a zero-variance pair's is [diff, diff].

    Implementation: with ``c[b, t]`` the number of times replicate ``b`` drew topic ``t``
    (drawn once, shared by every pair), the resampled sums and sums of squares of a block of
    pairs are two matrix products ``W @ c.T`` and ``W**2 @ c.T`` over all B replicates; the
    variance then follows from the one-pass formula. Entries where that formula could
    suffer cancellation (nearly constant resamples) are recomputed exactly with the
    two-pass formula. Pairs are processed in blocks of about ``_CHUNK_ELEMENTS / B``, so
    memory stays flat in the number of pairs; ``progress(done, total)`` counts pairs.
    """
    X = _as_matrix(X)
    B = _check_B(B)
    alpha = _check_alpha(alpha)
    n = X.shape[1]
    i, j = pair_indices(X.shape[0])
    n_pairs = len(i)
    absmax = np.abs(X).max(axis=1)
    sqrt_n = np.sqrt(n)

    rng = rng_of(seed)
    idx = rng.integers(0, n, size=(B, n))
    CT = np.ascontiguousarray(_replicate_counts(idx, n).T)  # (n, B)
    k = max(1, int(round(B * alpha)))

    mean_diff = np.empty(n_pairs)
    sd_diff = np.empty(n_pairs)
    t_obs = np.empty(n_pairs)
    undefined = np.empty(n_pairs, dtype=bool)
    p = np.full(n_pairs, np.nan)
    est = np.full(n_pairs, np.nan)
    critical = np.full(n_pairs, np.nan)
    percentiles = None if level is None else _percentile_positions(B, _check_level(level))
    low = high = None
    if percentiles:
        low, high = np.empty(n_pairs), np.empty(n_pairs)
    step = max(1, _CHUNK_ELEMENTS // B)
    work = _Workspace(min(step, n_pairs), B)
    report = max(step, n_pairs // 200)  # progress about 200 times at most
    for s in range(0, n_pairs, step):
        e = min(n_pairs, s + step)
        bi, bj = i[s:e], j[s:e]
        D = X[bi] - X[bj]
        scale = np.maximum(absmax[bi], absmax[bj])
        mean = D.mean(axis=1)
        sd = D.std(axis=1, ddof=1)
        und = _is_zero_sd(sd, scale)
        with np.errstate(divide="ignore", invalid="ignore"):
            t_obs[s:e] = np.where(und, np.nan, mean / (sd / sqrt_n))
        mean_diff[s:e] = mean
        sd_diff[s:e] = sd
        undefined[s:e] = und
        if percentiles:
            low[s:e], high[s:e] = mean, mean
        defined = np.flatnonzero(~und)
        if len(defined):
            W = D[defined] - mean[defined, None]  # shifted differences: the null holds
            hits, kth_t, kth_m, ends = _bootstrap_block(W, scale[defined], t_obs[s + defined], idx,
                                                        CT, k, work, percentiles)
            p[s + defined] = hits / B
            critical[s + defined] = kth_t
            est[s + defined] = kth_m
            if ends:
                low[s + defined] = mean[defined] + ends[0]
                high[s + defined] = mean[defined] + ends[1]
        if progress is not None and (e == n_pairs or e // report != s // report):
            progress(e, n_pairs)

    extra = {
        "B": B,
        "seed": seed,
        "alpha": alpha,
        "k": k,
        "n_topics": n,
        "undefined": undefined,
        "sd": sd_diff,
        "estimated_diff": est,
        "critical_t": critical,
    }
    if percentiles:
        extra.update(_interval_extra(level, low, high))
    return PairResult(i=i, j=j, mean_diff=mean_diff, stat=t_obs, p=p, test="bootstrap",
                      extra=extra, means=X.mean(axis=1))


def estimated_difference_summary(result: PairResult) -> dict:
    """Largest (Sakai's figure) and median estimated difference over the defined pairs."""
    if "estimated_diff" not in result.extra:
        raise ValueError(
            f"a {result.test!r} result has no estimated differences; "
            "use paired_bootstrap()"
        )
    est = np.asarray(result.extra["estimated_diff"], dtype=np.float64)
    defined = est[~np.isnan(est)]
    if defined.size == 0:
        return {"max": np.nan, "median": np.nan, "pairs": 0, "alpha": result.extra.get("alpha")}
    return {
        "max": float(defined.max()),
        "median": float(np.median(defined)),
        "pairs": int(defined.size),
        "alpha": result.extra.get("alpha"),
    }


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
    step = max(1, _CHUNK_ELEMENTS // B)
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
    step = max(1, _CHUNK_ELEMENTS // signs.shape[0])
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


# --------------------------------------------------------------------------------------
# Multiple comparisons
# --------------------------------------------------------------------------------------


def adjust(p, method) -> np.ndarray:
    """Adjusted p-values over the family of the given comparisons.

    ``method``: 'none', 'bonferroni' (min(1, m p)), 'holm' (step-down) or 'bh'
    (Benjamini-Hochberg step-up).  NaN (undefined) p-values stay NaN and are not counted in
    the family size m.  Any array shape is accepted and kept.
    """
    method = str(method).lower()
    methods = ("none", "bonferroni", "holm", "bh")
    if method not in methods:
        raise ValueError(f"unknown adjustment {method!r}; choose one of {', '.join(methods)}")
    p = np.asarray(p, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    flat = p.ravel()
    ok = ~np.isnan(flat)
    q = flat[ok]
    if np.any((q < 0) | (q > 1)):
        raise ValueError("p-values must lie in [0, 1] (or be NaN for undefined)")
    m = q.size
    if method == "none" or m == 0:
        res = q.copy()
    elif method == "bonferroni":
        res = np.minimum(1.0, q * m)
    else:
        order = np.argsort(q, kind="stable")
        ranked = q[order]
        rank = np.arange(1, m + 1)
        if method == "holm":
            # p_(k) -> max_{l <= k} min(1, (m - l + 1) p_(l))
            adj = np.maximum.accumulate(np.minimum(1.0, (m - rank + 1) * ranked))
        else:
            # p_(k) -> min_{l >= k} min(1, m p_(l) / l)
            adj = np.minimum.accumulate((m * ranked / rank)[::-1])[::-1]
            adj = np.minimum(1.0, adj)
        res = np.empty(m)
        res[order] = adj
    out_flat = out.ravel()
    out_flat[ok] = res
    return out_flat.reshape(p.shape)


# --------------------------------------------------------------------------------------
# Discriminative power and agreement with a reference
# --------------------------------------------------------------------------------------


def _p_of(result) -> np.ndarray:
    return np.asarray(result.p if isinstance(result, PairResult) else result, dtype=np.float64)


def discriminative_power(result: PairResult, alpha=0.05) -> dict:
    """Counts of significant (p < alpha), not significant and undefined pairs, and
    discriminative power = significant / pairs (undefined pairs count in the denominator)."""
    alpha = _check_alpha(alpha)
    p = _p_of(result)
    pairs = int(p.size)
    undefined = int(np.isnan(p).sum())
    significant = int(np.sum(p < alpha))
    return {
        "pairs": pairs,
        "significant": significant,
        "not_significant": pairs - significant - undefined,
        "undefined": undefined,
        "discriminative_power": significant / pairs if pairs else np.nan,
    }


def compare_to_reference(result: PairResult, reference: PairResult, alpha=0.05) -> dict:
    """Agreement of a test's significance decisions with a reference condition's.

    Over the same pairs: ``tp`` significant in both, same direction (sign of the mean
    difference); ``fp`` significant here but not in the reference, *or* significant in both
    but favouring different runs; ``fn`` significant in the reference only; ``tn``
    significant in neither.  ``misses = fn``, ``false_alarms = fp`` (``opposite`` counts the
    direction disagreements included in fp).  Undefined p-values count as not significant.
    """
    alpha = _check_alpha(alpha)
    if len(result) != len(reference) or not (
        np.array_equal(result.i, reference.i) and np.array_equal(result.j, reference.j)
    ):
        raise ValueError("result and reference must cover the same run pairs in the same order")
    sig = result.p < alpha
    sig_ref = reference.p < alpha
    same_dir = np.sign(result.mean_diff) == np.sign(reference.mean_diff)
    tp = int(np.sum(sig & sig_ref & same_dir))
    opposite = int(np.sum(sig & sig_ref & ~same_dir))
    fp = int(np.sum(sig & ~sig_ref)) + opposite
    fn = int(np.sum(~sig & sig_ref))
    tn = int(np.sum(~sig & ~sig_ref))
    return {
        "pairs": len(result),
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": tn,
        "misses": fn,
        "false_alarms": fp,
        "opposite": opposite,
        "significant": int(sig.sum()),
        "significant_reference": int(sig_ref.sum()),
    }


# --------------------------------------------------------------------------------------
# Groups of runs not significantly different (a compact letter display)
# --------------------------------------------------------------------------------------


def _split_groups(S: np.ndarray, max_groups: int) -> np.ndarray | None:
    """The maximal sets of runs no two of which are significantly different (the maximal
    cliques of the graph of not significantly different pairs), as rows of a boolean
    groups x runs matrix; None beyond ``max_groups`` sets.

    One group of all runs is split at each run ``i`` in turn: a group holding ``i`` and some
    run significantly different from it becomes the group without ``i`` and the group
    without ``i``'s significant partners. Every not significantly different pair stays in
    some group, and after run ``i``'s step no group holds ``i`` with such a partner. A new
    group contained in another is dropped (the groups untouched by a step cannot be: they
    were not contained in the groups it splits). One step per run, each vectorized over the
    groups."""
    n = S.shape[0]
    G = np.ones((1, n), dtype=bool)
    for i in range(n):
        hit = G[:, i] & (G & S[i]).any(axis=1)
        if not hit.any():
            continue
        without_i = G[hit].copy()
        without_i[:, i] = False
        new = np.unique(np.vstack([without_i, G[hit] & ~S[i]]), axis=0)
        kept = G[~hit]
        every = np.vstack([kept, new]).astype(np.int32)
        size = new.sum(axis=1)
        inside = new.astype(np.int32) @ every.T == size[:, None]  # new row within a group
        inside[np.arange(len(new)), len(kept) + np.arange(len(new))] = False  # not itself
        new = new[~inside.any(axis=1) & (size > 0)]
        G = np.vstack([kept, new])
        if len(G) > max_groups:
            return None
    return G


MAX_GROUPS = 4096  # letter_groups gives up beyond this many maximal sets


def letter_groups(significant, max_groups: int = MAX_GROUPS) -> np.ndarray | None:
    """Groups of runs that are not significantly different from each other, from the
    pairwise decisions: a compact letter display (runs sharing a letter are not significantly
    different).

    ``significant`` is a runs x runs boolean matrix of the decisions (symmetric; the diagonal
    is ignored). Returns a boolean groups x runs matrix such that no two runs of a group are
    significantly different, every pair of runs that is not shares a group (a run different
    from all others is a group of its own), and no group can take one more run. Groups are
    ordered by their first, then their last run (so with the runs best first, the first
    group holds the best run).

    The groups are chosen among the maximal sets of mutually not significantly different
    runs (:func:`_split_groups`), greedily: each time the set that covers the most pairs not
    yet covered (ties: the first in the sets' order), until every pair is covered. The
    display is small, not always the smallest. Returns None when there are more than
    ``max_groups`` maximal sets (then no display is small)."""
    S = np.array(significant, dtype=bool)
    if S.ndim != 2 or S.shape[0] != S.shape[1]:
        raise ValueError(f"significant must be a square matrix, got shape {S.shape}")
    if not np.array_equal(S, S.T):
        raise ValueError("significant must be symmetric")
    np.fill_diagonal(S, False)
    G = _split_groups(S, max_groups)
    if G is None:
        return None
    cliques = G.astype(np.int64)
    uncovered = (~S).astype(np.int64)  # with the diagonal: every run is covered too
    chosen = []
    while uncovered.any():
        k = int(np.argmax(((cliques @ uncovered) * cliques).sum(axis=1)))
        chosen.append(k)
        uncovered[np.ix_(G[k], G[k])] = 0
    out = G[chosen]
    first = out.argmax(axis=1)
    last = out.shape[1] - 1 - out[:, ::-1].argmax(axis=1)
    return out[np.lexsort((last, first))]


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
    step = max(1, _CHUNK_ELEMENTS // (N * N))
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
    step = max(1, _CHUNK_ELEMENTS // C)
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


# --------------------------------------------------------------------------------------
# Confidence intervals
# --------------------------------------------------------------------------------------


def _check_level(level) -> float:
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence level must be strictly between 0 and 1, got {level}")
    return level


def _t_interval(values: np.ndarray, level: float):
    n = values.shape[-1]
    if n < 2:
        raise ValueError(f"need at least two topics for a confidence interval, got {n}")
    if not np.isfinite(values).all():
        raise ValueError("scores must be finite (no NaN or infinity)")
    mean = values.mean(axis=-1)
    half = _sps.t.ppf(0.5 + level / 2.0, n - 1) * values.std(axis=-1, ddof=1) / np.sqrt(n)
    return mean, mean - half, mean + half


def mean_ci(X, level=0.95):
    """t-distribution confidence interval of each run's mean over topics.

    ``X`` is (runs, topics) -> three arrays (mean, low, high) with one value per run; a 1-D
    ``X`` (one run) gives three floats."""
    level = _check_level(level)
    X = np.asarray(X, dtype=np.float64)
    if X.ndim not in (1, 2):
        raise ValueError(f"expected a 1-D or 2-D score array, got shape {X.shape}")
    mean, low, high = _t_interval(X, level)
    return mean[()], low[()], high[()]


def diff_ci(a, b, level=0.95):
    """Paired t confidence interval of mean(a - b) over topics (last axis).

    1-D a and b give three floats (diff, low, high); 2-D inputs give one interval per row."""
    level = _check_level(level)
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"a and b must have the same shape, got {a.shape} and {b.shape}")
    if a.ndim not in (1, 2):
        raise ValueError(f"expected 1-D or 2-D score arrays, got shape {a.shape}")
    diff, low, high = _t_interval(a - b, level)
    return diff[()], low[()], high[()]


# --------------------------------------------------------------------------------------
# Intervals of the difference and effect sizes (SPEC section 5, "Effect sizes and intervals")
# --------------------------------------------------------------------------------------


def pair_moments(X, i=None, j=None):
    """Mean and standard deviation (n - 1) of the per-topic differences X[i] - X[j] of every
    pair (default: all pairs, :func:`pair_indices`), and whether the pair is undefined (zero
    variance, up to the module's tolerance).  Computed in blocks of pairs, so memory stays
    flat in their number; the same numbers, to the last bit, as over all pairs at once."""
    X = np.asarray(X, dtype=np.float64)
    if i is None:
        i, j = pair_indices(X.shape[0])
    n = X.shape[1]
    absmax = np.abs(X).max(axis=1)
    mean, sd = np.empty(len(i)), np.empty(len(i))
    step = max(1, _CHUNK_ELEMENTS // max(1, n))
    for s in range(0, len(i), step):
        D = X[i[s:s + step]] - X[j[s:s + step]]
        mean[s:s + step] = D.mean(axis=1)
        sd[s:s + step] = D.std(axis=1, ddof=1)
    return mean, sd, _is_zero_sd(sd, np.maximum(absmax[i], absmax[j]))


def t_interval_of_pairs(mean, sd, n: int, level: float, undefined=None):
    """The t-interval of mean differences at ``level``: mean -/+ t_{(1+level)/2, n-1} sd /
    sqrt(n) (SPEC); an undefined (zero-variance) pair's is [mean, mean]."""
    level = _check_level(level)
    half = _sps.t.ppf(0.5 + level / 2.0, n - 1) * np.asarray(sd) / np.sqrt(n)
    if undefined is not None:
        half = np.where(undefined, 0.0, half)
    return mean - half, mean + half


def _interval_extra(level: float, low, high) -> dict:
    return {"level": _check_level(level), "ci_low": np.asarray(low, dtype=np.float64),
            "ci_high": np.asarray(high, dtype=np.float64)}


def _kth_of(level: float, B: int) -> int:
    """The rank k = ceil((1 - level) B) of a Monte Carlo test's interval endpoints: a shift is
    inside when at least k of the B null statistics are as extreme (p >= 1 - level)."""
    alpha = 1.0 - _check_level(level)
    return int(min(B, max(1, math.ceil(alpha * B - 1e-9))))


def nct_cdf(df, lam, t) -> np.ndarray:
    """P(T_{df, lam} <= t).  scipy's (Boost's) noncentral t gives NaN in the far tails
    (below about 1e-26, or within 1e-16 of 1); there the value is 1 when t is above lam and
    0 when below, which is all a search for a quantile needs."""
    from scipy import special

    F = np.asarray(special.nctdtr(df, lam, t), dtype=np.float64)
    lam, t = np.broadcast_arrays(np.asarray(lam, dtype=np.float64), np.asarray(t, dtype=np.float64))
    bad = np.isnan(F) & ~np.isnan(lam) & ~np.isnan(t)
    if bad.any():
        F = F.copy()
        F[bad] = np.where(t[bad] > lam[bad], 1.0, 0.0)
    return F


def _noncentrality_bracketed(t: np.ndarray, df: float, p: float, tol: float = 1e-12,
                             max_iter: int = 100) -> np.ndarray:
    """lam with P(T_{df, lam} <= t) = p for each t, by a bracketed search: from the normal
    approximation lam0 = t - z_p sqrt(1 + t^2 / (2 df)), a step of a quarter of that scale
    doubled until the root is bracketed (the cdf decreases in lam), then regula falsi with
    the Illinois modification, vectorized over the elements not yet converged."""
    from scipy import special

    t = np.asarray(t, dtype=np.float64)
    out = np.full(t.shape, np.nan)
    live = np.flatnonzero(np.isfinite(t))
    out[np.isinf(t)] = t[np.isinf(t)]
    if live.size == 0:
        return out
    tt = t[live]
    scale = np.sqrt(1.0 + tt * tt / (2.0 * df))
    x0 = tt - special.ndtri(p) * scale
    f0 = nct_cdf(df, x0, tt) - p
    up = f0 > 0  # the root lies above x0
    a, fa = np.where(up, x0, -np.inf), np.where(up, f0, np.nan)
    b, fb = np.where(up, np.inf, x0), np.where(up, np.nan, f0)
    width = 0.25 * scale
    todo = np.flatnonzero(f0 != 0)
    for _ in range(200):  # widen until bracketed
        if todo.size == 0:
            break
        u = up[todo]
        x = np.where(u, a[todo] + width[todo], b[todo] - width[todo])
        fx = nct_cdf(df, x, tt[todo]) - p
        crossed = np.where(u, fx <= 0, fx >= 0)
        upper = u == crossed  # crossed going up, or not going down: x is the new upper end
        b[todo[upper]], fb[todo[upper]] = x[upper], fx[upper]
        a[todo[~upper]], fa[todo[~upper]] = x[~upper], fx[~upper]
        width[todo[~crossed]] *= 2.0
        todo = todo[~crossed]
    x = np.where(f0 == 0, x0, np.nan)
    side = np.zeros(tt.shape, dtype=np.int8)
    todo = np.flatnonzero(np.isnan(x) & np.isfinite(a) & np.isfinite(b))
    for _ in range(max_iter):
        if todo.size == 0:
            break
        A, Bv, FA, FB = a[todo], b[todo], fa[todo], fb[todo]
        c = (A * FB - Bv * FA) / (FB - FA)
        c = np.where(np.isfinite(c) & (c > A) & (c < Bv), c, 0.5 * (A + Bv))
        fc = nct_cdf(df, c, tt[todo]) - p
        below = fc > 0  # the root lies above c: c is the new lower end
        lo, hi = todo[below], todo[~below]
        a[lo], fa[lo] = c[below], fc[below]
        fb[lo[side[lo] == 1]] *= 0.5
        b[hi], fb[hi] = c[~below], fc[~below]
        fa[hi[side[hi] == -1]] *= 0.5
        side[lo], side[hi] = 1, -1
        done = (fc == 0) | (b[todo] - a[todo] <= tol * np.maximum(1.0, np.abs(c)))
        x[todo[done]] = c[done]
        todo = todo[~done]
    x[todo] = 0.5 * (a[todo] + b[todo])
    out[live] = x
    return out


# Noncentralities solved directly (bracketed) at most this many distinct values; more are read
# from a verified spline over a grid (see noncentrality).
_DIRECT = 512
_GRID, _GRID_MAX = 17, 16385


def noncentrality(t, df: float, p: float, tol: float = 1e-9) -> np.ndarray:
    """The noncentrality lam with P(T_{df, lam} <= t) = p for each of the t values (the
    confidence limits of a noncentral t parameter), vectorized.

    All the values share df and p, so lam is one smooth increasing function of t, solved
    once for all of them: few values (at most _DIRECT) by the bracketed search
    (:func:`_noncentrality_bracketed`) each; many by a cubic spline of lam minus its normal
    approximation t - z_p sqrt(1 + t^2 / (2 df)) through a uniform grid of t over their
    range (when the 0.1% most extreme at either end lie far out -- the range twice that of
    the rest --, over the rest, those being solved each). The first
    grid's roots (_GRID points) are found by the bracketed search. The spline is verified
    midway between every two grid points, where its error is largest: the cdf at the
    spline's value is evaluated and the error in lam read from its distance to p (divided
    by the cdf's slope in lam, splined from the grid too); while some midpoint errs by more
    than ``tol`` (x max(1, |lam|)) the grid is refined: the midpoints become grid points,
    their roots two Newton steps from the spline's value. So the values cost a few hundred
    to a few thousand cdf evaluations whatever their number: 1e4 values or 1e6 alike."""
    from scipy import special
    from scipy.interpolate import CubicSpline

    t = np.asarray(t, dtype=np.float64)
    flat = t.ravel()
    finite = np.isfinite(flat)
    out = np.where(np.isinf(flat), flat, np.nan)
    values = flat[finite]
    lo = hi = None
    if values.size > _DIRECT:
        lo, hi = values.min(), values.max()
        tail = values.size // 1000
        if tail:  # the 0.1% most extreme at either end far out: the grid spans the rest
            core_lo = np.partition(values, tail)[tail]
            core_hi = -np.partition(-values, tail)[tail]
            if hi - lo > 2.0 * (core_hi - core_lo):
                lo, hi = core_lo, core_hi
    if lo is None or not lo < hi:
        out[finite] = _solve_each(values, df, p)
        return out.reshape(t.shape)
    z = special.ndtri(p)

    def normal(x):
        return x - z * np.sqrt(1.0 + x * x / (2.0 * df))

    def slope(x, lam):  # d cdf / d lam at (x, lam), by a forward difference
        h = 1e-6 * np.maximum(1.0, np.abs(lam))
        return (nct_cdf(df, lam + h, x) - nct_cdf(df, lam, x)) / h

    grid = np.linspace(lo, hi, _GRID)
    lam = _noncentrality_bracketed(grid, df, p)
    grad = slope(grid, lam)
    spline = None
    while np.isfinite(lam).all() and (grad < 0).all():
        candidate = CubicSpline(grid, lam - normal(grid))
        mids = 0.5 * (grid[:-1] + grid[1:])
        guess = candidate(mids) + normal(mids)
        mid_grad = CubicSpline(grid, grad)(mids)
        step = -(nct_cdf(df, guess, mids) - p) / mid_grad
        if np.all(np.abs(step) <= tol * np.maximum(1.0, np.abs(guess))):
            spline = candidate
            break
        if grid.size >= _GRID_MAX:
            break
        # the midpoints become grid points: two Newton steps from the spline's guess
        fixed = guess + step
        fixed -= (nct_cdf(df, fixed, mids) - p) / mid_grad
        grid = np.insert(grid, np.arange(1, grid.size), mids)
        lam = np.insert(lam, np.arange(1, lam.size), fixed)
        grad = np.insert(grad, np.arange(1, grad.size), slope(mids, fixed))
    if spline is None:  # no verified spline (not expected): every value on its own
        out[finite] = _solve_each(values, df, p)
        return out.reshape(t.shape)
    core = (values >= lo) & (values <= hi)
    solved = np.empty(values.size)
    solved[core] = spline(values[core]) + normal(values[core])
    solved[~core] = _solve_each(values[~core], df, p)
    out[finite] = solved
    return out.reshape(t.shape)


def _solve_each(values: np.ndarray, df: float, p: float) -> np.ndarray:
    """:func:`_noncentrality_bracketed` of each distinct value."""
    u, inverse = np.unique(values, return_inverse=True)
    return _noncentrality_bracketed(u, df, p)[inverse]


def dz_interval(mean, sd, n: int, level: float = 0.95, undefined=None):
    """Cohen's d_z = mean / sd of paired differences over n topics, with its exact interval
    at ``level`` from the noncentral t (SPEC): with t = mean / (sd / sqrt(n)), lam_lo and
    lam_hi solve P(T_{n-1, lam_lo} <= t) = (1 + level)/2 and P(T_{n-1, lam_hi} <= t) =
    (1 - level)/2, and the interval is [lam_lo, lam_hi] / sqrt(n).  Undefined (zero-variance)
    pairs get NaN.  Returns (d_z, low, high) arrays."""
    level = _check_level(level)
    mean = np.asarray(mean, dtype=np.float64)
    sd = np.asarray(sd, dtype=np.float64)
    if undefined is None:
        undefined = sd == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        d = np.where(undefined, np.nan, mean / sd)
        t = np.where(undefined, np.nan, mean / (sd / np.sqrt(n)))
    # one search for both limits: P(T_{df, lam} <= t) = 1 - P(T_{df, -lam} <= -t), so the
    # upper limit at t is minus the lower limit at -t
    flat = t.ravel()
    both = noncentrality(np.concatenate([flat, -flat]), n - 1, 0.5 + level / 2.0) / np.sqrt(n)
    return d, both[:flat.size].reshape(t.shape), -both[flat.size:].reshape(t.shape)


def residual_variance(X) -> float:
    """V_E, the residual variance of the two-way ANOVA without replication of the runs x
    topics matrix X (a runs, b topics): sum (x_ij - row mean - column mean + grand mean)^2
    / ((a - 1)(b - 1)) (SPEC; Sakai 2016, 2018)."""
    X = _as_matrix(X)
    a, b = X.shape
    R = X - X.mean(axis=1, keepdims=True) - X.mean(axis=0, keepdims=True) + X.mean()
    return float(np.sum(R * R) / ((a - 1) * (b - 1)))


def effect_sizes(X, level: float = 0.95, residual: bool = True, moments=None) -> dict:
    """The effect sizes of every run pair of X (in :func:`pair_indices` order): Cohen's d_z
    with its exact noncentral-t interval at ``level`` (``effect_size``, ``effect_low``,
    ``effect_high``; NaN for undefined pairs, :func:`dz_interval`) and, with ``residual``,
    Sakai's effect size over the two-way ANOVA's residual variance of the whole matrix,
    (mean_i - mean_j) / sqrt(V_E) (``effect_size_residual``; NaN when V_E is 0), which
    is what his Tukey HSD reporting uses -- a table of all pairs has it, a single pair
    does not. ``moments``: the pairs' (mean, sd, undefined) when known (:func:`pair_moments`)."""
    X = _as_matrix(X)
    i, j = pair_indices(X.shape[0])
    mean, sd, undefined = moments if moments is not None else pair_moments(X, i, j)
    d, low, high = dz_interval(mean, sd, X.shape[1], level, undefined)
    out = {"effect_size": d, "effect_low": low, "effect_high": high}
    if residual:
        ve = residual_variance(X)
        means = X.mean(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            out["effect_size_residual"] = (means[i] - means[j]) / np.sqrt(ve) if ve > 0 \
                else np.full(len(i), np.nan)
    return out


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
    chunk = int(max(1, min(B, _CHUNK_ELEMENTS // max(1, n * V.shape[0]))))
    for s in range(0, B, chunk):
        e = min(B, s + chunk)
        perm = np.argsort(rng.random((e - s, n)), axis=1)
        running = np.cumsum(V[:, perm], axis=2)  # (rows, c, n): sums of the first g items
        null = running[:, :, size - 1] / size  # (rows, c, groups)
        hits += (np.abs(null - mu[:, :, None]) >= threshold[:, None, :]).sum(axis=1)
    return {"labels": list(labels), "size": size, "mean": mean, "p": hits / B, "mu": mu[:, 0]}
