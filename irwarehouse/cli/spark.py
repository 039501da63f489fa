"""Commands on Apache Spark: ``irw spark eval``, ``irw spark pool ...`` (over the Parquet files
of ``irw export``, writing Parquet), and ``irw load results`` (those results into the
warehouse)."""

from __future__ import annotations

from typing import List, Optional

import typer

from .. import evaluate as ev
from .app import FormatOpt, IrwGroup, TopicsOpt, app, check_format, command, load_app, open_warehouse, say

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
    from ..errors import IrwError

    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise IrwError(f"--conf {pair!r}: write KEY=VALUE, e.g. spark.executor.memory=4g")
        out[key.strip()] = value
    return out


class _Session:
    """The Spark warehouse of one command; the session it started is stopped at the end."""

    def __init__(self, data: str, master: str | None, conf: list[str]):
        from .. import spark as irs

        self.irs = irs
        settings = _conf(conf)
        self.owned = not irs.active_session()  # a session this process already had stays
        self.spark = irs.session(master, settings)
        try:
            self.wh = irs.SparkWarehouse(self.spark, data)
        except BaseException:
            self.__exit__()
            raise

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.owned:
            self.spark.stop()


@command(spark_app, "eval")
def spark_eval(
    ctx: typer.Context,
    measure: List[str] = typer.Option(..., "--measure", "-m", help="Measure(s), e.g. AP, P@10, 'nDCG(discount=jk)@10'."),
    data: str = DataOpt, out: str = OutOpt, qrels: Optional[str] = QrelsOpt, runs: str = RunsOpt,
    topics: str = TopicsOpt,
    max_docs: Optional[int] = typer.Option(None, "--max-docs", "-M", help="Only the top N documents of each ranking (trec_eval -M)."),
    rel_level: Optional[int] = typer.Option(None, "--rel-level", "-l", help="Relevance threshold of the topic set (trec_eval -l)."),
    master: Optional[str] = MasterOpt, conf: List[str] = ConfOpt, replace: bool = ReplaceOpt,
):
    """Per-topic scores of the measures on Spark, as `irw eval` computes them, written to
    OUT/scores.parquet with OUT/evaluations.parquet."""
    from .. import measures as ms

    wanted = ms.parse_all(measure)
    with _Session(data, master, conf) as s:
        def run():
            wh = s.wh
            name = qrels or wh.default_qrels()
            run_ids = wh.run_ids(runs, name)
            scores = wh.evaluate(name, wanted, run_ids, topics, max_docs, rel_level)
            log = wh.evaluations(name, wanted, run_ids, topics, max_docs, rel_level)
            paths = s.irs.write_results({"scores": scores, "evaluations": log}, out, replace)
            n = s.spark.read.parquet(paths["scores"]).count()
            return name, len(run_ids), n, paths["scores"]
        name, n_runs, n, path = s.irs.spark_errors(run)
    say(f"wrote {n:,} scores ({len(wanted)} measure{'s' if len(wanted) != 1 else ''}, {n_runs} runs, "
        f"qrels {name}) to {path}; store them in the warehouse with: irw load results {out}")


def _pool(kind: str, data: str, out: str, master, conf, replace: bool, qrels: Optional[str],
          runs: str, depth: int, targets, description: Optional[str]) -> None:
    """Build derived qrels on Spark; ``targets(wh, parent, run_ids)`` gives [(name, teams)]."""
    with _Session(data, master, conf) as s:
        def run():
            wh = s.wh
            parent = qrels or wh.default_qrels()
            run_ids = wh.run_ids(runs, parent)
            chosen = targets(wh, parent, run_ids)
            rows, info = wh.derived_qrels(kind, parent, chosen, run_ids, depth, description, runs)
            paths = s.irs.write_results({"qrels": rows, "qrels_info": info}, out, replace)
            s.spark.read.parquet(paths["qrels"]).createOrReplaceTempView("irw_written")
            counts = {r[0]: (r[1], r[2]) for r in s.spark.sql(
                "SELECT qrels, count(*) FILTER (WHERE rel >= 0), count(*) FILTER (WHERE rel >= 1) "
                "FROM irw_written GROUP BY qrels").collect()}
            return parent, run_ids, chosen, counts, paths["qrels"]
        parent, run_ids, chosen, counts, path = s.irs.spark_errors(run)
    for name, _ in chosen:
        judged, relevant = counts.get(name, (0, 0))
        say(f"qrels {name} ({kind} of {parent}, depth {depth}, {len(run_ids)} runs): "
            f"{judged:,} judged, {relevant:,} relevant")
    say(f"wrote {len(chosen)} derived qrels to {path}; store them in the warehouse with: "
        f"irw load results {out}")


