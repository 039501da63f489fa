"""The warehouse as an SQL product: measure macros callable from plain SQL, and caches that
cannot go stale after changes made outside irw.

Every measure macro (schema ``measure``) is checked against the engine (``irw eval
--per-topic --no-store``) on the fixtures -- every catalogue measure at several parameter
settings, for a loaded and a derived qrels -- and on TREC-8. The stale-cache cases edit
the tables with plain SQL and compare every result with a warehouse loaded from the
equivalently edited files.
"""

from __future__ import annotations

import subprocess
import sys

import duckdb
import pandas as pd
import pytest

from irwarehouse import catalogue, judgment_kinds, measures, schema
from irwarehouse.engine import evaluation, loading, pools, rendering
from irwarehouse.engine.base import ensure_bases
from irwarehouse.errors import IrwError
from irwarehouse.judgment_kinds import GRADED

from conftest import FIXTURES

# (engine measure name, macro name, macro arguments after the qrels): every catalogue measure
# at the parameter settings its entry gives as examples, the macro call derived from it
# (the measures of graded judgments: the fixtures' qrels; each other kind's family is
# tested on its own judgments, e.g. tests/test_diversity.py)
GRADED_MEASURES = [n for n, m in measures.CATALOGUE.items() if m.reads == GRADED]
CASES = [(name, measures.parse(name).name, measures.macro_arguments(measures.parse(name)))
         for definition in measures.CATALOGUE.values() if definition.reads == GRADED
         for name in definition.examples]


def test_every_catalogue_measure_is_a_case():
    assert {macro for _, macro, _ in CASES} == set(GRADED_MEASURES)  # the others: their families' tests
    assert ("nDCG(discount=jk)@10", "nDCG", "k := 10, discount := 'jk'") in CASES
    assert ("RBP(depth=100,residual=0.05)@50", "RBP", "k := 50, depth := 100, residual := 0.05") in CASES


def load_fixtures(con):
    loading.load_qrels(con, [str(FIXTURES / "qrels.txt")], "fixture")
    loading.load_runs(con, [str(FIXTURES / "runs")], meta=str(FIXTURES / "runs.tsv"))


def engine(con, qrels, name, runs=None, every=None):
    """The engine's values of the measure ``name`` (several: indexed by measure too); from
    ``every``, the engine's frame of many measures at once, when given."""
    if every is None:
        runs = runs or [r[0] for r in con.execute("SELECT run_id FROM run_loads ORDER BY 1").fetchall()]
        per = evaluation.evaluate(con, qrels, measures.parse_all([name]), runs, store=False).df()
    else:
        per = every[every["measure"].isin({str(m) for m in measures.parse_all([name])})]
    if per["measure"].nunique() > 1:
        return per.set_index(["run_id", "topic", "measure"])["value"].sort_index()
    return per.set_index(["run_id", "topic"])["value"].sort_index()


def macro(con, qrels, name, args):
    sql = f"SELECT run_id, topic, value FROM measure.{name}(?{', ' + args if args else ''})"
    return con.execute(sql, [qrels]).df().set_index(["run_id", "topic"])["value"].sort_index()


def assert_same(a: pd.Series, b: pd.Series, what: str):
    assert list(a.index) == list(b.index), what
    assert (a - b).abs().max() < 1e-12, what


@pytest.fixture(scope="module")
def fixture_db(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("fx") / "fx.duckdb")
    con = schema.connect(path)
    load_fixtures(con)
    pools.build_many(con, "leave-out", "fixture", [("fixture-lo-alpha", ["alpha"])], "pooled", 10)
    con.close()
    return path


@pytest.mark.parametrize("qrels", ["fixture", "fixture-lo-alpha"])
def test_measure_macros_equal_the_engine_on_the_fixtures(fixture_db, qrels):
    """Each macro call of CASES against the engine's values of its measure (the engine
    evaluating every case at once)."""
    con = schema.connect(fixture_db)
    runs = [r[0] for r in con.execute("SELECT run_id FROM run_loads ORDER BY 1").fetchall()]
    every = evaluation.evaluate(con, qrels, measures.parse_all([c[0] for c in CASES]), runs, store=False).df()
    for name, mac, args in CASES:
        assert_same(macro(con, qrels, mac, args), engine(con, qrels, name, every=every), f"{name} on {qrels}")
    con.close()


