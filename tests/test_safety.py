"""Nothing kept is lost: what ordinary commands may and may not do to the warehouse and to
the files around it.

One class of fault per section, each with the mechanism that covers it (docs/bad-input.md, "Bad
input"):

- one guard for every file irw writes (irwarehouse.files): never onto a database, never over
  a file without --replace, never over files irw did not write, whole or not at all; irw's
  temporary files removed only where they prove an owner that has ended;
- ``irw sql`` without --write writes nothing anywhere (DuckDB's sandbox; the variants of
  every path spelling are in tests/test_sandbox.py);
- one command, one transaction: a command that fails, or is interrupted before it commits,
  leaves the warehouse exactly as it was (row counts and content hash of every table);
- names that cannot mean two things (irwarehouse.names): run specs, run ids, teams, qrels;
- metadata that changes only the columns it names; hidden files skipped;
- measure names without repeated parameters; numbers bounded before they are converted;
- edits made with plain SQL checked as loads are, and undone when they break a rule;
- evaluations that share no topic with the qrels say so;
- every error one line, printable and bounded.

Each class has at least one variant beside the example that found it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from conftest import FIXTURES, ROOT, cli_for, error_of, snapshot

IRW = [sys.executable, "-c", "from irwarehouse.cli import main; main()"]


@pytest.fixture()
def fx(evaluated_fixtures, tmp_path):
    """A copy of that warehouse of the test's own, and the CLI on it."""
    path = tmp_path / "w.duckdb"
    path.write_bytes(evaluated_fixtures.read_bytes())
    cli = cli_for(str(path))
    cli.path = path
    cli.tmp = tmp_path
    return cli


def unchanged(cli, args, expect: str | None = None, status: int = 1) -> str:
    """Run a command that must fail and leave the warehouse exactly as it was."""
    before = snapshot(cli.db_path)
    result = cli(*args, ok=False)
    assert result.exit_code == status, result.output
    message = error_of(result)
    if expect is not None:
        assert expect in message, message
    assert snapshot(cli.db_path) == before, f"irw {' '.join(map(str, args))} changed the warehouse"
    return message


# ------------------------------------------------------------------ one guard for every file

def test_outputs_are_never_written_onto_the_warehouse(fx):
    fx("standardize", "factors", "-m", "AP", "--name", "s")
    size = fx.path.stat().st_size
    link = fx.tmp / "link.html"
    link.symlink_to(fx.path)
    other = fx.tmp / "other.duckdb"
    duckdb.connect(str(other)).close()
    cases = [
        (("report", "-m", "AP", "--out", fx.path), "is the warehouse"),
        (("report", "-m", "AP", "--out", fx.path, "--replace"), "is the warehouse"),
        (("report", "-m", "AP", "--out", link, "--replace"), "is the warehouse"),  # a variant: a link to it
        (("report", "-m", "AP", "--out", str(fx.path) + ".wal", "--replace"), "is the warehouse"),
        (("report", "-m", "AP", "--format", "markdown", "--out", other, "--replace"), "is a DuckDB database"),
        (("standardize", "export", "s", fx.path, "--file-format", "csv", "--replace"), "is the warehouse"),
        (("standardize", "export", "s", other, "--file-format", "csv", "--replace"), "is a DuckDB database"),
        (("publish", fx.path, "--replace"), "is the warehouse being published"),
        (("publish", other, "--replace"), "is a DuckDB database"),
        (("export", fx.path, "--replace"), "is the warehouse"),
        (("experiment", "agreement", "--n", "3", "--out", fx.path), "is not a directory"),
    ]
    for args, expect in cases:
        result = fx(*args, ok=expect is None)
        if expect is not None:
            assert expect in error_of(result), (args, result.stderr)
    assert fx.path.stat().st_size == size and duckdb.connect(str(other)).execute("SELECT 1").fetchone()
    assert fx("runs", "list").exit_code == 0  # the warehouse still opens


def test_existing_files_need_replace_and_stay_whole_on_failure(fx):
    out = fx.tmp / "table.md"
    out.write_text("mine")
    message = error_of(fx("report", "-m", "AP", "--format", "markdown", "--out", out, ok=False))
    assert "exists; use --replace" in message and out.read_text() == "mine"
    fx("report", "-m", "AP", "--format", "markdown", "--out", out, "--replace")
    assert out.read_text().startswith("Mean AP")
    fx("standardize", "factors", "-m", "AP", "--name", "s")
    factors = fx.tmp / "f.csv"
    factors.write_text("mine")
    assert "exists; use --replace" in error_of(fx("standardize", "export", "s", factors, ok=False))
    assert factors.read_text() == "mine"
    fx("standardize", "export", "s", factors, "--replace")
    assert factors.read_text().startswith("factors,")
    # a failure while writing leaves the old file and no temporary one
    from irwarehouse import files
    from irwarehouse.errors import IrwError

    with pytest.raises(IrwError):
        with files.output_file(str(out), replace=True, what="test") as tmp:
            tmp.write_text("half")
            raise IrwError("failed half way")
    assert out.read_text().startswith("Mean AP")
    assert not [p for p in fx.tmp.iterdir() if ".irw-" in p.name]


