"""Mechanisms that know rather than guess (docs/bad-input.md): DuckDB's own sandbox for users'
SQL, irw's views and macros kept as its templates define them, exports that stay in their
directory, DataFrames loaded as data, and errors that name their cause.

Each class is tried with the spelling that found it and with variants the fix did not
target: every way of naming a path that DuckDB reads (string forms, variables, comments,
``~``, ``..``, lists, globs), every table function that reads a file, ATTACH and INSTALL in
their forms, extensions DuckDB would load for a file's suffix, and the settings that would
lift the sandbox.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from conftest import FIXTURES, cli_for, error_of, snapshot


@pytest.fixture()
def fx(evaluated_fixtures, tmp_path, monkeypatch):
    """A copy of the warehouse in a directory of the test's own (the working directory),
    with another DuckDB database beside it, a directory the SQL may be allowed, and HOME
    there too (so that ~/ and DuckDB's extension directory are the test's)."""
    path = tmp_path / "w.duckdb"
    path.write_bytes(evaluated_fixtures.read_bytes())
    other = tmp_path / "other.duckdb"
    con = duckdb.connect(str(other))
    con.execute("CREATE TABLE keep AS SELECT 42 AS x")
    con.close()
    (tmp_path / "allowed").mkdir()
    (tmp_path / "outside.csv").write_text("a,b\n1,2\n")
    (tmp_path / "allowed" / "in.csv").write_text("a,b\n3,4\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    cli = cli_for(str(path))
    cli.path, cli.tmp, cli.other = path, tmp_path, other
    return cli


def files_of(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.name.endswith(".wal")}


def refused(fx, *args, expect: str | None = None) -> str:
    """A command that must fail, leaving the warehouse, the other database and every file
    of the directory as they were, and fetching no extension."""
    before, files = snapshot(fx.db_path), files_of(fx.tmp)
    message = error_of(fx(*args, ok=False))
    if expect:
        assert expect in message, message
    assert snapshot(fx.db_path) == before
    after = files_of(fx.tmp)
    assert after == files, sorted(set(after) ^ set(files))
    assert not (fx.tmp / ".duckdb").exists(), "an extension was fetched or looked for"
    return message


# ------------------------------------------------------------------ DuckDB's sandbox

# Every statement writes or reads what the SQL may not touch: another database, a file
# outside the directory it was allowed, DuckDB's extensions.
ESCAPES = [
    "COPY (SELECT 1 AS x) TO 'other.duckdb' (FORMAT csv)",
    "COPY (SELECT 1 AS x) TO $$other.duckdb$$ (FORMAT csv)",
    "COPY (SELECT 1 AS x) TO E'other.duckdb' (FORMAT csv)",
    "COPY (SELECT 1 AS x) TO/**/'other.duckdb' (FORMAT csv)",
    "COPY (SELECT 1 AS x) TO '~/other.duckdb' (FORMAT csv)",
    "COPY (SELECT 1 AS x) TO './other.duckdb' (FORMAT csv)",
    "COPY (SELECT 1 AS x) TO 'allowed/../other.duckdb' (FORMAT csv)",
    "COPY (SELECT 1 AS x) TO '{tmp}/other.duckdb' (FORMAT csv)",
    "COPY (SELECT 1 AS x) TO 'w.duckdb' (FORMAT csv)",
    "COPY (SELECT 1 AS x) TO 'w.duckdb.wal' (FORMAT csv)",
    "COPY (SELECT 1 AS x) TO 'new.csv' (FORMAT csv)",
    "SET VARIABLE p = 'other.duckdb'; COPY (SELECT 1 AS x) TO (getvariable('p')) (FORMAT csv)",
    "COPY scores TO 'other.duckdb' (FORMAT parquet)",
    "COPY runs FROM 'outside.csv'",
    "EXPORT DATABASE 'exported'",
    "IMPORT DATABASE 'allowed'",
    "SELECT * FROM read_csv('outside.csv')",
    "SELECT * FROM 'outside.csv'",
    "SELECT * FROM read_csv(['allowed/in.csv', 'outside.csv'])",
    "SELECT * FROM read_csv('*.csv')",
    "SELECT * FROM read_text('outside.csv')",
    "SELECT * FROM read_blob('other.duckdb')",
    "SELECT * FROM glob('*')",
    "SELECT * FROM sniff_csv('outside.csv')",
    "SELECT * FROM read_json('outside.csv')",
    "SELECT * FROM read_parquet('x.parquet')",
    "SET VARIABLE f = 'outside.csv'; SELECT * FROM read_csv(getvariable('f'))",
    "ATTACH 'other.duckdb' AS o",
    "attach/**/'other.duckdb'",
    "ATTACH DATABASE IF NOT EXISTS 'allowed/new.duckdb' AS n",
    "ATTACH ':memory:' AS m",
    "DETACH w",
    "INSTALL json",
    "FORCE INSTALL httpfs",
    "LOAD 'allowed/x.duckdb_extension'",
    "SELECT * FROM read_xlsx('x.xlsx')",
    "SELECT * FROM 'x.xlsx'",
    "SELECT * FROM 'x.sqlite'",
    "SELECT * FROM sqlite_scan('x.sqlite', 't')",
    "SELECT * FROM 'https://example.invalid/x.csv'",
    "SET enable_external_access = true",
    "RESET enable_external_access",
    "SET allowed_directories = ['/']",
    "SET lock_configuration = false",
    "SET temp_directory = 'allowed'",
    "PRAGMA enable_profiling",
    "SET profiling_output = 'profile.json'",
    "CALL enable_logging(storage = 'file', storage_path = 'logs')",
    "BEGIN; DELETE FROM scores; COMMIT",
]


def setup_escapes(tmp: Path) -> None:
    """Beside the warehouse in ``tmp``: another database, a directory the SQL may be allowed,
    files outside it, and files DuckDB would read with an extension."""
    con = duckdb.connect(str(tmp / "other.duckdb"))
    con.execute("CREATE TABLE IF NOT EXISTS keep AS SELECT 42 AS x")
    con.close()
    (tmp / "allowed").mkdir(exist_ok=True)
    (tmp / "outside.csv").write_text("a,b\n1,2\n")
    (tmp / "allowed" / "in.csv").write_text("a,b\n3,4\n")
    (tmp / "x.xlsx").write_bytes(b"PK\x03\x04not really")
    (tmp / "x.sqlite").write_bytes(b"SQLite format 3\x00" + bytes(100))


def try_escapes(db: str, tmp: Path, escapes=ESCAPES) -> dict:
    """Run every statement of ESCAPES through Warehouse.sql (what ``irw sql`` calls) in the
    working directory ``tmp``, without --write and with --write and ``allowed`` allowed:
    {mode: [statements that ran]}, and whether the warehouse's rows, the other database and
    the directory's files stayed as they were and no extension directory appeared."""
    from irwarehouse import Warehouse
    from irwarehouse.errors import IrwError

    before, files = snapshot(db), files_of(tmp)
    ran = {}
    for write in (False, True):
        ran[str(write)] = []
        with Warehouse(db, read_only=not write) as w:
            for statement in escapes:
                try:
                    w.sql(statement.format(tmp=tmp), write=write, files=["allowed"] if write else ())
                except IrwError:
                    continue
                ran[str(write)].append(statement)
    keep = duckdb.connect(str(tmp / "other.duckdb"), read_only=True)
    kept = keep.execute("SELECT x FROM keep").fetchall() == [(42,)]
    keep.close()
    return {"ran": ran, "warehouse": snapshot(db) == before, "other": kept,
            "files": sorted(set(files_of(tmp)) ^ set(files)),
            "extensions": (tmp / ".duckdb").exists()}


