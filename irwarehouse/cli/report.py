"""``irw report``: one self-contained HTML page about a set of runs, or the paper table."""

from __future__ import annotations

import sys
from typing import List, Optional

import typer

from .. import api
from ..errors import IrwError
from .app import (QrelsOpt, RunsOpt, TiesOpt, TopicsOpt, app, check_format, command, open_warehouse,
                  progress_callback, say)
from .stats import AlphaOpt, BOpt, SeedOpt, TestOpt

REPORT_FORMATS = ("html", "latex", "markdown")


@command(app, "report")
def report_cmd(
    ctx: typer.Context,
    measure: List[str] = typer.Option(..., "--measure", "-m", help="Measure (repeatable); the first orders the runs."),
    qrels: Optional[str] = QrelsOpt, runs: str = RunsOpt, topics: str = TopicsOpt,
    test: str = TestOpt,
    correction: Optional[str] = typer.Option(None, "--correction", help="Multiple comparisons: " + " | ".join(api.CORRECTIONS) + " (over all pairs; default: holm with more than 10 runs, none with fewer)."), alpha: float = AlphaOpt, samples: Optional[int] = BOpt,
    seed: int = SeedOpt,
    level: float = typer.Option(0.95, "--level", help="Confidence level of the leaderboard's intervals and of each pair's interval and d_z interval."),
    rbp_p: float = typer.Option(0.8, "--rbp-p", help="Persistence of the RBP and RBP residual of the coverage section."),
    judged_k: int = typer.Option(10, "--judged-k", help="Depth of the Judged@k of the coverage section."),
    fmt: str = typer.Option("html", "--format", "-f", help="html (a page) | latex | markdown (the paper table)."),
    out: Optional[str] = typer.Option(None, "--out", "-o", metavar="FILE", help="Write here (latex and markdown: stdout without it)."),
    replace: bool = typer.Option(False, "--replace", help="Overwrite FILE if it exists (never a database)."),
    against: Optional[str] = typer.Option(None, "--against", metavar="QRELS", help="A second judgment set B judged against --qrels (the reference): the page of agreement, the two leaderboards, scores under both, decisions and the groups flagged (html)."),
    by: Optional[str] = typer.Option(None, "--by", help="run | system: a report on the runs (default) or on their systems (run_meta.system; a system's per-topic score the mean of its runs'); with --against: the run metadata column that groups the runs (team, kind, ...; default team)."),
    top_k: int = typer.Option(10, "--top-k", "-k", help="With --against: Kendall's tau over the runs the reference ranks within its top k."),
    permutations: int = typer.Option(10000, "--permutations", help="With --against: random groups drawn by the bias test."),
    bias_correction: str = typer.Option("holm", "--bias-correction", help="With --against: correction of the bias test over the groups."),
    rel_level: int = typer.Option(1, "--rel-level", "-l", help="With --against: binary labels relevant at grade >= L."),
    intervals: bool = typer.Option(False, "--intervals", help="The paper table (latex, markdown): each mean with its confidence interval at --level."),
    highlight: List[str] = typer.Option([], "--highlight", metavar="RUN", help="Mark these runs in the page's tables and figures (repeatable or comma-separated run ids; systems with --by system)."),
    effects: bool = typer.Option(False, "--effect-sizes", help="The paper table (latex, markdown): beside each measure, each run's Cohen's d_z against the measure's best run, with its exact interval."),
    ties: str = TiesOpt,
):
    """A report on the runs: leaderboard with confidence intervals, significance matrix,
    per-topic distributions, correlation of the measures, judgment coverage; or, with
    --format latex|markdown, the paper table with significance marks; or, with --against,
    a second judgment set judged against the qrels."""
    check_format(fmt, REPORT_FORMATS)
    if highlight and against:
        raise IrwError("--highlight marks runs of the runs' report; the page of --against does not take it")
    if fmt == "html" and not out:
        raise IrwError("the html report is a page: give a file with --out (latex and markdown print on stdout without it)")
    with open_warehouse(ctx, read_only=True) as w, progress_callback(f"{test} test") as progress:
        rep = w.report(measure, qrels, runs, topics=topics, test=test, correction=correction,
                       alpha=alpha, B=samples, seed=seed, level=level, judged_k=judged_k, rbp_p=rbp_p,
                       format=fmt, out=out, replace=replace, against=against, by=by, top_k=top_k,
                       permutations=permutations, bias_correction=bias_correction, rel_level=rel_level,
                       intervals=intervals, effects=effects, highlight=highlight, progress=progress,
                       ties=ties)
    if out is None:
        sys.stdout.write(rep.render(fmt, intervals=intervals, effects=effects))
        return
    qrels_text = f"qrels {rep.qrels}" + (f" against {against}" if against else "")
    say(f"wrote the {fmt} report on {len(rep.run_ids)} {getattr(rep, 'unit', 'run')}s and {len(rep.measures)} measure"
        f"{'s' if len(rep.measures) != 1 else ''} ({qrels_text}) to {out}")