def test_export_replace_keeps_files_it_did_not_write(fx):
    out = fx.tmp / "export"
    fx("export", out)
    (out / "notes.txt").write_text("mine")
    assert "not empty; use --replace" in error_of(fx("export", out, ok=False))
    fx("export", out, "--replace")
    assert (out / "notes.txt").read_text() == "mine" and (out / "schema.sql").is_file()
    # a file the new export would write over, which the earlier one did not write: refused
    (out / "runs.parquet").unlink()
    (out / "runs.parquet").write_text("mine too")
    load = (out / "load.sql").read_text().replace("runs.parquet", "gone.parquet")
    (out / "load.sql").write_text(load)
    assert "was not written by irw export" in error_of(fx("export", out, "--replace", ok=False))
    assert (out / "runs.parquet").read_text() == "mine too"
    foreign = fx.tmp / "mine"
    foreign.mkdir()
    (foreign / "a.txt").write_text("x")
    assert "does not hold an irw export" in error_of(fx("export", foreign, "--replace", ok=False))


def test_publish_replaces_only_an_earlier_published_copy(fx):
    out = fx.tmp / "dash.duckdb"
    fx("publish", out)
    fx("publish", out, "--replace")
    # a copy that was opened for writing is a warehouse now: not replaced
    cli_for(str(out))("eval", "-m", "AP")
    assert "is a DuckDB database" in error_of(fx("publish", out, "--replace", ok=False))


def test_experiment_output_never_overwrites_foreign_files(fx):
    out = fx.tmp / "exp"
    out.mkdir()
    (out / "agreement_agreement.csv").write_text("mine")
    assert "irw did not write it there" in error_of(
        fx("experiment", "agreement", "--n", "3", "--out", out, ok=False))
    assert (out / "agreement_agreement.csv").read_text() == "mine"
    (out / "agreement_agreement.csv").unlink()
    (out / "notes.txt").write_text("mine")
    fx("experiment", "agreement", "--n", "3", "--out", out)
    fx("experiment", "agreement", "--n", "3", "--out", out)  # its own files: rewritten
    assert (out / "notes.txt").read_text() == "mine"


HOLD = ("from irwarehouse import files; import time; "
        "print(files.temp_dir('hold'), flush=True); time.sleep(120)")


def _holder(env, namespace: bool = False):
    """A process that made an irw temporary directory and keeps it (in a PID namespace of
    its own with ``namespace``, where its process id means nothing outside): the process
    and the directory."""
    command = [sys.executable, "-c", HOLD]
    if namespace:
        command = ["unshare", "--user", "--map-root-user", "--pid", "--fork", "--kill-child", *command]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True)
    return proc, Path(proc.stdout.readline().strip())


