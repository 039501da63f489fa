"""Commands for pools and derived qrels: ``irw pool ...`` and ``irw runs deeply-judged``."""

from __future__ import annotations

from typing import List, Optional

import typer

from .. import output
from .app import FormatOpt, app, command, open_warehouse, runs_app, say, show

pool_app = typer.Typer(help="Pools, unique contributions and derived qrels.", no_args_is_help=True)
app.add_typer(pool_app, name="pool")

QrelsOpt = typer.Option(None, "--qrels", "-q", help="The parent qrels (default: the only one loaded).")
RunsOpt = typer.Option("all", "--runs", "-r", help="The run set S: all, pooled, team:NAME, deeply-judged[:M], @FILE or run ids.")
DepthOpt = typer.Option(100, "--depth", "-d", help="Pool depth d.")
ReplaceOpt = typer.Option(False, "--replace", help="Replace a qrels of that name.")
DescriptionOpt = typer.Option(None, "--description", help="Free text for the catalogue.")


def _report(rows) -> None:
    for r in rows.records():
        say(f"created qrels {r['qrels']} ({r['kind']} of {r['parent']}, depth {r['depth']}, "
            f"{r['n_runs']} runs): {r['judged']:,} judged, {r['relevant']:,} relevant")


@command(pool_app, "depth")
def pool_depth(ctx: typer.Context, name: str = typer.Option(..., "--name", "-n", help="Name of the new qrels."),
               qrels: Optional[str] = QrelsOpt, runs: str = RunsOpt, depth: int = DepthOpt,
               replace: bool = ReplaceOpt, description: Optional[str] = DescriptionOpt):
    """Reduced qrels J ∩ pool(S, d): only judgments of documents in the depth-d pool of S."""
    with open_warehouse(ctx) as w:
        _report(w.pool("depth", name, qrels, runs, depth=depth, replace=replace, description=description))


@command(pool_app, "shallow")
def pool_shallow(ctx: typer.Context, name: str = typer.Option(..., "--name", "-n", help="Name of the new qrels."),
                 qrels: Optional[str] = QrelsOpt, depth: int = typer.Option(..., "--depth", "-d", help="Pool depth pd."),
                 replace: bool = ReplaceOpt, description: Optional[str] = DescriptionOpt):
    """Shallow-pool qrels J ∩ pool(all runs, pd) (Sakai uses pd = 50, 10, 1)."""
    with open_warehouse(ctx) as w:
        _report(w.pool("shallow", name, qrels, depth=depth, replace=replace, description=description))


@command(pool_app, "leave-out")
def pool_leave_out(ctx: typer.Context,
                   team: List[str] = typer.Option([], "--team", "-t", help="The team left out (repeatable: one qrels each)."),
                   all_teams: bool = typer.Option(False, "--all-teams", help="One qrels for every team of the run set."),
                   name: Optional[str] = typer.Option(None, "--name", "-n", help="Name of the new qrels (one team)."),
                   prefix: Optional[str] = typer.Option(None, "--prefix", help="Names are PREFIX + team (default: QRELS-lo-)."),
                   qrels: Optional[str] = QrelsOpt, runs: str = RunsOpt, depth: int = DepthOpt,
                   replace: bool = ReplaceOpt, description: Optional[str] = DescriptionOpt):
    """Leave-one-team-out qrels J − U_t: the team's unique contributions become unjudged."""
    with open_warehouse(ctx) as w:
        _report(w.pool("leave-out", [name] if name else None, qrels, runs, depth=depth, teams="all" if all_teams else list(team),
                       prefix=prefix, replace=replace, description=description))


@command(pool_app, "take")
def pool_take(ctx: typer.Context,
              team: List[str] = typer.Option(..., "--team", "-t", help="A team whose pool is kept (repeat for take-k-teams)."),
              name: str = typer.Option(..., "--name", "-n", help="Name of the new qrels."),
              qrels: Optional[str] = QrelsOpt, runs: str = RunsOpt, depth: int = DepthOpt,
              replace: bool = ReplaceOpt, description: Optional[str] = DescriptionOpt):
    """Take-one-team qrels J ∩ D_t (several --team: take-k-teams J ∩ ∪ D_t)."""
    with open_warehouse(ctx) as w:
        _report(w.pool("take", name, qrels, runs, depth=depth, teams=list(team), replace=replace,
                       description=description))


@command(pool_app, "stats")
def pool_stats(ctx: typer.Context,
               what: str = typer.Argument("topics", help="topics | multiplicity | teams | unique | judged | collection | qrels"),
               qrels: List[str] = typer.Option([], "--qrels", "-q", help="The qrels (default: the only one loaded); `qrels` takes several (repeatable)."),
               runs: str = RunsOpt, depth: int = DepthOpt, fmt: str = FormatOpt):
    """Pool statistics: per topic, multiplicity bands (with a total), per team unique contributions,
    per run and topic the first unjudged rank and Judged@depth, per collection, or per qrels
    (with the mean first unjudged rank)."""
    show(ctx, fmt, lambda w: w.pool_stats(what, list(qrels) or None, runs, depth))


@command(runs_app, "deeply-judged")
def runs_deeply_judged(ctx: typer.Context, qrels: Optional[str] = QrelsOpt,
                       depth: int = typer.Option(50, "--depth", "-d", help="m: documents judged at the top of every topic."),
                       fmt: str = FormatOpt):
    """Runs with at least m documents for every topic, all of their top m judged."""
    show(ctx, fmt, lambda w: [{"run_id": r} for r in w.deeply_judged(qrels, depth)] or output.no_rows(["run_id"]))
