"""The warehouse's SQL on Apache Spark: evaluation and pools past one machine.

The measure, pool and view templates render for Spark SQL (``sql/_dialect.sql``, dialect
``spark``) and run over Parquet copies of the warehouse's tables -- the files ``irw export
DIR`` writes -- registered as temporary views of a SparkSession; pools and the other table
macros become temporary SQL table functions of the session. Nothing is written to the
session's catalogue. Results are DataFrames with the warehouse's columns; written as Parquet
(``write_results``), ``irw load results`` stores them in the warehouse
(:func:`load_results`).

    from irwarehouse import spark

    with spark.open("export/", master="local[4]") as wh:
        wh.eval(["AP", "P@10"], "trec8", out="results/")    # what `irw spark eval` does
        per_topic = wh.evaluate("trec8", ["AP"], wh.run_ids())  # a Spark DataFrame

:class:`SparkEngine` implements the engine protocol (irwarehouse.connection.Engine) for a
SparkSession: evaluation, derived qrels and pool statistics are the same functions as on
DuckDB (irwarehouse.engine), with this engine as their parameter. pyspark (4.x, Java 17 or
later) is imported only by the functions that need it: the optional extra
``irwarehouse[spark]``. Run sets are run specs or lists of run ids.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import re
from functools import reduce
from pathlib import Path

from . import catalogue, measures, runsets, sql
from .connection import Engine, transaction
from .engine import evaluation, pools
from .errors import IrwError
from .judgment_kinds import GRADED
from .options import RankingOptions, tie_policy
from .result import Result

DIALECT = "spark"
# The warehouse's tables the Spark engine reads (files TABLE.parquet of an export).
TABLES = ("runs", "run_topics", "run_loads", "run_meta", "qrels", "qrels_info", "qrels_intents",
          "qrels_strata", "qrels_prefs", "scores")
# The templates whose views and table functions it creates in the session.
SCHEMA_TEMPLATES = ("views.sql", "pools.sql")
# What `irw spark` writes and `irw load results` reads: tables of the warehouse's layout.
RESULT_TABLES = ("qrels_info", "qrels", "evaluations", "scores")
# Columns of those tables that results written by an earlier irw lack (read as NULL).
LATER_COLUMNS = {"evaluations": ("ranking_policy", "ties"), "scores": ("ties",)}
INSTALL = "pip install 'irwarehouse[spark]' (pyspark 4, which needs Java 17 or later)"


def _pyspark():
    try:
        import pyspark  # noqa: F401
        from pyspark.sql import SparkSession
    except ImportError:
        raise IrwError(f"Spark is not installed: {INSTALL}") from None
    return SparkSession


def session(master: str | None = None, conf: dict[str, str] | None = None,
            app_name: str = "irwarehouse"):
    """A SparkSession (the active one if there is one). ``master``: local[N], spark://HOST:PORT,
    yarn, ...; None keeps what spark-submit or the environment set (else local[*]). A local
    master gets a few shuffle partitions (8) instead of Spark's 200, fitting one machine;
    ``conf`` sets any Spark property. A JVM that irw starts logs errors only."""
    SparkSession = _pyspark()
    import warnings  # pyspark 4 warns about pandas 3, which irw does not hand to Spark

    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")
    builder = SparkSession.builder.appName(app_name)
    log = Path(__file__).with_name("spark_log4j2.properties")
    settings = {"spark.ui.showConsoleProgress": "false", "spark.sql.session.timeZone": "UTC",
                "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={log.as_uri()}"}
    if master:
        builder = builder.master(master)
    settings.update(conf or {})
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        spark = builder.getOrCreate()
    except Exception as exc:
        raise IrwError(f"cannot start Spark{f' (master {master})' if master else ''}: "
                       f"{_first_line(exc)}; Spark needs Java 17 or later (java on the PATH, "
                       "or JAVA_HOME)") from None
    if spark.sparkContext.master.startswith("local") and "spark.sql.shuffle.partitions" not in (conf or {}):
        spark.conf.set("spark.sql.shuffle.partitions", "8")
    spark.sparkContext.setLogLevel("OFF")
    import logging  # PySpark logs every failed query with its stack: irw reports it in one line

    logging.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL + 1)
    return spark


def active_session() -> bool:
    """Whether this process already has an active SparkSession (which :func:`session` returns)."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        return False
    return SparkSession.getActiveSession() is not None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def spark_errors(fn):
    """Run ``fn()``; a Spark error becomes an IrwError of one line."""
    try:
        return fn()
    except IrwError:
        raise
    except Exception as exc:
        if type(exc).__module__.split(".")[0] in ("pyspark", "py4j"):
            raise IrwError(f"Spark: {_first_line(exc)}") from None
        raise


