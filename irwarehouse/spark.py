"""The warehouse's SQL on Apache Spark: evaluation and pools past one machine.

The measure, pool and view templates render for Spark SQL (``sql/_dialect.sql``, dialect
``spark``) and run over Parquet copies of the warehouse's tables -- the files ``irw export
DIR`` writes -- registered as temporary views of a SparkSession; pools and the other table
macros become temporary SQL table functions of the session. Nothing is written to the
session's catalogue. Results are DataFrames with the warehouse's columns; written as Parquet
(``write_results``), ``irw load results`` stores them in the warehouse
(:func:`load_results`).

    from pyspark.sql import SparkSession
    from irwarehouse import measures, spark

    wh = spark.SparkWarehouse(SparkSession.builder.getOrCreate(), "export/")
    per_topic = wh.evaluate("trec8", measures.parse_all(["AP", "P@10"]), wh.run_ids())

pyspark (4.x, Java 17 or later) is imported only by the functions that need it: the optional
extra ``irwarehouse[spark]``. Run sets are lists of run ids (``wh.run_ids(spec, qrels)``
resolves a run spec as ``--runs`` does).
"""

from __future__ import annotations

import datetime
import json
import os
from functools import reduce
from pathlib import Path

from . import db, loader, pools, runsets, state
from . import evaluate as ev
from .errors import IrwError
from .measures import Measure, parse

DIALECT = "spark"
# The warehouse's tables the Spark engine reads (files TABLE.parquet of an export).
TABLES = ("runs", "run_topics", "run_loads", "run_meta", "qrels", "qrels_info", "scores")
# The templates whose views and table functions it creates in the session.
SCHEMA_TEMPLATES = ("views.sql", "pools.sql")
# What `irw spark` writes and `irw load results` reads: tables of the warehouse's layout.
RESULT_TABLES = ("qrels_info", "qrels", "evaluations", "scores")
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


class _Rows:
    def __init__(self, rows):
        self._rows = [tuple(r) for r in rows]

    def fetchall(self) -> list[tuple]:
        return self._rows

    def fetchone(self):
        return self._rows[0] if self._rows else None


