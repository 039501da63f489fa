"""The Spark engine (irwarehouse.spark, `irw spark ...`, `irw load results`) against the
DuckDB engine, in pyspark's local mode.

Every catalogue measure at the parameter settings of test_sql_product, on the fixtures (a
loaded and a derived qrels) and on all of TREC-8, equals the DuckDB engine within 1e-9 per
topic, and so does every measure of the diversity and preference families on theirs; the
depth-10 pool and the leave-one-team-out qrels of every team are identical; the pool
statistics are equal; and what `irw spark` writes, `irw load results` stores as `irw
eval` and `irw pool` would have. One SparkSession serves the whole test session, and each
comparison is one Spark job.

Without pyspark or Java these tests are skipped, except in CI (IRW_REQUIRE_SHARED_DATA=1),
where they are required. The checks of `irw load results` that need no Spark always run.
"""

from __future__ import annotations

import json
import shutil

import duckdb
import pandas as pd
import pytest

from irwarehouse import Warehouse, catalogue, measures, schema
from irwarehouse.engine import evaluation, pools
from irwarehouse import spark as irs
from irwarehouse.errors import IrwError
from irwarehouse.options import RankingOptions
from conftest import FIXTURES, cli_for, generated_diversity, unavailable
from test_sql_product import CASES, GRADED_MEASURES
from test_trec_eval_prefs import generate as generate_prefs
from irwarehouse.judgment_kinds import GRADED

TOLERANCE = 1e-9
# Every catalogue measure at its first example setting, and at its last where it has
# parameters of its own or gains (on the fixtures, every example setting)
# On TREC-8, every measure of graded judgments at its first example setting (the settings of
# every example are compared on the fixtures, test_every_measure_on_the_fixtures).
TREC8_CASES = list(dict.fromkeys(m.examples[0] for m in measures.CATALOGUE.values() if m.reads == GRADED))
ALL_CASES = [name for name, _, _ in CASES]


@pytest.fixture(scope="session")
def spark():
    try:
        import pyspark  # noqa: F401
    except ImportError:
        unavailable(f"pyspark is not installed ({irs.INSTALL})")
    if not irs.java_available():
        unavailable("Java is not installed (Spark needs Java 17 or later: java on the PATH, or JAVA_HOME)")
    session = irs.session("local[2]", {"spark.sql.shuffle.partitions": "4",
                                       "spark.ui.enabled": "false"})
    yield session
    session.stop()


@pytest.fixture(scope="session")
def fixture_export(sql_warehouse, tmp_path_factory) -> str:
    """The fixture warehouse (qrels fixture and its leave-alpha-out fixture-lo-alpha, stored
    scores) as `irw export` writes it."""
    out = str(tmp_path_factory.mktemp("spark") / "export")
    cli_for(sql_warehouse)("export", out)
    return out


@pytest.fixture(scope="session")
def trec8_export(trec8_db, tmp_path_factory) -> str:
    out = str(tmp_path_factory.mktemp("spark8") / "export")
    cli_for(trec8_db)("export", out)
    return out


@pytest.fixture(scope="session")
def fixture_wh(spark, fixture_export):
    return irs.SparkWarehouse(spark, fixture_export)


@pytest.fixture(scope="session")
def trec8_wh(spark, trec8_export):
    return irs.SparkWarehouse(spark, trec8_export)


def _per_topic(frame: pd.DataFrame) -> pd.Series:
    return frame.set_index(["run_id", "topic", "measure"])["value"].sort_index()


def assert_equal_scores(spark_frame: pd.DataFrame, duck_frame: pd.DataFrame, what: str):
    a, b = _per_topic(spark_frame), _per_topic(duck_frame)
    assert len(b) > 0 and a.index.equals(b.index), what
    assert not a.isna().any() and not b.isna().any(), what
    diff = (a - b).abs()
    assert diff.max() <= TOLERANCE, f"{what}: {diff.idxmax()} differs by {diff.max()}"


