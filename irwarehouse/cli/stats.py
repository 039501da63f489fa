"""Commands for significance and correlation: compare, discpower, pvalues, correlate, ci,
summary. Each parses its arguments, calls one method of irwarehouse.api.Warehouse and prints
what it returns."""

from __future__ import annotations

from typing import List, Optional

import typer

from .. import api, output
from ..errors import IrwError
from .app import (ByOpt, FormatOpt, QrelsOpt, RelLevelOpt, RunsOpt, TiesOpt, TopicsOpt, app, check_format, command,
                  open_warehouse, progress_callback, say)

_TESTS = " | ".join(api.TESTS)
AlphaOpt = typer.Option(0.05, "--alpha", help="Significance level.")
BOpt = typer.Option(None, "-B", "--samples", help="Monte Carlo samples (default: "
                    + ", ".join(f"{t.default_B} {t.name}" for t in api.TESTS.values() if t.default_B) + ").")
SeedOpt = typer.Option(0, "--seed", help="Random seed (Monte Carlo tests are deterministic given it).")
CORRECTIONS_HELP = " | ".join(f"{c.name} ({c.help})" for c in api.CORRECTIONS.values())
CorrectionOpt = typer.Option("none", "--correction", help="Multiple comparisons (over all pairs): " + CORRECTIONS_HELP + ".")
MeasuresOpt = typer.Option(..., "--measure", "-m", help="Measure (repeatable).")
TestOpt = typer.Option("t", "--test", help=_TESTS + ".")
LevelOpt = typer.Option(0.95, "--level", help="Level of the interval of each difference -- "
                        + "; ".join(f"{t.name}: {t.interval}" for t in api.TESTS.values())
                        + " -- and of the exact (noncentral t) interval of Cohen's d_z.")


def on_files(ctx, qrels: Optional[str], qrels_file: str, run_files: list, then):
    """A command straight from files (`irw compare QRELS RUN_A RUN_B`, `irw pvalues QRELS
    RUN...`): Warehouse.on_files, on a throw-away in-memory warehouse."""
    if qrels is not None:
        raise IrwError("--qrels names a qrels of the warehouse: with files, the first file is the qrels")
    obj = ctx.find_root().obj or {}
    return api.Warehouse.on_files(qrels_file, run_files, then, wait=obj.get("wait"),
                                  memory_limit=obj.get("memory"))


def one_run_each(files: list, ids: list) -> list:
    """The run of each run file compared; a file holding several is named with its runs."""
    for f, of_file in zip(files, ids):
        if len(of_file) != 1:
            raise IrwError(f"{f} holds {len(of_file)} runs ({', '.join(of_file)}): compare takes one run per "
                           f"file; compare runs of one file with irw eval QRELS RUN... --save DB, "
                           f"then irw --db DB compare RUN_A RUN_B")
    return [of_file[0] for of_file in ids]


def one_measure(name: str, what: str, rel_level: int | None = None) -> None:
    """A bad measure, or several (or a bad --rel-level), is reported before the warehouse is
    opened."""
    if len(api.measure_labels([name], rel_level)) != 1:
        raise IrwError(f"{what} takes one measure")


@command(app, "compare")
def compare_cmd(
    ctx: typer.Context,
    names: List[str] = typer.Argument(..., metavar="[QRELS] RUN_A RUN_B", help="Two runs (with --by system: two systems) of the warehouse; or, straight from files, a qrels file and two run files (nothing is written; the warehouse is not used)."),
    measure: List[str] = MeasuresOpt,
    test: List[str] = typer.Option(["t"], "--test", help=_TESTS + " (repeatable)."),
    qrels: Optional[str] = QrelsOpt, topics: str = TopicsOpt, alpha: float = AlphaOpt,
    samples: Optional[int] = BOpt, seed: int = SeedOpt,
    rbp_p: float = typer.Option(0.8, "--rbp-p", help="Persistence of the RBP residual reported beside the p-values."),
    judged_k: int = typer.Option(10, "--judged-k", help="Depth of the Judged@k reported beside the p-values."),
    level: float = LevelOpt, by: str = ByOpt, rel_level: Optional[int] = RelLevelOpt,
    fmt: str = FormatOpt,
):
    """Two runs (or systems) per measure: means, difference with its interval (the first test's), Cohen's d_z (effect_size) with its interval, p-values, RBP residual and Judged@k.
    Given files (`irw compare QRELS RUN_A RUN_B -m M`), compare them without a warehouse.

    """
    check_format(fmt)
    if len(names) not in (2, 3):
        raise IrwError("compare takes two runs of the warehouse, or a qrels file and two run files "
                       f"(irw compare QRELS RUN_A RUN_B); got {len(names)} arguments")
    options = dict(tests=list(test), alpha=alpha, B=samples, seed=seed, topics=topics,
                   rbp_p=rbp_p, judged_k=judged_k, level=level, by=by, rel_level=rel_level)
    if len(names) == 3:
        api.measure_labels(measure, rel_level)  # a bad measure or level: before the files are read
        result = on_files(ctx, qrels, names[0], names[1:],
                          lambda w, q, ids: w.compare(*one_run_each(names[1:], ids), measure, q, **options))
    else:
        with open_warehouse(ctx, read_only=True) as w:
            result = w.compare(names[0], names[1], measure, qrels, **options)
    output.emit_pairs(result, fmt, level=level, rbp_p=rbp_p, judged_k=judged_k)