class SparkEngine(Engine):
    """The engine protocol on a SparkSession, over the warehouse's tables read from ``data``
    (a directory ``irw export`` wrote) as temporary views, with the pool macros as temporary
    SQL functions. ``write`` writes ``out``/TABLE.parquet (``out`` and ``replace`` are set by
    the command that writes)."""

    dialect = DIALECT
    caches_base = False

    def __init__(self, session, data: str):
        self.session, self.data = session, str(data).rstrip("/")
        self.out: str | None = None
        self.replace = False
        for table in TABLES:
            path = f"{self.data}/{table}.parquet"
            try:
                frame = session.read.parquet(path)
            except Exception as exc:
                raise IrwError(f"{path}: cannot read it ({_first_line(exc)}); write the "
                               "warehouse's tables with `irw export DIR` (Parquet)") from None
            frame.createOrReplaceTempView(table)
        for template in SCHEMA_TEMPLATES:
            for statement in sql.split_statements(sql.render(template, DIALECT)):
                spark_errors(lambda: session.sql(statement))

    @staticmethod
    def _spark_sql(query: str, params):
        """``$name`` parameters in Spark's form ``:name``; only those the query binds."""
        if isinstance(params, dict):
            query = re.sub(r"(?<![:$\w])\$([A-Za-z_]\w*)", r":\1", query)
            params = sql.used(params, query) or None
        return query, params or None

    def relation(self, query: str, params=None):
        query, params = self._spark_sql(query, params)
        return spark_errors(lambda: self.session.sql(query, args=params))

    def rows(self, query: str, params=None) -> list[tuple]:
        return [tuple(r) for r in spark_errors(lambda: self.relation(query, params).collect())]

    def read(self, query: str, params=None) -> Result:
        frame = self.relation(query, params)
        return Result(frame.columns, [tuple(r) for r in spark_errors(frame.collect)])

    def keep(self, name: str, query: str, params=None) -> None:
        self.relation(query, params).cache().createOrReplaceTempView(name)

    def drop(self, name: str) -> None:
        self.session.catalog.dropTempView(name)

    def write(self, table: str, relation) -> str:
        if self.out is None:
            raise IrwError("no directory to write the results to (out)")
        return write_results({table: relation}, self.out, self.replace)[table]


