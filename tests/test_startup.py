"""Short commands import only what they use: no pandas, numpy, scipy or matplotlib for
``irw --help``, ``irw measures`` or ``irw eval`` (each costs more than DuckDB itself to
import; see bench/bench_startup.py for the timings). Each command runs in a fresh interpreter that
then lists the heavy modules it has loaded."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("pandas", "numpy", "scipy", "matplotlib")

SCRIPT = """
import json, sys
from irwarehouse.cli import app
out, args = sys.argv[1], sys.argv[2:]
try:
    app(args, prog_name="irw")
except SystemExit as exc:
    code = exc.code or 0
else:
    code = 0
heavy = sorted({m.split(".")[0] for m in sys.modules} & set(%r))
with open(out, "w") as f:
    json.dump({"code": code, "heavy": heavy}, f)
""" % (HEAVY,)


def run_cli(tmp_path, *args: str) -> tuple[dict, str]:
    out = tmp_path / "modules.json"
    # run outside the checkout: the package imported is the one the tests import
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(out), *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    return json.loads(out.read_text()), proc.stdout


@pytest.mark.parametrize("args", [["--help"], ["measures"], ["measures", "--format", "json"],
                                  ["eval", "--help"], ["discpower", "--help"]])
def test_short_commands_import_no_heavy_module(tmp_path, args):
    result, stdout = run_cli(tmp_path, *args)
    assert result["code"] == 0, stdout
    assert stdout.strip(), "the command printed nothing"
    assert result["heavy"] == [], f"irw {' '.join(args)} imported {', '.join(result['heavy'])}"


@pytest.mark.parametrize("args", [["-m", "AP", "-m", "P@10"],
                                  ["-m", "AP", "--per-topic", "--format", "trec"],
                                  ["-m", "nDCG@10", "--format", "json"]])
def test_eval_imports_no_heavy_module(tmp_path, args):
    from conftest import FIXTURES
    from irwarehouse import schema
    from irwarehouse.engine import loading

    path = str(tmp_path / "fixtures.duckdb")
    con = schema.connect(path)
    loading.load_qrels(con, [str(FIXTURES / "qrels.txt")], "fixture")
    loading.load_runs(con, [str(FIXTURES / "runs")], meta=str(FIXTURES / "runs.tsv"))
    con.close()
    result, stdout = run_cli(tmp_path, "--db", path, "eval", *args)
    assert result["code"] == 0, stdout
    assert "alpha1" in stdout
    assert result["heavy"] == [], f"irw eval {' '.join(args)} imported {', '.join(result['heavy'])}"


def test_the_check_sees_heavy_modules(tmp_path):
    # a significance test needs numpy and pandas: running one loads their modules
    fixtures = Path(__file__).resolve().parents[1] / "fixtures"
    for load in (["qrels", str(fixtures / "qrels.txt"), "--name", "fixture"], ["runs", str(fixtures / "runs")]):
        assert run_cli(tmp_path, "load", *load)[0]["code"] == 0
    result, stdout = run_cli(tmp_path, "compare", "alpha1", "alpha2", "-m", "AP")
    assert result["code"] == 0, stdout
    assert {"numpy", "pandas"} <= set(result["heavy"])


def test_a_warehouse_is_set_up_again_only_when_its_sql_changes(tmp_path, monkeypatch):
    """Opening a warehouse for writing renders and runs the schema templates only when the
    templates, the catalogue or the layout version differ from those it was set up with."""
    from irwarehouse import schema

    path = str(tmp_path / "w.duckdb")
    schema.connect(path).close()
    scripts = []
    real = schema.schema_statements
    monkeypatch.setattr(schema, "schema_statements", lambda *a: (scripts.append("schema"), real(*a))[1])
    schema.connect(path).close()
    assert scripts == []
    monkeypatch.setattr(schema, "schema_fingerprint", lambda: "changed templates")
    con = schema.connect(path)
    assert scripts == ["schema"]
    assert con.execute("SELECT value FROM irw_meta WHERE key = 'schema_fingerprint'").fetchone() == (
        "changed templates",)
    con.execute("DROP VIEW run_info")  # dropped by hand: back with the next change only
    con.close()
    monkeypatch.undo()
    con = schema.connect(path)
    assert con.execute("SELECT count(*) FROM run_info").fetchone() == (0,)
    con.close()


def test_the_fingerprint_follows_every_template(tmp_path, monkeypatch):
    import shutil

    from irwarehouse import schema, sql

    copy = tmp_path / "sql"
    shutil.copytree(sql.sql_dir(), copy)
    monkeypatch.setattr(sql, "sql_dir", lambda: copy)
    before = schema.schema_fingerprint()
    assert schema.schema_fingerprint() == before
    with open(copy / "measures" / "AP.sql", "a") as f:
        f.write("\n")
    assert schema.schema_fingerprint() == before  # read once a process
    sql._digests.clear()  # as a new process
    assert schema.schema_fingerprint() != before


@pytest.mark.parametrize("args, code", [(["measures", "--format", "json"], 0),
                                        (["--db", ":memory:", "eval", "-m", "Foo@10"], 1),
                                        ([], 2)])
def test_the_entry_point_flushes_and_keeps_the_exit_status(tmp_path, args, code):
    # main() leaves with os._exit: what was printed must be out, the status the command's
    proc = subprocess.run([sys.executable, "-c", "from irwarehouse.cli import main; main()", *args],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == code, proc.stderr
    if code == 0:
        assert len(json.loads(proc.stdout)) > 20  # the whole catalogue, valid JSON
    elif code == 1:
        assert proc.stderr.startswith("error: unknown measure 'Foo'")
    else:
        assert "Usage: irw" in proc.stdout + proc.stderr


def test_trec_eval_starts_without_the_application(tmp_path):
    """``irw trec-eval`` (the console entry point's own branch) imports neither typer and the
    other commands nor a heavy module."""
    fixtures = Path(__file__).resolve().parents[1] / "fixtures"
    out = tmp_path / "modules.json"
    script = f"""
import json, os, sys
exit = os._exit
def leave(code):
    loaded = {{m.split(".")[0] for m in sys.modules}}
    with open({str(out)!r}, "w") as f:
        json.dump({{"code": code, "loaded": sorted(loaded & set({HEAVY + ("typer", "click")!r})),
                   "commands": sorted(m for m in sys.modules if m.startswith("irwarehouse.cli."))}}, f)
    exit(code)
os._exit = leave
sys.argv = ["irw", "trec-eval", "-m", "map", {str(fixtures / "qrels.txt")!r}, {str(fixtures / "runs" / "beta1.txt")!r}]
from irwarehouse.cli import main
main()
"""
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    result = json.loads(out.read_text())
    assert result["code"] == 0 and proc.stdout.startswith("map "), proc.stderr
    assert result["loaded"] == [] and result["commands"] == ["irwarehouse.cli.trec_eval"]


def test_a_command_line_builds_its_command_alone():
    """``irw WORD ...`` runs an application holding WORD's command or group alone (typer
    builds every command of the application it runs); the whole application is untouched,
    and a word that is no command gets it all (for its error and suggestions)."""
    import typer.main

    from irwarehouse import cli

    def names(app) -> set[str]:
        return set(typer.main.get_command(app).commands)

    whole = names(cli._load())
    assert {"eval", "measures", "qrels", "runs", "compare"} <= whole
    assert names(cli._load(["--db", "x.duckdb", "eval", "-m", "AP"])) == {"eval"}
    assert names(cli._load(["qrels", "list"])) == {"qrels"}
    assert names(cli._load(["evl"])) == whole == names(cli._load())


def test_an_evaluation_that_changes_nothing_writes_nothing(evaluated_fixtures, tmp_path):
    """``irw eval`` run again as before would store what is stored (the same scores, each
    measure's latest logged evaluation of the same settings): the file is left as it is, so
    the command neither writes nor checkpoints, and the next open finds the file as it last
    found it true. Other settings, or another set of runs, are stored and logged as before."""
    import os
    import shutil

    import duckdb

    from conftest import cli_for

    path = tmp_path / "w.duckdb"
    shutil.copy(evaluated_fixtures, path)
    cli = cli_for(str(path))

    def state():
        info = os.stat(path)
        con = duckdb.connect(str(path), read_only=True)
        try:
            logged = con.execute("SELECT count(*) FROM evaluations").fetchone()[0]
            scores = con.execute("SELECT run_id, topic, measure, value FROM scores ORDER BY ALL").fetchall()
        finally:
            con.close()
        return (info.st_size, info.st_mtime_ns, info.st_ctime_ns), logged, scores

    first = cli("eval", "-m", "AP", "-m", "P@10").stdout
    file_before, logged_before, scores_before = state()
    assert cli("eval", "-m", "AP", "-m", "P@10").stdout == first
    assert state() == (file_before, logged_before, scores_before)
    assert not os.path.exists(f"{path}.wal")
    cli("eval", "-m", "AP", "-m", "P@10", "--max-docs", "5")  # other settings: stored, logged
    file_after, logged_after, scores_after = state()
    assert file_after != file_before and logged_after == logged_before + 2
    assert scores_after != scores_before
    cli("eval", "-m", "AP", "--runs", "alpha1")  # another run set: logged (n_runs 1)
    assert state()[1] == logged_after + 1
    cli("eval", "-m", "AP", "-m", "P@10")  # back to the first: the same scores, logged again
    assert state()[1:] == (logged_after + 3, scores_before)


def test_a_file_found_true_is_not_checked_again_until_written(evaluated_fixtures, tmp_path, monkeypatch):
    """Opening a warehouse compares irw's views and macros with its templates and its tables
    with what irw last wrote (schema.prepare). A file found true is remembered by its state
    (size, times, inode of the file and its journal): opened again unchanged, for writing or
    reading, nothing is compared or reconciled. A change made outside irw changes the file,
    and the next open reconciles it as before."""
    import shutil

    import duckdb

    from irwarehouse import Warehouse, schema

    path = str(tmp_path / "w.duckdb")
    shutil.copy(evaluated_fixtures, path)
    calls = []
    for name in ("keep_true", "reconcile"):
        original = getattr(schema, name)
        monkeypatch.setattr(schema, name, lambda *a, _f=original, _n=name, **k: calls.append(_n) or _f(*a, **k))
    with Warehouse(path) as w:  # the first open compares and reconciles, and finds the file true
        first = w.eval(["AP"], per_topic=False).rows()
    assert calls == ["keep_true", "reconcile"]
    for read_only in (False, True, False):
        calls.clear()
        with Warehouse(path, read_only=read_only) as w:
            assert w.eval(["AP"], per_topic=False).rows() == first
        assert calls == []
    con = duckdb.connect(path)  # outside irw: a run loses a topic
    con.execute("DELETE FROM runs WHERE run_id = 'alpha1' AND topic = '101'")
    con.close()
    notes = []
    with Warehouse(path, notify=notes.append) as w:
        assert w.eval(["AP"], per_topic=False).rows() != first
    assert calls == ["keep_true", "reconcile"]
    assert any("ranked again alpha1" in n for n in notes), notes
