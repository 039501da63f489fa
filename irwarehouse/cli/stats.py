"""Commands for significance and correlation: compare, discpower, pvalues, correlate, ci, summary."""

from __future__ import annotations

from typing import List, Optional

import typer

from .. import evaluate as ev
from .. import measures as ms
from .. import output, runsets
from ..errors import IrwError
from .app import (FormatOpt, QrelsOpt, RunsOpt, TopicsOpt, app, check_format, command,
                  open_warehouse, progress_callback, say)

AlphaOpt = typer.Option(0.05, "--alpha", help="Significance level.")
BOpt = typer.Option(None, "-B", "--samples", help="Bootstrap / randomization samples (default 1000 bootstrap, 10000 otherwise).")
SeedOpt = typer.Option(0, "--seed", help="Random seed (Monte Carlo tests are deterministic given it).")
CorrectionOpt = typer.Option("none", "--correction", help="Multiple comparisons: none | bonferroni | holm | bh (over all pairs).")


def _one(names: list[str], what: str) -> ms.Measure:
    parsed = ms.parse_all(names)
    if len(parsed) != 1:
        raise IrwError(f"{what} takes one measure")
    return parsed[0]


@command(app, "compare")
def compare_cmd(
    ctx: typer.Context,
    run_a: str = typer.Argument(..., help="First run."),
    run_b: str = typer.Argument(..., help="Second run."),
    measure: List[str] = typer.Option(..., "--measure", "-m", help="Measure (repeatable)."),
    test: List[str] = typer.Option(["t"], "--test", help="t | bootstrap | randomization | wilcoxon | tukey (repeatable)."),
    qrels: Optional[str] = QrelsOpt, topics: str = TopicsOpt, alpha: float = AlphaOpt,
    samples: Optional[int] = BOpt, seed: int = SeedOpt,
    rbp_p: float = typer.Option(0.8, "--rbp-p", help="Persistence of the RBP residual reported beside the p-values."),
    judged_k: int = typer.Option(10, "--judged-k", help="Depth of the Judged@k reported beside the p-values."),
    fmt: str = FormatOpt,
):
    """Two runs per measure: means, difference with 95% CI, p-values, RBP residual and Judged@k."""
    from .. import significance

    check_format(fmt)
    parsed = ms.parse_all(measure)
    with open_warehouse(ctx, read_only=True) as con:
        runsets.resolve(con, f"{run_a},{run_b}")
        frame = significance.compare(con, qrels or ev.default_qrels(con), run_a, run_b, parsed,
                                     list(test), alpha, samples, seed, topics, rbp_p, judged_k)
    output.emit(frame, fmt)


@command(app, "discpower")
def discpower_cmd(
    ctx: typer.Context,
    measure: List[str] = typer.Option(..., "--measure", "-m", help="Measure (repeatable)."),
    qrels: Optional[str] = QrelsOpt, runs: str = RunsOpt, topics: str = TopicsOpt,
    test: str = typer.Option("t", "--test", help="t | bootstrap | randomization | wilcoxon | tukey"),
    correction: str = CorrectionOpt, alpha: float = AlphaOpt, samples: Optional[int] = BOpt,
    seed: int = SeedOpt,
    reference_qrels: Optional[str] = typer.Option(None, "--reference-qrels", help="Reference condition: the same test under another qrels."),
    reference_measure: Optional[str] = typer.Option(None, "--reference-measure", help="Reference condition: another measure."),
    save: Optional[str] = typer.Option(None, "--save", help="Keep the rows in table discpower_results under this name."),
    fmt: str = FormatOpt,
):
    """Discriminative power: the fraction of run pairs a test separates, per measure."""
    from .. import significance

    check_format(fmt)
    parsed = ms.parse_all(measure)
    ref_m = _one([reference_measure], "--reference-measure") if reference_measure else None
    with open_warehouse(ctx, read_only=save is None) as con:
        q = qrels or ev.default_qrels(con)
        run_ids = runsets.resolve(con, runs, qrels=q)
        with progress_callback(f"{test} test") as progress:
            frame = significance.discpower(con, q, parsed, run_ids, test, correction, alpha, samples,
                                           seed, topics, reference_qrels, ref_m, progress)
        if save:
            significance.save(con, "discpower_results", save, frame, {"runs": runs, "topics": topics, "seed": seed})
            say(f"saved {len(frame)} rows in discpower_results as {save!r}")
    output.emit(frame, fmt)


@command(app, "pvalues")
def pvalues_cmd(
    ctx: typer.Context,
    measure: str = typer.Option(..., "--measure", "-m", help="Measure."),
    qrels: Optional[str] = QrelsOpt, runs: str = RunsOpt, topics: str = TopicsOpt,
    test: str = typer.Option("t", "--test", help="t | bootstrap | randomization | wilcoxon | tukey"),
    correction: str = CorrectionOpt, alpha: float = AlphaOpt, samples: Optional[int] = BOpt,
    seed: int = SeedOpt,
    save: Optional[str] = typer.Option(None, "--save", help="Keep the pairs in table pair_tests under this name."),
    fmt: str = FormatOpt,
):
    """Every run pair with its mean difference and p-value (and adjusted p-value)."""
    from .. import significance

    check_format(fmt)
    m = _one([measure], "pvalues")
    with open_warehouse(ctx, read_only=save is None) as con:
        q = qrels or ev.default_qrels(con)
        run_ids = runsets.resolve(con, runs, qrels=q)
        with progress_callback(f"{test} test") as progress:
            frame = significance.pvalues(con, q, m, run_ids, test, correction, alpha, samples, seed,
                                         topics, progress)
        if save:
            significance.save(con, "pair_tests", save, frame,
                              {"runs": runs, "topics": topics, "correction": correction,
                               "alpha": alpha, "B": samples, "seed": seed})
            say(f"saved {len(frame)} pairs in pair_tests as {save!r}")
    output.emit(frame, fmt)