def _duck(path: str, qrels: str, names: list[str], runs: list[str] | None = None, **options) -> pd.DataFrame:
    con = schema.connect(path, read_only=True)
    try:
        runs = runs or [r[0] for r in con.execute("SELECT run_id FROM run_loads ORDER BY 1").fetchall()]
        return evaluation.evaluate(con, qrels, measures.parse_all(names), runs, store=False, **options).df()
    finally:
        con.close()


@pytest.mark.parametrize("qrels, cases", [pytest.param("fixture", ALL_CASES, id="fixture"),
                                          pytest.param("fixture-lo-alpha", TREC8_CASES, id="fixture-lo-alpha")])
def test_every_measure_on_the_fixtures(fixture_wh, sql_warehouse, qrels, cases):
    """Every catalogue measure in one Spark job: at every example setting for a loaded
    qrels, at its first for a derived one."""
    wh = fixture_wh
    got = wh.evaluate(qrels, measures.parse_all(cases), wh.run_ids()).toPandas()
    assert set(got["qrels"]) == {qrels}
    assert_equal_scores(got, _duck(sql_warehouse, qrels, cases), qrels)


@pytest.mark.parametrize("options", [{"topics": "run"}, {"topics": "all", "max_docs": 5, "rel_level": 2},
                                     {"ties": "optimistic"}, {"ties": "pessimistic", "max_docs": 5},
                                     {"ties": "run"}])
def test_topic_policies_and_options(fixture_wh, sql_warehouse, options):
    names = ["AP", "P@10", "nDCG(discount=jk)@10", "RBPres(p=0.8)", "Bpref", "RPrec", "NumRet"]
    wh = fixture_wh
    got = wh.evaluate("fixture", measures.parse_all(names), wh.run_ids(), **options).toPandas()
    assert_equal_scores(got, _duck(sql_warehouse, "fixture", names, **options), str(options))


# The measures of the other kinds of judgments at their example settings, by kind.
FAMILY_CASES = {kind: list(dict.fromkeys(e for m in measures.CATALOGUE.values() if m.reads == kind
                                         for e in m.examples))
                for kind in ("diversity", "prefs")}


@pytest.fixture(scope="module")
def families(spark, tmp_path_factory):
    """A warehouse of the diversity and preference fixtures, exported, each kind in a
    collection of its own: qrels div (fixtures/diversity with a generated case: tied
    scores, intents without a relevant document, a topic without one, a topic a run lacks)
    and prefs (fixtures/prefs/prefs.txt with generated preferences: groups of one sub-group
    and partial orders, tied scores); (its Spark warehouse, {qrels: DuckDB's per-topic
    scores}). (A qrels loaded as jg is read as prefs are, as groups of one sub-group.)"""
    out = tmp_path_factory.mktemp("families")
    qrels, runs = generated_diversity(7)
    (out / "div.txt").write_text((FIXTURES / "diversity" / "qrels.txt").read_text() + "\n".join(qrels) + "\n")
    (out / "div-runs.txt").write_text("\n".join(runs) + "\n")
    prefs, prefs_run = generate_prefs(9)
    (out / "prefs.txt").write_text((FIXTURES / "prefs" / "prefs.txt").read_text() + prefs)
    (out / "prefs-run.txt").write_text(prefs_run)
    path, kinds = str(out / "w.duckdb"), {"div": "diversity", "prefs": "prefs"}
    with Warehouse(path) as w:
        w.load_qrels(str(out / "div.txt"), "div", format="diversity", collection="div")
        w.load_runs([str(FIXTURES / "diversity" / "runs"), str(out / "div-runs.txt")], collection="div")
        w.load_qrels(str(out / "prefs.txt"), "prefs", format="prefs", collection="prefs")
        w.load_runs([str(FIXTURES / "prefs" / "run_a.txt"), str(FIXTURES / "prefs" / "run_b.txt"),
                     str(out / "prefs-run.txt")], collection="prefs")
        duck = {q: w.eval(FAMILY_CASES[kind], q, store=False).df() for q, kind in kinds.items()}
        w.export(str(out / "export"))
    return irs.SparkWarehouse(spark, str(out / "export")), duck


