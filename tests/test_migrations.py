"""Result tables that grow: a warehouse written by an earlier irwarehouse opens, migrates and
keeps what it holds (DESIGN "Tables that grow"; irwarehouse.schema.MIGRATIONS).

``tests/data/warehouse-v6.duckdb.xz`` was written by the landed irwarehouse of schema
version 6 itself (commit 912c9f4, run by tests/data/make_old_warehouse.py, which extracts
that commit's package with git archive): the bundled fixtures loaded, evaluated, pooled and
standardized, with saved discriminative power, pair tests and a correlation matrix. A
committed file (64 KB) is used rather than one built in the test from git history, which a
shallow checkout (CI) may lack; the script says how it was made and makes it again.
"""

from __future__ import annotations

import json
import lzma
import shutil

import duckdb
import pytest

from conftest import ROOT, cli_for, snapshot
from irwarehouse import Warehouse, connection, schema, sql
from irwarehouse.errors import IrwError

OLD = ROOT / "tests" / "data" / "warehouse-v6.duckdb.xz"


@pytest.fixture()
def old(tmp_path) -> str:
    path = tmp_path / "old.duckdb"
    with lzma.open(OLD) as src, open(path, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return str(path)


def rows(path: str, query: str) -> list[tuple]:
    con = duckdb.connect(path, read_only=True)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


def columns(path: str) -> dict[str, list[tuple]]:
    """Every base table's columns with their types, in order."""
    out: dict[str, list[tuple]] = {}
    for table, column, kind in rows(path, """SELECT c.table_name, c.column_name, c.data_type
            FROM information_schema.columns c JOIN information_schema.tables t
            USING (table_catalog, table_schema, table_name)
            WHERE c.table_schema = 'main' AND t.table_type = 'BASE TABLE'
            ORDER BY c.table_name, c.ordinal_position"""):
        out.setdefault(table, []).append((column, kind))
    return out


def kept(path: str, tables: dict[str, list[str] | None]) -> dict[str, tuple[list[str], list[tuple]]]:
    """Each table's columns (those named, default: all but its times) and its rows in order."""
    layout = columns(path)
    con = duckdb.connect(path, read_only=True)
    try:
        out = {}
        for table, names in tables.items():
            names = names or [c for c, kind in layout[table] if not kind.startswith("TIMESTAMP")]
            listed = ", ".join(f'"{c}"' for c in names)
            out[table] = (names, con.execute(f"SELECT {listed} FROM {table} ORDER BY ALL").fetchall())
        return out
    finally:
        con.close()


def test_the_steps_are_a_history():
    versions = [m.version for m in schema.MIGRATIONS]
    assert versions == list(range(versions[0], versions[0] + len(versions)))
    assert str(versions[-1]) == connection.SCHEMA_VERSION
    for step in schema.MIGRATIONS:
        module = sql.module(step.template)
        assert callable(module.before) and callable(module.after) and step.summary
    assert schema.pending_migrations(None) == [] == schema.pending_migrations(connection.SCHEMA_VERSION)
    assert [m.version for m in schema.pending_migrations("6")] == [7, 8, 9, 10, 11]
    assert [m.version for m in schema.pending_migrations("7")] == [8, 9, 10, 11]


def test_a_reader_says_what_refresh_would_do(old):
    before = snapshot(old)
    assert rows(old, "SELECT value FROM irw_meta WHERE key = 'schema_version'") == [("6",)]
    with pytest.raises(IrwError) as info:
        with Warehouse(old, read_only=True) as w:
            w.pvalues("AP")
    message = str(info.value)
    assert f"schema version 6, now {connection.SCHEMA_VERSION}" in message and "irw refresh would keep what it holds" in message
    assert schema.MIGRATIONS[-1].summary in message
    assert snapshot(old) == before


def test_an_old_warehouse_migrates_and_keeps_its_results(old, tmp_path):
    saved = kept(old, dict.fromkeys(("pair_tests", "discpower_results", "correlation_matrices", "scores",
                                     "run_meta", "qrels_info", "std_factors", "std_factor_sets")))
    w = cli_for(old)
    done = w("refresh")
    assert f"upgraded the warehouse from schema version 6 to {connection.SCHEMA_VERSION}" in done.stderr
    assert rows(old, "SELECT value FROM irw_meta WHERE key = 'schema_version'") == [(connection.SCHEMA_VERSION,)]
    # every saved row is there, the new columns empty
    after = kept(old, {table: names for table, (names, _) in saved.items()})
    for table, (_, before) in saved.items():
        assert before and after[table][1] == before, table
    assert rows(old, "SELECT count(*) FROM pair_tests WHERE name = 'fixture-ap' AND ci_low IS NULL "
                     "AND effect_size IS NULL AND system_a IS NULL") == [(28,)]
    assert rows(old, "SELECT count(*) FROM run_meta WHERE system IS NULL") == [(8,)]
    # runs ranked under the old trec_eval order (scores as 32-bit floats) name it trec_eval_9
    # now, their ranks and scores kept; the evaluations log names the order of its scores
    assert rows(old, "SELECT DISTINCT ranking_policy FROM run_loads") == [("trec_eval_9",)]
    assert rows(old, "SELECT DISTINCT ranking_policy FROM evaluations") == [("trec_eval_9",)]
    # the stored scores were computed on the stored ranking: tie policy trec_eval
    assert rows(old, "SELECT DISTINCT ties FROM scores") == [("trec_eval",)]
    assert rows(old, "SELECT DISTINCT ties FROM evaluations") == [("trec_eval",)]
    # the tables are those of a warehouse created now, column for column
    fresh = str(tmp_path / "fresh.duckdb")
    cli_for(fresh)("load", "qrels", ROOT / "fixtures" / "qrels.txt", "--name", "fixture")
    assert columns(old) == columns(fresh)
    # and the warehouse works on: its numbers, new results saved beside the old ones
    pairs = json.loads(w("pvalues", "-m", "AP", "--save", "again", "--format", "json").stdout)
    old_pairs = rows(old, "SELECT run_a, run_b, p_value FROM pair_tests WHERE name = 'fixture-ap' ORDER BY ALL")
    assert [(p["run_a"], p["run_b"], pytest.approx(p["p_value"])) for p in pairs] == old_pairs
    assert rows(old, "SELECT count(*) FROM pair_tests WHERE name = 'again' AND ci_low IS NOT NULL") == [(28,)]
    assert rows(old, "SELECT count(DISTINCT name) FROM pair_tests") == [(2,)]
    w("discpower", "-m", "AP", "--save", "dp7")
    assert rows(old, "SELECT count(*) FROM discpower_results WHERE residual_variance IS NOT NULL") == [(1,)]
    assert rows(old, "SELECT count(*) FROM pair_tests WHERE name = 'dp7'") == [(28,)]


def test_a_migration_that_fails_changes_nothing(old, monkeypatch):
    before = snapshot(old)
    real = sql.run

    def failing(con, template, name, *args, **kwargs):
        if template == schema.MIGRATIONS[-1].template and name == "after":
            raise duckdb.ConversionException("the step failed")
        return real(con, template, name, *args, **kwargs)

    monkeypatch.setattr(sql, "run", failing)
    with pytest.raises(IrwError, match=f"cannot bring the warehouse to schema version {schema.MIGRATIONS[-1].version}"):
        Warehouse(old).runs()
    monkeypatch.undo()
    assert snapshot(old) == before
    with Warehouse(old) as w:
        assert len(w.runs()) == 8


# ------------------------------------------------------------ empty and foreign DuckDB files

FIXTURES = ROOT / "fixtures"


def _empty_database(path) -> str:
    duckdb.connect(str(path)).close()
    return str(path)


def test_an_empty_duckdb_database_is_an_empty_warehouse_to_reads(tmp_path):
    path = _empty_database(tmp_path / "empty.duckdb")
    before = (tmp_path / "empty.duckdb").read_bytes()
    invoke = cli_for(path)
    assert invoke("runs", "list").output == "(no rows)\n"
    assert invoke("qrels", "list").output == "(no rows)\n"
    assert invoke("sql", "SELECT count(*) AS n FROM runs").output.split() == ["n", "-", "0"]
    assert invoke("sql", "SELECT count(*) > 0 AS has FROM measures").output.split()[-1] == "True"
    result = invoke("eval", "-m", "P@10", ok=False)
    assert result.exit_code == 1 and "no qrels are loaded" in result.stderr
    with Warehouse(path, read_only=True) as w:
        assert w.sql("SELECT count(*) FROM scores").rows() == [(0,)]
    # reads wrote nothing: the file is as it was, without a journal
    assert (tmp_path / "empty.duckdb").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.duckdb"]


@pytest.mark.parametrize("first", ["qrels", "runs"])
def test_an_empty_duckdb_database_is_a_new_warehouse_to_a_load(tmp_path, first):
    path = _empty_database(tmp_path / "empty.duckdb")
    invoke = cli_for(path)
    loads = {"qrels": ("load", "qrels", FIXTURES / "qrels.txt", "--name", "fixture"),
             "runs": ("load", "runs", FIXTURES / "runs")}
    invoke(*loads[first])
    invoke(*loads["runs" if first == "qrels" else "qrels"])
    assert rows(path, "SELECT value FROM irw_meta WHERE key = 'schema_version'") == [
        (connection.SCHEMA_VERSION,)]
    assert rows(path, "SELECT DISTINCT collection FROM run_info") == [("default",)]
    out = invoke("eval", "-m", "P@10").output
    assert "alpha1" in out and "0.8000" in out
    # the measure macros came with the load
    assert rows(path, "SELECT count(*) FROM measure.P('fixture', k := 10)")[0][0] > 0


@pytest.mark.parametrize("statement, held", [
    ("CREATE VIEW v AS SELECT 1 AS x", "v"),
    ("CREATE MACRO m(x) AS x + 1", "m"),
    ("CREATE SEQUENCE s", "s"),
    ("CREATE SCHEMA other", "schema other"),
])
def test_a_database_holding_other_objects_is_not_a_warehouse(tmp_path, statement, held):
    path = str(tmp_path / "other.duckdb")
    con = duckdb.connect(path)
    con.execute(statement)
    con.close()
    for args in (("runs", "list"), ("load", "qrels", FIXTURES / "qrels.txt", "--name", "q")):
        result = cli_for(path)(*args, ok=False)
        assert result.stderr == (f"error: {path} is a DuckDB database but not an irw warehouse "
                                 f"(it holds {held}); choose another --db\n")
    assert rows(path, "SELECT count(*) FROM duckdb_tables()") == [(0,)]


def test_a_new_in_memory_database_is_not_searched_for_other_objects(monkeypatch, tmp_path):
    """A new in-memory database is empty, a new warehouse: opening one (files in, scores out
    opens one per command) does not look for other programs' objects; a file still is."""
    from irwarehouse.connection import opening

    looked = []
    problem = opening._warehouse_problem
    monkeypatch.setattr(opening, "_warehouse_problem", lambda con, path: looked.append(path) or problem(con, path))
    connection.connect(":memory:").close()
    assert looked == []
    connection.connect(str(tmp_path / "w.duckdb")).close()
    assert looked == [str(tmp_path / "w.duckdb")]


def _made(path: str) -> tuple[list, list]:
    """A warehouse's objects with the digests of their definitions, and its measure catalogue."""
    con = duckdb.connect(path, read_only=True)
    try:
        return (sorted(sql.rows(con, "install.sql", "definitions")),
                con.execute("SELECT * FROM measures ORDER BY name").fetchall())
    finally:
        con.close()


def test_a_new_warehouse_is_a_copy_of_the_schema_template(tmp_path, monkeypatch):
    """A new warehouse copies the schema's template (schema.schema_template, made once and
    kept) and holds exactly what the statements make; where there is no template, the
    statements run; a warehouse that holds something is never copied into."""
    template = schema.schema_template()
    assert template is not None and template == schema.schema_template()
    made_at = __import__("os").stat(template).st_mtime_ns
    copied = str(tmp_path / "copied.duckdb")
    with Warehouse(copied) as w:
        w.load_qrels(str(ROOT / "fixtures" / "qrels.txt"), "q")
    assert __import__("os").stat(template).st_mtime_ns == made_at  # kept, not made again
    calls = []
    monkeypatch.setattr(schema, "schema_template", lambda storage=None: calls.append(storage))
    stated = str(tmp_path / "stated.duckdb")
    with Warehouse(stated) as w:
        w.load_qrels(str(ROOT / "fixtures" / "qrels.txt"), "q")
    assert calls, "the template was asked for"
    assert _made(copied) == _made(stated)
    # a warehouse set up by another irw (another fingerprint): the statements, not a copy
    con = duckdb.connect(copied)
    con.execute("UPDATE irw_meta SET value = 'other' WHERE key = 'schema_fingerprint'")
    con.close()
    calls.clear()
    with Warehouse(copied) as w:
        assert w.qrels_name() == "q"  # opened for writing: set up again
    assert calls == []
    assert rows(copied, "SELECT value FROM irw_meta WHERE key = 'schema_fingerprint'") == \
        [(schema.schema_fingerprint(),)]
    assert _made(copied) == _made(stated)