def test_sql_reaches_nothing_but_the_warehouse(fx):
    """Without --write nothing is written or read outside the warehouse; with --write and
    a directory allowed, no other path either, however spelled; never a database, never an
    extension. The other database keeps its rows."""
    setup_escapes(fx.tmp)
    outcome = try_escapes(fx.db_path, fx.tmp)
    assert outcome == {"ran": {"False": [], "True": []}, "warehouse": True, "other": True,
                       "files": [], "extensions": False}, outcome
    # the command line calls the same method: a few of each kind, as a user types them
    for args in (("sql", ESCAPES[1]), ("sql", "--write", "--files", "allowed", ESCAPES[11]),
                 ("sql", "--write", ESCAPES[17]), ("sql", ESCAPES[28]), ("sql", "--write", ESCAPES[32]),
                 ("sql", ESCAPES[36]), ("sql", "--write", "--files", "allowed", ESCAPES[40])):
        refused(fx, *args)
    assert fx("runs", "list").exit_code == 0


def test_files_allowed_with_write_are_read_and_written(fx):
    fx("sql", "--write", "--files", "allowed",
       "COPY (SELECT run_id, count(*) AS n FROM runs GROUP BY 1 ORDER BY 1) TO 'allowed/out.csv' (HEADER)")
    assert (fx.tmp / "allowed" / "out.csv").read_text().startswith("run_id,n\nalpha1,")
    assert "3" in fx("sql", "--write", "--files", "allowed", "SELECT a FROM 'allowed/in.csv'").stdout
    # a file named by itself, which does not exist yet, in a directory that holds databases
    fx("sql", "--write", "--files", "new.csv", f"COPY (SELECT 1 AS x) TO '{fx.tmp}/new.csv'")
    assert (fx.tmp / "new.csv").read_text() == "x\n1\n"
    # the warehouse's statements still change it, in one checked transaction
    fx("sql", "--write", "--files", "allowed", "CREATE TABLE notes AS SELECT * FROM 'allowed/in.csv'")
    assert json.loads(fx("sql", "SELECT a FROM notes", "--format", "json").stdout) == [{"a": 3}]


