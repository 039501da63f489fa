"""irw export and irw publish: copies of the warehouse that plain DuckDB clients (and
SQLAlchemy, the path BI tools take) read without this package."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pandas as pd
import pytest

import sql_probe
from conftest import ROOT, cli_for
from irwarehouse import connection, export

ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _tables(con, database: str) -> list[str]:
    return [r[0] for r in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = ? AND schema_name = 'main' "
        "ORDER BY table_name", [database]).fetchall()]


def _assert_same_tables(con, copy: str, source: str, caches: bool = False) -> None:
    """Every public table of ``source`` is in ``copy`` with exactly the same rows, and the
    copy's internal tables are empty but for its schema version (an export) or hold what irw
    records of a current warehouse (``caches``: a published copy)."""
    public = [t for t in _tables(con, source) if not t.startswith("irw_")]
    assert public and [t for t in _tables(con, copy) if not t.startswith("irw_")] == public
    for table in public:
        a, b = f'{source}."{table}"', f'{copy}."{table}"'
        n = con.execute(f"SELECT count(*) FROM {a}").fetchone()[0]
        assert con.execute(f"SELECT count(*) FROM {b}").fetchone()[0] == n, table
        diff = con.execute(f"SELECT count(*) FROM ((SELECT * FROM {a} EXCEPT ALL SELECT * FROM {b}) "
                           f"UNION ALL (SELECT * FROM {b} EXCEPT ALL SELECT * FROM {a}))").fetchone()[0]
        assert diff == 0, f"{table}: {diff} rows differ"
    for table in _tables(con, copy):
        if table == "irw_meta" and not caches:  # an export records its schema version alone
            assert con.execute(f"SELECT * FROM {copy}.irw_meta").fetchall() == [
                ("schema_version", connection.SCHEMA_VERSION)]
        elif table.startswith("irw_") and not caches:
            assert con.execute(f'SELECT count(*) FROM {copy}."{table}"').fetchone()[0] == 0, table


def _probe_file(path: str) -> dict:
    con = duckdb.connect(path, read_only=True)
    try:
        return sql_probe.probe(con)
    finally:
        con.close()


@pytest.fixture(scope="module")
def source_probe(sql_warehouse):
    result = _probe_file(sql_warehouse)
    assert result["uncovered"] == [], "public macros without a call in tests/sql_probe.py"
    # the fixture warehouse fills every view and macro result: a probe that compares empty
    # results would prove nothing
    assert all(result["results"].values()), [k for k, v in result["results"].items() if not v]
    return result


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_export_recreates_the_warehouse(sql_warehouse, source_probe, tmp_path, fmt):
    out = tmp_path / "export"
    r = cli_for(sql_warehouse)("export", out, "--format", fmt)
    assert f"as {fmt} with schema.sql and load.sql" in r.output
    files = sorted(p.name for p in out.iterdir())
    assert "schema.sql" in files and "load.sql" in files
    assert f"runs.{fmt}" in files and f"scores.{fmt}" in files
    assert not [f for f in files if f.startswith("irw_")], "internal caches are not exported"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "no working files left"
    # a plain DuckDB, from another directory: IMPORT DATABASE finds the files by relative path
    con = duckdb.connect()
    con.execute(f"IMPORT DATABASE '{out}'")
    con.execute(f"ATTACH '{sql_warehouse}' AS source (READ_ONLY)")
    _assert_same_tables(con, "memory", "source")
    con.close()
    con = duckdb.connect()
    con.execute(f"IMPORT DATABASE '{out}'")
    result = sql_probe.probe(con)
    assert result["results"].keys() == source_probe["results"].keys()
    assert sql_probe.close(result["results"], source_probe["results"]) == []


@pytest.mark.parametrize("storage", [None, "v1.0.0"])
def test_imported_export_is_a_warehouse(evaluated_fixtures, tmp_path, storage):
    """The recipe of docs/sql-and-bi.md: irw export, then a plain DuckDB client's IMPORT
    DATABASE into a new file, gives a warehouse irw reads, evaluates and loads into --
    also in a file of an older storage version (as the DuckDB CLI makes), whose views and
    macros irw then checks against what that version makes of its templates."""
    source = tmp_path / "source.duckdb"
    source.write_bytes(evaluated_fixtures.read_bytes())
    source_cli = cli_for(str(source))
    source_cli("export", tmp_path / "export")
    imported = str(tmp_path / "imported.duckdb")
    if storage is None:
        con = duckdb.connect(imported)
    else:
        con = duckdb.connect()
        con.execute(f"ATTACH '{imported}' AS imported (STORAGE_VERSION '{storage}')")
        con.execute("USE imported")
    con.execute(f"IMPORT DATABASE '{tmp_path / 'export'}'")
    con.close()
    invoke = cli_for(imported)
    assert "ranked again" in invoke("refresh").stderr
    assert invoke("runs", "list").stderr == ""  # nothing changed outside irw any more
    assert invoke("sql", "SELECT value FROM irw_meta WHERE key = 'schema_version'").output.split()[-1] \
        == connection.SCHEMA_VERSION
    listed = invoke("runs", "list").output
    assert listed.splitlines()[-8:] == source_cli("runs", "list").output.splitlines()[-8:]
    evaluated = invoke("eval", "-m", "AP", "-m", "nDCG@10").output
    assert evaluated.splitlines()[-8:] == source_cli("eval", "-m", "AP", "-m", "nDCG@10").output.splitlines()[-8:]
    for warehouse in (invoke, source_cli):
        warehouse("load", "qrels", ROOT / "fixtures" / "auto-qrels.txt", "--name", "auto")
    assert invoke("eval", "-m", "P@10", "--qrels", "auto").output == \
        source_cli("eval", "-m", "P@10", "--qrels", "auto").output


def test_export_scripts_run_inside_the_directory(sql_warehouse, source_probe, tmp_path,
                                                 monkeypatch):
    """`.read schema.sql` then `.read load.sql` in the export directory, as in the DuckDB CLI."""
    out = tmp_path / "export"
    cli_for(sql_warehouse)("export", out)
    monkeypatch.chdir(out)
    con = duckdb.connect()
    for script in ("schema.sql", "load.sql"):
        con.execute(Path(script).read_text())
    result = sql_probe.probe(con)
    assert sql_probe.close(result["results"], source_probe["results"]) == []
    # the views and macros are the package's own statements, not a copy
    from irwarehouse import schema

    text = (out / "schema.sql").read_text()
    assert all(statement in text for statement in schema.schema_statements())


def test_export_directory_rules(sql_warehouse, tmp_path, monkeypatch):
    invoke = cli_for(sql_warehouse)
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    r = invoke("export", busy, ok=False)
    assert r.exit_code == 1 and "is not empty; use --replace" in r.output
    r = invoke("export", busy, "--replace", ok=False)
    assert r.exit_code == 1 and "does not hold an irw export" in r.output
    assert sorted(p.name for p in busy.iterdir()) == ["notes.txt"]

    out = tmp_path / "out"
    invoke("export", out, "--format", "csv")
    assert (out / "runs.csv").exists()
    invoke("export", out, "--replace")  # parquet now: the csv files of the earlier export go
    assert (out / "runs.parquet").exists() and not (out / "runs.csv").exists()
    r = invoke("export", out, "--format", "xlsx", ok=False)
    assert r.exit_code == 1 and "unknown export format 'xlsx'; valid: parquet, csv" in r.output
    empty = tmp_path / "empty"
    empty.mkdir()
    invoke("export", empty)
    assert (empty / "load.sql").exists()
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    invoke("export", ".")  # the current directory, empty: it stays the same directory
    assert (here / "load.sql").exists() and Path.cwd() == here
    r = invoke("export", ".", ok=False)
    assert r.exit_code == 1 and ". is not empty" in r.output
    invoke("export", ".", "--replace", "--format", "csv")
    assert (here / "runs.csv").exists() and not (here / "runs.parquet").exists()
    monkeypatch.chdir(ROOT)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["busy", "empty", "here", "out"]


def test_csv_export_keeps_nulls_and_empty_strings_apart(tmp_path):
    """CSV writes NULL as nothing and '' as \"\"; reading back must not merge them."""
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    con.execute("CREATE TABLE notes (k INTEGER, a VARCHAR, b DOUBLE)")
    con.execute("INSERT INTO notes VALUES (1, '', 0.1), (2, NULL, NULL), (3, 'x,\"y\"', 1e-300)")
    export.export(con, str(tmp_path / "e"), "csv")
    con.close()
    fresh = duckdb.connect()
    fresh.execute(f"IMPORT DATABASE '{tmp_path / 'e'}'")
    assert fresh.execute("SELECT * FROM notes ORDER BY k").fetchall() == [
        (1, "", 0.1), (2, None, None), (3, 'x,"y"', 1e-300)]


