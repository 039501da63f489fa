"""Commands on Apache Spark: ``irw spark eval``, ``irw spark pool ...`` (over the Parquet files
of ``irw export``, writing Parquet), and ``irw load results`` (those results into the
warehouse)."""

from __future__ import annotations

from typing import List, Optional

import typer

from .. import api, output, spark
from ..errors import IrwError
from .app import FormatOpt, IrwGroup, TiesOpt, TopicsOpt, app, check_format, command, load_app, open_warehouse, say

spark_app = typer.Typer(
    help="Evaluate and pool on Apache Spark, over the Parquet files `irw export` writes "
         "(pip install 'irwarehouse\\[spark]').", no_args_is_help=True)
app.add_typer(spark_app, name="spark")
spark_pool_app = typer.Typer(help="Derived qrels and pool statistics on Spark.", no_args_is_help=True)
spark_app.add_typer(spark_pool_app, name="pool", cls=IrwGroup)

DataOpt = typer.Option(..., "--data", help="The warehouse's tables: a directory `irw export DIR` wrote (local, hdfs://, s3a://, ...).")
OutOpt = typer.Option(..., "--out", "-o", help="Where the results go (OUT/TABLE.parquet); store them with `irw load results OUT`.")
MasterOpt = typer.Option(None, "--master", help="Spark master: local[N], spark://HOST:PORT, yarn, ... (default: as spark-submit or the environment says, else local[*]).")
ConfOpt = typer.Option([], "--conf", help="A Spark property KEY=VALUE (repeatable).")
ReplaceOpt = typer.Option(False, "--replace", help="Overwrite results of the same tables in OUT.")
QrelsOpt = typer.Option(None, "--qrels", "-q", help="Qrels name (default: the only one loaded from a file).")
RunsOpt = typer.Option("all", "--runs", "-r", help="Run spec: all, pooled, team:NAME, deeply-judged[:M], @FILE or run ids, comma-separated.")
DepthOpt = typer.Option(100, "--depth", "-d", help="Pool depth d.")
DescriptionOpt = typer.Option(None, "--description", help="Free text for the catalogue.")