def test_files_may_not_be_or_hold_a_database(fx):
    cases = [
        (("--files", "."), "holds a DuckDB database"),            # the warehouse's directory
        (("--files", "other.duckdb"), "is a DuckDB database"),
        (("--files", "w.duckdb.wal"), "is a DuckDB database"),
    ]
    (fx.tmp / "deep" / "er").mkdir(parents=True)
    (fx.tmp / "deep" / "er" / "copy.duckdb").write_bytes(fx.other.read_bytes())
    cases.append((("--files", "deep"), "holds a DuckDB database"))
    (fx.tmp / "linked").mkdir()
    (fx.tmp / "linked" / "note.csv").symlink_to(fx.tmp / "outside.csv")
    cases.append((("--files", "linked"), "holds a link that leads outside it"))
    (fx.tmp / "linkdir").mkdir()
    (fx.tmp / "linkdir" / "up").symlink_to(fx.tmp)
    cases.append((("--files", "linkdir"), "holds a link that leads outside it"))
    (fx.tmp / "alias.csv").symlink_to(fx.other)
    cases.append((("--files", "alias.csv"), "is a DuckDB database"))
    for options, expect in cases:
        refused(fx, "sql", "--write", *options, "COPY (SELECT 1) TO 'x.csv'", expect=expect)
    refused(fx, "sql", "--files", "allowed", "SELECT 1", expect="add --write")