@command(app, "discpower")
def discpower_cmd(
    ctx: typer.Context,
    measure: List[str] = MeasuresOpt,
    qrels: Optional[str] = QrelsOpt, runs: str = RunsOpt, topics: str = TopicsOpt,
    test: str = TestOpt,
    correction: str = CorrectionOpt, alpha: float = AlphaOpt, samples: Optional[int] = BOpt,
    seed: int = SeedOpt,
    reference_qrels: Optional[str] = typer.Option(None, "--reference-qrels", help="Reference condition: the same test under another qrels."),
    reference_measure: Optional[str] = typer.Option(None, "--reference-measure", help="Reference condition: another measure."),
    save: Optional[str] = typer.Option(None, "--save", help="Keep the rows in table discpower_results, and every pair behind them (with intervals and effect sizes at --level) in pair_tests, under this name."),
    level: float = LevelOpt, by: str = ByOpt, ties: str = TiesOpt,
    fmt: str = FormatOpt,
):
    """Discriminative power: the fraction of run (or system) pairs a test separates, per measure."""
    check_format(fmt)
    api.measure_labels(measure)  # a bad measure is reported before the warehouse is opened
    with open_warehouse(ctx, read_only=save is None) as w, progress_callback(f"{test} test") as progress:
        result = w.discpower(measure, qrels, runs, test=test, correction=correction, alpha=alpha,
                             B=samples, seed=seed, topics=topics, reference_qrels=reference_qrels,
                             reference_measure=reference_measure, save=save, progress=progress,
                             level=level, by=by, ties=ties)
    if save:
        say(f"saved {len(result)} rows in discpower_results and {len(result.info['pairs'])} "
            f"pairs in pair_tests as {save!r}")
    output.emit(result, fmt)


def _columns_help(columns, by_system=()) -> str:
    """The Columns paragraph of a pair command's --help, from the table's footer
    (output.pair_help)."""
    lines = ["Columns (--format table explains them below the table, and heads effect_size as "
             "effect_size(d_z)):", "mean_a, mean_b: the means over the topics",
             *output.pair_help(columns, by_system).splitlines()]
    return "".join(f"    {line}\n" for line in lines)


compare_cmd.__doc__ += _columns_help(("diff", "effect_size", "topics", "p_*", "residual_a", "judged_a"))


@command(app, "pvalues")
def pvalues_cmd(
    ctx: typer.Context,
    files: Optional[List[str]] = typer.Argument(None, metavar="[QRELS RUN...]", help="Straight from files: a qrels file and run files, one run each (nothing is written; the warehouse is not used)."),
    measure: str = typer.Option(..., "--measure", "-m", help="Measure."),
    qrels: Optional[str] = QrelsOpt, runs: str = RunsOpt, topics: str = TopicsOpt,
    test: str = TestOpt,
    correction: str = CorrectionOpt, alpha: float = AlphaOpt, samples: Optional[int] = BOpt,
    seed: int = SeedOpt,
    save: Optional[str] = typer.Option(None, "--save", help="Keep the pairs in table pair_tests under this name."),
    level: float = LevelOpt, by: str = ByOpt, rel_level: Optional[int] = RelLevelOpt,
    ties: str = TiesOpt,
    fmt: str = FormatOpt,
):
    """Every run (or system) pair: mean difference with its interval, Cohen's d_z with its interval, Sakai's effect size over the residual variance, p-value (and adjusted p-value).
    Given files (`irw pvalues QRELS RUN... -m M`), test them without a warehouse.

    """
    check_format(fmt)
    one_measure(measure, "pvalues", rel_level)
    options = dict(test=test, correction=correction, alpha=alpha, B=samples, seed=seed,
                   topics=topics, level=level, by=by, rel_level=rel_level, ties=ties)
    if files:
        if len(files) < 3:
            raise IrwError("pvalues from files takes a qrels file and at least two run files")
        if save or runs != "all":
            raise IrwError("--save and --runs read or write a warehouse: with files, name the run files")
        with progress_callback(f"{test} test") as progress:
            result = on_files(ctx, qrels, files[0], files[1:],
                              lambda w, q, ids: w.pvalues(measure, q, sum(ids, []), progress=progress, **options))
    else:
        with open_warehouse(ctx, read_only=save is None) as w, progress_callback(f"{test} test") as progress:
            result = w.pvalues(measure, qrels, runs, save=save, progress=progress, **options)
    if save:
        say(f"saved {len(result)} pairs in pair_tests as {save!r}")
    output.emit_pairs(result, fmt, level=level)