def _has_pid_namespaces() -> bool:
    try:
        return subprocess.run(["unshare", "--user", "--map-root-user", "--pid", "--fork", "true"],
                              capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def test_temporary_files_are_removed_only_when_provably_irws(fx, tmp_path):
    """irw's temporary directories are in its own root and prove their owner: a marker and
    a lock the owner holds. What an owner killed with -9 left is removed by the next command;
    a live owner's is not, also from another process namespace; nothing that merely looks
    like irw's -- named as irw once named its directories, in TMPDIR or beside an output, or
    inside the root without irw's marker -- is ever removed."""
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    env = {**os.environ, "TMPDIR": str(tmpdir), "PYTHONPATH": str(ROOT)}
    live, live_dir = _holder(env)
    owners = [live]
    namespaced = None
    if _has_pid_namespaces():
        namespaced, namespaced_dir = _holder(env, namespace=True)
        owners.append(namespaced)
    dead, dead_dir = _holder(env)
    dead.kill()
    dead.wait()
    root = tmpdir / f"irw-{os.getuid()}"
    assert dead_dir.parent.parent == root and (dead_dir.parent / ".irw-owner").is_file()
    lookalikes = [tmpdir / "irw-backup-20241126-deadbeef", tmpdir / f"irw-load-{dead.pid}-0123abcd",
                  fx.tmp / "papers" / "irw-results-2024-0a1b2c3d", fx.tmp / "papers" / f"irw-spill-{dead.pid}-89abcdef",
                  root / "mine", root / "fake"]
    for path in lookalikes:
        path.mkdir(parents=True)
        (path / "x").write_text("x")
    (root / "fake" / ".irw-owner").write_text("not irw's\n")  # a marker without irw's text
    beside = fx.tmp / "papers" / f".r.md.irw-{dead.pid}-0123abcd.tmp"
    beside.write_text("half")
    try:
        for args in (["eval", "-m", "AP"], ["report", "-m", "AP", "--format", "markdown", "--out",
                                               str(fx.tmp / "papers" / "r.md")]):
            proc = subprocess.run(IRW + ["--db", str(fx.path), *args], env=env, capture_output=True, text=True)
            assert proc.returncode == 0, proc.stderr
        assert not dead_dir.parent.exists()  # its owner is gone: removed
        assert live_dir.is_dir() and (namespaced is None or namespaced_dir.is_dir())
        assert all((p / "x").read_text() == "x" for p in lookalikes) and beside.read_text() == "half"
        assert sorted(p.name for p in root.iterdir() if p.is_dir()) == sorted(
            ["mine", "fake", live_dir.parent.name] + ([namespaced_dir.parent.name] if namespaced else []))
    finally:
        for owner in owners:
            owner.kill()
            owner.wait()
    for _ in range(50):  # (the namespace's process ends as its parent is killed)
        subprocess.run(IRW + ["--db", str(fx.path), "runs", "list"], env=env, capture_output=True, check=True)
        if sorted(p.name for p in root.iterdir() if p.is_dir()) == ["fake", "mine"]:  # owners ended
            break
        time.sleep(0.2)
    assert sorted(p.name for p in root.iterdir() if p.is_dir()) == ["fake", "mine"]


def test_a_temporary_root_that_is_not_private_is_refused(fx, tmp_path):
    """irw's temporary root must be a directory of the user's that nobody else may write to
    (else another user could plant a directory there for the clean-up to take): one that is
    not, or a link, is refused, naming it."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for kind in ("open", "link"):
        tmpdir = tmp_path / kind
        tmpdir.mkdir()
        root = tmpdir / f"irw-{os.getuid()}"
        if kind == "open":
            root.mkdir()
            root.chmod(0o777)
        else:
            (tmp_path / "elsewhere").mkdir(exist_ok=True)
            root.symlink_to(tmp_path / "elsewhere")
        proc = subprocess.run(IRW + ["--db", str(fx.path), "eval", "-m", "AP"], capture_output=True,
                              text=True, env={**env, "TMPDIR": str(tmpdir)})
        assert proc.returncode == 1 and proc.stderr.strip() == (
            f"error: '{root}' is not a private directory of this user's, so irw does not keep "
            "temporary files there: remove it, or set TMPDIR to another directory"), proc.stderr


# ------------------------------------------------------------------ irw sql reads only

WRITING = [
    "COPY (SELECT 42 AS x) TO '{w}' (FORMAT csv)",
    "copy (select 1) to '{new}'",
    "EXPORT DATABASE '{newdir}'",
    "ATTACH '{new}' AS other",
    "INSTALL json",
    "SET profiling_output = '{new}'",
    "PRAGMA enable_profiling",
    "CALL checkpoint()",
    "EXPLAIN ANALYZE COPY (SELECT 1) TO '{new}'",
    "SELECT 1; COPY (SELECT 1) TO '{new}'",
    "PREPARE p AS SELECT 1",
    "CREATE TEMP TABLE t AS SELECT 1",
    "COPY FROM DATABASE memory TO memory",
    "DELETE FROM scores",
    "BEGIN",
]


@pytest.mark.parametrize("statement", WRITING)
def test_sql_without_write_writes_nothing(fx, statement):
    new, newdir = fx.tmp / "new.csv", fx.tmp / "newdir"
    query = statement.format(w=fx.path, new=new, newdir=newdir)
    size = fx.path.stat().st_size
    message = unchanged(fx, ("sql", query))
    assert "--write" in message or "transaction" in message or "is not run" in message, message
    assert not new.exists() and not newdir.exists() and fx.path.stat().st_size == size


@pytest.mark.parametrize("query", [
    "SELECT count(*) AS n FROM runs", "DESCRIBE runs", "SHOW TABLES", "SUMMARIZE SELECT 1 AS x",
    "FROM scores LIMIT 1", "PIVOT (SELECT 'a' AS k, 1 AS v) ON k USING sum(v)",
    "PRAGMA table_info('runs')", "EXPLAIN SELECT 1", "SET VARIABLE q = 'fixture'"])
def test_sql_without_write_still_reads(fx, query):
    fx("sql", query)


def test_sql_with_write_is_one_checked_transaction(fx):
    # transaction statements are irw's own; COPY onto a database is refused even with --write
    # (by DuckDB: the warehouse is no file the SQL may write; tests/test_sandbox.py tries
    # every spelling)
    unchanged(fx, ("sql", "--write", "BEGIN; DELETE FROM scores; COMMIT"), "transaction")
    unchanged(fx, ("sql", "--write", "--files", fx.tmp / "x.csv", f"COPY (SELECT 1) TO '{fx.path}' (FORMAT csv)"))
    out = fx.tmp / "x.csv"
    fx("sql", "--write", "--files", out, f"COPY (SELECT 1 AS x) TO '{out}' (FORMAT csv)")
    assert out.read_text().startswith("x")


# ------------------------------------------------------------------ one command, one transaction

@pytest.mark.parametrize("args, expect", [
    (("eval", "-m", "nDCG@5", "--standardize", "nosuch"), "unknown factor set"),
    (("splits", "random", "fixture", "-m", "AP", "--size", "99"), "--size 99"),
    (("splits", "random", "fixture", "-m", "AP", "--seed", "-1", "--splits", "5"), "seed"),
    (("standardize", "reference-size", "-m", "AP", "--seed", "-1", "--sizes", "2"), "seed"),
    (("pvalues", "-m", "RR", "--test", "bootstrap", "-B", "5", "--save", "x"), "B must be at least 100"),
    (("correlate", "--matrix", "-m", "Bpref", "--statistic", "bogus", "--save", "x"), "unknown statistic"),
    (("standardize", "factors", "-m", "nDCG@7", "--name", "x", "--reference", "alpha1"), "two reference runs"),
])
def test_a_failed_command_leaves_the_warehouse_as_it_was(fx, args, expect):
    unchanged(fx, args, expect)


def test_a_failed_api_call_leaves_the_warehouse_as_it_was(fx):
    from irwarehouse import Warehouse
    from irwarehouse.errors import IrwError

    before = snapshot(fx.db_path)
    with Warehouse(fx.db_path) as w:
        with pytest.raises(IrwError):
            w.correlation_matrix(["RR", "P@3"], statistics=["bogus"], save="x")
        with pytest.raises(IrwError):
            w.pvalues("Success@3", test="randomization", B=5)
    assert snapshot(fx.db_path) == before


def _interrupt(args, env, delay: float, sig: int = signal.SIGINT):
    proc = subprocess.Popen(IRW + args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    time.sleep(delay)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err


def test_an_interrupt_keeps_all_or_nothing(trec8, tmp_path):
    """Ctrl-C (or SIGTERM) at moments spread over a load: exit 130 (143) and nothing changed --
    the copy a load writes into removed -- or exit 0 with the load reported and kept; never a
    traceback, never a kept load reported as failed."""
    runs = sorted((trec8 / "runs").iterdir())[:12]
    base = str(tmp_path / "base.duckdb")
    cli_for(base)("load", "qrels", trec8 / "qrels.trec8.gz", "--name", "trec8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.monotonic()
    proc = subprocess.run(IRW + ["--db", str(tmp_path / "timing.duckdb"), "load", "runs", *map(str, runs)],
                          env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    took = time.monotonic() - start
    outcomes = set()
    for k, fraction in enumerate((0.2, 0.5, 0.8, 0.95, 1.2)):
        work = str(tmp_path / f"w{k}.duckdb")
        Path(work).write_bytes(Path(base).read_bytes())
        before = snapshot(work)
        sig = signal.SIGTERM if k % 2 else signal.SIGINT
        code, out, err = _interrupt(["--db", work, "load", "runs", *map(str, runs)], env, took * fraction, sig)
        assert "Traceback" not in err, err
        assert not [p for p in tmp_path.iterdir() if ".irw-" in p.name]  # no copy left beside it
        n = duckdb.connect(work, read_only=True).execute("SELECT count(*) FROM run_loads").fetchone()[0]
        if code in (130, 143):
            assert code == 128 + sig, (code, sig)
            assert err.strip().splitlines()[-1] == "error: interrupted; nothing was changed", err
            assert snapshot(work) == before
        else:
            assert code == 0 and "loaded 12 runs" in err, (code, err)
            assert n == 12
        outcomes.add(code)
    assert outcomes & {130, 143}  # the interrupt did arrive during the load at least once


def test_an_interrupted_export_writes_nothing(trec8_db, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = tmp_path / "export"
    code, _, err = _interrupt(["--db", trec8_db, "export", str(out)], env, 1.0)
    assert code in (0, 130) and "Traceback" not in err, err
    if code == 130:
        assert not out.exists() and not [p for p in tmp_path.iterdir() if ".irw-" in p.name]
        assert err.strip().splitlines()[-1].startswith("error: interrupted")


# Queries that run for minutes in DuckDB on any machine, unless stopped: a read (a large cross
# join) and a write of what it counts (not a write of many rows, which a fast machine ends in
# seconds).
LONG_READ = "SELECT count(*) FROM range(100000000) a, range(100000) b"
LONG_WRITE = f"CREATE TABLE irw_long AS {LONG_READ}"


def _signalled(args: list[str], sig: int, *, after: float = 3.0, ready: Path | None = None
               ) -> tuple[int, str, float]:
    """Run ``args`` (a Python command line), send it ``sig`` once it has run ``after`` seconds
    (after the file ``ready`` appeared, if given: a long query under way), and return its
    status, its stderr and how long it took to end after the signal."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        end = time.monotonic() + 120
        while ready is not None and not ready.exists() and proc.poll() is None and time.monotonic() < end:
            time.sleep(0.05)
        time.sleep(after)
        assert proc.poll() is None, proc.communicate()  # still running: the query is long
        sent = time.monotonic()
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
        return proc.returncode, err, time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("write", [False, True], ids=["read", "write"])
def test_a_signal_stops_a_long_query_at_once(fx, sig, status, write):
    """Ctrl-C (SIGINT) or SIGTERM stops ``irw sql`` running a long query within 2 s (DuckDB
    interrupted, not left to finish), with status 130 or 143 and one line; a write's
    transaction is rolled back: the warehouse as it was, and it opens."""
    before = snapshot(fx.db_path)
    args = IRW + ["--db", fx.db_path, "sql", *(["--write", LONG_WRITE] if write else [LONG_READ])]
    code, err, took = _signalled(args, sig, after=8.0)  # well into the query: where it ran on
    assert code == status, err
    assert took < 2.5, f"ended {took:.1f} s after the signal"
    assert err.strip().splitlines()[-1] == "error: interrupted; nothing was changed", err
    assert "Traceback" not in err
    assert snapshot(fx.db_path) == before
    assert fx("runs", "list").exit_code == 0


@pytest.fixture(scope="module")
def large_run(tmp_path_factory):
    """A qrels and a run of 5,000,000 lines (50 topics of 100,000 documents): irw trec-eval
    takes some seconds over them on any machine, so a signal sent after one finds it at work."""
    where = tmp_path_factory.mktemp("large")
    qrels, run = where / "qrels", where / "run"
    qrels.write_text("".join(f"{t} 0 d{t}-{i} {i % 2}\n" for t in range(1, 51) for i in range(20)))
    with open(run, "w") as out:
        for t in range(1, 51):
            out.write("".join(f"{t} Q0 d{t}-{i} {i + 1} {300000 - i} big\n" for i in range(100000)))
    return qrels, run


@pytest.mark.parametrize("sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_a_signal_stops_irw_trec_eval_at_once(tmp_path, monkeypatch, large_run, sig, status):
    """``irw trec-eval`` on a large run stopped by Ctrl-C or SIGTERM while it reads or
    evaluates: status 130 or 143 and one line, whatever reports the stopped query (not an
    unexpected error); no temporary directory of its own left."""
    qrels, run = large_run
    env_tmp = tmp_path / "tmp"
    env_tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(env_tmp))
    code, err, took = _signalled(IRW + ["trec-eval", "-q", str(qrels), str(run)], sig, after=1.0)
    assert code == status, err
    assert took < 2.5, f"ended {took:.1f} s after the signal"
    assert err.strip().splitlines() == ["error: interrupted; nothing was changed"], err
    assert [p.name for p in env_tmp.rglob("*") if "trec-eval" in p.name] == []


def test_a_keyboard_interrupt_in_the_api_leaves_the_warehouse_as_it_was(fx):
    """A KeyboardInterrupt during a Warehouse call (Ctrl-C in a notebook, whose kernel sends
    SIGINT to itself) stops its query and rolls its transaction back."""
    before = snapshot(fx.db_path)
    ready = fx.tmp / "ready"
    script = ("import sys; from irwarehouse import Warehouse\n"
              "w = Warehouse(sys.argv[1])\n"
              "open(sys.argv[2], 'w').close()\n"
              "try:\n"
              f"    w.sql({LONG_WRITE!r}, write=True)\n"
              "except BaseException as exc:\n"
              "    print(type(exc).__name__, file=sys.stderr)\n"
              "w.close()\n")
    code, err, took = _signalled([sys.executable, "-c", script, fx.db_path, str(ready)], signal.SIGINT,
                                 after=1.0, ready=ready)
    assert code == 0 and err.strip() == "KeyboardInterrupt", err  # the call was interrupted
    assert took < 2.5, f"ended {took:.1f} s after the signal"
    assert snapshot(fx.db_path) == before


# ------------------------------------------------------------------ names that mean one thing

@pytest.mark.parametrize("spec", ["", " ", ",", " , "])
def test_a_blank_run_spec_selects_nothing(fx, spec):
    unchanged(fx, ("runs", "drop", spec), "selects no run")
    unchanged(fx, ("eval", "-m", "AP", "--runs", spec), "selects no run")


@pytest.mark.parametrize("run_id", ["all", "pooled", "team:alpha", "deeply-judged", "deeply-judged:5",
                                    "@runs", "id:x", "a,b", "r\x1bx", "r\x00x"])
def test_run_ids_that_a_run_spec_could_not_address_are_refused(fx, run_id):
    path = fx.tmp / "run.txt"
    path.write_bytes(f"101 Q0 D101-000 1 5 ok\n101 Q0 D101-000 1 5 {run_id}\n".encode())
    message = unchanged(fx, ("load", "runs", path))
    assert f"{path}, line 2" in message and "\x1b" not in message and "\x00" not in message


def test_names_in_metadata_dataframes_and_sql_are_checked_too(fx):
    meta = fx.tmp / "meta.tsv"
    meta.write_text("run_id\tteam\npooled\tx\n")
    assert f"{meta}, line 2" in unchanged(fx, ("load", "meta", meta), "run spec word")
    meta.write_text("run_id\tteam\nalpha1\ta,b\n")
    assert "comma" in unchanged(fx, ("load", "meta", meta))
    unchanged(fx, ("sql", "--write", "INSERT INTO runs SELECT collection, 'all', topic, docno, rank, "
                   "score, given_rank FROM runs WHERE run_id = 'alpha1'"), "run spec word")
    import pandas as pd

    from irwarehouse import Warehouse
    from irwarehouse.errors import IrwError

    with Warehouse(fx.db_path) as w:
        with pytest.raises(IrwError, match="the DataFrame, row 0: .*team:"):
            w.load_runs(pd.DataFrame({"qid": ["101"], "docno": ["d"], "score": [1.0]}), run_id="team:x")


@pytest.mark.parametrize("name", ["a,b", "q*", "q?", "[q]", " q", "q\x1b"])
def test_qrels_names_the_patterns_cannot_address_are_refused(fx, name):
    unchanged(fx, ("load", "qrels", FIXTURES / "qrels.txt", "--name", name), "qrels name")
    unchanged(fx, ("pool", "depth", "--name", name, "--depth", "5"), "qrels name")
    unchanged(fx, ("splits", "make", "fixture", "--name", name, "--topics", "101-103"), "qrels name")


def test_a_run_named_like_a_spec_word_is_addressed_by_id(fx):
    """A warehouse an older irw wrote may hold such a run: ``id:NAME`` addresses it."""
    con = duckdb.connect(fx.db_path)
    for table in ("runs", "run_topics", "run_loads"):
        con.execute(f"UPDATE {table} SET run_id = 'pooled' WHERE run_id = 'gamma2'")
    con.execute("UPDATE irw_run_state SET run_id = 'pooled' WHERE run_id = 'gamma2'")
    con.close()
    out = json.loads(fx("eval", "-m", "AP", "--runs", "id:pooled", "--format", "json", "--no-store").stdout)
    assert [r["run_id"] for r in out] == ["pooled"]
    pooled = json.loads(fx("eval", "-m", "AP", "--runs", "pooled", "--format", "json", "--no-store").stdout)
    assert "pooled" not in {r["run_id"] for r in pooled}


# ------------------------------------------------------------------ metadata, hidden files

def test_metadata_changes_only_the_columns_it_names(fx):
    meta = fx.tmp / "meta.tsv"
    meta.write_text("\ufeffrun_id\tteam\nalpha1\t\"renamed\"\r\n", encoding="utf-8")
    fx("load", "meta", meta)
    row = json.loads(fx("sql", "SELECT team, kind, pooled FROM run_meta WHERE run_id = 'alpha1'",
                        "--format", "json").stdout)
    assert row == [{"team": "renamed", "kind": "automatic", "pooled": True}]
    meta.write_text("run_id\tteam\tteam\nalpha1\tx\ty\n")
    unchanged(fx, ("load", "meta", meta), "column team is named twice")
    unchanged(fx, ("load", "meta", fx.tmp), "is a directory")


def test_hidden_files_and_directories_are_skipped_at_any_depth(tmp_path):
    runs = tmp_path / "runs"
    for rel in ["a.txt", ".hidden.txt", ".old/b.txt", "sub/c.txt", "sub/.git/objects/d.txt"]:
        path = runs / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"101 Q0 D101-000 1 5 {Path(rel).stem.strip('.')}\n")
    cli = cli_for(str(tmp_path / "w.duckdb"))
    result = cli("load", "runs", runs)
    assert "loaded 2 runs" in result.stderr and "note: skipped 3 hidden files or directories" in result.stderr
    cli("load", "runs", runs / ".old" / "b.txt")  # named directly: loaded
    ids = json.loads(cli("sql", "SELECT run_id FROM run_loads ORDER BY 1", "--format", "json").stdout)
    assert [r["run_id"] for r in ids] == ["a", "b", "c"]