def test_a_read_only_command_loads_no_extension_for_a_file(fx):
    """A path DuckDB would read with an extension (a SQLite file, by its suffix or its
    content) is refused before DuckDB sees it: nothing is installed, loaded or fetched."""
    sqlite = fx.tmp / "s.sqlite"
    import sqlite3

    con = sqlite3.connect(sqlite)
    con.execute("CREATE TABLE t (a)")
    con.commit()
    con.close()
    for path in (sqlite, fx.tmp / "s2.duckdb"):
        if path.name == "s2.duckdb":
            path.write_bytes(sqlite.read_bytes())  # the content, under a DuckDB name
        result = cli_for(str(path))("runs", "list", ok=False)
        assert "is not a DuckDB database" in error_of(result)
    assert not (fx.tmp / ".duckdb").exists()
    extensions = duckdb.connect()  # a plain DuckDB: what irw's connections may not do
    try:
        from irwarehouse.connection import DUCKDB_CONFIG, open_duckdb

        con = open_duckdb()
        settings = dict(con.execute("SELECT name, value FROM duckdb_settings() WHERE name IN "
                                    "('autoinstall_known_extensions', 'autoload_known_extensions')").fetchall())
        assert settings == {k: "false" for k in DUCKDB_CONFIG}
    finally:
        extensions.close()


def test_every_duckdb_connection_is_made_in_one_place():
    """irw makes DuckDB connections in connection.open_duckdb alone (with extension loading
    off), so that no path of the code -- a fast path's own connection included -- opens one
    without it."""
    root = Path(__file__).resolve().parents[1] / "irwarehouse"
    found = [f"{p.relative_to(root)}:{n}" for p in sorted(root.rglob("*.py"))
             for n, line in enumerate(p.read_text().splitlines(), 1)
             if "duckdb.connect(" in line and not line.lstrip().startswith("#")]
    assert len(found) == 1 and found[0].startswith("connection/settings.py:"), found
    import inspect

    from irwarehouse import connection

    assert "duckdb.connect(" in inspect.getsource(connection.open_duckdb)


def test_the_python_api_runs_sql_in_the_sandbox_too(fx):
    from irwarehouse import Warehouse
    from irwarehouse.errors import IrwError

    with Warehouse(fx.db_path) as w:
        with pytest.raises(IrwError, match="not allowed: 'other.duckdb'"):
            w.sql("COPY (SELECT 1) TO 'other.duckdb' (FORMAT csv)")
        w.sql("COPY (SELECT 1 AS x) TO 'allowed/api.csv'", files=["allowed"])
        assert (fx.tmp / "allowed" / "api.csv").read_text() == "x\n1\n"
        # a warehouse file leaves the sandbox for the next call: it may write files again
        w.export(str(fx.tmp / "exp"))
        assert (fx.tmp / "exp" / "runs.parquet").is_file()
        assert w.sql("SELECT count(*) AS n FROM run_loads")["n"][0] == 8
        taken = w.con  # a connection taken before a call that reads files: kept (not reopened)
        assert w.eval("AP", per_topic=False, store=False)["value"][0] > 0
        assert taken.execute("SELECT 1").fetchone() == (1,)
    # DuckDB's sandbox is its database's, shared by this process's connections to the file:
    # a call that needs files waits for the other connection to close
    with Warehouse(fx.db_path) as a, Warehouse(fx.db_path) as b:
        a.sql("SELECT 1")
        with pytest.raises(IrwError, match="another connection of this process"):
            b.export(str(fx.tmp / "exp2"))
        a.close()
        b.export(str(fx.tmp / "exp2"))
    memory = Warehouse()
    memory.load_qrels(str(FIXTURES / "qrels.txt"), name="fixture")
    memory.sql("SELECT 1")
    memory.load_runs(pd.DataFrame({"qid": ["101"], "docno": ["D101-000"], "score": [1.0]}), run_id="f")
    with pytest.raises(IrwError, match="in DuckDB's sandbox"):  # an in-memory one keeps it
        memory.load_runs(str(FIXTURES / "runs" / "beta1.txt"))
    assert memory.eval("AP", runs="f", per_topic=False)["value"][0] > 0  # evaluates as before
    memory.close()


# ------------------------------------------------------------------ irw's objects kept true

def _outside(path, *statements):
    """Statements of a client that is not irw (a BI tool, the DuckDB CLI)."""
    con = duckdb.connect(str(path))
    for statement in statements:
        con.execute(statement)
    con.close()


def _p10(path) -> list:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute("SELECT run_id, round(avg(value), 4) FROM measure.P('fixture', k := 10) "
                           "GROUP BY 1 ORDER BY 1").fetchall()
    finally:
        con.close()