class SparkWarehouse:
    """The warehouse's tables, read from ``data`` (a directory that ``irw export`` wrote, local
    or on any file system Spark reads: hdfs://, s3a://, ...), as temporary views and functions
    of a session of its own (``self.spark``, sharing ``spark``'s context), so that several
    warehouses can be open in one application."""

    def __init__(self, spark, data: str):
        self.spark, self.data = spark.newSession(), str(data).rstrip("/")
        spark = self.spark
        for table in TABLES:
            path = f"{self.data}/{table}.parquet"
            try:
                frame = spark.read.parquet(path)
            except Exception as exc:
                raise IrwError(f"{path}: cannot read it ({_first_line(exc)}); write the "
                               "warehouse's tables with `irw export DIR` (Parquet)") from None
            frame.createOrReplaceTempView(table)
        for template in SCHEMA_TEMPLATES:
            for statement in db.split_statements(db.render(template, DIALECT)):
                spark_errors(lambda: spark.sql(statement))

    def execute(self, sql: str, params=None) -> _Rows:
        """Run one query and collect its rows: ``?`` parameters from a list, ``:name`` ones
        from a dict. The part of a DuckDB connection that irw's catalogue look-ups and run
        specs use (runsets.resolve, evaluate.qrels_info, ...)."""
        return spark_errors(lambda: _Rows(self.spark.sql(sql, args=params).collect()))

    def sql(self, sql: str, **params):
        """A DataFrame of a query over the warehouse's views and functions (``:name``)."""
        return spark_errors(lambda: self.spark.sql(sql, args=params or None))

    def run_ids(self, spec: str | None = "all", qrels: str | None = None) -> list[str]:
        """The run ids of a run spec (all, pooled, team:NAME, deeply-judged[:M], @FILE, ids)."""
        return runsets.resolve(self, spec, qrels=qrels)

    def default_qrels(self) -> str:
        return ev.default_qrels(self)

    # ------------------------------------------------------------------ evaluation

    def evaluate(self, qrels: str, measures: list[Measure], run_ids: list[str],
                 topics: str = "qrels", max_docs: int | None = None,
                 rel_level: int | None = None):
        """Per-topic scores (qrels, collection, run_id, topic, measure, value) of ``measures``
        for the runs ``run_ids`` of the qrels's collection: a DataFrame, computed in one pass
        as ``irw eval`` does."""
        name, topic_qrels = ev.qrels_info(self, qrels)
        if not run_ids:
            raise IrwError("no run is selected")
        sql = ev.render_sql(measures, topics=topics, max_docs=max_docs, rel_level=rel_level,
                            base_source="fresh", dialect=DIALECT)
        return self.sql(f"SELECT :qrels AS qrels, :collection AS collection, run_id, topic, measure, value "
                        f"FROM ({sql}) AS measured", qrels=name, topic_qrels=topic_qrels,
                        collection=ev.collection_of(self, name), runs=list(run_ids))

    def evaluations(self, qrels: str, measures: list[Measure], run_ids: list[str],
                    topics: str = "qrels", max_docs: int | None = None,
                    rel_level: int | None = None):
        """The rows of the warehouse's ``evaluations`` log for an evaluation (so that the stored
        scores are recomputed with the same settings when runs or qrels change)."""
        now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
        collection = ev.collection_of(self, qrels)
        rows = [(now, qrels, collection, str(m), len(run_ids), topics, max_docs, rel_level) for m in measures]
        return self.spark.createDataFrame(
            rows, "evaluated_at TIMESTAMP_NTZ, qrels STRING, collection STRING, measure STRING, "
                  "n_runs INT, topics STRING, max_docs INT, rel_level INT")

    # ------------------------------------------------------------------------ pools

    def derived_qrels(self, kind: str, parent: str, targets: list[tuple[str, list[str]]],
                      run_ids: list[str], depth: int = 100, description: str | None = None,
                      runs_spec: str = "all"):
        """Derived qrels of ``kind`` (depth | shallow | leave-out | take) of ``parent``, one per
        target (name, teams), as ``irw pool`` builds them: (qrels rows, qrels_info rows), two
        DataFrames in the warehouse's layout."""
        if kind not in pools.KINDS:
            raise IrwError(f"unknown kind of derived qrels {kind!r}")
        pools._check_depth(depth)
        pools._check_parent(self, parent)
        pools.check_targets(self, kind, parent, targets, run_ids)
        bind = {"parent": parent, "runs": list(run_ids), "depth": depth}
        if kind == "leave-out":  # U_t of every team, computed once for all the targets
            unique = self.sql("SELECT * FROM unique_contributions(:parent, :runs, :depth)", **bind)
            unique.cache().createOrReplaceTempView("irw_unique")
        select = pools.select_sql(kind, DIALECT)
        frames = [self.sql(f"SELECT :name AS qrels, topic, docno, rel FROM ({select}) AS chosen",
                           name=name, **bind, **({"teams": list(teams)} if kind in ("leave-out", "take") else {}))
                  for name, teams in targets]
        topic_qrels, collection = self.execute("SELECT topic_qrels, collection FROM qrels_info WHERE qrels = ?",
                                               [parent]).fetchone()
        now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
        info = []
        for name, teams in targets:
            params = {"runs": runs_spec, "n_runs": len(run_ids), "depth": depth}
            if kind in ("leave-out", "take"):
                params["teams"] = list(teams)
            info.append((name, collection, None, parent, kind, json.dumps(params), description, topic_qrels, now))
        catalogue = self.spark.createDataFrame(
            info, "qrels STRING, collection STRING, source STRING, parent STRING, kind STRING, params STRING, "
                  "description STRING, topic_qrels STRING, created_at TIMESTAMP_NTZ")
        return reduce(lambda a, b: a.unionAll(b), frames), catalogue

    def pool_stats(self, what: str, qrels: str, run_ids: list[str], depth: int = 100):
        """Pool statistics as ``irw pool stats`` gives them: topics | multiplicity | teams |
        unique | judged | collection (a DataFrame)."""
        pools._check_parent(self, qrels)
        if what == "collection":
            return self.sql("SELECT * FROM qrels_stats WHERE qrels = :q", q=qrels)
        pools._check_depth(depth)
        if what == "judged":
            first, judged = parse("FirstUnjudged"), parse(f"Judged@{depth}")
            per = self.evaluate(qrels, [first, judged], run_ids)
            per.createOrReplaceTempView("irw_judged")
            return self.sql("SELECT run_id, topic, max(CASE WHEN measure = :a THEN value END) AS first_unjudged, "
                            "max(CASE WHEN measure = :b THEN value END) AS judged_at_depth "
                            "FROM irw_judged GROUP BY run_id, topic ORDER BY run_id, topic",
                            a=str(first), b=str(judged))
        return self.sql(pools.stats_sql(what, DIALECT), q=qrels, runs=list(run_ids), depth=depth)


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