@pytest.mark.parametrize("qrels, kind", [("div", "diversity"), ("prefs", "prefs")])
def test_the_diversity_and_preference_families(families, qrels, kind):
    """Every measure of the family at every example setting in one Spark job equals DuckDB's
    (which equals ndeval and trec_eval: test_diversity.py, test_trec_eval_prefs.py)."""
    wh, duck = families
    got = wh.evaluate(qrels, measures.parse_all(FAMILY_CASES[kind]), wh.run_ids("all", qrels)).toPandas()
    assert set(got["measure"]) == {str(m) for m in measures.parse_all(FAMILY_CASES[kind])}
    assert_equal_scores(got, duck[qrels], qrels)


def test_every_measure_on_trec8(trec8_wh, trec8_db):
    """Every catalogue measure of graded judgments for every fourth of TREC-8's 129 runs
    (33 runs, in the order of their names) x 50 topics, in one Spark job."""
    wh = trec8_wh
    runs = sorted(wh.run_ids())
    assert len(runs) == 129
    runs = runs[::4]
    got = wh.evaluate("trec8", measures.parse_all(TREC8_CASES), runs).toPandas()
    assert {m.name for m in measures.parse_all(TREC8_CASES)} == set(GRADED_MEASURES)
    assert len(got) == 33 * 50 * len(TREC8_CASES)
    assert_equal_scores(got, _duck(trec8_db, "trec8", TREC8_CASES, runs), "trec8")


def _qrels_rows(con, names: list[str]) -> pd.DataFrame:
    return con.execute("SELECT qrels, topic, docno, rel FROM qrels WHERE list_contains(?, qrels) "
                       "ORDER BY ALL", [names]).df()


def test_trec8_pools_identical(trec8_wh, trec8_db, tmp_path):
    """The depth-10 pool of the pooled runs and the leave-one-team-out qrels of every fifth
    team (depth 100; bench/bench_spark.py compares all 40), on Spark (one job) and by `irw
    pool`, are the same judgments."""
    wh = trec8_wh
    pooled = wh.run_ids("pooled")
    teams = list(catalogue.teams_of(wh, pooled, "default"))
    assert len(teams) == 40
    targets = [(f"trec8-lo-{t}", [t]) for t in teams[::5]]
    depth_rows, _ = wh.derived_qrels("depth", "trec8", [("trec8-d10", [])], pooled, 10)
    lo_rows, _ = wh.derived_qrels("leave-out", "trec8", targets, pooled, 100)
    out = str(tmp_path / "out")
    irs.write_results({"qrels": depth_rows.unionAll(lo_rows)}, out)

    ours = str(tmp_path / "ours.duckdb")
    shutil.copy(trec8_db, ours)
    con = schema.connect(ours)
    pools.build(con, "depth", "trec8", "trec8-d10", "pooled", 10)
    pools.build_many(con, "leave-out", "trec8", targets, "pooled", 100)
    names = ["trec8-d10"] + [n for n, _ in targets]
    con.execute(f"CREATE TEMP TABLE got AS SELECT * FROM read_parquet('{out}/qrels.parquet/*.parquet')")
    con.execute("CREATE TEMP TABLE expected AS SELECT qrels, topic, docno, rel FROM qrels "
                "WHERE list_contains(?, qrels)", [names])
    counts = con.execute("SELECT (SELECT count(*) FROM got), (SELECT count(*) FROM expected), "
                         "(SELECT count(DISTINCT qrels) FROM expected), "
                         "(SELECT count(*) FROM (SELECT * FROM got EXCEPT ALL SELECT * FROM expected)), "
                         "(SELECT count(*) FROM (SELECT * FROM expected EXCEPT ALL SELECT * FROM got))").fetchone()
    con.close()
    n_got, n_expected, n_qrels, only_spark, only_duckdb = counts
    assert n_expected > 600_000 and n_qrels == len(names)
    assert (n_got, only_spark, only_duckdb) == (n_expected, 0, 0)


