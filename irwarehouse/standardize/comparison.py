"""Two collections compared on the same runs, per form: RMSE, dRMSE and the false positives
of two-sample t-tests."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats as _sps

from .. import catalogue, runsets
from ..errors import IrwError
from .factors import check_reference, factor_set_info
from .forms import form_matrices, forms_of
from .shared import listed, sample_sd

# Standard deviations at most this fraction of the scores' magnitude are zero (rounding),
# as in irwarehouse.stats: equal values computed along different paths differ by a few ulps.
ZERO_SD_RTOL = 1e-10


def two_sample_t(mean_c, var_c, n_c, mean_d, var_d, n_d):
    """Student's two-sample t-test with equal variances, two-tailed (vectorized): the numbers
    of ``scipy.stats.ttest_ind(c, d)``. When the pooled standard deviation is zero up to
    rounding (<= ZERO_SD_RTOL x the larger |mean|), the test is undefined (t and p NaN, never
    significant) if the means are also equal up to rounding, and t = +/-inf, p = 0 if they
    differ -- as scipy does for exactly constant samples."""
    mean_c, mean_d = np.asarray(mean_c, dtype=float), np.asarray(mean_d, dtype=float)
    df = n_c + n_d - 2
    pooled = ((n_c - 1) * np.asarray(var_c) + (n_d - 1) * np.asarray(var_d)) / df
    scale = np.maximum(np.abs(mean_c), np.abs(mean_d))
    diff = mean_c - mean_d
    zero_sd = np.sqrt(pooled) <= ZERO_SD_RTOL * scale
    same = np.abs(diff) <= ZERO_SD_RTOL * scale
    with np.errstate(divide="ignore", invalid="ignore"):
        t = diff / np.sqrt(pooled * (1.0 / n_c + 1.0 / n_d))
    t = np.where(zero_sd, np.where(same, np.nan, np.copysign(np.inf, diff)), t)
    p = 2.0 * _sps.t.sf(np.abs(t), df)
    return t, p


def rmse_drmse(means_c: np.ndarray, means_d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """RMSE and dRMSE between system means on C and D along the last axis (systems)."""
    rmse = np.sqrt(np.mean((means_c - means_d) ** 2, axis=-1))
    with np.errstate(divide="ignore", invalid="ignore"):
        drmse = 2.0 * rmse / (sample_sd(means_c, -1) + sample_sd(means_d, -1))
    return rmse, drmse


def comparison_setup(con, qrels: str, measure, run_spec: str, raw, reference: str | None,
                      factors: str | None, too_few: str):
    """The runs, the forms of ``measure`` and a function qrels -> (matrices per form, topics)
    for comparing collections (standardized by ``factors`` or by the reference runs)."""
    run_ids = runsets.resolve(con, run_spec, qrels=qrels)
    if len(run_ids) < 2:
        raise IrwError(too_few)
    ref_spec = reference or run_spec
    ref_runs = runsets.resolve(con, ref_spec, qrels=qrels)
    if not factors:
        check_reference(ref_runs, ref_spec)
    else:
        factor_set_info(con, factors)
    forms = forms_of(measure, raw)

    def matrices(q: str):
        return form_matrices(con, q, forms, run_ids, ref_runs, factors, ref_spec)

    return run_ids, forms, matrices


def check_same_runs(con, c: str, d: str, run_ids: list[str]) -> None:
    """Comparing qrels C and D of two test collections compares the runs of C's collection
    with the runs of the same ids in D's collection: each must be loaded there."""
    cc, cd = catalogue.collection_of(con, c), catalogue.collection_of(con, d)
    if cc == cd:
        return
    there = set(catalogue.loaded_runs(con, cd))
    lacking = [r for r in run_ids if r not in there]
    if lacking:
        raise IrwError(f"{c} (collection {cc}) and {d} (collection {cd}) are compared on the same run "
                       f"ids, but collection {cd} lacks {listed(lacking)}; choose the runs with --runs")


def compare_collections(con, c: str, d: str, measure, run_spec: str = "all", raw=None,
                        reference: str | None = None, factors: str | None = None,
                        alpha: float = 0.05) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Cross-collection comparison of the same runs on collections C and D, per form:
    RMSE, dRMSE and two-sample t-test false positives. Returns (summary, per_run)."""
    check_alpha(alpha)
    c, _ = catalogue.qrels_info(con, c)
    d, _ = catalogue.qrels_info(con, d)
    run_ids, forms, matrices = comparison_setup(
        con, c, measure, run_spec, raw, reference, factors,
        "comparing collections needs at least two runs (dRMSE divides by the spread of the run means)")
    check_same_runs(con, c, d, run_ids)
    mats_c, topics_c = matrices(c)
    mats_d, topics_d = matrices(d)
    if len(topics_c) < 2 or len(topics_d) < 2:
        raise IrwError("each collection needs at least two topics for the t-test")
    summary, per_run = [], []
    for f in forms:
        XC, XD = mats_c[f.form], mats_d[f.form]
        mc, md = XC.mean(axis=1), XD.mean(axis=1)
        t, p = two_sample_t(mc, XC.var(axis=1, ddof=1), XC.shape[1], md, XD.var(axis=1, ddof=1), XD.shape[1])
        sig = p < alpha
        rmse, drmse = rmse_drmse(mc, md)
        summary.append({"form": f.form, "measure": str(f.measure), "runs": len(run_ids),
                        "topics_c": len(topics_c), "topics_d": len(topics_d),
                        "rmse": float(rmse), "drmse": float(drmse),
                        "false_positives": int(sig.sum()), "fp_rate": float(sig.mean())})
        for i, run_id in enumerate(run_ids):
            per_run.append({"form": f.form, "measure": str(f.measure), "run_id": run_id,
                            "mean_c": float(mc[i]), "mean_d": float(md[i]),
                            "diff": float(mc[i] - md[i]), "t": float(t[i]), "p": float(p[i]),
                            "significant": bool(sig[i])})
    return pd.DataFrame(summary), pd.DataFrame(per_run)


def check_alpha(alpha: float) -> None:
    if not (0 < alpha < 1):
        raise IrwError(f"alpha must be between 0 and 1, not {alpha}")