# ------------------------------------------------------------------ measure names and numbers

@pytest.mark.parametrize("name, expect", [
    ("RBP(p=0.8,p=0.9)", "parameter p is given twice"),
    ("nDCG(discount=jk,discount=log2p1)@10", "parameter discount is given twice"),
    ("AP(rel=1,rel=1)", "parameter rel is given twice"),
    ("AP''", "given twice"),
    ("AP'(judged_only=True)", "given twice"),
    ("AP@" + "9" * 5000, "must be an integer from 1"),
    ("AP(rel=" + "9" * 5000 + ")", "must be at most"),
    ("X" * 100_000, "unknown measure"),
])
def test_measure_names_cannot_mean_two_things(fx, name, expect):
    message = unchanged(fx, ("eval", "-m", name), expect)
    assert len(message) < 1000


# ------------------------------------------------------------------ edits made with plain SQL

@pytest.mark.parametrize("edit, expect", [
    ("INSERT INTO qrels SELECT * FROM qrels WHERE qrels = 'fixture' LIMIT 1", "judging document"),
    ("UPDATE qrels SET docno = 'D101-000' WHERE qrels = 'fixture' AND topic = '101' AND docno = 'D101-001'",
     "judging document"),
    ("UPDATE runs SET docno = 'D101-000' WHERE run_id = 'alpha1' AND topic = '101' AND rank = 2",
     "holding document D101-000 twice for topic 101"),
    ("UPDATE runs SET score = 'nan' WHERE run_id = 'beta1' AND rank = 3", "not a finite number"),
    ("DROP TABLE scores", "would remove the table scores"),
    ("DROP VIEW run_info", "would remove the view run_info"),
    ("DROP MACRO TABLE measure.AP", "would remove the macro measure.AP"),
])
def test_sql_edits_that_no_load_would_accept_are_undone(fx, edit, expect):
    unchanged(fx, ("sql", "--write", edit), expect)
    fx("eval", "-m", "AP")  # later evaluations work


