"""Multiple-comparison corrections: the functions of the registry's entries
(:data:`irwarehouse.significance_tests.CORRECTIONS`) and :func:`adjust`, which applies one.

Each function takes the family of defined p-values (a 1-D array, in any order) and returns
their adjusted values in the same order; :func:`adjust` leaves undefined (NaN) p-values out of
the family and keeps the array's shape.
"""

from __future__ import annotations

import numpy as np

from ..significance_tests import CORRECTIONS, Correction


def identity(q: np.ndarray) -> np.ndarray:
    """No correction: the p-values themselves."""
    return q.copy()


def bonferroni(q: np.ndarray) -> np.ndarray:
    """min(1, m p)."""
    return np.minimum(1.0, q * q.size)


def holm(q: np.ndarray) -> np.ndarray:
    """Holm's step-down: p_(k) -> max_{l <= k} min(1, (m - l + 1) p_(l))."""
    m = q.size
    order = np.argsort(q, kind="stable")
    rank = np.arange(1, m + 1)
    out = np.empty(m)
    out[order] = np.maximum.accumulate(np.minimum(1.0, (m - rank + 1) * q[order]))
    return out


def benjamini_hochberg(q: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg step-up: p_(k) -> min(1, min_{l >= k} m p_(l) / l)."""
    m = q.size
    order = np.argsort(q, kind="stable")
    rank = np.arange(1, m + 1)
    out = np.empty(m)
    out[order] = np.minimum(1.0, np.minimum.accumulate((m * q[order] / rank)[::-1])[::-1])
    return out


def correction(method) -> Correction:
    """The registry's entry of ``method`` (any case), or a ValueError naming the valid ones."""
    entry = CORRECTIONS.get(str(method).lower())
    if entry is None:
        raise ValueError(f"unknown adjustment {method!r}; choose one of {', '.join(CORRECTIONS)}")
    return entry


def adjust(p, method) -> np.ndarray:
    """Adjusted p-values over the family of the given comparisons.

    ``method``: the name of an entry of the registry -- 'none', 'bonferroni' (min(1, m p)),
    'holm' (step-down) or 'bh' (Benjamini-Hochberg step-up).  NaN (undefined) p-values stay
    NaN and are not counted in the family size m.  Any array shape is accepted and kept.
    """
    function = globals()[correction(method).function]
    p = np.asarray(p, dtype=np.float64)
    flat = p.ravel()
    ok = ~np.isnan(flat)
    q = flat[ok]
    if np.any((q < 0) | (q > 1)):
        raise ValueError("p-values must lie in [0, 1] (or be NaN for undefined)")
    out = np.full(flat.shape, np.nan)
    out[ok] = function(q) if q.size else q
    return out.reshape(p.shape)
