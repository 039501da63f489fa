"""Confidence intervals: a run's mean, a difference of two runs, the t-interval of every
pair's mean difference, and the rank of a Monte Carlo test's interval endpoints.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats as _sps

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
