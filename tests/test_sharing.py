"""Readers beside writers: commands that only read open the warehouse read-only, a load
locks it only for its final transaction, a busy file is waited for and its holder named,
and reads never create a file."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time

import duckdb
import pytest

from conftest import FIXTURES, cli_for

IRW = [sys.executable, "-c", "from irwarehouse.cli import app; app()"]


def irw(db, *args, check=True, **kw):
    result = subprocess.run(IRW + ["--db", str(db), *args], capture_output=True, text=True, **kw)
    if check and result.returncode:
        raise AssertionError(f"irw {' '.join(args)} failed: {result.stderr}")
    return result


@pytest.fixture()
def fixture_db(tmp_path):
    invoke = cli_for(str(tmp_path / "w.duckdb"))
    invoke("load", "qrels", FIXTURES / "qrels.txt", "--name", "fixture")
    invoke("load", "runs", FIXTURES / "runs", "--meta", FIXTURES / "runs.tsv")
    return tmp_path / "w.duckdb"


def test_reads_do_not_create_a_warehouse(tmp_path):
    missing = tmp_path / "mistyped.duckdb"
    for args in (["eval", "-m", "AP"], ["eval", "-m", "AP", "--no-store"], ["runs", "list"],
                 ["sql", "SELECT 1"], ["compare", "a", "b", "-m", "AP"], ["refresh"]):
        result = irw(missing, *args, check=False)
        assert result.returncode == 1, args
        assert result.stderr.startswith(f"error: no warehouse at {missing}: create one by loading"), result.stderr
        assert "Traceback" not in result.stderr
        assert not missing.exists(), args


def test_reading_commands_share_the_file_with_a_reader(fixture_db):
    reader = duckdb.connect(str(fixture_db), read_only=True)  # a BI tool holding the file
    try:
        for args in (["eval", "-m", "AP", "--no-store"], ["runs", "list"], ["qrels", "list"],
                     ["sql", "SELECT count(*) FROM scores"], ["ci", "-m", "AP"],
                     ["compare", "alpha1", "beta1", "-m", "AP"], ["discpower", "-m", "AP"],
                     ["correlate", "-m", "AP", "-m", "P@10"], ["pool", "stats", "judged"]):
            irw(fixture_db, *args)
        # a writer waits, then says who holds the file and what to do
        t = time.perf_counter()
        result = irw(fixture_db, "--wait", "1", "eval", "-m", "AP", check=False)
        assert time.perf_counter() - t >= 1
        assert result.returncode == 1
        line = result.stderr.strip()
        assert "\n" not in line and line.startswith(f"error: the warehouse {fixture_db} is in use by process "), line
        assert f"process {os.getpid()}" in line and "--wait SECONDS" in line
        assert line.endswith("blocks every command that writes: let dashboards and notebooks read a "
                             "published copy (irw publish COPY.duckdb), and reconnect them after each publish")
    finally:
        reader.close()
    irw(fixture_db, "--wait", "1", "eval", "-m", "AP")  # free again


def test_the_holder_is_named_on_one_line(fixture_db):
    """A holder whose command line holds newlines and a tab (as `duckdb -cmd "...\\n..."`
    does): the message names it on one line, escaped, and keeps the advice after it."""
    code = ("import duckdb, sys\ncon = duckdb.connect(sys.argv[1])\nprint('open', flush=True)  #\tholding\n"
            "sys.stdin.read()")
    holder = subprocess.Popen([sys.executable, "-c", code, str(fixture_db)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        advice = {  # a command that writes, and one that reads
            "eval": "which has it open; waited 0 s. Try again when it is closed, or wait longer "
                    "(--wait SECONDS). A client that keeps the warehouse open, even read-only, blocks "
                    "every command that writes: let dashboards and notebooks read a published copy "
                    "(irw publish COPY.duckdb), and reconnect them after each publish",
            "runs": "which is writing it; waited 0 s. Try again when it is done, wait longer "
                    "(--wait SECONDS), or read a published copy (irw publish) meanwhile"}
        for args in (["eval", "-m", "AP"], ["runs", "list"]):
            result = irw(fixture_db, "--wait", "0", *args, check=False)
            assert result.returncode == 1
            lines = result.stderr.splitlines()
            assert len(lines) == 1, result.stderr
            assert lines[0].startswith(f"error: the warehouse {fixture_db} is in use by process "
                                       f"{holder.pid} ({sys.executable} -c import duckdb, sys\\ncon = "), lines[0]
            assert lines[0].endswith("), " + advice[args[0]]), lines[0]
    finally:
        holder.communicate("")


# A reader of a published copy, one step per line read on stdin: what each of its connections
# sees (the scores: their number and a hash of all of them), and the files it holds open.
READER = """
import json, os, sys
import duckdb
SEEN = "SELECT count(*), sum(hash(qrels, run_id, topic, measure, value)) FROM scores"
def seen(con):
    n, h = con.execute(SEEN).fetchone()
    m = len(con.execute("SELECT * FROM measure.AP('fixture')").fetchall())
    return [n, str(h), m]