def test_measure_macros_from_a_plain_duckdb_process(fixture_db):
    """A process that never imports irwarehouse, on a read-only connection."""
    code = ("import duckdb, json, sys; con = duckdb.connect(sys.argv[1], read_only=True); "
            "rows = con.execute(\"SELECT run_id, avg(value) FROM measure.nDCG('fixture', k := 10, "
            "discount := 'jk') GROUP BY run_id ORDER BY run_id\").fetchall(); "
            "assert 'irwarehouse' not in sys.modules; print(json.dumps(rows))")
    out = subprocess.run([sys.executable, "-c", code, fixture_db], capture_output=True, text=True,
                         check=True).stdout
    import json

    con = schema.connect(fixture_db, read_only=True)
    want = engine(con, "fixture", "nDCG(discount=jk)@10").groupby("run_id").mean()
    con.close()
    got = dict(json.loads(out))
    assert set(got) == set(want.index)
    assert all(abs(got[r] - want[r]) < 1e-12 for r in want.index)


def test_measure_macros_select_runs_and_check_parameters(fixture_db):
    con = duckdb.connect(fixture_db, read_only=True)
    rows = con.execute("SELECT DISTINCT run_id FROM measure.AP('fixture', runs := ['alpha1', 'beta2']) "
                       "ORDER BY 1").fetchall()
    assert rows == [("alpha1",), ("beta2",)]
    for call, message in [("RBP('fixture', p := 1.5)", "p must be in"),
                          ("RBP('fixture', p := 0.9, depth := 10)", "give p or depth, not both"),
                          ("RBPres('fixture', residual := 0.2)", "residual means nothing without depth"),
                          ("nRBP('fixture', depth := 0)", "depth must be >= 1"),
                          ("RBP('fixture', depth := 10, residual := 1)", r"residual must be in \(0, 1\)"),
                          ("nDCG('fixture', discount := 'log')", "discount must be"),
                          ("P('fixture', k := 0)", "k must be a positive"),
                          ("AP('nope')", "no such qrels")]:
        with pytest.raises(duckdb.Error, match=message):
            con.execute(f"SELECT * FROM measure.{call}").fetchall()
    con.close()


# ----------------------------------------------------------------------- stale caches

RUN_LINES = {
    "r1": ["1 Q0 a 1 9 r1", "1 Q0 b 2 8 r1", "1 Q0 c 3 7 r1", "1 Q0 d 4 6 r1", "2 Q0 x 1 5 r1", "2 Q0 y 2 4 r1"],
    "r2": ["1 Q0 c 1 9 r2", "1 Q0 e 2 8 r2", "1 Q0 a 3 7 r2", "2 Q0 y 1 5 r2", "2 Q0 z 2 4 r2"],
}
QRELS_LINES = ["1 0 a 1", "1 0 b 0", "1 0 c 2", "1 0 e 1", "2 0 x 0", "2 0 y 1", "2 0 z 2"]
MEASURES = ["AP", "P@2", "nDCG@3", "RBP(p=0.8)", "Bpref", "RPrec", "Judged@3", "NumRet"]


def build(path, run_lines, qrels_lines, tmp):
    tmp.mkdir(exist_ok=True)
    (tmp / "runs.txt").write_text("\n".join(l for lines in run_lines.values() for l in lines) + "\n")
    (tmp / "qrels.txt").write_text("\n".join(qrels_lines) + "\n")
    con = schema.connect(path)
    loading.load_qrels(con, [str(tmp / "qrels.txt")], "q")
    loading.load_runs(con, [str(tmp / "runs.txt")])
    return con


def results(path, runs, read_only):
    """Per-topic scores by the engine (on a write or read-only connection) and the macros."""
    con = schema.connect(path, read_only=read_only)
    out = {"engine": engine(con, "q", ",".join(MEASURES), runs)}
    out["macros"] = pd.concat({m: macro(con, "q", *_macro_call(m)) for m in MEASURES},
                              names=["measure"]).reorder_levels(["run_id", "topic", "measure"]).sort_index()
    out["macros"] = out["macros"][[r in runs for r, _, _ in out["macros"].index]]
    con.close()
    return out


