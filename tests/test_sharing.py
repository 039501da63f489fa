"""Readers beside writers: commands that only read open the warehouse read-only, a load
locks it only for its final transaction, a busy file is waited for and its holder named,
and reads never create a file."""

from __future__ import annotations

import contextlib
import gzip
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


# A reader holding the warehouse open: what it sees, on each line read on stdin, through the
# connection it opened first and through a new one.
HOLDER = """
import json, sys
import duckdb
count = "SELECT count(*) FROM run_loads"
first = duckdb.connect(sys.argv[1], read_only=True)
print(json.dumps(first.execute(count).fetchone()[0]), flush=True)
sys.stdin.readline()
second = duckdb.connect(sys.argv[1], read_only=True)  # the same process: DuckDB's cached instance
print(json.dumps([first.execute(count).fetchone()[0], second.execute(count).fetchone()[0]]), flush=True)
"""


# A load killed (-9) in its final transaction, once it has written its rows into the copy.
KILLED = """
import os, sys
from irwarehouse import Warehouse
from irwarehouse.engine import loading
insert = loading.runs._insert_runs
def killed(*args, **kwargs):
    insert(*args, **kwargs)
    os.kill(os.getpid(), 9)
loading.runs._insert_runs = killed
with Warehouse(sys.argv[1]) as w:
    w.load_runs(sys.argv[2:])
"""


def _swapping(db, runs) -> None:
    """The premise of a test: loading ``runs`` into ``db`` writes a copy (connection.swapped)."""
    from irwarehouse import connection

    lines = sum(len(gzip.decompress(open(r, "rb").read()).splitlines()) for r in runs)
    assert lines * connection.SWAP_BYTES_PER_ROW > os.path.getsize(db), "too few lines to write a copy"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX locks and renames")