def test_views_and_macros_changed_outside_irw_are_restored(fx):
    true = _p10(fx.path)
    _outside(fx.path, "CREATE OR REPLACE MACRO measure.P(q, k := 10, rel := 1, judged_only := false, "
                      "runs := NULL, run_collection := NULL) AS TABLE SELECT run_id, topic, 1.0 AS value "
                      "FROM run_topics")
    assert {v for _, v in _p10(fx.path)} == {1.0}
    # a command that reads says so, and names irw refresh
    result = fx("runs", "list")
    assert "note: irw's macro measure.P was changed outside irw" in result.stderr
    assert "irw refresh" in result.stderr
    # one that writes restores it, and says so
    result = fx("eval", "-m", "AP")
    assert "note: restored irw's macro measure.P, changed outside irw" in result.stderr
    assert _p10(fx.path) == true
    assert "changed outside irw" not in fx("runs", "list").stderr
    # variants: a view replaced, a view, a macro and a table dropped, irw's own state macro
    _outside(fx.path, "CREATE OR REPLACE VIEW run_info AS SELECT 'x' AS run_id",
             "DROP MACRO TABLE measure.AP", "DROP VIEW score_means", "DROP TABLE scores",
             "CREATE OR REPLACE MACRO irw_runs_fp() AS 0")
    message = error_of(fx("runs", "list", ok=False))
    assert "dropped outside irw" in message and "irw refresh" in message, message
    result = fx("refresh")
    assert "restored irw's view run_info, macro irw_runs_fp, changed outside irw; and view score_means, " \
           "macro measure.AP, table scores, dropped outside irw" in result.stderr, result.stderr
    assert json.loads(fx("runs", "list", "--format", "json").stdout)[0]["run_id"] == "alpha1"
    fx("eval", "-m", "AP")
    assert _p10(fx.path) == true


def test_sql_may_not_change_irws_macros(fx):
    before = snapshot(fx.db_path)
    message = error_of(fx("sql", "--write", "CREATE OR REPLACE MACRO measure.RR(q) AS TABLE SELECT 1 AS value",
                          ok=False))
    assert "would change irw's macro measure.RR" in message and snapshot(fx.db_path) == before
    fx("sql", "--write", "CREATE MACRO my_rr(q) AS TABLE SELECT 1 AS value")  # one of the user's own


def test_publish_and_export_write_the_true_definitions(fx):
    true = _p10(fx.path)
    _outside(fx.path, "CREATE OR REPLACE MACRO measure.P(q, k := 10, rel := 1, judged_only := false, "
                      "runs := NULL, run_collection := NULL) AS TABLE SELECT run_id, topic, 1.0 AS value "
                      "FROM run_topics")
    fx("publish", fx.tmp / "copy.duckdb")
    assert _p10(fx.tmp / "copy.duckdb") == true
    fx("export", fx.tmp / "exp")
    rebuilt = duckdb.connect()
    rebuilt.execute(f"IMPORT DATABASE '{fx.tmp / 'exp'}'")
    assert rebuilt.execute("SELECT run_id, round(avg(value), 4) FROM measure.P('fixture', k := 10) "
                           "GROUP BY 1 ORDER BY 1").fetchall() == true
    # the published copy is checked as a warehouse is
    assert "irw's" not in cli_for(str(fx.tmp / "copy.duckdb"))("runs", "list").stderr


# ------------------------------------------------------------------ exports stay in their directory