def test_tables_made_with_sql_are_the_users(fx):
    fx("sql", "--write", "CREATE TABLE notes AS SELECT 1 AS x")
    assert json.loads(fx("sql", "SELECT x FROM notes", "--format", "json").stdout) == [{"x": 1}]
    assert "database" not in fx("sql", "--write", "DROP TABLE notes").stderr


def test_a_warehouse_cannot_be_created_where_it_cannot_be(tmp_path):
    cli = cli_for(str(tmp_path / "no" / "such" / "w.duckdb"))
    message = error_of(cli("load", "qrels", FIXTURES / "qrels.txt", "--name", "q", ok=False))
    assert "the directory" in message and "does not exist" in message


def test_an_edit_by_another_client_is_refused_by_the_next_writing_command(fx):
    con = duckdb.connect(fx.db_path)
    con.execute("INSERT INTO qrels SELECT * FROM qrels WHERE qrels = 'fixture' LIMIT 1")
    con.close()
    unchanged(fx, ("eval", "-m", "AP"), "judges document")


# ------------------------------------------------------------------ no shared topic

def test_an_evaluation_that_shares_no_topic_says_so(fx):
    run = fx.tmp / "odd.txt"
    run.write_text("101.0 Q0 D101-000 1 5 odd\n")
    fx("load", "runs", run)
    result = fx("eval", "-m", "AP", "--runs", "odd,alpha1")
    assert "note: run odd shares no topic with qrels fixture" in result.stderr
    assert "alpha1" not in result.stderr
    qrels = fx.tmp / "q9"
    qrels.write_text("901 0 x 1\n902 0 y 1\n903 0 z 0\n")
    fx("load", "qrels", qrels, "--name", "q9")
    result = fx("summary", "-m", "AP", "-q", "q9")  # a variant: another command that evaluates
    assert result.stderr.count("note: no evaluated run shares a topic with qrels q9") == 1