def _result_files(directory: str) -> dict[str, str]:
    """{table: DuckDB read_parquet pattern} of the result tables in ``directory``."""
    found = {}
    for table in RESULT_TABLES:
        path = Path(directory) / f"{table}.parquet"
        if path.is_dir():
            if any(path.glob("*.parquet")):
                found[table] = str(path / "*.parquet")
            else:  # Spark writes no part file for an empty result
                found[table] = None
        elif path.is_file():
            found[table] = str(path)
    return found


def _read(con, pattern: str | None, table: str):
    """A relation over a result file, with the warehouse table's columns, in its order."""
    columns = [r[0] for r in con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = ? "
        "AND table_schema = 'main' AND table_catalog = current_database() ORDER BY ordinal_position",
        [table]).fetchall()]
    if pattern is None:
        return f"(SELECT * FROM {table} WHERE false)", columns
    have = {r[0] for r in con.execute(
        f"DESCRIBE SELECT * FROM read_parquet({db.quote_literal(pattern)})").fetchall()}
    missing = [c for c in columns if c not in have]
    if missing:
        raise IrwError(f"{pattern}: not a {table} table: no column(s) {', '.join(missing)}")
    cols = ", ".join(db.quote_ident(c) for c in columns)
    return f"(SELECT {cols} FROM read_parquet({db.quote_literal(pattern)}))", columns


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
    with db.transaction(con):
        if "qrels" in files:
            out["qrels"] = _load_derived(con, directory, files, replace)
        if "scores" in files:
            out["scores"] = _load_scores(con, directory, files)
    return out


def _load_derived(con, directory: str, files: dict, replace: bool) -> list[dict]:
    info, _ = _read(con, files["qrels_info"], "qrels_info")
    rows, _ = _read(con, files["qrels"], "qrels")
    where = f"{directory}/qrels_info.parquet"
    entries = con.execute(f"SELECT qrels, parent, kind, params, description FROM {info} ORDER BY qrels").fetchall()
    names = [e[0] for e in entries]
    if len(set(names)) != len(names):
        raise IrwError(f"{where}: a qrels is listed twice")
    stray = con.execute(f"SELECT DISTINCT qrels FROM {rows} WHERE NOT list_contains($names, qrels) "
                        "ORDER BY 1 LIMIT 1", {"names": names}).fetchone()
    if stray:
        raise IrwError(f"{directory}/qrels.parquet: judgments of qrels {stray[0]!r}, which qrels_info.parquet does not list")
    created = []
    for name, parent, kind, params, description in entries:
        if kind not in pools.KINDS:
            raise IrwError(f"{where}: qrels {name!r} is of kind {kind!r}; irw spark writes {', '.join(pools.KINDS)}")
        pools._check_parent(con, parent)
        if name == parent:
            raise IrwError(f"{where}: a derived qrels cannot replace its parent {parent!r}")
        if con.execute("SELECT 1 FROM qrels_info WHERE qrels = ?", [name]).fetchone():
            if not replace:
                raise IrwError(f"qrels {name} already exists; use --replace to replace it")
            loader.drop_qrels(con, name, _in_transaction=True)
        bad = con.execute(
            f"SELECT r.topic, r.docno, r.rel FROM {rows} r WHERE r.qrels = $name AND NOT EXISTS ("
            "SELECT 1 FROM qrels j WHERE j.qrels = $parent AND j.topic = r.topic AND j.docno = r.docno "
            "AND j.rel = r.rel) LIMIT 1", {"name": name, "parent": parent}).fetchone()
        if bad:
            raise IrwError(f"{directory}/qrels.parquet: qrels {name!r} judges topic {bad[0]} document "
                           f"{bad[1]} as {bad[2]}, which its parent {parent!r} does not: the results are "
                           "not from this warehouse's judgments")
        con.execute(f"INSERT INTO qrels SELECT qrels, topic, docno, rel FROM {rows} WHERE qrels = $name",
                    {"name": name})
        loader.register_qrels(con, name, source=None, kind=kind, parent=parent, params=params,
                              description=description)
        state.record_qrels(con, name)
        judged, relevant = con.execute(
            "SELECT count(*) FILTER (WHERE rel >= 0), count(*) FILTER (WHERE rel >= 1) FROM qrels "
            "WHERE qrels = ?", [name]).fetchone()
        created.append({"qrels": name, "kind": kind, "parent": parent, "judged": judged,
                        "relevant": relevant})
    return created