def test_export_file_names_stay_inside_the_directory(fx):
    (fx.tmp / "notes.parquet").write_text("mine")
    fx("sql", "--write", 'CREATE TABLE "../notes" AS SELECT 1 AS x; CREATE TABLE "a/b.c" AS SELECT 2 AS x; '
                         'CREATE TABLE "a%2Fb%2Ec" AS SELECT 3 AS x; CREATE SCHEMA "../s"; '
                         'CREATE TABLE "../s"."..\\t" AS SELECT 4 AS x')
    out = fx.tmp / "ex"
    fx("export", out)
    assert (fx.tmp / "notes.parquet").read_text() == "mine"
    written = {p.name for p in out.iterdir()}
    assert {"%2E%2E%2Fnotes.parquet", "a%2Fb%2Ec.parquet", "a%252Fb%252Ec.parquet",
            "%2E%2E%2Fs.%2E%2E%5Ct.parquet"} <= written
    assert all(p.parent == out for p in out.rglob("*"))
    rebuilt = duckdb.connect()
    rebuilt.execute(f"IMPORT DATABASE '{out}'")
    assert rebuilt.execute('SELECT x FROM "../notes" UNION ALL SELECT x FROM "a/b.c" UNION ALL '
                           'SELECT x FROM "a%2Fb%2Ec" UNION ALL SELECT x FROM "../s"."..\\t" ORDER BY 1'
                           ).fetchall() == [(1,), (2,), (3,), (4,)]
    fx("sql", "--write", f'CREATE TABLE "{"n" * 300}" AS SELECT 1 AS x')
    message = error_of(fx("export", fx.tmp / "ex2", ok=False))
    assert "too long for a file name" in message and not (fx.tmp / "ex2").exists()


# ------------------------------------------------------------------ DataFrames as data

def test_dataframes_load_as_data_with_the_checks_of_files(tmp_path):
    from irwarehouse import Warehouse
    from irwarehouse.errors import IrwError

    with Warehouse() as w:
        w.load_qrels(str(FIXTURES / "qrels.txt"), name="fixture")
        frame = pd.DataFrame({"qid": ["101", "101", "102"], "docno": ["D101-000 7", "D101-001", "D102-000"],
                              "score": [2.5, 1.0, 3.0]})
        w.load_runs(frame, run_id="spaced")
        rows = w.sql("SELECT topic, docno, rank, score FROM runs WHERE run_id = 'spaced' ORDER BY 1, 3").rows()
        assert rows == [("101", "D101-000 7", 1, 2.5), ("101", "D101-001", 2, 1.0), ("102", "D102-000", 1, 3.0)]
        bad = [
            ({"score": ["abc", "1", "2"]}, "row 0, column 'score': the score 'abc' is not a number"),
            ({"score": [1.0, float("inf"), 2.0]}, "row 1, column 'score': the score 'inf' is not a finite number"),
            ({"score": [1.0, 2.0, None]}, "row 2, column 'score': the score is missing"),
            ({"score": [True, False, True]}, "row 0, column 'score': the score 'true' is not a number"),
            ({"docno": ["a", "", "c"]}, "row 1, column 'docno': the docno is empty"),
            ({"qid": ["101", None, "102"]}, "row 1, column 'qid': the topic is missing"),
            ({"rank": [1, 2.5, 1]}, "row 1, column 'rank': the rank '2.5' is not an integer"),
            ({"rank": ["1", "2", "x"]}, "row 2, column 'rank': the rank 'x' is not an integer"),
            ({"rank": [1, 2**62 * 3, 1]}, "row 1, column 'rank'"),
            ({"docno": ["a", "a", "c"]}, "row 1: document 'a' appears twice for run 'x', topic '101' (first at row 0)"),
            ({"qid": ["101", " #2", "102"]}, "row 1, column 'qid': the topic ' #2' begins with '#', which makes a line"),
        ]
        for change, expect in bad:
            with pytest.raises(IrwError) as info:
                w.load_runs(frame.assign(**change), run_id="x")
            assert "the DataFrame, " + expect in str(info.value), (change, str(info.value))
        with pytest.raises(IrwError, match=r"the DataFrame, row 0: the run id 'a\\tb' holds"):
            w.load_runs(frame.assign(run_id="a\tb"))
        qrels = pd.DataFrame({"qid": ["101", "101"], "docno": ["x", "y"], "label": [1, "2.5"]})
        with pytest.raises(IrwError, match=r"the DataFrame, row 1, column 'label': the relevance '2.5' is not an integer"):
            w.load_qrels(qrels, name="q")
        with pytest.raises(IrwError, match=r"row 1: document 'x' is judged twice for topic '101'"):
            w.load_qrels(qrels.assign(docno="x", label=1), name="q")
        with pytest.raises(IrwError, match=r"the DataFrame, row 0: the team name 'a\\nb' holds"):
            w.load_meta(pd.DataFrame({"run_id": ["spaced"], "team": ["a\nb"]}))
        w.load_meta(pd.DataFrame({"run_id": ["spaced"], "team": ["t one"], "pooled": [False]}))
        assert w.sql("SELECT team, pooled FROM run_meta WHERE run_id = 'spaced'").rows() == [("t one", False)]
        assert w.sql("SELECT count(*) AS n FROM run_loads")["n"][0] == 1  # the bad ones loaded nothing


