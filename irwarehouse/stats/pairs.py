"""The result of a test over every run pair and the helpers the tests share: the score
matrix checked, the pairs and their differences, the per-pair moments, chunking.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

from ..errors import check_seed
from .corrections import adjust

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
CHUNK_ELEMENTS = 1 << 20


def chunk_elements() -> int:
    """The target number of elements of one chunk's working array (read at each call, so
    the whole package follows a change of ``CHUNK_ELEMENTS``)."""
    return CHUNK_ELEMENTS


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
    return int(max(1, min(B, CHUNK_ELEMENTS // max(1, n_pairs))))


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
    step = max(1, CHUNK_ELEMENTS // max(1, n))
    for s in range(0, len(i), step):
        D = X[i[s:s + step]] - X[j[s:s + step]]
        mean[s:s + step] = D.mean(axis=1)
        sd[s:s + step] = D.std(axis=1, ddof=1)
    return mean, sd, _is_zero_sd(sd, np.maximum(absmax[i], absmax[j]))


def _p_of(result) -> np.ndarray:
    return np.asarray(result.p if isinstance(result, PairResult) else result, dtype=np.float64)