def test_export_and_publish_only_read(sql_warehouse, tmp_path):
    """Both open the warehouse read-only: they work while another process reads it (a
    writer would be locked out)."""
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import duckdb, sys; c = duckdb.connect(sys.argv[1], read_only=True); "
         "c.execute('SELECT count(*) FROM runs'); print('open', flush=True); sys.stdin.read()",
         sql_warehouse], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        # the check has teeth: opening the file for writing fails while the reader holds it
        r = subprocess.run([sys.executable, "-c", "import duckdb, sys; duckdb.connect(sys.argv[1])",
                            sql_warehouse], capture_output=True, text=True)
        assert r.returncode != 0 and "lock" in r.stderr.lower(), r.stderr
        driver = ("import sys\n"
                  "from typer.testing import CliRunner\n"
                  "from irwarehouse.cli import app\n"
                  "for args in (['export', 'e'], ['publish', 'p.duckdb']):\n"
                  "    r = CliRunner().invoke(app, ['--db', sys.argv[1], *args])\n"
                  "    print(r.exit_code, r.output)\n")
        r = subprocess.run([sys.executable, "-c", driver, sql_warehouse],
                           capture_output=True, text=True, env=ENV, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        assert r.stdout.count("0 exported") + r.stdout.count("0 published") == 2, r.stdout
    finally:
        holder.communicate("")
    assert (tmp_path / "e" / "load.sql").exists() and (tmp_path / "p.duckdb").exists()


def test_publish(sql_warehouse, source_probe, tmp_path):
    out = tmp_path / "dash.duckdb"
    invoke = cli_for(sql_warehouse)
    r = invoke("publish", out)
    assert f"to {out}" in r.output
    assert f"storage v1.4.0+: DuckDB {connection.OLDEST_READER} and later)" in r.output
    con = duckdb.connect(str(out), read_only=True)
    assert connection.storage_version(con) == "v1.4.0+"
    result = sql_probe.probe(con)
    con.close()
    assert result["results"].keys() == source_probe["results"].keys()
    assert sql_probe.close(result["results"], source_probe["results"]) == []
    con = duckdb.connect()
    con.execute(f"ATTACH '{out}' AS published (READ_ONLY)")
    con.execute(f"ATTACH '{sql_warehouse}' AS source (READ_ONLY)")
    _assert_same_tables(con, "published", "source", caches=True)
    con.close()
    assert not list(tmp_path.glob(".*")) and not Path(str(out) + ".wal").exists()

    before = (out.stat().st_mtime_ns, out.read_bytes())
    r = invoke("publish", out, ok=False)
    assert r.exit_code == 1 and f"{out} exists; use --replace to overwrite it" in r.output
    assert (out.stat().st_mtime_ns, out.read_bytes()) == before
    time.sleep(0.01)
    invoke("publish", out, "--replace")
    assert out.stat().st_mtime_ns != before[0]
    r = invoke("publish", sql_warehouse, "--replace", ok=False)
    assert r.exit_code == 1 and "is the warehouse being published" in r.output
    r = invoke("publish", tmp_path / "no" / "such" / "dir.duckdb", ok=False)
    assert r.exit_code == 1 and "does not exist" in r.output


def test_publish_makes_a_current_copy_for_the_measure_macros(sql_warehouse, tmp_path):
    """The copy records that it is current and has the base relation of every loaded qrels
    materialized, so the measure macros take it from the cache; numbers as in the source."""
    out = tmp_path / "dash.duckdb"
    cli_for(sql_warehouse)("publish", out)
    con = duckdb.connect(str(out), read_only=True)
    assert con.execute("SELECT irw_runs_fp() = irw_recorded_runs_fp()").fetchone()[0]
    built = con.execute("SELECT qrels FROM irw_base_built ORDER BY 1").fetchall()
    roots = con.execute("SELECT qrels FROM qrels_info WHERE parent IS NULL ORDER BY 1").fetchall()
    assert built == roots and con.execute("SELECT count(*) FROM irw_base").fetchone()[0] > 0
    assert con.execute("SELECT irw_base_current FROM (SELECT bool_and(runs_fp = irw_runs_fp() "
                       "AND qrels_fp = irw_qrels_fp(qrels)) AS irw_base_current FROM irw_base_built)"
                       ).fetchone()[0]
    mine = con.execute("SELECT run_id, topic, value FROM measure.nDCG('fixture', k := 10) ORDER BY 1, 2").fetchall()
    con.close()
    src = duckdb.connect(sql_warehouse, read_only=True)
    theirs = src.execute("SELECT run_id, topic, value FROM measure.nDCG('fixture', k := 10) ORDER BY 1, 2").fetchall()
    src.close()
    assert mine == theirs
    # irw evaluates a published copy like any warehouse, with the same numbers
    ours = cli_for(str(out))("eval", "-m", "AP", "--no-store", "--format", "json").stdout
    theirs = cli_for(sql_warehouse)("eval", "-m", "AP", "--no-store", "--format", "json").stdout
    assert json.loads(ours) == json.loads(theirs)


@pytest.mark.parametrize("which", ["warehouse", "published"])
def test_sqlalchemy_duckdb_engine_read_only(sql_warehouse, source_probe, tmp_path, which):
    """The path Superset takes: SQLAlchemy + duckdb-engine, read-only connect_args."""
    sa = pytest.importorskip("sqlalchemy")
    pytest.importorskip("duckdb_engine")
    path = sql_warehouse
    if which == "published":
        path = str(tmp_path / "dash.duckdb")
        cli_for(sql_warehouse)("publish", path)
    engine = sa.create_engine(f"duckdb:///{path}", connect_args={"read_only": True})
    try:
        inspector = sa.inspect(engine)
        catalog = Path(path).stem
        assert f"{catalog}.main" in inspector.get_schema_names()
        views = set(inspector.get_view_names())
        assert {k.split(" ", 1)[1] for k in source_probe["results"] if k.startswith("view ")} <= views
        assert [c["name"] for c in inspector.get_columns("score_means")] == [
            "qrels", "collection", "run_id", "measure", "mean", "n_topics", "ties"]
        with engine.connect() as conn:
            means = pd.read_sql("SELECT * FROM score_means ORDER BY ALL", conn)
            pool = pd.read_sql(sa.text("SELECT * FROM pool_of('default', (SELECT list(run_id) FROM run_info "
                                       "WHERE pooled), :depth) ORDER BY ALL"), conn,
                               params={"depth": 10})
            judged = pd.read_sql(sa.text("SELECT run_id, count(*) AS n FROM judged_ranking(:q) "
                                         "GROUP BY run_id ORDER BY run_id"), conn,
                                 params={"q": "fixture"})
            qualified = pd.read_sql(f'SELECT count(*) AS n FROM "{catalog}".main.score_means', conn)
            with pytest.raises(sa.exc.DBAPIError, match="read-only"):
                conn.execute(sa.text("CREATE TABLE t (x INTEGER)"))
    finally:
        engine.dispose()
    expected = source_probe["results"]["view score_means"]
    assert sql_probe.close(means.values.tolist(), expected) == []
    assert qualified["n"].tolist() == [len(expected)]
    assert pool.values.tolist() == source_probe["results"]["macro main.pool_of"]
    con = duckdb.connect(sql_warehouse, read_only=True)
    want = con.execute("SELECT run_id, count(*) FROM runs r JOIN qrels q USING (topic, docno) "
                       "WHERE q.qrels = 'fixture' AND q.rel >= 0 GROUP BY run_id "
                       "ORDER BY run_id").fetchall()
    con.close()
    assert [tuple(r) for r in judged.values.tolist()] == want


# ------------------------------------------------------------ names in messages

CONTROL = "a\nb\x1bc"  # a newline and an escape character
ESCAPED = "a\\nb\\x1bc"


def _one_escaped_line(stderr: str) -> str:
    assert stderr.endswith("\n") and stderr.count("\n") == 1, repr(stderr)
    assert "\x1b" not in stderr and ESCAPED in stderr, repr(stderr)
    return stderr


def test_messages_escape_control_characters_in_the_names_they_quote(evaluated_fixtures, tmp_path):
    """Every message -- a summary as an error -- is one printable line whatever the names it
    quotes hold (irwarehouse.output.say, errors.IrwError)."""
    path = tmp_path / "w.duckdb"
    path.write_bytes(evaluated_fixtures.read_bytes())
    invoke = cli_for(str(path))
    # a directory and a file name in what a command says it wrote
    directory = tmp_path / f"export-{CONTROL}"
    r = invoke("export", directory)
    _one_escaped_line(r.stderr)
    assert r.stderr.startswith("exported ") and (directory / "load.sql").exists()
    invoke("standardize", "factors", "-m", "AP", "--name", "self")
    target = tmp_path / f"factors-{CONTROL}.csv"
    r = invoke("standardize", "export", "self", target)
    assert _one_escaped_line(r.stderr).startswith("wrote ") and target.exists()
    # a run id and a qrels name in what a command refuses
    run = tmp_path / f"run-{CONTROL}.txt"
    run.write_text("1 Q0 d1 1 1.0 run\x1b[31m\n")  # a run id cannot hold a newline
    r = invoke("load", "runs", run, ok=False)
    assert r.exit_code == 1 and _one_escaped_line(r.stderr).startswith("error: ")
    assert "'run\\x1b[31m'" in r.stderr
    r = invoke("load", "qrels", ROOT / "fixtures" / "qrels.txt", "--name", f"q{CONTROL}", ok=False)
    assert r.exit_code == 1 and _one_escaped_line(r.stderr).startswith("error: ")