def _conf(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise IrwError(f"--conf {pair!r}: write KEY=VALUE, e.g. spark.executor.memory=4g")
        out[key.strip()] = value
    return out


def _open(data: str, master: str | None, conf: list[str]):
    """The Spark warehouse of one command (irwarehouse.spark.SparkWarehouse); the session it
    started is stopped at the end."""
    return spark.open(data, master, _conf(conf))


@command(spark_app, "eval")
def spark_eval(
    ctx: typer.Context,
    measure: List[str] = typer.Option(..., "--measure", "-m", help="Measure(s), e.g. AP, P@10, 'nDCG(discount=jk)@10'."),
    data: str = DataOpt, out: str = OutOpt, qrels: Optional[str] = QrelsOpt, runs: str = RunsOpt,
    topics: str = TopicsOpt,
    max_docs: Optional[int] = typer.Option(None, "--max-docs", "-M", help="Only the top N documents of each ranking (trec_eval -M)."),
    rel_level: Optional[int] = typer.Option(None, "--rel-level", "-l", help="Relevance threshold of the topic set (trec_eval -l)."),
    master: Optional[str] = MasterOpt, conf: List[str] = ConfOpt, replace: bool = ReplaceOpt,
    ties: str = TiesOpt,
):
    """Per-topic scores of the measures on Spark, as `irw eval` computes them, written to
    OUT/scores.parquet with OUT/evaluations.parquet."""
    parsed = api.parse_measures(measure, rel_level)  # once, before Spark starts
    with _open(data, master, conf) as wh:
        s = wh.eval(parsed, qrels, runs, out=out, topics=topics, max_docs=max_docs,
                    rel_level=rel_level, replace=replace, ties=ties)
    n = len(s["measures"])
    say(f"wrote {s['scores']:,} scores ({n} measure{'s' if n != 1 else ''}, {s['runs']} runs, "
        f"qrels {s['qrels']}) to {s['path']}; store them in the warehouse with: irw load results {out}")


def _pool(kind: str, data: str, out: str, master, conf, **options) -> None:
    """Build derived qrels on Spark (SparkWarehouse.pool) and say what was written."""
    with _open(data, master, conf) as wh:
        made = wh.pool(kind, out=out, **options)
    for r in made.records():
        say(f"qrels {r['qrels']} ({kind} of {r['parent']}, depth {r['depth']}, {r['n_runs']} runs): "
            f"{r['judged']:,} judged, {r['relevant']:,} relevant")
    say(f"wrote {len(made)} derived qrels to {made.info['path']}; store them in the warehouse with: "
        f"irw load results {out}")


@command(spark_pool_app, "depth")
def spark_pool_depth(name: str = typer.Option(..., "--name", "-n", help="Name of the new qrels."),
                     data: str = DataOpt, out: str = OutOpt, qrels: Optional[str] = QrelsOpt,
                     runs: str = RunsOpt, depth: int = DepthOpt, description: Optional[str] = DescriptionOpt,
                     master: Optional[str] = MasterOpt, conf: List[str] = ConfOpt, replace: bool = ReplaceOpt):
    """Reduced qrels J ∩ pool(S, d), as `irw pool depth`."""
    _pool("depth", data, out, master, conf, name=name, qrels=qrels, runs=runs, depth=depth,
          replace=replace, description=description)


@command(spark_pool_app, "shallow")
def spark_pool_shallow(name: str = typer.Option(..., "--name", "-n", help="Name of the new qrels."),
                       depth: int = typer.Option(..., "--depth", "-d", help="Pool depth pd."),
                       data: str = DataOpt, out: str = OutOpt, qrels: Optional[str] = QrelsOpt,
                       description: Optional[str] = DescriptionOpt, master: Optional[str] = MasterOpt,
                       conf: List[str] = ConfOpt, replace: bool = ReplaceOpt):
    """Shallow-pool qrels J ∩ pool(all runs, pd), as `irw pool shallow`."""
    _pool("shallow", data, out, master, conf, name=name, qrels=qrels, depth=depth, replace=replace,
          description=description)


@command(spark_pool_app, "leave-out")
def spark_pool_leave_out(
    team: List[str] = typer.Option([], "--team", "-t", help="The team left out (repeatable: one qrels each)."),
    all_teams: bool = typer.Option(False, "--all-teams", help="One qrels for every team of the run set."),
    name: Optional[str] = typer.Option(None, "--name", "-n", help="Name of the new qrels (one team)."),
    prefix: Optional[str] = typer.Option(None, "--prefix", help="Names are PREFIX + team (default: QRELS-lo-)."),
    data: str = DataOpt, out: str = OutOpt, qrels: Optional[str] = QrelsOpt, runs: str = RunsOpt,
    depth: int = DepthOpt, description: Optional[str] = DescriptionOpt,
    master: Optional[str] = MasterOpt, conf: List[str] = ConfOpt, replace: bool = ReplaceOpt,
):
    """Leave-one-team-out qrels J − U_t, as `irw pool leave-out`: all teams in one Spark job."""
    _pool("leave-out", data, out, master, conf, name=[name] if name else None, qrels=qrels, runs=runs, depth=depth,
          teams="all" if all_teams else list(team), prefix=prefix, replace=replace,
          description=description)


@command(spark_pool_app, "take")
def spark_pool_take(
    team: List[str] = typer.Option(..., "--team", "-t", help="A team whose pool is kept (repeat for take-k-teams)."),
    name: str = typer.Option(..., "--name", "-n", help="Name of the new qrels."),
    data: str = DataOpt, out: str = OutOpt, qrels: Optional[str] = QrelsOpt, runs: str = RunsOpt,
    depth: int = DepthOpt, description: Optional[str] = DescriptionOpt,
    master: Optional[str] = MasterOpt, conf: List[str] = ConfOpt, replace: bool = ReplaceOpt,
):
    """Take-one-team qrels J ∩ D_t (several --team: J ∩ ∪ D_t), as `irw pool take`."""
    _pool("take", data, out, master, conf, name=name, qrels=qrels, runs=runs, depth=depth,
          teams=list(team), replace=replace, description=description)


@command(spark_pool_app, "stats")
def spark_pool_stats(
    what: str = typer.Argument("topics", help="topics | multiplicity | teams | unique | judged | collection"),
    data: str = DataOpt, qrels: Optional[str] = QrelsOpt, runs: str = RunsOpt, depth: int = DepthOpt,
    out: Optional[str] = typer.Option(None, "--out", "-o", help="Write OUT/pool_<what>.parquet instead of printing."),
    fmt: str = FormatOpt, master: Optional[str] = MasterOpt, conf: List[str] = ConfOpt,
    replace: bool = ReplaceOpt,
):
    """Pool statistics on Spark, as `irw pool stats`: printed, or written as Parquet (--out)."""
    check_format(fmt)
    with _open(data, master, conf) as wh:
        result = wh.pool_stats(what, qrels, runs, depth, out=out, replace=replace)
        if out is None:
            result = spark.spark_errors(lambda: [row.asDict() for row in result.collect()])
    if out:
        say(f"wrote the {what} statistics to {result}")
    else:
        output.emit(result, fmt)


@command(load_app, "results")
def load_results_cmd(
    ctx: typer.Context,
    directory: str = typer.Argument(..., help="A directory `irw spark eval` or `irw spark pool` wrote (--out)."),
    replace: bool = typer.Option(False, "--replace", help="Replace derived qrels of the same names."),
):
    """Store results computed on Spark in the warehouse: derived qrels, and scores with their
    evaluations (replacing the stored scores of the same qrels, runs and measures)."""
    with open_warehouse(ctx) as w:
        info = w.load_results(directory, replace=replace)
    for q in info["qrels"]:
        say(f"stored qrels {q['qrels']} ({q['kind']} of {q['parent']}): {q['judged']:,} judged, "
            f"{q['relevant']:,} relevant")
    if info["scores"]:
        say(f"stored {info['scores']:,} scores from {directory}")