def _macro_call(name):
    return {"AP": ("AP", ""), "P@2": ("P", "k := 2"), "nDCG@3": ("nDCG", "k := 3"),
            "RBP(p=0.8)": ("RBP", ""), "Bpref": ("Bpref", ""), "RPrec": ("RPrec", ""),
            "Judged@3": ("Judged", "k := 3"), "NumRet": ("NumRet", "")}[name]


EDITS = {
    "update grades": ("UPDATE qrels SET rel = 0 WHERE topic = '1' AND docno IN ('a', 'c')",
                      None, ["1 0 a 0", "1 0 b 0", "1 0 c 0", "1 0 e 1", "2 0 x 0", "2 0 y 1", "2 0 z 2"]),
    "delete qrels lines": ("DELETE FROM qrels WHERE docno IN ('e', 'z')",
                           None, ["1 0 a 1", "1 0 b 0", "1 0 c 2", "2 0 x 0", "2 0 y 1"]),
    "delete a run": ("DELETE FROM runs WHERE run_id = 'r2'", {"r1": RUN_LINES["r1"]}, None),
    "delete run lines": ("DELETE FROM runs WHERE run_id = 'r1' AND docno IN ('a', 'x')",
                         {"r1": ["1 Q0 b 2 8 r1", "1 Q0 c 3 7 r1", "1 Q0 d 4 6 r1", "2 Q0 y 2 4 r1"],
                          "r2": RUN_LINES["r2"]}, None),
    "insert run rows": ("INSERT INTO runs VALUES ('default', 'r2', '1', 'b', 0, 8.5, 9), "
                        "('default', 'r2', '2', 'x', 0, 9.5, 3)",
                        {"r1": RUN_LINES["r1"], "r2": RUN_LINES["r2"] + ["1 Q0 b 9 8.5 r2", "2 Q0 x 3 9.5 r2"]},
                        None),
    "change a score": ("UPDATE runs SET score = 10 WHERE run_id = 'r1' AND docno = 'd'",
                       {"r1": ["1 Q0 a 1 9 r1", "1 Q0 b 2 8 r1", "1 Q0 c 3 7 r1", "1 Q0 d 4 10 r1",
                               "2 Q0 x 1 5 r1", "2 Q0 y 2 4 r1"], "r2": RUN_LINES["r2"]}, None),
}


@pytest.mark.parametrize("edit", list(EDITS))
@pytest.mark.parametrize("read_only", [True, False], ids=["read-only", "write"])
def test_results_after_sql_edits_equal_a_fresh_load(tmp_path, edit, read_only):
    statement, runs_after, qrels_after = EDITS[edit]
    path = str(tmp_path / "w.duckdb")
    con = build(path, RUN_LINES, QRELS_LINES, tmp_path / "a")
    engine(con, "q", ",".join(MEASURES))  # base materialized
    evaluation.evaluate(con, "q", measures.parse_all(MEASURES), ["r1", "r2"])  # scores stored
    con.close()
    plain = duckdb.connect(path)  # outside irw
    plain.execute(statement)
    plain.close()

    ref_path = str(tmp_path / "ref.duckdb")
    build(ref_path, runs_after or RUN_LINES, qrels_after or QRELS_LINES, tmp_path / "b").close()
    runs = sorted((runs_after or RUN_LINES).keys())
    want = results(ref_path, runs, read_only=True)
    got = results(path, runs, read_only=read_only)
    assert_same(got["engine"], want["engine"], f"engine after {edit}")
    assert_same(got["macros"], want["macros"], f"macros after {edit}")
    if not read_only:  # the write connection brought the warehouse in line: nothing is stale
        con = schema.connect(path, read_only=True)
        from irwarehouse import state
        assert state.changed(con) == [] and state.runs_current(con), edit
        con.close()
    if not read_only:  # the write connection brought stored scores in line too
        con = duckdb.connect(path, read_only=True)
        stored = con.execute("SELECT run_id, topic, measure, value FROM scores").df()
        con.close()
        fresh = want["engine"].reset_index().rename(columns={"value": "fresh"})
        merged = stored.merge(fresh, on=["run_id", "topic", "measure"], how="outer")
        assert merged["value"].notna().all() and merged["fresh"].notna().all(), edit
        assert (merged["value"] - merged["fresh"]).abs().max() < 1e-12, edit