@pytest.mark.parametrize("what", ["topics", "multiplicity", "teams", "unique", "judged", "collection"])
def test_pool_statistics(fixture_wh, sql_warehouse, what):
    got = fixture_wh.pool_stats(what, "fixture", fixture_wh.run_ids("pooled"), 10).toPandas()
    with Warehouse(sql_warehouse, read_only=True) as w:
        expected = w.pool_stats(what, "fixture", "pooled", 10).df()
    assert len(expected) > 0
    pd.testing.assert_frame_equal(got.reset_index(drop=True),
                                  expected.rename_axis(columns=None).reset_index(drop=True),
                                  check_dtype=False)


def test_judgment_sets_compared(fixture_wh, sql_warehouse):
    """``irw qrels compare`` on Spark (its counts the same query, run by Spark) gives the
    warehouse's tables; ``irw qrels rankings`` (both qrels evaluated by Spark) too, within
    1e-9."""
    from irwarehouse import judges

    a, b = "fixture", "fixture-lo-alpha"

    def same(got, duck, what):
        assert len(duck) > 0, what
        pd.testing.assert_frame_equal(got, duck, check_exact=False, rtol=0, atol=TOLERANCE, check_dtype=False)

    with Warehouse(sql_warehouse, read_only=True) as w:
        same(fixture_wh.compare_qrels(a, b).df(), w.compare_qrels(a, b).df(), "agreement")
        same(fixture_wh.compare_qrels(a, b, "only-a").df(), w.compare_qrels(a, b, "only-a").df(), "only-a")
        same(fixture_wh.compare_qrels(b, a, "only-b").df(), w.compare_qrels(b, a, "only-b").df(), "only-b")
        counts = judges.pair_counts(fixture_wh.engine, a, b)  # the other tables from Spark's counts
        same(judges.intervals_frame(counts, 1, 200), w.compare_qrels(a, b, "intervals", B=200).df(), "intervals")
        same(judges.confusion_frame(counts, True).df(), w.compare_qrels(a, b, "confusion", per_topic=True).df(),
             "confusion")
        measures_ = ["AP", "P@10"]
        same(fixture_wh.compare_rankings(a, b, measures_, what="groups", permutations=500).df(),
             w.compare_rankings(a, b, measures_, what="groups", permutations=500).df(), "groups")
        r = judges.rankings_on(fixture_wh.engine, a, b, measures.parse_all(measures_), fixture_wh.run_ids())
        for what in ("runs", "correlation", "decisions"):
            same(judges.table(r, RankingOptions(what=what)), w.compare_rankings(a, b, measures_, what=what).df(), what)


def test_cli_eval_then_load_results(spark, fixture_export, tmp_path):
    """`irw spark eval` writes Parquet that `irw load results` stores: the warehouse's scores
    are then those `irw eval` stores, and its evaluations log says how they were computed."""
    names = ["AP", "P@10", "nDCG@10", "nDCG(discount=jk)@1000", "RBP(p=0.8)", "Bpref", "RPrec"]
    out = str(tmp_path / "out")
    spark_db = cli_for(str(tmp_path / "spark.duckdb"))
    args = [a for n in names for a in ("-m", n)]
    result = spark_db("spark", "eval", "--data", fixture_export, "--out", out, "--master", "local[2]",
                      *args, "--runs", "pooled", "--topics", "all")
    assert "wrote 252 scores (7 measures, 6 runs, qrels fixture)" in result.output
    again = spark_db("spark", "eval", "--data", fixture_export, "--out", out, "-m", "AP", ok=False)
    assert again.exit_code == 1 and "error: Spark:" in again.output and "already exists" in again.output

    from conftest import FIXTURES
    for invoke in (spark_db, cli_for(str(tmp_path / "duck.duckdb"))):
        invoke("load", "qrels", FIXTURES / "qrels.txt", "--name", "fixture")
        invoke("load", "runs", FIXTURES / "runs", "--meta", FIXTURES / "runs.tsv")
    cli_for(str(tmp_path / "duck.duckdb"))("eval", *args, "--runs", "pooled", "--topics", "all")
    assert "stored 252 scores" in spark_db("load", "results", out).output
    frames = []
    for path in ("spark.duckdb", "duck.duckdb"):
        con = duckdb.connect(str(tmp_path / path), read_only=True)
        frames.append((con.execute("SELECT * FROM scores ORDER BY ALL").df(),
                       con.execute("SELECT qrels, measure, n_runs, topics, max_docs, rel_level "
                                   "FROM evaluations ORDER BY ALL").df()))
        con.close()
    (s_scores, s_log), (d_scores, d_log) = frames
    assert_equal_scores(s_scores, d_scores, "stored")
    pd.testing.assert_frame_equal(s_log, d_log)

    # the stored scores are kept in line like irw's own: a replaced qrels recomputes them
    spark_db("load", "qrels", FIXTURES / "qrels.txt", "--name", "fixture", "--replace")
    con = duckdb.connect(str(tmp_path / "spark.duckdb"), read_only=True)
    assert con.execute("SELECT count(*) FROM scores").fetchone()[0] == 252
    con.close()