# ------------------------------------------------------------------ one line, printable

@pytest.mark.parametrize("args, expect", [
    (("eval", "-m", "AP", "--max-docs", "abc"), "is not a valid"),
    (("eval", "-m", "AP", "--nope"), "No such option"),
    (("eval",), "Missing option"),
    (("eval", "-m", "AP", "-q", "fixture", "--qrels", "fixture"), "option --qrels is given twice"),
    (("eval", "-m", "AP", "--store", "--no-store"), "given together"),
    (("runs", "drop", "a", "b"), "unexpected extra argument"),
    (("--wait", "nan", "runs", "list"), "--wait"),
    (("--wait", "-1", "runs", "list"), "--wait"),
    (("--memory-limit", "-1GB", "runs", "list"), "is not a size"),
    (("--db", "", "runs", "list"), "--db"),
    (("pvalues", "-m", "AP", "--seed", "1" + "0" * 5000), "--seed"),
])
def test_usage_errors_are_one_line_and_a_hint(fx, args, expect):
    before = snapshot(fx.db_path)
    result = fx(*args, ok=False)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith("error: ") and expect in lines[0], result.stderr
    assert lines[1].startswith("(see irw") and lines[1].endswith("--help)")
    assert snapshot(fx.db_path) == before


def test_stored_control_characters_are_printed_escaped(fx):
    fx("sql", "--write", "UPDATE runs SET docno = 'D\x1b[31m' WHERE run_id = 'alpha1' AND rank = 1 AND topic = '101'")
    table = fx("sql", "SELECT docno FROM runs WHERE docno LIKE 'D%[31m'").stdout
    assert "\x1b" not in table and "\\x1b[31m" in table
    assert "\x1b" not in fx("sql", "SELECT 'a\x1b' AS \"x\x07\"").stdout