def test_a_duplicate_inserted_with_sql_is_refused_with_a_way_out(tmp_path):
    path = str(tmp_path / "w.duckdb")
    build(path, RUN_LINES, QRELS_LINES, tmp_path / "a").close()
    plain = duckdb.connect(path)
    plain.execute("INSERT INTO runs VALUES ('default', 'r1', '1', 'a', 9, 1.0, 9)")
    plain.close()
    with pytest.raises(IrwError, match="run r1 now holds document a twice for topic 1.*--replace"):
        schema.connect(path)
    con = duckdb.connect(path)  # unchanged: nothing was half-done
    assert con.execute("SELECT count(*) FROM runs WHERE run_id = 'r1'").fetchone()[0] == 7
    con.close()


def test_a_derived_qrels_edited_with_sql_is_not_evaluated_from_its_root(tmp_path):
    path = str(tmp_path / "w.duckdb")
    con = build(path, RUN_LINES, QRELS_LINES, tmp_path / "a")
    con.execute("INSERT INTO qrels SELECT 'sub', topic, docno, rel FROM qrels WHERE qrels = 'q' AND docno <> 'e'")
    catalogue.register_qrels(con, "sub", source=None, kind="depth", parent="q")
    from irwarehouse import state
    state.record_qrels(con, "sub")
    before = engine(con, "sub", "AP")
    con.execute("UPDATE qrels SET rel = 0 WHERE qrels = 'sub' AND docno = 'c'")  # no longer a subset
    after = engine(con, "sub", "AP")
    assert after.loc[("r2", "1")] < before.loc[("r2", "1")]
    assert_same(macro(con, "sub", "AP", ""), after, "macro on the edited derived qrels")
    con.close()


def test_measure_macros_on_trec8_equal_the_engine(trec8_db):
    con = schema.connect(trec8_db, read_only=True)
    for name, mac, args in [("AP", "AP", ""), ("P@10", "P", "k := 10"), ("nDCG@10", "nDCG", "k := 10"),
                            ("nDCG(discount=jk)@1000", "nDCG", "k := 1000, discount := 'jk'"),
                            ("RBP(p=0.8)", "RBP", ""), ("Bpref", "Bpref", ""), ("RPrec", "RPrec", "")]:
        assert_same(macro(con, "trec8", mac, args), engine(con, "trec8", name), name)
    con.close()


# ------------------------------------------------- the runs tables' version, on every call
#
# A measure macro checks, on every call, that the caches stand for the tables. For `runs` it
# does so without reading it: every row any client inserts or updates draws a number from
# the sequence irw_runs_writes (the table's check), so the number last drawn and the count
# of rows (irw_runs_fp()) differ from what irw recorded after its last write. Each writer
# below bypasses irw, on the connection that then calls the macros; the macros must give the
# values of a warehouse loaded afresh from the edited tables, and once irw has opened the
# warehouse for writing they must take the cache again, still giving those values.

def _edit_copy(con, tmp_path):
    tmp_path.mkdir(exist_ok=True)
    path = tmp_path / "rows.csv"
    path.write_text("collection,run_id,topic,docno,rank,score,given_rank\ndefault,r2,2,x,0,9.5,3\n")
    con.execute(f"COPY runs FROM '{path}' (HEADER)")


def _edit_appender(con, tmp_path):
    con.append("runs", pd.DataFrame({"collection": ["default"], "run_id": ["r2"], "topic": ["2"],
                                     "docno": ["x"], "rank": [0], "score": [9.5], "given_rank": [3]}))


def _edit_rolled_back(con, tmp_path):
    con.execute("BEGIN")
    con.execute("UPDATE runs SET score = 10 WHERE run_id = 'r1' AND docno = 'd'")
    con.execute("ROLLBACK")