def _load_scores(con, directory: str, files: dict) -> int:
    scores, _ = _read(con, files["scores"], "scores")
    evaluations, _ = _read(con, files["evaluations"], "evaluations")
    where = f"{directory}/scores.parquet"
    checks = [
        (f"SELECT qrels FROM {scores} WHERE qrels NOT IN (SELECT qrels FROM qrels_info) LIMIT 1",
         "qrels {!r} is not in the warehouse"),
        (f"SELECT run_id FROM {scores} s WHERE NOT EXISTS (SELECT 1 FROM run_loads l "
         "WHERE l.collection = s.collection AND l.run_id = s.run_id) LIMIT 1",
         "run {!r} is not loaded in the warehouse (in its collection)"),
        (f"SELECT topic FROM {scores} WHERE qrels IS NULL OR collection IS NULL OR run_id IS NULL "
         "OR topic IS NULL OR measure IS NULL LIMIT 1",
         "a row has no qrels, collection, run, topic or measure ({!r})"),
        (f"SELECT qrels || ' ' || run_id || ' ' || topic || ' ' || measure FROM {scores} "
         "GROUP BY qrels, run_id, topic, measure HAVING count(*) > 1 LIMIT 1", "a score is there twice: {}"),
    ]
    for sql, message in checks:
        row = con.execute(sql).fetchone()
        if row:
            raise IrwError(f"{where}: " + message.format(row[0]))
    labels = [r[0] for r in con.execute(f"SELECT DISTINCT measure FROM {scores} ORDER BY 1").fetchall()]
    for label in labels:
        try:
            canonical = str(parse(label))
        except IrwError as exc:
            raise IrwError(f"{where}: measure {label!r}: {exc}") from None
        if canonical != label:
            raise IrwError(f"{where}: measure {label!r} is not a canonical name (irw writes {canonical!r})")
    logged = {(q, m) for q, m in con.execute(f"SELECT qrels, measure FROM {evaluations}").fetchall()}
    pairs = con.execute(f"SELECT DISTINCT qrels, measure FROM {scores} ORDER BY 1, 2").fetchall()
    unlogged = [f"{q} {m}" for q, m in pairs if (q, m) not in logged]
    if unlogged:
        raise IrwError(f"{directory}/evaluations.parquet: no evaluation of {unlogged[0]} (scores.parquet has its scores)")
    con.execute(f"CREATE OR REPLACE TEMP TABLE irw_loaded_scores AS SELECT * FROM {scores}")
    try:
        con.execute("DELETE FROM scores WHERE EXISTS (SELECT 1 FROM (SELECT DISTINCT qrels, collection, run_id, "
                    "measure FROM irw_loaded_scores) n WHERE n.qrels = scores.qrels AND n.collection = "
                    "scores.collection AND n.run_id = scores.run_id AND n.measure = scores.measure)")
        con.execute("INSERT INTO scores SELECT qrels, collection, run_id, topic, measure, value "
                    "FROM irw_loaded_scores")
        n = con.execute("SELECT count(*) FROM irw_loaded_scores").fetchone()[0]
    finally:
        con.execute("DROP TABLE IF EXISTS irw_loaded_scores")
    con.execute(f"INSERT INTO evaluations (evaluated_at, qrels, collection, measure, n_runs, topics, max_docs, "
                f"rel_level) SELECT evaluated_at, qrels, collection, measure, n_runs, topics, max_docs, "
                f"rel_level FROM {evaluations}")
    return n


def java_available() -> bool:
    """Whether a Java runtime is there for Spark to start (java on the PATH, or JAVA_HOME)."""
    import shutil

    home = os.environ.get("JAVA_HOME")
    return bool(shutil.which("java") or (home and Path(home, "bin", "java").exists()))