def test_cli_pool_then_load_results(spark, fixture_export, sql_warehouse, tmp_path):
    """`irw spark pool` writes the derived qrels that `irw pool` builds, and `irw load results`
    stores them as `irw pool` does (judgments and catalogue)."""
    out = str(tmp_path / "pools")
    paths = {}
    for side in ("spark", "duck"):
        paths[side] = str(tmp_path / f"{side}.duckdb")
        shutil.copy(sql_warehouse, paths[side])
    spark_db, duck_db = cli_for(paths["spark"]), cli_for(paths["duck"])
    args = ["--all-teams", "--runs", "pooled", "--depth", "10", "--prefix", "lo-"]
    result = spark_db("spark", "pool", "leave-out", *args, "--data", fixture_export, "--out", out)
    assert "qrels lo-alpha (leave-out of fixture, depth 10, 6 runs): 155 judged, 54 relevant" in result.output
    assert "wrote 4 derived qrels to " in result.output
    spark_db("spark", "pool", "take", "--team", "beta", "--team", "gamma", "--name", "take-bg",
             "--data", fixture_export, "--out", str(tmp_path / "take"))
    spark_db("spark", "pool", "depth", "--name", "d5", "--runs", "pooled", "--depth", "5",
             "--data", fixture_export, "--out", str(tmp_path / "d5"))
    assert "stored qrels lo-alpha (leave-out of fixture): 155 judged, 54 relevant" in \
        spark_db("load", "results", out).output
    spark_db("load", "results", str(tmp_path / "d5"))
    spark_db("load", "results", str(tmp_path / "take"))
    again = spark_db("load", "results", out, ok=False)
    assert again.exit_code == 1 and "already exists; use --replace" in again.output
    duck_db("pool", "leave-out", *args)
    duck_db("pool", "take", "--team", "beta", "--team", "gamma", "--name", "take-bg")
    duck_db("pool", "depth", "--name", "d5", "--runs", "pooled", "--depth", "5")
    tables = []
    for side in ("spark", "duck"):
        con = duckdb.connect(paths[side], read_only=True)
        tables.append((con.execute("SELECT * FROM qrels ORDER BY ALL").df(),
                       con.execute("SELECT qrels, source, parent, kind, params, description, topic_qrels "
                                   "FROM qrels_info ORDER BY qrels").fetchall()))
        con.close()
    pd.testing.assert_frame_equal(tables[0][0], tables[1][0])
    assert [(*r[:4], json.loads(r[4]) if r[4] else None, *r[5:]) for r in tables[0][1]] == \
           [(*r[:4], json.loads(r[4]) if r[4] else None, *r[5:]) for r in tables[1][1]]