WRITERS = {
    "update a score": ["UPDATE runs SET score = 10 WHERE run_id = 'r1' AND docno = 'd'"],
    "update a docno": ["UPDATE runs SET docno = 'e' WHERE run_id = 'r1' AND docno = 'd'"],
    "delete and insert as many rows": ["DELETE FROM runs WHERE run_id = 'r1' AND docno = 'a'",
                                       "INSERT INTO runs VALUES ('default', 'r1', '1', 'e', 0, 9.5, 1)"],
    "add a run": ["INSERT INTO runs VALUES ('default', 'r3', '1', 'a', 0, 3, 1), "
                  "('default', 'r3', '1', 'e', 0, 2, 2), ('default', 'r3', '2', 'z', 0, 1, 1)"],
    "remove a run": ["DELETE FROM runs WHERE run_id = 'r2'"],
    "regrade qrels": ["UPDATE qrels SET rel = 0 WHERE docno = 'c'"],
    "merge": ["MERGE INTO runs USING (SELECT 'r2' AS run_id, 'a' AS docno) AS s "
              "ON runs.run_id = s.run_id AND runs.docno = s.docno WHEN MATCHED THEN UPDATE SET score = 9.5"],
    "copy from a file": _edit_copy,
    "appender": _edit_appender,
    "replace the table": ["CREATE OR REPLACE TABLE runs AS SELECT * REPLACE (-score AS score) FROM runs"],
    "a change undone": ["UPDATE runs SET score = 10 WHERE run_id = 'r1' AND docno = 'd'",
                        "UPDATE runs SET score = 6 WHERE run_id = 'r1' AND docno = 'd'"],
    "a change rolled back": _edit_rolled_back,
}


def macro_results(con):
    """Every MEASURES value of every run, by the measure macros on connection ``con``."""
    return pd.concat({m: macro(con, "q", *_macro_call(m)) for m in MEASURES},
                     names=["measure"]).reorder_levels(["run_id", "topic", "measure"]).sort_index()


def loaded_afresh(con, tmp):
    """The engine's values on a warehouse loaded from files holding the rows of ``con``'s
    runs and qrels tables (the oracle for any edit)."""
    runs = {}
    for topic, docno, given, score, run_id in con.execute(
            "SELECT topic, docno, given_rank, score, run_id FROM runs ORDER BY ALL").fetchall():
        runs.setdefault(run_id, []).append(f"{topic} Q0 {docno} {given} {score!r} {run_id}")
    qrels = [f"{t} 0 {d} {r}" for t, d, r in
             con.execute("SELECT topic, docno, rel FROM qrels WHERE qrels = 'q' ORDER BY ALL").fetchall()]
    ref = build(str(tmp / "ref.duckdb"), runs, qrels, tmp)
    want = engine(ref, "q", ",".join(MEASURES), sorted(runs))
    ref.close()
    return want


def source(con):
    return con.execute("SELECT irw_base_source('q', 'default', irw_runs_fp())").fetchone()[0]


@pytest.mark.parametrize("writer", list(WRITERS))
def test_a_macro_never_serves_a_number_the_tables_no_longer_give(tmp_path, writer):
    path = str(tmp_path / "w.duckdb")
    con = build(path, RUN_LINES, QRELS_LINES, tmp_path / "a")
    engine(con, "q", ",".join(MEASURES))  # base materialized
    con.close()
    plain = duckdb.connect(path)  # one client, writing and calling the macros
    assert source(plain) == "cache"
    before = macro_results(plain)
    edit = WRITERS[writer]
    if callable(edit):
        edit(plain, tmp_path / "edit")
    else:
        for statement in edit:
            plain.execute(statement)
    runs_written = writer != "regrade qrels"
    assert (plain.execute("SELECT irw_runs_fp() IS DISTINCT FROM irw_recorded_runs_fp()").fetchone()[0]
            == runs_written), writer
    assert source(plain) == ("rerank" if runs_written else "fresh"), writer
    want = loaded_afresh(plain, tmp_path / "ref")
    assert_same(macro_results(plain), want, f"macros after: {writer}")
    if writer in ("a change undone", "a change rolled back"):
        assert_same(want, before, writer)
    plain.close()

    con = schema.connect(path)  # irw opens it for writing: the warehouse is in line again
    ensure_bases(con)  # and the base of the regraded qrels built anew (as `irw refresh` does)
    con.close()
    plain = duckdb.connect(path, read_only=True)
    assert plain.execute("SELECT irw_runs_counted() AND irw_runs_fp() = irw_recorded_runs_fp()").fetchone()[0]
    assert source(plain) == "cache", writer
    assert_same(macro_results(plain), want, f"macros from the cache after: {writer}")
    plain.close()