class SparkWarehouse:
    """The warehouse on Spark: its tables read from ``data`` (a directory that ``irw export``
    wrote, local or on any file system Spark reads: hdfs://, s3a://, ...) in a session of its
    own (``self.spark``, sharing ``spark``'s context), so that several warehouses can be open
    in one application. ``eval``, ``pool`` and ``pool_stats`` are the commands of ``irw spark``;
    ``evaluate``, ``derived_qrels`` give Spark DataFrames to work on."""

    def __init__(self, spark, data: str):
        self.engine = SparkEngine(spark.newSession(), data)
        self.spark, self.data = self.engine.session, self.engine.data

    def sql(self, query: str, **params):
        """A DataFrame of a query over the warehouse's views and functions (``:name``)."""
        return self.engine.relation(query, params)

    def run_ids(self, spec: str | list[str] | None = "all", qrels: str | None = None) -> list[str]:
        """The run ids of a run spec (all, pooled, team:NAME, deeply-judged[:M], @FILE, ids) or
        a list of run ids."""
        return runsets.resolve(self.engine, runsets.spec_of(spec), qrels=qrels)

    def default_qrels(self) -> str:
        return catalogue.default_qrels(self.engine)

    # ------------------------------------------------------------------ evaluation

    def evaluate(self, qrels: str, measures_, run_ids: list[str], topics: str = "qrels",
                 max_docs: int | None = None, rel_level: int | None = None, ties: str | None = None):
        """Per-topic scores (qrels, collection, run_id, topic, measure, value, ties) of the
        measures (names or parsed) for the runs ``run_ids`` of the qrels's collection, each tie
        ranked by the tie policy ``ties`` (default trec_eval): a DataFrame, computed in one pass
        as ``irw eval`` does."""
        if not run_ids:
            raise IrwError("no run is selected")
        policy = tie_policy(ties)
        query, params, _, _ = evaluation.scores_query(self.engine, qrels, _measures(measures_, rel_level),
                                                      run_ids, topics, max_docs, rel_level, ties=policy)
        P = {name: sql.param(name, DIALECT) for name in ("qrels", "collection", "ties")}
        return self.engine.relation(sql.statement("results.sql", "keyed", query, P, dialect=DIALECT),
                                    {**params, "ties": policy.name})

    def evaluations(self, qrels: str, measures_, run_ids: list[str], topics: str = "qrels",
                    max_docs: int | None = None, rel_level: int | None = None, ties: str | None = None):
        """The rows of the warehouse's ``evaluations`` log for an evaluation (so that the stored
        scores are recomputed with the same settings when runs or qrels change)."""
        now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
        collection = catalogue.collection_of(self.engine, qrels)
        rows = [(now, *row) for row in evaluation.evaluation_log(
            self.engine, qrels, collection, _measures(measures_, rel_level), list(run_ids), topics,
            max_docs, rel_level, tie_policy(ties).name)]
        return self.spark.createDataFrame(
            rows, "evaluated_at TIMESTAMP_NTZ, qrels STRING, collection STRING, measure STRING, "
                  "n_runs INT, topics STRING, max_docs INT, rel_level INT, ranking_policy STRING, "
                  "ties STRING")

    def eval(self, measures_, qrels: str | None = None, runs="all", *, out: str,
             topics: str = "qrels", max_docs: int | None = None, rel_level: int | None = None,
             replace: bool = False, ties: str | None = None) -> dict:
        """``irw spark eval``: per-topic scores written to OUT/scores.parquet with
        OUT/evaluations.parquet (``irw load results OUT`` stores them); a summary (qrels,
        measures, runs, scores, path). ``ties``: the tie policy (default trec_eval)."""
        wanted = _measures(measures_, rel_level)

        def run():
            name = qrels or self.default_qrels()
            run_ids = self.run_ids(runs, name)
            scores = self.evaluate(name, wanted, run_ids, topics, max_docs, rel_level, ties)
            log = self.evaluations(name, wanted, run_ids, topics, max_docs, rel_level, ties)
            paths = write_results({"scores": scores, "evaluations": log}, out, replace)
            n = self.spark.read.parquet(paths["scores"]).count()
            return {"qrels": name, "measures": [str(m) for m in wanted], "runs": len(run_ids),
                    "scores": n, "path": paths["scores"]}
        return spark_errors(run)

    # ------------------------------------------------------------------ judging the judges

    def compare_qrels(self, qrels_a: str, qrels_b: str, what: str = "agreement", *, rel_level: int = 1,
                      B: int = 1000, seed: int = 0, level: float = 0.95, per_topic: bool = False) -> Result:
        """``irw qrels compare`` on Spark: the counts are the same query
        (sql/qrels_compare.sql) run by Spark, the statistics those of irwarehouse.judges (see
        :meth:`irwarehouse.api.Warehouse.compare_qrels`)."""
        from . import judges

        return Result.of(spark_errors(lambda: judges.compare_qrels(self.engine, qrels_a, qrels_b, what, rel_level,
                                                                   B, seed, level, per_topic)))

    def compare_rankings(self, qrels_a: str, qrels_b: str, measures_, runs="all", what: str | None = None, *,
                         options: RankingOptions | None = None, **settings) -> Result:
        """``irw qrels rankings`` on Spark: both qrels evaluated by Spark, the tables those of
        irwarehouse.judges; ``options`` and ``settings`` as for
        :meth:`irwarehouse.api.Warehouse.compare_rankings`."""
        from . import judges

        o = RankingOptions.of(options, what=what, **settings)

        def run():
            judges.check(o)
            r = judges.rankings_on(self.engine, qrels_a, qrels_b, _measures(measures_), self.run_ids(runs, qrels_a),
                                   o.topics, o.by)
            return judges.table(r, o)
        return Result.of(spark_errors(run))

    # ------------------------------------------------------------------------ pools

    def derived_qrels(self, kind: str, parent: str, targets: list[tuple[str, list[str]]],
                      run_ids: list[str], depth: int = 100, description: str | None = None,
                      runs_spec: str = "all"):
        """Derived qrels of ``kind`` (depth | shallow | leave-out | take) of ``parent``, one per
        target (name, teams), as ``irw pool`` builds them (irwarehouse.engine.pools.plan):
        (qrels rows, qrels_info rows), two DataFrames in the warehouse's layout."""
        planned = pools.plan(self.engine, kind, parent, targets, run_ids, depth, runs_spec,
                             description=description)
        P = {"name": sql.param("name", DIALECT)}
        frames = [self.engine.relation(f"SELECT {P['name']} AS qrels, topic, docno, rel FROM ({d.query}) AS chosen",
                                       {**d.bind, "name": d.name}) for d in planned]
        topic_qrels, collection = self.engine.one(
            "SELECT topic_qrels, collection FROM qrels_info WHERE qrels = ?", [parent])
        now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
        # a derived qrels holds graded judgments whatever its parent's kind (docs/concepts.md)
        info = [(d.name, collection, None, parent, kind, json.dumps(d.params), d.description, topic_qrels, now,
                 GRADED) for d in planned]
        listing = self.spark.createDataFrame(
            info, "qrels STRING, collection STRING, source STRING, parent STRING, kind STRING, params STRING, "
                  "description STRING, topic_qrels STRING, created_at TIMESTAMP_NTZ, judgments STRING")
        return reduce(lambda a, b: a.unionAll(b), frames), listing

    def pool(self, kind: str, name: str | list[str] | None = None, qrels: str | None = None,
             runs="all", *, out: str, depth: int = 100, teams: list[str] | str | None = None,
             prefix: str | None = None, replace: bool = False,
             description: str | None = None) -> Result:
        """``irw spark pool KIND``: derived qrels (as :meth:`irwarehouse.api.Warehouse.pool`
        names them) written to OUT/qrels.parquet and OUT/qrels_info.parquet; one row per
        qrels (qrels, kind, parent, depth, n_runs, judged, relevant), ``.info["path"]``."""
        def run():
            parent = qrels or self.default_qrels()
            planned = pools.targets(self.engine, kind, parent, runs, name, teams, prefix)
            targets, run_ids = planned.targets, planned.run_ids
            rows, listing = self.derived_qrels(kind, parent, targets, run_ids, depth, description, planned.spec)
            paths = write_results({"qrels": rows, "qrels_info": listing}, out, replace)
            self.spark.read.parquet(paths["qrels"]).createOrReplaceTempView("irw_written")
            counts = {r[0]: (r[1], r[2]) for r in self.engine.rows(
                sql.statement("results.sql", "counts", "irw_written", dialect=DIALECT))}
            return Result(["qrels", "kind", "parent", "depth", "n_runs", "judged", "relevant"],
                          [(n, kind, parent, depth, len(run_ids), *counts.get(n, (0, 0))) for n, _ in targets],
                          info={"path": paths["qrels"]})
        return spark_errors(run)

    def pool_stats(self, what: str, qrels: str | None = None, runs="all", depth: int = 100, *,
                   out: str | None = None, replace: bool = False):
        """Pool statistics as ``irw pool stats`` gives them (topics | multiplicity | teams |
        unique | judged | collection): the Spark DataFrame; with ``out``, written to
        OUT/pool_WHAT.parquet and its path returned."""
        if what not in pools.STATS or what == "qrels":
            raise IrwError(f"unknown statistics {what!r}; valid: {', '.join(s for s in pools.STATS if s != 'qrels')}")

        def run():
            name = qrels or self.default_qrels()
            frame = pools.stats(self.engine, what, name, self.run_ids(runs, name), depth)
            if out is None:
                return frame
            return write_results({f"pool_{what}": frame}, out, replace)[f"pool_{what}"]
        return spark_errors(run)


