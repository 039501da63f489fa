"""Webber et al.'s randomized experiment: a topic set split at random into two halves, many
times, each compared as two collections."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .. import catalogue, stats
from ..errors import IrwError
from .comparison import check_alpha, comparison_setup, rmse_drmse, two_sample_t
from .shared import Progress

def split_statistics(X: np.ndarray, idx_c: np.ndarray, idx_d: np.ndarray, alpha: float = 0.05):
    """For each split s (rows of the topic index arrays ``idx_c``, ``idx_d``), compare every
    run's scores on topics C_s and D_s: returns (rmse, drmse, fp_rate), each of length
    n_splits. All splits at once: gathered (runs x splits x topics) arrays, two-pass
    variances (the numbers scipy.stats.ttest_ind computes)."""
    X = np.asarray(X, dtype=float)
    XC, XD = X[:, idx_c], X[:, idx_d]  # (runs, splits, size)
    mean_c, mean_d = XC.mean(axis=2), XD.mean(axis=2)
    _, p = two_sample_t(mean_c, XC.var(axis=2, ddof=1), idx_c.shape[1],
                        mean_d, XD.var(axis=2, ddof=1), idx_d.shape[1])
    fp = (p < alpha).mean(axis=0)
    rmse, drmse = rmse_drmse(mean_c.T, mean_d.T)
    return rmse, drmse, fp


def random_split_indices(n_topics: int, n_splits: int, size: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """Random disjoint halves: C = the first ``size`` topics of a random permutation (argsort
    of uniform draws, one row per split), D = the next ``size``."""
    order = rng.random((n_splits, n_topics)).argsort(axis=1)
    return order[:, :size], order[:, size:2 * size]


def _summary(values: np.ndarray) -> dict:
    values = values[np.isfinite(values)]
    if values.size == 0:
        return {"mean": math.nan, "p95": math.nan, "p99": math.nan, "max": math.nan}
    return {"mean": float(values.mean()), "p95": float(np.percentile(values, 95)),
            "p99": float(np.percentile(values, 99)), "max": float(values.max())}


SPLIT_CHUNK = 250


def random_splits_experiment(con, qrels: str, measure, run_spec: str = "all", raw=None,
                             reference: str | None = None, factors: str | None = None,
                             splits: int = 2000, seed: int = 0, size: int | None = None,
                             alpha: float = 0.05, progress: Progress = None) -> pd.DataFrame:
    """Webber et al.'s randomized experiment: split the topic set at random into two disjoint
    halves (``size`` topics each, default n // 2), ``splits`` times, and report per form the
    mean and the 95th / 99th percentiles (and the maximum) of dRMSE and of the false-positive
    rate. Deterministic given ``seed``."""
    check_alpha(alpha)
    if splits < 1:
        raise IrwError("--splits must be at least 1")
    qrels, _ = catalogue.qrels_info(con, qrels)
    run_ids, forms, matrices = comparison_setup(con, qrels, measure, run_spec, raw, reference,
                                                 factors, "the experiment needs at least two runs")
    mats, topics = matrices(qrels)
    n = len(topics)
    size = size if size is not None else n // 2
    if size < 2 or 2 * size > n:
        raise IrwError(f"each half needs at least two topics and both halves must fit in the "
                       f"{n} topics: --size {size} is not possible")
    results = {f.form: ([], [], []) for f in forms}
    rng = stats.rng_of(seed)
    done = 0
    while done < splits:
        chunk = min(SPLIT_CHUNK, splits - done)
        in_c, in_d = random_split_indices(n, chunk, size, rng)
        for f in forms:
            rmse, drmse, fp = split_statistics(mats[f.form], in_c, in_d, alpha)
            for acc, values in zip(results[f.form], (rmse, drmse, fp)):
                acc.append(values)
        done += chunk
        if progress:
            progress(done, splits)
    rows = []
    for f in forms:
        rmse, drmse, fp = (np.concatenate(a) for a in results[f.form])
        ds, fs, rs = _summary(drmse), _summary(fp), _summary(rmse)
        rows.append({"form": f.form, "measure": str(f.measure), "runs": len(run_ids), "topics": n,
                     "size": size, "splits": splits,
                     "rmse_mean": rs["mean"],
                     "drmse_mean": ds["mean"], "drmse_p95": ds["p95"], "drmse_p99": ds["p99"],
                     "drmse_max": ds["max"],
                     "fp_rate_mean": fs["mean"], "fp_rate_p95": fs["p95"], "fp_rate_p99": fs["p99"],
                     "fp_rate_max": fs["max"]})
    return pd.DataFrame(rows)