MATRIX_STATISTICS = ["kendall_tau", "tau_ap", "rbo"]


@command(app, "correlate")
def correlate_cmd(
    ctx: typer.Context,
    measure: List[str] = typer.Option(..., "--measure", "-m", help="Measure A, and optionally measure B (default: A); with --matrix, every measure."),
    qrels: List[str] = typer.Option([], "--qrels", "-q", help="Qrels of the first ordering (default: the only one loaded from a file); with --matrix, every qrels (repeatable)."),
    qrels_b: Optional[str] = typer.Option(None, "--qrels-b", help="Qrels of the second ordering (default: --qrels)."),
    runs: str = RunsOpt, topics: str = TopicsOpt,
    rbo_p: float = typer.Option(0.9, "--rbo-p", help="Persistence of RBO."),
    matrix: bool = typer.Option(False, "--matrix", help="Every cell over the conditions measure x qrels, in one call."),
    of: str = typer.Option("scores", "--of", help="With --matrix: scores (run orderings by mean score) | pvalues (orderings of the run pairs by paired t-test p-value)."),
    statistic: List[str] = typer.Option([], "--statistic", "-s", help="With --matrix: kendall_tau, kendall_tau_a, tau_ap, rbo, pearson (repeatable; default kendall_tau, tau_ap, rbo; --of pvalues: kendall_tau)."),
    save: Optional[str] = typer.Option(None, "--save", help="With --matrix: keep the cells in table correlation_matrices under this name."),
    fmt: str = FormatOpt,
):
    """Rank correlation of the run orderings by A on X and by B on Y: tau-b, tau-a, tau_AP, RBO, Pearson;
    with --matrix, of every two conditions (measure, qrels)."""
    import pandas as pd

    from .. import significance

    check_format(fmt)
    parsed = ms.parse_all(measure)
    if matrix:
        if qrels_b:
            raise IrwError("--qrels-b names the second qrels of one cell; with --matrix name every qrels with --qrels")
        stats_wanted = list(statistic) or (MATRIX_STATISTICS if of == "scores" else ["kendall_tau"])
        with open_warehouse(ctx, read_only=save is None) as con:
            qs = list(qrels) or [ev.default_qrels(con)]
            run_ids = runsets.resolve(con, runs, qrels=qs[0])
            frame = significance.correlation_matrix(
                con, parsed, qs, run_ids, topics, rbo_p, of, stats_wanted,
                notify=lambda message: say(f"note: {message}"))
            if save:
                significance.save(con, "correlation_matrices", save, frame,
                                  {"measures": [str(m) for m in parsed], "qrels": qs, "runs": runs,
                                   "topics": topics, "rbo_p": rbo_p})
                say(f"saved {len(frame)} cells in correlation_matrices as {save!r}")
        output.emit(frame, fmt, table=significance.matrix_layout(frame))
        return
    if of != "scores" or statistic or save:
        raise IrwError("--of, --statistic and --save go with --matrix")
    if len(parsed) > 2:
        raise IrwError("correlate takes one or two measures (more with --matrix)")
    if len(qrels) > 1:
        raise IrwError("correlate takes one --qrels and one --qrels-b (more with --matrix)")
    a, b = parsed[0], parsed[-1]
    with open_warehouse(ctx, read_only=True) as con:
        q = qrels[0] if qrels else ev.default_qrels(con)
        run_ids = runsets.resolve(con, runs, qrels=q)
        row = significance.correlate(con, a, q, b, qrels_b or q, run_ids, topics, rbo_p)
    output.emit(pd.DataFrame([row]), fmt)


@command(app, "ci")
def ci_cmd(
    ctx: typer.Context,
    measure: str = typer.Option(..., "--measure", "-m", help="Measure."),
    qrels: Optional[str] = QrelsOpt, runs: str = RunsOpt, topics: str = TopicsOpt,
    level: float = typer.Option(0.95, "--level", help="Confidence level."),
    fmt: str = FormatOpt,
):
    """Each run's mean with its t-distribution confidence interval."""
    from .. import significance

    check_format(fmt)
    m = _one([measure], "ci")
    with open_warehouse(ctx, read_only=True) as con:
        q = qrels or ev.default_qrels(con)
        frame = significance.mean_intervals(con, q, m, runsets.resolve(con, runs, qrels=q), topics, level)
    output.emit(frame, fmt)


@command(app, "summary")
def summary_cmd(
    ctx: typer.Context,
    measure: List[str] = typer.Option(..., "--measure", "-m", help="Measure (repeatable)."),
    qrels: Optional[str] = QrelsOpt, runs: str = RunsOpt, topics: str = TopicsOpt,
    by: str = typer.Option("run", "--by", help="run (over its topics) | topic (over the runs)."),
    fmt: str = FormatOpt,
):
    """Per run or per topic: n, mean, standard deviation, minimum and maximum of each measure."""
    from .. import summary

    check_format(fmt)
    parsed = ms.parse_all(measure)
    with open_warehouse(ctx, read_only=True) as con:
        q = qrels or ev.default_qrels(con)
        run_ids = runsets.resolve(con, runs, qrels=q)
        rows = summary.summary(con, q, parsed, run_ids, topics, by)
        if not rows:
            say(ev.no_rows_reason(con, q, run_ids, topics))
    output.emit(rows, fmt)
