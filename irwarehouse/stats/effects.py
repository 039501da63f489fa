"""Effect sizes of every run pair (SPEC section 5, "Effect sizes and intervals"): the
standardized mean difference d_z with its interval from the noncentral t distribution,
and the residual variance of the runs x topics matrix.
"""

from __future__ import annotations


import numpy as np

from .intervals import _check_level
from .pairs import _as_matrix, pair_indices, pair_moments

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