def held():
    files = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            files.append(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:  # closed meanwhile (the listing's own)
            pass
    return sorted(f for f in files if f.startswith(os.path.dirname(sys.argv[1])))
first = duckdb.connect(sys.argv[1], read_only=True)
print(json.dumps({"first": seen(first)}), flush=True)
sys.stdin.readline()  # the copy is replaced meanwhile
second = duckdb.connect(sys.argv[1], read_only=True)
out = {"first after": seen(first), "second, first open": seen(second), "held": held()}
second.close()
first.close()
third = duckdb.connect(sys.argv[1], read_only=True)
out["after closing both"] = seen(third)
print(json.dumps(out), flush=True)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="what the docs describe is Linux's")
def test_publish_replace_under_a_reader(fixture_db, tmp_path):
    """`irw publish --replace` over a copy a client reads (docs/sql-and-bi.md, publishing over
    a copy in use): the open connection keeps reading the old copy, whole and without an
    error, from a file that no longer has a name; a new connection of the same process gets
    the old copy while the old connection is open, and the new one once all are closed; a
    new process gets the new copy."""
    import json

    copy = tmp_path / "dash.duckdb"
    invoke = cli_for(str(fixture_db))
    invoke("publish", copy)
    reader = subprocess.Popen([sys.executable, "-c", READER, str(copy)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        old = json.loads(reader.stdout.readline())["first"]
        invoke("eval", "-m", "nDCG@5")  # more scores
        invoke("publish", copy, "--replace")
        now = json.loads(subprocess.run([sys.executable, "-c", READER.split("first = ")[0] + (
            "print(json.dumps(seen(duckdb.connect(sys.argv[1], read_only=True))))"), str(copy)],
            capture_output=True, text=True, check=True).stdout)
        reader.stdin.write("\n")
        reader.stdin.flush()
        got = json.loads(reader.stdout.readline())
    finally:
        reader.communicate("")
    assert reader.returncode == 0
    assert now[0] == old[0] + 40 and now[1] != old[1] and old[2] == now[2] == 40  # 8 runs x 5 topics
    assert got["first after"] == old and got["second, first open"] == old
    assert got["after closing both"] == now
    assert f"{copy} (deleted)" in got["held"], got["held"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [copy.name, fixture_db.name]  # nothing left


def test_publish_replace_refuses_a_writing_client(fixture_db, tmp_path):
    """A client that has the published copy open for writing stops `publish --replace`: irw
    names it and asks for a read-only client, and the copy stays as it was."""
    copy = tmp_path / "dash.duckdb"
    invoke = cli_for(str(fixture_db))
    invoke("publish", copy)
    before = copy.read_bytes()
    writer = subprocess.Popen([sys.executable, "-c", "import duckdb, sys\ncon = duckdb.connect(sys.argv[1])\n"
                               "print('open', flush=True)\nsys.stdin.read()", str(copy)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline().strip() == "open"
        started = time.perf_counter()
        r = invoke("--wait", "1", "publish", copy, "--replace", ok=False)  # waited for, as --wait says
        assert r.exit_code == 1 and time.perf_counter() - started >= 1
        assert r.output.startswith(f"error: {copy} is open for writing in process {writer.pid} "
                                   f"({sys.executable} -c import duckdb, sys\\ncon = "), r.output
        assert r.output.rstrip().endswith("): a published copy is replaced only while its clients read "
                                          "it; open it read-only (duckdb -readonly, read_only=True) and "
                                          "publish again"), r.output
        assert copy.read_bytes() == before
    finally:
        writer.communicate("")
    invoke("publish", copy, "--replace")  # closed: replaced


def test_a_read_only_file_can_be_evaluated(fixture_db):
    want = irw(fixture_db, "eval", "-m", "AP", "-m", "nDCG@10", "--format", "csv").stdout
    os.chmod(fixture_db, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    try:
        got = irw(fixture_db, "eval", "-m", "AP", "-m", "nDCG@10", "--no-store", "--format", "csv")
        assert got.stdout == want
        if os.geteuid() != 0:  # root writes whatever the permissions say
            result = irw(fixture_db, "eval", "-m", "AP", check=False)
            assert result.returncode == 1 and result.stderr.startswith("error: ")
    finally:
        os.chmod(fixture_db, stat.S_IRUSR | stat.S_IWUSR)


def test_readers_during_a_load_see_all_of_it_or_none(trec8, tmp_path):
    """A load of 20 TREC-8 runs, polled by read-only readers: they can open the warehouse
    while the files are read and never see part of the batch."""
    runs = sorted((trec8 / "runs").iterdir())[:20]
    db = tmp_path / "w.duckdb"
    irw(db, "load", "qrels", str(trec8 / "qrels.trec8.gz"), "--name", "trec8")
    expected = None
    load = subprocess.Popen(IRW + ["--db", str(db), "load", "runs", *map(str, runs)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen, opened = set(), 0
    while load.poll() is None:
        try:
            con = duckdb.connect(str(db), read_only=True)
        except duckdb.Error:
            time.sleep(0.01)
            continue
        try:
            seen.add(con.execute("SELECT (SELECT count(*) FROM run_loads), (SELECT count(*) FROM runs), "
                                 "(SELECT count(*) FROM run_topics)").fetchone())
            opened += 1
        finally:
            con.close()
        time.sleep(0.01)
    assert load.returncode == 0, load.stderr
    con = duckdb.connect(str(db), read_only=True)
    expected = con.execute("SELECT (SELECT count(*) FROM run_loads), (SELECT count(*) FROM runs), "
                           "(SELECT count(*) FROM run_topics)").fetchone()
    con.close()
    assert expected[0] == 20
    assert opened > 0, "no reader could open the warehouse during the load"
    assert seen <= {(0, 0, 0), expected}, seen