def test_a_load_writes_a_copy_that_readers_never_wait_for(trec8, fixture_db, tmp_path):
    """A load that writes many rows into a small warehouse writes them into a copy and renames
    it onto the warehouse (connection.swapped): a reader holding the file open does not stop
    it (--wait 0) and keeps reading the old file, a new process reads the new one, the file
    keeps its permissions and nothing else is left in the directory. A load that writes few
    rows into it writes in place, so the reader stops it as it stops every writer. The copy
    a load killed with -9 left beside the warehouse (and its write-ahead log) is removed by
    the next irw process, which finds it recorded in the killed process's temporary
    directory; a file merely named like such a copy is not."""
    import json

    os.chmod(fixture_db, 0o640)
    runs = [str(trec8 / "runs" / f) for f in ("input.INQ601.gz", "input.Flab8as.gz", "input.CL99XT.gz")]
    _swapping(fixture_db, runs)  # 150,000 lines
    killed = subprocess.run([sys.executable, "-c", KILLED, str(fixture_db), *runs], capture_output=True)
    assert killed.returncode == -9, killed.stderr
    copies = [p.name for p in tmp_path.iterdir() if p.name.startswith(f".{fixture_db.name}.irw-")]
    assert any(c.endswith(".tmp") for c in copies), copies  # the copy (and maybe its log)
    lookalike = tmp_path / f".{fixture_db.name}.irw-0123456789ab.tmp"
    lookalike.write_text("not irw's")
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(fixture_db)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert json.loads(holder.stdout.readline()) == 8
        few = tmp_path / "few.txt"
        few.write_text("101 Q0 d1 1 2.5 few\n")
        result = irw(fixture_db, "--wait", "0", "load", "runs", str(few), check=False)
        assert result.returncode == 1 and "is in use by process" in result.stderr, result.stderr
        irw(fixture_db, "--wait", "0", "load", "runs", *runs)
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert json.loads(holder.stdout.readline()) == [8, 8]  # the old file, while it is open
    finally:
        holder.communicate("")
    con = duckdb.connect(str(fixture_db), read_only=True)
    assert con.execute("SELECT count(*) FROM run_loads").fetchone()[0] == 11
    con.close()
    assert stat.S_IMODE(os.stat(fixture_db).st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([lookalike.name, "few.txt", fixture_db.name])
    assert lookalike.read_text() == "not irw's"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX locks and renames")
def test_loads_into_copies_take_turns_and_lose_nothing(trec8, fixture_db, tmp_path, monkeypatch):
    """Two loads into copies of the same warehouse at once (their final transactions made
    slow, so that they overlap): the second waits for the first and copies what it wrote, so
    both batches are in the warehouse; a load that fails leaves no copy."""
    import threading

    from irwarehouse import Warehouse, connection
    from irwarehouse.engine import loading

    insert = loading.runs._insert_runs

    def slowly(*args, **kwargs):
        summary = insert(*args, **kwargs)
        time.sleep(1.5)
        return summary

    monkeypatch.setattr(loading.runs, "_insert_runs", slowly)
    names = sorted(p.name for p in (trec8 / "runs").iterdir())
    batches = [[str(trec8 / "runs" / n) for n in names[i:i + 4]] for i in (0, 4)]  # 180,000 lines or more
    for batch in batches:
        _swapping(fixture_db, batch)
    failures = []

    def load(batch):
        try:
            with Warehouse(str(fixture_db), wait=60) as w:
                w.load_runs(batch)
        except Exception as exc:  # reported below
            failures.append(exc)

    swapped, copies = connection.swapped, []

    @contextlib.contextmanager
    def recorded(*args, **kwargs):
        with swapped(*args, **kwargs) as copy:
            copies.append(copy)
            yield copy

    monkeypatch.setattr(connection.swap, "swapped", recorded)
    threads = [threading.Thread(target=load, args=(batch,)) for batch in batches]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not failures, failures
    assert len(copies) == 2 and None not in copies, copies  # both wrote a copy (an inode may be reused)
    con = duckdb.connect(str(fixture_db), read_only=True)
    assert con.execute("SELECT count(*) FROM run_loads").fetchone()[0] == 8 + 8
    con.close()
    result = irw(fixture_db, "load", "runs", *batches[0], check=False)  # loaded before: refused
    assert result.returncode == 1 and "already loaded" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [fixture_db.name]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX locks and renames")
def test_a_copy_that_cannot_be_written_loads_in_place(trec8, fixture_db, tmp_path, monkeypatch):
    """A load whose copy cannot be written (a full disk, here) writes the warehouse in place:
    the file keeps its inode, and nothing is left beside it; with the copy, the inode is new."""
    import errno

    from irwarehouse import Warehouse, connection

    runs = [str(trec8 / "runs" / f) for f in ("input.INQ601.gz", "input.Flab8as.gz", "input.CL99XT.gz",
                                               "input.AntHoc1.gz", "input.CL99SD.gz", "input.CL99SDopt1.gz",
                                               "input.CL99SDopt2.gz", "input.CL99XTopt.gz")]

    def full(*args):
        raise OSError(errno.ENOSPC, "No space left on device")

    _swapping(fixture_db, runs[:3])
    inode = os.stat(fixture_db).st_ino
    with monkeypatch.context() as m:
        m.setattr(connection.swap, "_copy_from", full)
        with Warehouse(str(fixture_db)) as w:
            w.load_runs(runs[:3])
    assert os.stat(fixture_db).st_ino == inode
    assert sorted(p.name for p in tmp_path.iterdir()) == [fixture_db.name]
    _swapping(fixture_db, runs[3:])
    with Warehouse(str(fixture_db)) as w:
        w.load_runs(runs[3:])
        assert len(w.run_ids()) == 8 + 8
    assert os.stat(fixture_db).st_ino != inode


# A writer holding the warehouse open for writing until a line is read on stdin.
WRITER = """
import sys
import duckdb
con = duckdb.connect(sys.argv[1])
print("open", flush=True)
sys.stdin.readline()
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX locks and renames")
def test_a_load_into_a_copy_waits_as_wait_says(trec8, fixture_db, tmp_path):
    """A load that would write a copy waits --wait seconds for what keeps it from copying: a
    first load creating a warehouse in the directory (its lock), then named as such; a
    writer holding the warehouse, then named with its process."""
    import fcntl

    runs = [str(trec8 / "runs" / f) for f in ("input.INQ601.gz", "input.Flab8as.gz", "input.CL99XT.gz")]
    _swapping(fixture_db, runs)
    fd = os.open(tmp_path, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)  # as a first load creating a warehouse there holds it
    try:
        started = time.monotonic()
        result = irw(fixture_db, "--wait", "0.5", "load", "runs", *runs, check=False)
        waited = time.monotonic() - started
    finally:
        os.close(fd)
    assert result.returncode == 1 and waited >= 0.5
    assert result.stderr.strip() == (f"error: the warehouse {fixture_db} is being created by another "
                                     "process (its first load); waited 0.5 s. Try again when it is "
                                     "done, or wait longer (--wait SECONDS)")
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(fixture_db)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline().strip() == "open"
        result = irw(fixture_db, "--wait", "0.5", "load", "runs", *runs, check=False)
    finally:
        writer.communicate("\n")
    assert result.returncode == 1
    assert result.stderr.startswith(f"error: the warehouse {fixture_db} is in use by process "
                                    f"{writer.pid} ({sys.executable} -c "), result.stderr
    assert "waited 0.5 s" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [fixture_db.name]
    irw(fixture_db, "load", "runs", *runs)


# ------------------------------------------------------------------ what the file carries

ACL = "system.posix_acl_access"


def _another_run(tmp_path) -> str:
    """A run file the fixture warehouse has not loaded (alpha1's rankings, as run 'carried')."""
    lines = [line for line in (FIXTURES / "runs" / "alpha.txt").read_text().splitlines()
             if line.split()[5:6] == ["alpha1"]]
    path = tmp_path / "carried.txt"
    path.write_text("".join(" ".join(line.split()[:5] + ["carried"]) + "\n" for line in lines))
    return str(path)


def _give_attributes(db) -> None:
    """A user extended attribute and a POSIX ACL granting the user 1234 read and the group
    nothing (setfacl where it is installed, else the attribute's bytes); skipped where the
    file system of the temporary directory has no extended attributes."""
    import errno
    import shutil
    import struct

    try:
        os.setxattr(db, "user.irw_test", b"\x00kept\xff")
    except OSError as exc:
        if exc.errno in (errno.ENOTSUP, errno.EOPNOTSUPP):
            pytest.skip(f"the file system of {db.parent} has no extended attributes")
        raise
    if shutil.which("setfacl"):
        subprocess.run(["setfacl", "-m", "u:1234:r--,g::---,m::r--", str(db)], check=True)
    else:  # POSIX ACL, version 2: (tag, permissions, id) entries, in the order of their tags
        undefined = 0xFFFFFFFF
        entries = [(0x01, 6, undefined), (0x02, 4, 1234), (0x04, 0, undefined), (0x10, 4, undefined),
                   (0x20, 0, undefined)]
        os.setxattr(db, ACL, struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in entries))


def _carried(db) -> dict:
    return {"xattrs": {name: os.getxattr(db, name) for name in sorted(os.listxattr(db))},
            "mode": stat.S_IMODE(os.stat(db).st_mode), "owner": (os.stat(db).st_uid, os.stat(db).st_gid)}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's extended attributes")
def test_a_load_into_a_copy_keeps_the_files_attributes_and_acl(fixture_db, tmp_path, monkeypatch):
    """A load written into a copy renamed onto the warehouse gives the copy the file's extended
    attributes and POSIX ACL, byte for byte (the named user keeps read access, the group
    gains none), with its mode and owner."""
    from irwarehouse import Warehouse, connection

    _give_attributes(fixture_db)
    before, inode = _carried(fixture_db), os.stat(fixture_db).st_ino
    assert ACL in before["xattrs"] and "user.irw_test" in before["xattrs"]
    monkeypatch.setattr(connection.swap, "SWAP_BYTES_PER_ROW", 10**12)  # every load into a copy
    with Warehouse(str(fixture_db)) as w:
        w.load_runs([_another_run(tmp_path)])
        assert "carried" in w.run_ids()
    assert os.stat(fixture_db).st_ino != inode  # the copy renamed onto it
    assert _carried(fixture_db) == before


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's extended attributes")
def test_a_copy_that_cannot_carry_an_attribute_loads_in_place(fixture_db, tmp_path, monkeypatch):
    """Where the copy cannot be given an attribute the file carries (the file system refuses
    it), the load writes the warehouse in place: the same file, its attributes untouched, and
    nothing left beside it."""
    import errno

    from irwarehouse import Warehouse, connection

    _give_attributes(fixture_db)
    before, inode = _carried(fixture_db), os.stat(fixture_db).st_ino
    monkeypatch.setattr(connection.swap, "SWAP_BYTES_PER_ROW", 10**12)

    def refused(*args):
        raise OSError(errno.ENOTSUP, "Operation not supported")

    monkeypatch.setattr(os, "setxattr", refused)
    with Warehouse(str(fixture_db)) as w:
        w.load_runs([_another_run(tmp_path)])
        assert "carried" in w.run_ids()
    monkeypatch.undo()
    assert os.stat(fixture_db).st_ino == inode
    assert _carried(fixture_db) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([fixture_db.name, "carried.txt"])


def test_a_warehouse_that_cannot_be_written_is_named_and_reads_still_work(fixture_db, tmp_path):
    """A load into a warehouse that cannot be written -- immutable (chattr +i), or read-only
    for a user who is not root -- fails with one line naming the warehouse and saying that
    reads still work, nothing about irw's own files; reads do work."""
    import shutil

    if os.geteuid() == 0:
        if not shutil.which("chattr") or subprocess.run(["chattr", "+i", str(fixture_db)],
                                                        capture_output=True).returncode:
            pytest.skip(f"chattr +i is not available on {tmp_path}")
        undo = ["chattr", "-i", str(fixture_db)]
    else:
        os.chmod(fixture_db, 0o444)
        undo = ["chmod", "0644", str(fixture_db)]
    try:
        result = irw(fixture_db, "load", "runs", _another_run(tmp_path), check=False)
        assert result.returncode == 1
        assert result.stderr.strip() == (
            f"error: cannot load into the warehouse {fixture_db}: the file cannot be written (it is "
            "read-only or immutable); commands that only read it still work (e.g. irw runs list, "
            "irw eval --no-store)"), result.stderr
        assert "carried" not in irw(fixture_db, "runs", "list", "--format", "csv").stdout
    finally:
        subprocess.run(undo, check=True)


def test_a_directory_that_refuses_the_copy_is_named(fixture_db, tmp_path, monkeypatch):
    """A directory that refuses new files (not writable, read-only, immutable) when the load
    makes its copy: one line naming the warehouse and its directory, saying that reads still
    work, not irw's hidden copy or DuckDB's journal; the warehouse unchanged. (The refusal is
    simulated where the copy is made: root writes any directory whatever its permissions.)"""
    import errno

    from irwarehouse import Warehouse, connection, files
    from irwarehouse.errors import IrwError

    monkeypatch.setattr(connection.swap, "SWAP_BYTES_PER_ROW", 10**12)
    for code, text in ((errno.EACCES, "Permission denied"), (errno.EROFS, "Read-only file system"),
                       (errno.EPERM, "Operation not permitted")):
        def refused(target, companions=()):
            raise OSError(code, text, str(tmp_path / ".w.duckdb.irw-0123.tmp"))

        monkeypatch.setattr(files, "file_beside", refused)
        data = fixture_db.read_bytes()
        with Warehouse(str(fixture_db)) as w:
            with pytest.raises(IrwError) as caught:
                w.load_runs([_another_run(tmp_path)])
        assert str(caught.value) == (
            f"cannot load into the warehouse {fixture_db}: its directory {tmp_path} refuses new files "
            f"({text}); commands that only read it still work (e.g. irw runs list, irw eval --no-store)")
        assert fixture_db.read_bytes() == data