def test_the_version_of_runs_reads_no_column_of_runs(fixture_db):
    """irw_runs_fp() costs the same for 6 and 60 M lines: DuckDB answers the count of rows
    from its metadata and scans no column of `runs` (the content hash a writer compares
    does: the check of this test sees it)."""
    import json

    con = duckdb.connect(fixture_db, read_only=True)

    def runs_columns_read(query):
        plan = json.loads(con.execute(f"EXPLAIN (FORMAT json) {query}").fetchall()[0][1])
        nodes, read = list(plan), []
        while nodes:
            node = nodes.pop()
            nodes += node.get("children", [])
            info = node.get("extra_info") or {}
            if isinstance(info, dict) and str(info.get("Table", "")).endswith(".runs"):
                read += [info.get("Projections") or []]
        return [p for p in read if p]

    assert runs_columns_read("SELECT irw_runs_fp()") == []
    assert runs_columns_read("SELECT * FROM irw_run_rows()") != []
    con.close()


def test_a_ranking_policy_changed_with_sql_ranks_the_run_again(tmp_path):
    """The version covers run_loads: a policy set with SQL is what the macros rank by,
    before and after irw brings the warehouse in line."""
    path = str(tmp_path / "w.duckdb")
    # the given ranks put a first, the scores b: AP is 1/2 under trec_eval, 1 under given
    con = build(path, {"r": ["1 Q0 a 1 1 r", "1 Q0 b 2 5 r"]}, ["1 0 a 1", "1 0 b 0"], tmp_path / "a")
    assert macro(con, "q", "AP", "").tolist() == [0.5]
    con.close()
    plain = duckdb.connect(path)
    plain.execute("UPDATE run_loads SET ranking_policy = 'given'")
    assert source(plain) == "rerank"
    assert macro(plain, "q", "AP", "").tolist() == [1.0]
    plain.close()
    con = schema.connect(path)
    assert con.execute("SELECT docno FROM runs WHERE rank = 1").fetchall() == [("a",)]
    ensure_bases(con)
    con.close()
    plain = duckdb.connect(path, read_only=True)
    assert source(plain) == "cache" and macro(plain, "q", "AP", "").tolist() == [1.0]
    plain.close()


def test_writing_runs_of_an_attached_warehouse_needs_it_current(tmp_path):
    """DuckDB looks the sequence the check of runs draws from up in the current database: a
    write to an attached warehouse's runs is refused, changing nothing, until it is USEd."""
    path = str(tmp_path / "w.duckdb")
    build(path, RUN_LINES, QRELS_LINES, tmp_path / "a").close()
    other = duckdb.connect()
    other.execute(f"ATTACH '{path}' AS w")
    with pytest.raises(duckdb.CatalogException, match="irw_runs_writes"):
        other.execute("UPDATE w.runs SET score = 10 WHERE docno = 'd'")
    other.execute("USE w")
    other.execute("UPDATE runs SET score = 10 WHERE docno = 'd'")
    assert other.execute("SELECT irw_runs_fp() <> irw_recorded_runs_fp()").fetchone()[0]
    other.close()


def test_a_warehouse_whose_runs_do_not_count_their_writes_is_upgraded(tmp_path):
    """A warehouse of schema version 5 (runs without the check) is read only after irw
    opened it for writing once, and then counts the writes to runs."""
    from irwarehouse import connection

    path = str(tmp_path / "w.duckdb")
    con = build(path, RUN_LINES, QRELS_LINES, tmp_path / "a")
    want = engine(con, "q", ",".join(MEASURES))
    con.close()
    plain = duckdb.connect(path)
    plain.execute("CREATE OR REPLACE TABLE runs AS SELECT * FROM runs")
    plain.execute("UPDATE irw_meta SET value = '5' WHERE key = 'schema_version'")
    plain.close()
    with pytest.raises(IrwError, match="older irwarehouse"):
        schema.connect(path, read_only=True)
    schema.connect(path).close()
    con = schema.connect(path, read_only=True)
    assert con.execute("SELECT value FROM irw_meta WHERE key = 'schema_version'").fetchone()[0] \
        == connection.SCHEMA_VERSION
    assert con.execute("SELECT irw_runs_counted() AND irw_runs_fp() = irw_recorded_runs_fp()").fetchone()[0]
    assert_same(engine(con, "q", ",".join(MEASURES)), want, "after the upgrade")
    assert_same(macro_results(con), want.reorder_levels(["run_id", "topic", "measure"]).sort_index(),
                "macros after the upgrade")
    con.close()