# ------------------------------------------------------------------ errors that name their cause

def test_the_first_error_of_a_failed_transaction_is_reported():
    from irwarehouse.connection import open_duckdb, transaction

    con = open_duckdb()
    with pytest.raises(duckdb.CatalogException, match="nosuch"):
        with transaction(con):
            try:
                con.execute("SELECT * FROM nosuch")
            finally:
                con.execute("SELECT 1")  # a clean-up that meets the aborted transaction
    assert con.execute("SELECT 42").fetchone() == (42,)
    con.close()


def test_a_missing_table_and_a_tiny_memory_limit_are_named(fx):
    _outside(fx.path, "DROP TABLE scores")
    result = fx("eval", "-m", "AP")  # restored, and the evaluation stored
    assert "table scores, dropped outside irw" in result.stderr
    result = fx("--memory-limit", "10MB", "eval", "-m", "AP", "-m", "nDCG@100", "--no-store", ok=False)
    if result.exit_code:
        message = error_of(result)
        assert "aborted" not in message and "--memory-limit" in message and "(10MB)" in message
    result = fx("--memory-limit", "1KB", "load", "runs", FIXTURES / "runs" / "beta1.txt", "--replace", ok=False)
    message = error_of(result)
    assert "1KB" in message and "2048" not in message, message


def test_paths_that_are_no_database_files_are_refused_at_once(fx):
    fifo = fx.tmp / "fifo.duckdb"
    os.mkfifo(fifo)
    for path, expect in [(fifo, "is a named pipe (FIFO), not a warehouse file"),
                         (fx.tmp / "allowed", "is a directory, not a warehouse file"),
                         ("/dev/null", "is a device, not a warehouse file")]:
        for args in (("runs", "list"), ("load", "runs", FIXTURES / "runs" / "beta1.txt")):
            assert expect in error_of(cli_for(str(path))(*args, ok=False))
    # an output path that is a FIFO is refused too, without opening it
    assert "not a regular file" in error_of(fx("report", "-m", "AP", "--out", fifo, "--replace", ok=False))
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_damaged_file_is_not_taken_for_one_in_use(fx):
    import time

    data = bytearray(fx.path.read_bytes())
    data[4096 + 100:4096 + 132] = b"garbage!" * 4  # the database header
    fx.path.write_bytes(bytes(data))
    start = time.monotonic()
    message = error_of(fx("--wait", "30", "runs", "list", ok=False))
    assert time.monotonic() - start < 20 and "in use" not in message
    assert "Corrupt database file" in message


def test_names_in_messages_are_escaped_on_one_line(fx):
    odd = fx.tmp / "a\nb\x1b[31m.txt"
    odd.write_text("101 Q0 D101-000 1 notanumber run\n")
    result = fx("load", "runs", odd, ok=False)
    message = error_of(result)
    assert result.stderr.count("\n") == 1 and "\x1b" not in result.stderr
    assert "a\\nb\\x1b[31m.txt, line 1" in message
    from irwarehouse.errors import IrwError

    assert str(IrwError("x\ny\u2028z")) == "x\\ny\\u2028z"