def test_cli_stats_and_errors(spark, fixture_export, tmp_path):
    invoke = cli_for(str(tmp_path / "unused.duckdb"))
    out = str(tmp_path / "out")
    result = invoke("spark", "pool", "stats", "multiplicity", "--runs", "pooled", "--depth", "10",
                    "--data", fixture_export, "--format", "json")
    assert json.loads(result.stdout)[0] == {"band": "1", "documents": 109, "judged": 107, "relevant": 15,
                                            "fraction_relevant": pytest.approx(15 / 109)}
    bad = invoke("spark", "eval", "-m", "AP", "--data", str(tmp_path / "nothing"), "--out", out, ok=False)
    assert bad.exit_code == 1 and "cannot read it" in bad.output and "irw export" in bad.output
    bad = invoke("spark", "eval", "-m", "AP", "--qrels", "nope", "--data", fixture_export, "--out", out, ok=False)
    assert bad.exit_code == 1 and "unknown qrels 'nope'" in bad.output


# ------------------------------------------- irw load results: bad input (no Spark needed)

def _results_dir(tmp_path, scores: list[tuple], evaluations: list[tuple] | None = None) -> str:
    out = tmp_path / "results"
    out.mkdir(exist_ok=True)
    con = duckdb.connect()
    con.execute("CREATE TABLE s (qrels VARCHAR, collection VARCHAR, run_id VARCHAR, topic VARCHAR, "
                "measure VARCHAR, value DOUBLE)")
    con.executemany("INSERT INTO s VALUES (?, 'default', ?, ?, ?, ?)", scores)
    con.execute(f"COPY s TO '{out}/scores.parquet' (FORMAT parquet)")
    con.execute("CREATE TABLE e (evaluated_at TIMESTAMP, qrels VARCHAR, collection VARCHAR, measure VARCHAR, "
                "n_runs INTEGER, topics VARCHAR, max_docs INTEGER, rel_level INTEGER)")
    for q, m in evaluations if evaluations is not None else {(r[0], r[3]) for r in scores}:
        con.execute("INSERT INTO e VALUES (current_timestamp, ?, 'default', ?, 1, 'qrels', NULL, NULL)", [q, m])
    con.execute(f"COPY e TO '{out}/evaluations.parquet' (FORMAT parquet)")
    con.close()
    return str(out)


@pytest.mark.parametrize("rows, evaluations, message", [
    ([("nope", "alpha1", "101", "AP", 0.5)], None, "qrels 'nope' is not in the warehouse"),
    ([("fixture", "zeta9", "101", "AP", 0.5)], None, "run 'zeta9' is not loaded"),
    ([("fixture", "alpha1", "101", "map", 0.5)], None, "measure 'map' is not a canonical name (irw writes 'AP')"),
    ([("fixture", "alpha1", "101", "Foo@3", 0.5)], None, "measure 'Foo@3': unknown measure"),
    ([("fixture", "alpha1", "101", "AP", 0.5)] * 2, None, "a score is there twice"),
    ([("fixture", "alpha1", "101", "AP", 0.5)], [], "no evaluation of fixture AP"),
])
def test_load_results_refuses_bad_input(sql_warehouse, tmp_path, rows, evaluations, message):
    path = str(tmp_path / "w.duckdb")
    shutil.copy(sql_warehouse, path)
    before = duckdb.connect(path, read_only=True).execute("SELECT count(*), sum(value) FROM scores").fetchone()
    result = cli_for(path)("load", "results", _results_dir(tmp_path, rows, evaluations), ok=False)
    assert result.exit_code == 1 and message in result.output, result.output
    assert "scores.parquet" in result.output or "evaluations.parquet" in result.output
    after = duckdb.connect(path, read_only=True).execute("SELECT count(*), sum(value) FROM scores").fetchone()
    assert after == before


def test_load_results_refuses_a_directory_without_results(sql_warehouse, tmp_path):
    path = str(tmp_path / "w.duckdb")
    shutil.copy(sql_warehouse, path)
    invoke = cli_for(path)
    result = invoke("load", "results", str(tmp_path), ok=False)
    assert "holds neither scores.parquet nor qrels.parquet" in result.output
    with pytest.raises(IrwError, match="no such directory"):
        irs.load_results(duckdb.connect(), str(tmp_path / "none"))