# ------------------------------------------------------------ SQL results streamed

STREAM_QUERY = ("SELECT run_id, n_topics, n_docs / 7 AS ratio, NULL AS nothing, 'x' || chr(27) || 'y' AS ctl, "
                "DATE '2024-01-02' AS day, 1.25::DECIMAL(6, 2) AS price, n_topics > 5 AS many, "
                "[1, 2] AS list, 'nan'::DOUBLE AS nan FROM run_info ORDER BY run_id")
# scalars of every kind, a structure on some rows, and a column name twice
SCALARS_QUERY = ("SELECT run_id, 'é€\"\\' || chr(10) || chr(0) AS text, 'infinity'::DOUBLE AS inf, "
                 "-0.0::DOUBLE AS zero, 0.1::FLOAT AS single, 170141183460469231731687303715884105727::HUGEINT AS big, "
                 "TIMESTAMP '2024-01-02 03:04:05.5' AS at, TIME '01:02:03' AS time, INTERVAL 3 DAY AS span, "
                 "'\\x00\\xff'::BLOB AS bytes, gen_random_uuid() IS NULL AS uuid_null, "
                 "CASE WHEN n_topics > 5 THEN {'a': 1} END AS struct, -1.5e300 AS tiny, n_topics AS \"n t\" "
                 "FROM run_info ORDER BY run_id")
DUPLICATE_QUERY = "SELECT run_id, n_topics AS run_id, 1 AS one FROM run_info ORDER BY ALL"


def _printed(fn) -> str:
    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        fn()
    return buffer.getvalue()


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
@pytest.mark.parametrize("query", [STREAM_QUERY, SCALARS_QUERY,
                                   "SELECT * FROM run_info WHERE false",
                                   "SELECT * FROM scores ORDER BY ALL LIMIT 25"])
def test_a_streamed_result_prints_as_the_whole_one(evaluated_fixtures, fmt, query):
    """``irw sql`` prints the rows batch by batch (output.stream over Warehouse.sql(...,
    batches=True)): byte for byte what the result held whole prints (output.emit)."""
    from conftest import cli_for
    from irwarehouse import Warehouse, output

    with Warehouse(str(evaluated_fixtures), read_only=True) as w:
        held = w.sql(query)
        whole = _printed(lambda: output.emit(held, fmt))
        for size in (True, 3):
            with w.sql(query, batches=size) as batches:
                assert batches.columns == held.columns
                if fmt != "table" or size is True:  # a table's widths: the first batch's
                    assert _printed(lambda: output.stream(batches, fmt)) == whole
    assert whole.count("\n") > 1 or "false" in query
    assert cli_for(str(evaluated_fixtures))("sql", query, "--format", fmt).stdout == whole


def test_streamed_json_encodes_scalar_records_without_the_indented_encoder(evaluated_fixtures,
                                                                          monkeypatch):
    """Records of scalar values are laid out by output itself, their values encoded by
    json's C encoder (json's indented encoder, pure Python, is many times slower): the same
    text (test_a_streamed_result_prints_as_the_whole_one)."""
    import json

    from irwarehouse import Warehouse, output

    indented = []
    dumps = json.dumps
    monkeypatch.setattr(json, "dumps", lambda *a, **k: indented.append(k) or dumps(*a, **k))
    with Warehouse(str(evaluated_fixtures), read_only=True) as w:
        with w.sql("SELECT * FROM scores ORDER BY ALL LIMIT 25", batches=10) as batches:
            text = _printed(lambda: output.stream(batches, "json"))
    assert len(json.loads(text)) == 25 and not indented
    # a column name twice: one key, as the whole result prints it
    monkeypatch.setattr(json, "dumps", dumps)
    with Warehouse(str(evaluated_fixtures), read_only=True) as w:
        whole = _printed(lambda: output.emit(w.sql(DUPLICATE_QUERY), "json"))
        with w.sql(DUPLICATE_QUERY, batches=2) as batches:
            assert _printed(lambda: output.stream(batches, "json")) == whole