def _measures(given, rel_level: int | None = None) -> list:
    """The measures given, parsed: names are parsed (``rel_level`` setting ``rel`` where not
    given); measures parsed already are taken as they are, as the engine takes them."""
    if isinstance(given, (str, measures.Measure)):
        given = [given]
    if all(isinstance(m, measures.Measure) for m in given):
        return list(given)
    return measures.parse_all([str(m) for m in given], rel_level=rel_level)


@contextlib.contextmanager
def open(data: str, master: str | None = None, conf: dict[str, str] | None = None):  # noqa: A001
    """A :class:`SparkWarehouse` over ``data`` in a session (:func:`session`); a session this
    call started is stopped at the end, one the process already had stays."""
    owned = not active_session()
    spark = session(master, conf)
    try:
        yield SparkWarehouse(spark, data)
    finally:
        if owned:
            spark.stop()


def write_results(frames: dict, out: str, replace: bool = False) -> dict[str, str]:
    """Write DataFrames {table: frame} as OUT/TABLE.parquet (Spark's layout: a directory of
    part files); an existing one is an error unless ``replace``. Returns {table: path}."""
    if "://" not in str(out) and Path(out).exists() and not Path(out).is_dir():
        from .files import is_database

        raise IrwError(f"{out} exists and is not a directory"
                       + (" (it is a DuckDB database)" if is_database(out) else "")
                       + ": the results are written into a directory")
    paths = {}
    for table, frame in frames.items():
        path = f"{str(out).rstrip('/')}/{table}.parquet"
        spark_errors(lambda: frame.write.mode("overwrite" if replace else "errorifexists").parquet(path))
        paths[table] = path
    return paths


