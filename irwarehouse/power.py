"""How many topics are enough: topic set size design (Sakai, "Topic set size design",
Information Retrieval Journal 19, 2016; SPEC section 5).

The variance a design needs is estimated from a runs x topics score matrix as V_E, the
residual variance of the two-way ANOVA without replication
(:func:`irwarehouse.stats.residual_variance`).

Paired t-test (two-sided, level alpha)
    A pair's per-topic differences have variance sigma_d^2 = 2 V_E. With n topics and a
    true difference delta, the test's power is P(|T_{n-1, lam}| > t_{1-alpha/2, n-1}),
    lam = sqrt(n) delta / sigma_d (noncentral t, exact). :func:`topics_needed` is the
    smallest n whose power reaches 1 - beta; :func:`min_detectable_difference` the
    smallest delta whose power with n topics reaches 1 - beta.

One-way ANOVA over m systems (Sakai's ANOVA-based design)
    The F test of m system means, each over n topics, with the minimum detectable range D:
    when the best and the worst system differ by D (and the others lie midway), the
    noncentrality is lam = n D^2 / (2 V_E), and the power P(F'_{m-1, m(n-1), lam} >
    F_{1-alpha; m-1, m(n-1)}) (noncentral F, exact). :func:`anova_topics_needed` and
    :func:`anova_min_detectable_range` as above.

All of this is foundation: numpy and scipy, no warehouse.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special
from scipy import stats as _sps

from .stats import nct_cdf

__all__ = ["t_power", "topics_needed", "min_detectable_difference", "anova_power",
           "anova_topics_needed", "anova_min_detectable_range", "MAX_TOPICS", "MIN_ERROR",
           "check_errors"]

# The largest topic set a search considers (a difference too small to detect with this many
# topics is reported as needing more).
MAX_TOPICS = 10_000_000
# The smallest alpha and beta a design takes: below it the power, a number near 1 in floating
# point, can no longer tell 1 - beta from 1.
MIN_ERROR = 1e-12


def check_errors(alpha: float, beta: float | None = None) -> str | None:
    """What is wrong with the error rates ``alpha`` and ``beta`` (each at least MIN_ERROR and
    below 1), in words; None when they are valid."""
    for name, value in (("alpha", alpha), ("beta", beta)):
        if value is not None and not MIN_ERROR <= value < 1.0:
            return f"{name} must be at least {MIN_ERROR:g} and below 1, got {value}"
    return None


def _check(alpha: float, beta: float | None = None, variance: float | None = None) -> None:
    problem = check_errors(alpha, beta)
    if problem:
        raise ValueError(problem)
    if variance is not None and not (variance > 0 and math.isfinite(variance)):
        raise ValueError(f"the residual variance must be a positive number, got {variance}")


def t_power(n, delta: float, variance: float, alpha: float = 0.05) -> np.ndarray:
    """The power of the two-sided paired t-test at level ``alpha`` with ``n`` topics (a
    number or an array, each >= 2) for a true difference ``delta``, when a pair's
    differences have variance 2 ``variance`` (V_E): P(|T_{n-1, lam}| > t_{1-alpha/2, n-1}),
    lam = sqrt(n) delta / sqrt(2 V_E)."""
    _check(alpha, variance=variance)
    n = np.asarray(n, dtype=np.float64)
    df = n - 1.0
    with np.errstate(over="ignore"):
        lam = np.sqrt(n) * (abs(float(delta)) / math.sqrt(2.0 * variance))
    critical = _sps.t.isf(alpha / 2.0, df)
    infinite = np.isinf(lam)  # the limit: the statistic is beyond every critical value
    lam = np.where(infinite, 0.0, lam)
    upper = np.where(infinite, 1.0, 1.0 - nct_cdf(df, lam, critical))
    lower = np.where(infinite, 0.0, nct_cdf(df, lam, -critical))
    return np.clip(upper + lower, 0.0, 1.0)


def _normal_start(scale: float, delta: float) -> int:
    """floor(scale / delta^2), the first guess of a search from a large-sample approximation,
    at most MAX_TOPICS (a difference so small that the guess overflows needs more)."""
    ratio = math.sqrt(scale) / delta
    guess = ratio * ratio
    return MAX_TOPICS if not guess < MAX_TOPICS else math.floor(guess)


def _smallest_n(power, target: float, start: int) -> int | None:
    """The smallest n >= 2 with power(n) >= target (power increasing in n), from a first
    guess ``start``: a bracket found by doubling steps away from it, then bisection; None
    beyond MAX_TOPICS."""
    def enough(n: int) -> bool:
        return bool(power(np.array([n], dtype=np.float64))[0] >= target)

    hi = min(max(2, int(start)), MAX_TOPICS)
    if enough(hi):  # step down until a size is not enough (or 2 is)
        step, lo = 1, 1
        while hi > 2:
            below = max(2, hi - step)
            if not enough(below):
                lo = below
                break
            hi, step = below, step * 2
    else:  # step up until a size is enough
        lo = hi
        while True:
            if hi >= MAX_TOPICS:
                return None
            lo, hi = hi, min(2 * hi, MAX_TOPICS)
            if enough(hi):
                break
    while hi - lo > 1:  # power(lo) < target <= power(hi)
        mid = (lo + hi) // 2
        if enough(mid):
            hi = mid
        else:
            lo = mid
    return hi


def topics_needed(delta: float, variance: float, alpha: float = 0.05, beta: float = 0.2) -> int | None:
    """The number of topics a two-sided paired t-test at level ``alpha`` needs to detect a
    true difference ``delta`` with power 1 - ``beta`` (exact noncentral t), a pair's
    differences having variance 2 ``variance``; None when more than MAX_TOPICS."""
    _check(alpha, beta, variance)
    if not (delta > 0 and math.isfinite(delta)):
        raise ValueError(f"the difference to detect must be a positive number, got {delta}")
    if 1.0 - beta <= alpha:  # any test has power alpha at least: the smallest design will do
        return 2
    z = _sps.norm.isf(alpha / 2.0) + _sps.norm.isf(beta)
    start = _normal_start(z * z * 2.0 * variance, delta)  # the normal approximation
    return _smallest_n(lambda n: t_power(n, delta, variance, alpha), 1.0 - beta, start)


def _power_wanted(n: int, variance: float, alpha: float, beta: float) -> float | None:
    """The power a smallest detectable difference must reach (1 - ``beta``), after checking
    the settings; None when even no difference reaches it (the power wanted is at most
    ``alpha``, the power of the test with no difference at all)."""
    _check(alpha, beta, variance)
    if n < 2:
        raise ValueError(f"need at least two topics, got {n}")
    target = 1.0 - beta
    return None if target <= alpha else target


def min_detectable_difference(n: int, variance: float, alpha: float = 0.05, beta: float = 0.2) -> float:
    """The smallest true difference a two-sided paired t-test at level ``alpha`` over ``n``
    topics detects with power 1 - ``beta`` (a pair's differences having variance 2
    ``variance``)."""
    target = _power_wanted(n, variance, alpha, beta)
    if target is None:
        return 0.0
    scale = math.sqrt(2.0 * variance / n)  # delta = lam * scale
    f = lambda lam: t_power(n, lam * scale, variance, alpha)[()] - target  # noqa: E731
    hi = 1.0
    while f(hi) < 0:
        hi *= 2.0
    return float(optimize.brentq(f, 0.0, hi, xtol=1e-14, rtol=1e-12) * scale)


def anova_power(n, systems: int, min_range: float, variance: float, alpha: float = 0.05) -> np.ndarray:
    """The power of the one-way ANOVA F test of ``systems`` means over ``n`` topics each at
    level ``alpha`` when the best and worst systems differ by ``min_range`` (the others
    midway): P(F'_{m-1, m(n-1), lam} > F_{1-alpha}), lam = n D^2 / (2 V_E)."""
    _check(alpha, variance=variance)
    if systems < 2:
        raise ValueError(f"an ANOVA compares at least two systems, got {systems}")
    n = np.asarray(n, dtype=np.float64)
    df1, df2 = systems - 1.0, systems * (n - 1.0)
    with np.errstate(over="ignore"):
        lam = n * np.square(abs(float(min_range)) / math.sqrt(2.0 * variance))
    critical = _sps.f.isf(alpha, df1, df2)
    infinite = np.isinf(lam)  # the limit: the statistic is beyond every critical value
    cdf = np.where(infinite, 0.0, special.ncfdtr(df1, df2, np.where(infinite, 0.0, lam), critical))
    if np.isnan(cdf).any():
        raise ValueError(f"the noncentral F cannot be computed for a range of {min_range} "
                         f"(noncentrality {float(np.max(lam)):g})")
    return np.clip(1.0 - cdf, 0.0, 1.0)


def anova_topics_needed(systems: int, min_range: float, variance: float, alpha: float = 0.05,
                        beta: float = 0.2) -> int | None:
    """The number of topics a one-way ANOVA of ``systems`` systems needs to detect a
    difference ``min_range`` between the best and worst with power 1 - ``beta`` (exact
    noncentral F); None when more than MAX_TOPICS."""
    _check(alpha, beta, variance)
    if not (min_range > 0 and math.isfinite(min_range)):
        raise ValueError(f"the range to detect must be a positive number, got {min_range}")
    if systems < 2:
        raise ValueError(f"an ANOVA compares at least two systems, got {systems}")
    if 1.0 - beta <= alpha:  # any test has power alpha at least: the smallest design will do
        return 2
    df1 = systems - 1.0  # start from the chi-square (large n) approximation of the noncentrality
    lam = optimize.brentq(lambda x: _sps.ncx2.sf(_sps.chi2.isf(alpha, df1), df1, x) - (1.0 - beta),
                          1e-9, 1e6)
    start = _normal_start(lam * 2.0 * variance, min_range)
    return _smallest_n(lambda n: anova_power(n, systems, min_range, variance, alpha), 1.0 - beta, start)


def anova_min_detectable_range(n: int, systems: int, variance: float, alpha: float = 0.05,
                               beta: float = 0.2) -> float:
    """The smallest range between the best and worst of ``systems`` systems that a one-way
    ANOVA over ``n`` topics detects with power 1 - ``beta``."""
    target = _power_wanted(n, variance, alpha, beta)
    if target is None:
        return 0.0
    f = lambda d: anova_power(n, systems, d, variance, alpha)[()] - target  # noqa: E731
    hi = math.sqrt(variance)
    while f(hi) < 0:
        hi *= 2.0
    return float(optimize.brentq(f, 0.0, hi, xtol=1e-14, rtol=1e-12))
