"""The paired bootstrap test (Sakai 2006) of every run pair, with the estimated difference
required for significance and percentile intervals.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .intervals import _check_level, _interval_extra
from .pairs import (
    PairResult, Progress, _CANCEL_RTOL, _TIE_RTOL, _ZERO_SD_RTOL, _as_matrix, _check_B,
    _check_alpha, _is_zero_sd, chunk_elements, pair_indices, rng_of,
)

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
    step = max(1, chunk_elements() // (4 * n))
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
    two-pass formula. Pairs are processed in blocks of about ``chunk_elements() / B``, so
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
    step = max(1, chunk_elements() // B)
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