# ------------------------------------------------------------------ back into the warehouse

def _result_files(directory: str) -> dict[str, str | None]:
    """{table: DuckDB read_parquet pattern} of the result tables in ``directory``
    (None: Spark wrote no part file, for an empty result)."""
    found = {}
    for table in RESULT_TABLES:
        path = Path(directory) / f"{table}.parquet"
        if path.is_dir():
            found[table] = str(path / "*.parquet") if any(path.glob("*.parquet")) else None
        elif path.is_file():
            found[table] = str(path)
    return found


def _read(con, file: str | None, table: str) -> str:
    """A relation over a result file with the warehouse table's columns, in its order."""
    columns = [r[0] for r in con.execute(sql.statement("results.sql", "columns"), [table]).fetchall()]
    quoted = None if file is None else sql.quote_literal(file)
    selected = [sql.quote_ident(c) for c in columns]
    if file is not None:
        have = {r[0] for r in con.execute(sql.statement("results.sql", "describe", quoted)).fetchall()}
        missing = [c for c in columns if c not in have and c not in LATER_COLUMNS.get(table, ())]
        if missing:
            raise IrwError(f"{file}: not a {table} table: no column(s) {', '.join(missing)}")
        selected = [q if c in have else f"NULL AS {q}" for c, q in zip(columns, selected)]
    return sql.statement("results.sql", "read", quoted, ", ".join(selected), table)


def load_results(con, directory: str, replace: bool = False) -> dict:
    """Store what ``irw spark`` wrote to ``directory`` in the warehouse, in one transaction:
    derived qrels (qrels_info.parquet, qrels.parquet: each a subset of its parent's judgments;
    an existing name only with ``replace``) and scores with their evaluations
    (scores.parquet, evaluations.parquet: for loaded qrels and runs, canonical measure names;
    they replace the stored scores of the same qrels, runs and measures). Anything wrong is
    an error naming the file, and nothing is stored."""
    if not Path(directory).is_dir():
        raise IrwError(f"{directory}: no such directory (results of irw spark)")
    files = _result_files(directory)
    if "scores" not in files and "qrels" not in files:
        raise IrwError(f"{directory}: holds neither scores.parquet nor qrels.parquet (results of irw spark)")
    if ("qrels" in files) != ("qrels_info" in files):
        raise IrwError(f"{directory}: derived qrels need both qrels.parquet and qrels_info.parquet")
    if ("scores" in files) != ("evaluations" in files):
        raise IrwError(f"{directory}: scores need both scores.parquet and evaluations.parquet")
    out = {"qrels": [], "scores": 0}
    with transaction(con):
        if "qrels" in files:
            out["qrels"] = _load_derived(con, directory, files, replace)
        if "scores" in files:
            out["scores"] = _load_scores(con, directory, files)
    return out