def test_a_table_row_is_one_line_whatever_its_cells_hold(fx):
    """--format table: a newline, carriage return or tab in a cell or a column name is
    written as an escape, so each row is one line and its columns stay aligned."""
    out = fx("sql", "SELECT 'red' || chr(10) || 'x' || chr(13) || chr(9) || 't' AS \"a\nb\", 1 AS n").stdout
    cell = "red\\nx\\r\\tt"
    assert out.splitlines() == ["a\\nb".ljust(len(cell)) + "  n", "-" * len(cell) + "  -", cell + "  1"]


@pytest.mark.parametrize("test", ["t", "wilcoxon"])
def test_compare_says_why_a_test_is_undefined(fx, test):
    """Two runs whose per-topic differences do not vary (NumRel: the same on every topic):
    the test's p-value and the effect size are blank, and a note says why."""
    result = fx("compare", "alpha1", "alpha2", "-m", "NumRel", "-m", "AP", "--test", test,
                "--rel-level", "1")  # (the threshold chosen: no note on it)
    assert result.stderr.splitlines() == [
        "note: alpha1 and alpha2: NumRel(rel=1) differs by the same amount (0.0000) on all 5 topics, so the "
        f"differences have no variance: the {test} test and the effect size are undefined (left blank)"]
    assert fx("compare", "alpha1", "alpha2", "-m", "AP", "--rel-level", "1").stderr == ""