@command(spark_pool_app, "depth")
def spark_pool_depth(name: str = typer.Option(..., "--name", "-n", help="Name of the new qrels."),
                     data: str = DataOpt, out: str = OutOpt, qrels: Optional[str] = QrelsOpt,
                     runs: str = RunsOpt, depth: int = DepthOpt, description: Optional[str] = DescriptionOpt,
                     master: Optional[str] = MasterOpt, conf: List[str] = ConfOpt, replace: bool = ReplaceOpt):
    """Reduced qrels J ∩ pool(S, d), as `irw pool depth`."""
    _pool("depth", data, out, master, conf, replace, qrels, runs, depth,
          lambda wh, parent, run_ids: [(name, [])], description)


@command(spark_pool_app, "shallow")
def spark_pool_shallow(name: str = typer.Option(..., "--name", "-n", help="Name of the new qrels."),
                       depth: int = typer.Option(..., "--depth", "-d", help="Pool depth pd."),
                       data: str = DataOpt, out: str = OutOpt, qrels: Optional[str] = QrelsOpt,
                       description: Optional[str] = DescriptionOpt, master: Optional[str] = MasterOpt,
                       conf: List[str] = ConfOpt, replace: bool = ReplaceOpt):
    """Shallow-pool qrels J ∩ pool(all runs, pd), as `irw pool shallow`."""
    _pool("shallow", data, out, master, conf, replace, qrels, "all", depth,
          lambda wh, parent, run_ids: [(name, [])], description)


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
    from .. import pools

    def targets(wh, parent, run_ids):
        teams = list(pools.teams_of(wh, run_ids, ev.collection_of(wh, parent))) if all_teams else list(team)
        if not teams:
            raise pools.IrwError("name a team with --team, or use --all-teams")
        if name and len(teams) > 1:
            raise pools.IrwError("--name names one qrels: use --prefix for several teams")
        stem = prefix if prefix is not None else f"{parent}-lo-"
        return [(name, [teams[0]])] if name else [(stem + t, [t]) for t in teams]

    _pool("leave-out", data, out, master, conf, replace, qrels, runs, depth, targets, description)


@command(spark_pool_app, "take")
def spark_pool_take(
    team: List[str] = typer.Option(..., "--team", "-t", help="A team whose pool is kept (repeat for take-k-teams)."),
    name: str = typer.Option(..., "--name", "-n", help="Name of the new qrels."),
    data: str = DataOpt, out: str = OutOpt, qrels: Optional[str] = QrelsOpt, runs: str = RunsOpt,
    depth: int = DepthOpt, description: Optional[str] = DescriptionOpt,
    master: Optional[str] = MasterOpt, conf: List[str] = ConfOpt, replace: bool = ReplaceOpt,
):
    """Take-one-team qrels J ∩ D_t (several --team: J ∩ ∪ D_t), as `irw pool take`."""
    _pool("take", data, out, master, conf, replace, qrels, runs, depth,
          lambda wh, parent, run_ids: [(name, list(team))], description)


@command(spark_pool_app, "stats")
def spark_pool_stats(
    what: str = typer.Argument("topics", help="topics | multiplicity | teams | unique | judged | collection"),
    data: str = DataOpt, qrels: Optional[str] = QrelsOpt, runs: str = RunsOpt, depth: int = DepthOpt,
    out: Optional[str] = typer.Option(None, "--out", "-o", help="Write OUT/pool_<what>.parquet instead of printing."),
    fmt: str = FormatOpt, master: Optional[str] = MasterOpt, conf: List[str] = ConfOpt,
    replace: bool = ReplaceOpt,
):
    """Pool statistics on Spark, as `irw pool stats`: printed, or written as Parquet (--out)."""
    from .. import output, pools

    check_format(fmt)
    if what not in pools.STATS:
        raise pools.IrwError(f"unknown statistics {what!r}; valid: {', '.join(pools.STATS)}")
    with _Session(data, master, conf) as s:
        def run():
            wh = s.wh
            name = qrels or wh.default_qrels()
            frame = wh.pool_stats(what, name, wh.run_ids(runs, name), depth)
            if out:
                return s.irs.write_results({f"pool_{what}": frame}, out, replace)[f"pool_{what}"]
            return [row.asDict() for row in frame.collect()]
        result = s.irs.spark_errors(run)
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
    from .. import spark as irs

    with open_warehouse(ctx) as con:
        info = irs.load_results(con, directory, replace=replace)
    for q in info["qrels"]:
        say(f"stored qrels {q['qrels']} ({q['kind']} of {q['parent']}): {q['judged']:,} judged, "
            f"{q['relevant']:,} relevant")
    if info["scores"]:
        say(f"stored {info['scores']:,} scores from {directory}")