MATRIX_FORMATS = ("table", "csv", "json", "markdown", "latex")
MATRIX_LAYOUTS = ("full", "lower")



pvalues_cmd.__doc__ += _columns_help(("diff", "effect_size", "effect_size_residual", "statistic",
                                      "runs_a", "within_spread"), by_system=("runs_a", "within_spread"))

@command(app, "correlate")
def correlate_cmd(
    ctx: typer.Context,
    measure: List[str] = typer.Option([], "--measure", "-m", help="Measure A, and optionally measure B (default: A); with --matrix, every measure."),
    qrels: List[str] = typer.Option([], "--qrels", "-q", help="Qrels of the first ordering (default: the only one loaded from a file); with --matrix, every qrels (repeatable)."),
    qrels_b: Optional[str] = typer.Option(None, "--qrels-b", help="Qrels of the second ordering (default: --qrels)."),
    runs: str = RunsOpt, topics: str = TopicsOpt,
    rbo_p: float = typer.Option(0.9, "--rbo-p", help="Persistence of RBO."),
    matrix: bool = typer.Option(False, "--matrix", help="Every cell over the conditions measure x qrels, in one call."),
    of: str = typer.Option("scores", "--of", help="With --matrix: scores (run orderings by mean score) | pvalues (orderings of the run pairs by paired t-test p-value)."),
    statistic: List[str] = typer.Option([], "--statistic", "-s", help="With --matrix: kendall_tau, kendall_tau_a, tau_ap, rbo, pearson (repeatable; default kendall_tau, tau_ap, rbo); --of pvalues: kendall_tau, kendall_tau_a, tau_ap (default kendall_tau)."),
    save: Optional[str] = typer.Option(None, "--save", help="With --matrix: keep the cells in table correlation_matrices under this name."),
    condition: List[str] = typer.Option([], "--condition", "-c", help="With --matrix, instead of -m and --qrels: a condition MEASURE:QRELS, e.g. AP@100:trec8-d10 (repeatable, in the order of the table)."),
    layout: str = typer.Option("full", "--layout", help="With --matrix: full (every cell; csv and json one row per cell) | lower (a paper's table: below the diagonal, rows and columns the conditions, in table, csv, markdown and latex)."),
    fmt: str = typer.Option("table", "--format", "-f", help="table | csv | json; with --matrix also markdown | latex."),
):
    """Rank correlation of the run orderings by A on X and by B on Y: tau-b, tau-a, tau_AP, RBO, Pearson;
    with --matrix, of every two conditions (measure, qrels)."""
    if matrix:
        check_format(fmt, MATRIX_FORMATS)
        if layout not in MATRIX_LAYOUTS:
            raise IrwError(f"unknown --layout {layout!r}; valid: {', '.join(MATRIX_LAYOUTS)}")
        if qrels_b:
            raise IrwError("--qrels-b names the second qrels of one cell; with --matrix name every qrels with --qrels")
        if condition and (measure or qrels):
            raise IrwError("--condition names a measure and its qrels: give the conditions or -m and --qrels, not both")
        if not condition:
            api.measure_labels(measure)
        with open_warehouse(ctx, read_only=save is None) as w:
            cells = w.correlation_matrix(list(measure) or None, list(qrels) or None, runs,
                                         conditions=list(condition) or None, topics=topics, rbo_p=rbo_p,
                                         of=of, statistics=list(statistic) or None, save=save)
        if save:
            say(f"saved {len(cells)} cells in correlation_matrices as {save!r}")
        if layout == "lower":
            triangle = output.lower_triangle(cells)
            output.emit(triangle if fmt == "csv" else cells, fmt, table=triangle)
        else:
            output.emit(cells, fmt, table=output.matrix_layout(cells))
        return
    check_format(fmt)
    labels = api.measure_labels(measure)
    if of != "scores" or statistic or save or condition or layout != "full":
        raise IrwError("--of, --statistic, --save, --condition and --layout go with --matrix")
    if len(labels) > 2:
        raise IrwError("correlate takes one or two measures (more with --matrix)")
    if len(qrels) > 1:
        raise IrwError("correlate takes one --qrels and one --qrels-b (more with --matrix)")
    with open_warehouse(ctx, read_only=True) as w:
        result = w.correlate(measure[0], measure[-1], qrels[0] if qrels else None, qrels_b, runs,
                             topics=topics, rbo_p=rbo_p)
    output.emit(result, fmt)