def test_a_closed_pipe_is_quiet(fx):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(IRW + ["--db", fx.db_path, "eval", "-m", "AP", "--per-topic", "-m", "P@10",
                                   "--format", "csv"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader goes away before irw writes
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert "Errno" not in err and "Traceback" not in err and "error" not in err, err


def test_duckdb_errors_are_translated():
    from irwarehouse.errors import duckdb_problem

    pin = duckdb.OutOfMemoryException("Out of Memory Error: failed to pin block of size 256.0 KiB (1.9 MiB/2.0 MiB used)")
    assert "--memory-limit" in duckdb_problem(pin, "2MB") and "2MB" in duckdb_problem(pin, "2MB")
    wal = duckdb.IOException('IO Error: Cannot open file "/data/w.duckdb.wal": Permission denied')
    assert "not writable" in duckdb_problem(wal) and "irw eval --no-store" in duckdb_problem(wal)
    assert duckdb_problem(duckdb.Error("Binder Error: x\nLINE 1")) == "database: Binder Error: x"


def test_a_tiny_memory_limit_is_named(fx):
    result = fx("--memory-limit", "1MB", "eval", "-m", "AP", "-m", "nDCG@100", "--no-store", ok=False)
    if result.exit_code != 0:  # DuckDB may manage the fixtures even so
        assert "memory" in error_of(result)


def test_collections_list_with_runs_but_no_qrels(tmp_path):
    cli = cli_for(str(tmp_path / "w.duckdb"))
    cli("load", "runs", FIXTURES / "runs" / "beta1.txt")
    rows = json.loads(cli("collections", "list", "--format", "json").stdout)
    assert rows[0]["collection"] == "default" and rows[0]["runs"] == 1
    assert cli("collections", "list").exit_code == 0


# ------------------------------------------------------------------ a --db that leads nowhere

@pytest.mark.parametrize("links", [{"a.duckdb": "b.duckdb", "b.duckdb": "a.duckdb"}, {"a.duckdb": "a.duckdb"}],
                         ids=["two links", "itself"])
@pytest.mark.parametrize("command", [("load", "runs", str(FIXTURES / "runs")), ("runs", "list")],
                         ids=["load", "read"])
def test_a_db_that_is_a_loop_of_symbolic_links_is_refused_at_once(tmp_path, links, command):
    """A --db path that is a loop of symbolic links is refused at once, the loop named in one
    line (a load once tried to create the file without end); nothing is created."""
    for name, target in links.items():
        (tmp_path / name).symlink_to(target)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(IRW + ["--db", "a.duckdb", *command], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    chain = " -> ".join(["a.duckdb", *links.values()][:len(links) + 1])
    assert proc.stderr.strip() == (f"error: a.duckdb is a loop of symbolic links ({chain}), not a "
                                   "warehouse file: choose another --db"), proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(links)