def test_batches_hold_the_transaction_until_read(tmp_path):
    from irwarehouse import Warehouse

    with Warehouse(str(tmp_path / "w.duckdb")) as w:
        w.load_qrels(str(FIXTURES / "qrels.txt"), name="fixture")
        batches = w.sql("SELECT topic, docno FROM qrels ORDER BY ALL", batches=50)
        assert batches.types == ["VARCHAR", "VARCHAR"]
        sizes = [len(b) for b in batches]
        assert sizes[:-1] == [50] * (len(sizes) - 1) and sum(sizes) == 194
        with pytest.raises(IrwError, match="read already"):
            list(batches)
        # a write streamed and stopped early is rolled back; read to the end, it is kept
        stream = w.sql("INSERT INTO run_meta (run_id, collection, team) SELECT 'r' || range, 'default', 't' "
                       "FROM range(3) RETURNING run_id", batches=1)
        next(iter(stream))
        stream.close()
        assert w.sql("SELECT count(*) FROM run_meta").rows() == [(0,)]
        assert w.sql("SELECT run_id FROM run_meta").rows() == []
        with pytest.raises(IrwError, match="SQL error"):
            list(w.sql("SELECT CAST(docno AS INTEGER) FROM qrels", batches=True))
        assert w.sql("SELECT count(*) FROM qrels", batches=True).result().rows() == [(194,)]


IRW = [sys.executable, "-c", "from irwarehouse.cli import main; main()"]
BIG = "SELECT range AS i, range * 0.5 AS x, 'doc-' || range AS docno FROM range(2000000)"


def _irw_env() -> dict:
    import os

    from conftest import ROOT

    return {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


# Runs a command and prints its peak resident memory (KB) on stderr. The command is forked
# from this small process: a child forked from the test process would start with the test
# process's peak (Linux keeps a forked child's high-water mark across exec).
PEAK = ("import resource, subprocess, sys; status = subprocess.call(sys.argv[1:]); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); "
        "sys.exit(status)")


def test_a_large_result_is_printed_with_bounded_memory(tmp_path):
    """2 million rows as CSV (about 50 MB of text, a few hundred MB as Python tuples): the
    command's peak resident memory stays far below what holding the result takes (about
    1 GB)."""
    from conftest import cli_for

    db = str(tmp_path / "w.duckdb")
    cli_for(db)("load", "qrels", FIXTURES / "qrels.txt", "--name", "fixture")
    child = subprocess.Popen([sys.executable, "-c", PEAK, *IRW, "--db", db, "sql", BIG,
                              "--format", "csv"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=_irw_env())
    lines = sum(1 for _ in child.stdout)
    err = child.stderr.read().decode()
    assert child.wait() == 0, err
    assert lines == 2_000_001
    peak = int(err.strip().splitlines()[-1]) / 1024
    assert err.strip().count("\n") == 0  # nothing else on stderr
    assert peak < 600, f"peak RSS {peak:.0f} MB"


def test_a_closed_pipe_ends_a_large_result_quietly(tmp_path):
    from conftest import cli_for

    db = str(tmp_path / "w.duckdb")
    cli_for(db)("load", "qrels", FIXTURES / "qrels.txt", "--name", "fixture")
    for fmt, first in (("csv", ["i,x,docno"]), ("table", ["i", "x", "docno"]), ("json", ["["])):
        script = f'"$0" -c "$1" --db "$2" sql "$3" --format {fmt} | head -1'
        done = subprocess.run(["bash", "-c", script, sys.executable, IRW[2], db, BIG],
                              capture_output=True, text=True, env=_irw_env(), timeout=300)
        assert (done.returncode, done.stdout.split(), done.stderr) == (0, first, "")
        assert done.stdout.count("\n") == 1