@command(app, "ties")
def ties_cmd(
    ctx: typer.Context,
    measure: List[str] = MeasuresOpt,
    qrels: Optional[str] = QrelsOpt, runs: str = RunsOpt, topics: str = TopicsOpt,
    fmt: str = FormatOpt,
):
    """How much each run's scores depend on its ties (documents of equal score): its tie
    groups, tied documents and topics with ties; per measure its mean as stored (trec_eval),
    its exact mean over every tie-breaking (expected) and the difference, the bounds over
    every tie-breaking (optimistic, pessimistic) and their spread, its place and the best and
    worst places any tie-breaking gives it."""
    check_format(fmt)
    api.measure_labels(measure)  # a bad measure is reported before the warehouse is opened
    with open_warehouse(ctx, read_only=True) as w:
        result = w.ties(measure, qrels, runs, topics=topics)
    output.emit(result, fmt)


@command(app, "ci")
def ci_cmd(
    ctx: typer.Context,
    measure: str = typer.Option(..., "--measure", "-m", help="Measure."),
    qrels: Optional[str] = QrelsOpt, runs: str = RunsOpt, topics: str = TopicsOpt,
    level: float = typer.Option(0.95, "--level", help="Confidence level."),
    by: str = ByOpt, ties: str = TiesOpt,
    fmt: str = FormatOpt,
):
    """Each run's (or system's) mean with its t-distribution confidence interval."""
    check_format(fmt)
    one_measure(measure, "ci")
    with open_warehouse(ctx, read_only=True) as w:
        result = w.ci(measure, qrels, runs, topics=topics, level=level, by=by, ties=ties)
    output.emit(result, fmt)


@command(app, "summary")
def summary_cmd(
    ctx: typer.Context,
    measure: List[str] = MeasuresOpt,
    qrels: Optional[str] = QrelsOpt, runs: str = RunsOpt, topics: str = TopicsOpt,
    by: str = typer.Option("run", "--by", help="run (over its topics) | topic (over the runs)."),
    fmt: str = FormatOpt,
):
    """Per run or per topic: n, mean, standard deviation, minimum and maximum of each measure."""
    check_format(fmt)
    api.measure_labels(measure)
    with open_warehouse(ctx, read_only=True) as w:
        result = w.summary(measure, qrels, runs, topics=topics, by=by)
    output.emit(result, fmt)


@command(app, "power")
def power_cmd(
    ctx: typer.Context,
    measure: List[str] = MeasuresOpt,
    delta: List[float] = typer.Option(..., "--delta", "-d", help="The true difference between two runs to detect (repeatable)."),
    qrels: Optional[str] = QrelsOpt, runs: str = RunsOpt, topics: str = TopicsOpt,
    alpha: float = AlphaOpt,
    beta: float = typer.Option(0.2, "--beta", help="Type II error: the power wanted is 1 - beta."),
    anova: bool = typer.Option(False, "--anova", help="Also the one-way ANOVA design (Sakai's), DELTA the range between the best and worst of the systems."),
    systems: Optional[int] = typer.Option(None, "--systems", help="With --anova: the number of systems to compare (default: the runs, or systems, given)."),
    by: str = ByOpt,
    fmt: str = FormatOpt,
):
    """How many topics are enough (topic set size design, Sakai 2016): from the residual variance of the runs x topics matrix, the topics a paired t-test needs to detect DELTA with power 1 - beta, and the power and minimum detectable difference with the collection's topics."""
    check_format(fmt)
    api.measure_labels(measure)
    with open_warehouse(ctx, read_only=True) as w:
        result = w.power(measure, list(delta), qrels, runs, alpha=alpha, beta=beta, topics=topics,
                         by=by, anova=anova, systems=systems)
    output.emit(result, fmt)