def _load_derived(con, directory: str, files: dict, replace: bool) -> list[dict]:
    """The derived qrels of the files, checked, stored as ``irw pool`` stores its own
    (irwarehouse.engine.pools.store)."""
    info, rows = _read(con, files["qrels_info"], "qrels_info"), _read(con, files["qrels"], "qrels")
    where = f"{directory}/qrels_info.parquet"
    entries = con.execute(sql.statement("results.sql", "entries", info)).fetchall()
    names = [e[0] for e in entries]
    if len(set(names)) != len(names):
        raise IrwError(f"{where}: a qrels is listed twice")
    stray = con.execute(sql.statement("results.sql", "stray", rows), {"names": names}).fetchall()
    if stray:
        raise IrwError(f"{directory}/qrels.parquet: judgments of qrels {stray[0][0]!r}, which qrels_info.parquet does not list")
    planned = []
    for name, parent, kind, params, description in entries:
        if kind not in pools.KINDS:
            raise IrwError(f"{where}: qrels {name!r} is of kind {kind!r}; irw spark writes {', '.join(pools.KINDS)}")
        pools.check_parent(con, parent)
        if name == parent:
            raise IrwError(f"{where}: a derived qrels cannot replace its parent {parent!r}")
        bad = con.execute(sql.statement("results.sql", "foreign", rows), {"name": name, "parent": parent}).fetchall()
        if bad:
            topic, docno, rel = bad[0]
            raise IrwError(f"{directory}/qrels.parquet: qrels {name!r} judges topic {topic} document "
                           f"{docno} as {rel}, which its parent {parent!r} does not: the results are "
                           "not from this warehouse's judgments")
        planned.append(pools.Derived(name, kind, parent, json.loads(params) if params else {},
                                     sql.statement("results.sql", "judgments", rows), {"source": name},
                                     description))
    stored = pools.store(con, planned, replace)
    return [{k: s[k] for k in ("qrels", "kind", "parent", "judged", "relevant")} for s in stored]


_SCORE_CHECKS = (("unknown_qrels", "qrels {!r} is not in the warehouse"),
                 ("unknown_run", "run {!r} is not loaded in the warehouse (in its collection)"),
                 ("incomplete", "a row has no qrels, collection, run, topic or measure ({!r})"),
                 ("twice", "a score is there twice: {}"))


def _load_scores(con, directory: str, files: dict) -> int:
    scores, evaluations = _read(con, files["scores"], "scores"), _read(con, files["evaluations"], "evaluations")
    where = f"{directory}/scores.parquet"
    for check, message in _SCORE_CHECKS:
        row = con.execute(sql.statement("results.sql", check, scores)).fetchall()
        if row:
            raise IrwError(f"{where}: " + message.format(row[0][0]))
    for (label,) in con.execute(sql.statement("results.sql", "labels", scores)).fetchall():
        try:
            canonical = str(measures.parse(label))
        except IrwError as exc:
            raise IrwError(f"{where}: measure {label!r}: {exc}") from None
        if canonical != label:
            raise IrwError(f"{where}: measure {label!r} is not a canonical name (irw writes {canonical!r})")
    logged = set(con.execute(sql.statement("results.sql", "logged", evaluations)).fetchall())
    unlogged = [f"{q} {m}" for q, m in con.execute(sql.statement("results.sql", "pairs", scores)).fetchall()
                if (q, m) not in logged]
    if unlogged:
        raise IrwError(f"{directory}/evaluations.parquet: no evaluation of {unlogged[0]} (scores.parquet has its scores)")
    try:
        for statement in sql.split_statements(sql.statement("results.sql", "store", scores, evaluations) + "\n"):
            con.execute(statement)
        return con.execute(sql.statement("results.sql", "stored")).fetchall()[0][0]
    finally:
        con.execute("DROP TABLE IF EXISTS temp.irw_loaded_scores")


def java_available() -> bool:
    """Whether a Java runtime is there for Spark to start (java on the PATH, or JAVA_HOME)."""
    import shutil

    home = os.environ.get("JAVA_HOME")
    return bool(shutil.which("java") or (home and Path(home, "bin", "java").exists()))
