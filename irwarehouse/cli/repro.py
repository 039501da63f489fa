"""``irw repro``: whether a result reproduces (Breuer et al. 2020, as repro_eval computes
it). It parses its arguments, calls ``Warehouse.repro`` and prints what it returns."""

from __future__ import annotations

from typing import List, Optional

import typer

from .. import output
from .app import FormatOpt, app, check_format, command, open_warehouse, say


@command(app, "repro")
def repro_cmd(
    ctx: typer.Context,
    original: str = typer.Argument(..., help="The original (advanced) run."),
    reproduced: str = typer.Argument(..., help="Its reproduction: a run, or a system of runs (run_meta.system: seeds, folds), each compared and their spread shown."),
    measure: List[str] = typer.Option(..., "--measure", "-m", help="Measure (repeatable)."),
    baseline: Optional[str] = typer.Option(None, "--baseline", help="The original's baseline run (for ER and ΔRI)."),
    reproduced_baseline: Optional[str] = typer.Option(None, "--reproduced-baseline", help="The reproduced baseline: a run, or a system with as many runs as the reproduction."),
    qrels: Optional[str] = typer.Option(None, "--qrels", "-q", help="Qrels of the original runs (default: the only one loaded from a file)."),
    reproduced_qrels: Optional[str] = typer.Option(None, "--reproduced-qrels", help="Qrels of the reproduced runs when they are a replication on another collection (default: --qrels)."),
    topics: str = typer.Option("run", "--topics", help="Topic set: run (as repro_eval and trec_eval: the topics the runs answered) | qrels | all."),
    show: str = typer.Option("effects", "--show", "-s", help="effects (per measure: means, RMSE, p-value, ER, ΔRI) | order (KTU and RBO per cut-off; with --per-topic, per topic) | spread (over several reproductions)."),
    per_topic: bool = typer.Option(False, "--per-topic", help="With --show order: every topic, not only the mean (topic all)."),
    save: Optional[str] = typer.Option(None, "--save", help="Keep the effects in table repro_effects and the order in repro_order under this name."),
    fmt: str = FormatOpt,
):
    """Whether a result reproduces: KTU and RBO of the rankings, RMSE and p-values of the scores, effect ratio and ΔRI (repro_eval's numbers)."""
    check_format(fmt)
    with open_warehouse(ctx, read_only=save is None) as w:
        result = w.repro(original, reproduced, measure, baseline=baseline,
                         reproduced_baseline=reproduced_baseline, qrels=qrels,
                         reproduced_qrels=reproduced_qrels, topics=topics, show=show,
                         per_topic=per_topic, save=save)
    if save:
        say(f"saved {len(result.info['effects'])} rows in repro_effects and "
            f"{len(result.info['order'])} in repro_order as {save!r}")
    output.emit(result, fmt)
