"""Judging the judges: ``irw qrels compare`` (two judgment sets as assessors) and ``irw qrels
rankings`` (as rankings of the runs). Each parses its arguments, calls one method of
irwarehouse.api.Warehouse and prints what it returns."""

from __future__ import annotations

from typing import List, Optional

import typer

from .. import api, output
from .app import FormatOpt, RunsOpt, TopicsOpt, check_format, command, open_warehouse, progress_callback, qrels_app
from .stats import CORRECTIONS_HELP, AlphaOpt, BOpt, CorrectionOpt, SeedOpt, TestOpt

QrelsA = typer.Argument(..., help="The reference judgment set A (e.g. the official qrels).")
QrelsB = typer.Argument(..., help="The judgment set B compared with it (e.g. an automatic judge's).")


@command(qrels_app, "compare")
def qrels_compare(
    ctx: typer.Context,
    qrels_a: str = QrelsA, qrels_b: str = QrelsB,
    show: str = typer.Option("agreement", "--show", "-s", help="agreement (per topic and all) | intervals (bootstrap over topics) | confusion (grades of A x grades of B) | only-a | only-b (the documents one set judged)."),
    rel_level: int = typer.Option(1, "--rel-level", "-l", help="Binary labels: relevant at grade >= L (Cohen's kappa, nominal alpha)."),
    per_topic: bool = typer.Option(False, "--per-topic", help="With --show confusion: each topic's matrix too."),
    samples: int = typer.Option(1000, "-B", "--samples", help="Bootstrap samples of --show intervals."),
    seed: int = SeedOpt,
    level: float = typer.Option(0.95, "--level", help="Confidence level of --show intervals."),
    fmt: str = FormatOpt,
):
    """Two judgment sets as assessors, over the documents both judged: counts, the confusion
    matrix of grades, Cohen's kappa, weighted kappa and Krippendorff's alpha."""
    check_format(fmt)
    with open_warehouse(ctx, read_only=True) as w:
        result = w.compare_qrels(qrels_a, qrels_b, show, rel_level=rel_level, B=samples, seed=seed,
                                 level=level, per_topic=per_topic)
    output.emit(result, fmt)


@command(qrels_app, "rankings")
def qrels_rankings(
    ctx: typer.Context,
    qrels_a: str = QrelsA, qrels_b: str = QrelsB,
    measure: List[str] = typer.Option(..., "--measure", "-m", help="Measure (repeatable)."),
    show: str = typer.Option("runs", "--show", "-s", help="runs (scores, ranks and rank shifts) | groups (mean shift per group and its permutation test) | correlation (tau, tau_AP, tau on the top k, RBO) | decisions (significance under B against A)."),
    runs: str = RunsOpt, topics: str = TopicsOpt,
    by: str = typer.Option("team", "--by", help="The run metadata column that groups the runs (team, kind, pooled, ...)."),
    permutations: int = typer.Option(10000, "--permutations", help="Random groups drawn by the permutation test of --show groups."),
    bias_correction: str = typer.Option("holm", "--bias-correction", help="Correction of --show groups over the groups: " + CORRECTIONS_HELP + "."),
    top_k: int = typer.Option(10, "--top-k", "-k", help="Kendall's tau over the runs A ranks within its top k."),
    rbo_p: float = typer.Option(0.9, "--rbo-p", help="Persistence of RBO."),
    test: str = TestOpt, correction: str = CorrectionOpt, alpha: float = AlphaOpt,
    samples: Optional[int] = BOpt, seed: int = SeedOpt,
    fmt: str = FormatOpt,
):
    """Two judgment sets as rankings of the runs: scores, ranks and rank shifts, bias per group,
    rank correlations, and the significance decisions under both."""
    check_format(fmt)
    options = api.RankingOptions(what=show, by=by, topics=topics, test=test, correction=correction, alpha=alpha,
                                 B=samples, seed=seed, top_k=top_k, rbo_p=rbo_p, permutations=permutations,
                                 bias_correction=bias_correction)
    with open_warehouse(ctx, read_only=True) as w, progress_callback(f"{test} test") as progress:
        result = w.compare_rankings(qrels_a, qrels_b, measure, runs, options=options, progress=progress)
    output.emit(result, fmt)
