"""Faults on real data: seeded fuzzing of TREC-8 run and qrels files, and ``kill -9`` during a
load.

The fuzz tests corrupt copies of TREC-8 files (byte flips, truncation, dropped or duplicated
fields and lines, odd whitespace and line ends, tricky numbers, other encodings, compression
that does not match the file name) and load each copy with the real command line. Every load
must either succeed with exactly the rows that ``reference_rows`` -- a parser written here,
independently of irw's, from the rules in docs/concepts.md ("Input files") -- accepts, or fail with a
one-line error naming the file and leave the warehouse as it was (row counts and a content hash
of every table). The cases follow from the seed (``IRW_FUZZ_SEED``); how many run depends on
the time budget (``IRW_FUZZ_SECONDS`` per test), so a failure names the seed and the case.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from conftest import cli_for, snapshot

SEED = int(os.environ.get("IRW_FUZZ_SEED", "12"))
BUDGET = float(os.environ.get("IRW_FUZZ_SECONDS", "8"))
MIN_CASES = 12
MAX_CASES = 400
RUN_FILES = ["input.READWARE.gz", "input.READWARE2.gz", "input.1.gz"]


# ------------------------------------------------------------------ the reference parser

class Rejected(Exception):
    """The reference parser refuses the file."""


MAGIC = {b"\x1f\x8b": gzip.decompress, b"BZh": bz2.decompress, b"\xfd7zXZ\x00": lzma.decompress}
REFUSED_MAGIC = (b"\x28\xb5\x2f\xfd", b"PK\x03\x04", b"\x04\x22\x4d\x18", b"7z\xbc\xaf\x27\x1c")


def _content(data: bytes) -> bytes:
    for magic, decompress in MAGIC.items():
        if data.startswith(magic):
            try:
                return decompress(data)
            except Exception as exc:
                raise Rejected(f"damaged stream: {exc!r}") from None
    if data.startswith(REFUSED_MAGIC):
        raise Rejected("a compression irw does not read")
    return data


def _integer(text: str, low: int, high: int) -> int:
    if not text or set(text) - set("0123456789+-"):
        raise Rejected(f"not an integer: {text!r}")
    try:
        value = int(text)
    except ValueError:
        raise Rejected(f"not an integer: {text!r}") from None
    if not low <= value <= high:
        raise Rejected(f"out of range: {text!r}")
    return value


def _decimal(text: str) -> float:
    if not text or set(text) - set("0123456789+-.eE"):
        raise Rejected(f"not a number: {text!r}")
    try:
        value = float(text)
    except ValueError:
        raise Rejected(f"not a number: {text!r}") from None
    if value in (float("inf"), float("-inf")):
        raise Rejected(f"out of range: {text!r}")
    return value


def _run_id(text: str) -> str:
    """A run id a run spec can address (docs/bad-input.md: names)."""
    if text in ("all", "pooled") or text.startswith(("team:", "deeply-judged", "id:", "@")):
        raise Rejected(f"a run spec word: {text!r}")
    if "," in text or any(ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f for c in text):
        raise Rejected(f"a comma or a control character: {text!r}")
    return text


def reference_rows(data: bytes, nfields: int, encoding: str = "utf-8") -> list[tuple]:
    """The rows a file holds, by the documented rules; Rejected if it is not acceptable.
    Runs: (run_id, topic, docno, rank, score); qrels: (topic, docno, grade)."""
    content = _content(data)
    if encoding == "utf-8" and content.startswith(b"\xef\xbb\xbf"):
        content = content[3:]
    rows, seen = [], set()
    for raw in content.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n"):
        if encoding == "latin-1" and any(0x80 <= b <= 0x9f for b in raw):
            raise Rejected("a C1 control code in Latin-1 text")
        try:
            fields = [f.decode(encoding) for f in raw.split()]  # bytes.split(): ASCII whitespace
        except UnicodeDecodeError:
            raise Rejected("not in the encoding") from None
        if not fields or fields[0].startswith("#"):  # blank, or a comment line
            continue
        if len(fields) != nfields:
            raise Rejected(f"{len(fields)} fields")
        if nfields == 6:
            topic, _, docno, rank, score, run_id = fields
            row = (_run_id(run_id), topic, docno, _integer(rank, -2**63, 2**63 - 1), _decimal(score))
            key = (run_id, topic, docno)
        else:
            topic, _, docno, grade = fields
            row = (topic, docno, _integer(grade, -2**31, 2**31 - 1))
            key = (topic, docno)
        if key in seen:
            raise Rejected(f"duplicate {key}")
        seen.add(key)
        rows.append(row)
    if not rows:
        raise Rejected("no lines")
    return rows


def test_the_reference_parser_on_hand_made_lines():
    ok = b"1 Q0 d1 1 1.5e-05 r\r\n\n2\tQ0 \x0bd2\x0c -3 +.5 r\r2 Q0 d3 007 5. r"
    assert reference_rows(ok, 6) == [("r", "1", "d1", 1, 1.5e-05), ("r", "2", "d2", -3, 0.5),
                                     ("r", "2", "d3", 7, 5.0)]
    assert reference_rows(gzip.compress(b"\xef\xbb\xbf1 0 d 2\n"), 4) == [("1", "d", 2)]
    assert reference_rows(b"# c\n #1 0 d 1\n1 0 d#1 1\n#\n", 4) == [("1", "d#1", 1)]
    assert reference_rows("1 0 caf\xe9 1\n".encode("latin-1"), 4, "latin-1") == [("1", "caf\xe9", 1)]
    for bad in [b"1 Q0 d 2.5 1 r", b"1 Q0 d 0x10 1 r", b"1 Q0 d 1 1_000 r", b"1 Q0 d 1 inf r",
                b"1 Q0 d 1 1e999 r", b"1 Q0 d 1 1 r\n1 Q0 d 2 2 r", b"1 Q0 d 1 r", b"",
                gzip.compress(b"1 Q0 d 1 1 r\n")[:-3], "1 Q0 caf\xe9 1 1 r".encode("latin-1"),
                b"1 Q0 d 1 1 pooled", b"1 Q0 d 1 1 team:x", b"1 Q0 d 1 1 a,b", b"1 Q0 d 1 1 r\x1b"]:
        with pytest.raises(Rejected):
            reference_rows(bad, 6)
    with pytest.raises(Rejected):
        reference_rows(b"1 0 d 99999999999\n", 4)


# ------------------------------------------------------------------ corrupting files

TRICKY_NUMBERS = ["2.5", "0x10", "1_000", "1e3", "inf", "-inf", "nan", "99999999999",
                  "9223372036854775808", "+5", "-0", ".5", "1.", "1e999", "1e-999", "\u0661",
                  "", "+", "1e", "--1", "1.5e+3", "0007"]
SEPARATORS = [b" ", b"\t", b"  ", b" \t", b"\x0b", b"\x0c", b"\t\t "]


def _edit_lines(rng: random.Random, lines: list[bytes], nfields: int) -> tuple[list[bytes], list[str]]:
    """Line-level corruptions, each with a few words saying what was done."""
    done = []
    for _ in range(rng.choice([0, 0, 1, 1, 2, 3])):
        what = rng.choice(["drop line", "duplicate line", "drop field", "duplicate field",
                           "number", "number", "whitespace", "line ends", "blank lines",
                           "comment line", "latin-1 docno", "utf-8 docno"])
        i = rng.randrange(len(lines))
        fields = lines[i].split()
        if what == "drop line":
            del lines[i]
        elif what == "duplicate line":
            lines.insert(i, lines[i])
        elif what == "drop field":
            del fields[rng.randrange(len(fields))]
            lines[i] = b" ".join(fields)
        elif what == "duplicate field":
            j = rng.randrange(len(fields))
            fields.insert(j, fields[j])
            lines[i] = b" ".join(fields)
        elif what == "number":
            value = rng.choice(TRICKY_NUMBERS)
            fields[nfields - 1 if nfields == 4 else rng.choice([3, 4])] = value.encode()
            lines[i] = b" ".join(fields)
            what += f" {value!r}"
        elif what == "whitespace":
            lines[i] = rng.choice([b"", b" ", b"\t"]) + b"".join(
                f + rng.choice(SEPARATORS) for f in fields).rstrip(b" ") + rng.choice([b"", b" "])
        elif what == "line ends":
            lines[i] = lines[i] + rng.choice([b"\r", b"\r\r"])
        elif what == "blank lines":
            lines.insert(i, rng.choice([b"", b"   ", b"\t"]))
        elif what == "comment line":
            lines.insert(i, rng.choice([b"# a comment", b"#", b" \t#" + lines[i], b"#" + lines[i]]))
        else:  # a docno with a non-ASCII letter, in Latin-1 or in UTF-8
            fields[2] += "\u00e9".encode("latin-1" if what.startswith("latin") else "utf-8")
            lines[i] = b" ".join(fields)
        done.append(what)
    return lines, done


def corrupt(rng: random.Random, content: bytes, nfields: int) -> tuple[bytes, str, str, str]:
    """(the bytes of a corrupted copy, its file name, the --encoding to load it with, what was done)."""
    lines, done = _edit_lines(rng, content.split(b"\n"), nfields)
    data = b"\n".join(lines)
    encoding = "latin-1" if any("latin" in d for d in done) and rng.random() < 0.5 else "utf-8"
    if rng.random() < 0.08:
        data, encoding = data.decode("latin-1").encode("utf-16"), "utf-8"
        done.append("utf-16")
    if rng.random() < 0.05:
        data = b"\xef\xbb\xbf" + data
        done.append("byte order mark")
    container = rng.choice(["plain", "gzip", "gzip", "bzip2", "xz"])
    data = {"plain": lambda d: d, "gzip": lambda d: gzip.compress(d, 1),
            "bzip2": lambda d: bz2.compress(d, 1), "xz": lambda d: lzma.compress(d, preset=0)}[container](data)
    damage = rng.choice(["none", "none", "none", "none", "flip", "flip", "truncate"])
    if damage == "flip":
        data = bytearray(data)
        for _ in range(rng.choice([1, 1, 2, 5])):
            data[rng.randrange(len(data))] ^= rng.randrange(1, 256)
        data = bytes(data)
    elif damage == "truncate":
        data = data[:rng.randrange(len(data))]
    name = "copy" + rng.choice(["", ".txt", ".gz", ".bz2", ".xz"])
    done.append(f"{container}, damage {damage}, named {name}, --encoding {encoding}")
    return data, name, encoding, "; ".join(done)


# ------------------------------------------------------------------ the warehouse

@pytest.fixture(scope="module")
def base_warehouse(trec8, tmp_path_factory):
    """A warehouse holding the TREC-8 qrels and two runs that the fuzzed files are not."""
    path = str(tmp_path_factory.mktemp("fuzz") / "base.duckdb")
    cli = cli_for(path)
    cli("load", "qrels", trec8 / "qrels.trec8.gz", "--name", "trec8")
    cli("load", "runs", trec8 / "runs" / "input.disco1.gz", trec8 / "runs" / "input.Flab8as.gz")
    cli("eval", "-m", "AP")  # scores and the materialized base too
    return path


def fuzz(tmp_path, base, sources, nfields, load_args, loaded_rows):
    rng = random.Random(SEED)
    contents = [gzip.decompress(p.read_bytes()) for p in sources]
    work = str(tmp_path / "w.duckdb")
    shutil.copy(base, work)
    before = snapshot(work)
    cli = cli_for(work)
    start, cases, outcomes = time.monotonic(), 0, {"loaded": 0, "refused": 0}
    # the time budget, at least MIN_CASES cases, and on until both outcomes were seen twice
    # (a slow machine runs fewer cases in the budget: the seed's first ones may all be refused)
    while (cases < MIN_CASES or time.monotonic() - start < BUDGET
           or (min(outcomes.values()) < 2 and cases < MAX_CASES)):
        cases += 1
        data, name, encoding, done = corrupt(rng, rng.choice(contents), nfields)
        where = f"seed {SEED}, case {cases}: {done}"
        path = tmp_path / f"case{cases}" / name
        path.parent.mkdir()
        path.write_bytes(data)
        try:
            expected = sorted(reference_rows(data, nfields, encoding))
        except Rejected as why:
            expected = why
        result = cli("load", *load_args, path, "--encoding", encoding, ok=False)
        if result.exit_code == 0:
            assert not isinstance(expected, Rejected), f"{where}: loaded, the reference refuses it ({expected})"
            assert sorted(loaded_rows(work)) == expected, f"{where}: rows differ from the reference"
            outcomes["loaded"] += 1
            shutil.copy(base, work)
        else:
            message = result.stderr.strip()
            assert isinstance(expected, Rejected), f"{where}: refused, the reference accepts it: {message}"
            assert message.startswith("error: ") and "\n" not in message, f"{where}: {result.stderr!r}"
            assert str(path) in message and "Traceback" not in result.output, f"{where}: {message}"
            assert snapshot(work) == before, f"{where}: the warehouse changed"
            outcomes["refused"] += 1
        shutil.rmtree(path.parent)
    assert outcomes["loaded"] >= 2 and outcomes["refused"] >= 2, outcomes  # both sides exercised
    print(f"fuzz seed {SEED}: {cases} cases, {outcomes}")


def test_fuzzed_run_files_load_exactly_or_fail_cleanly(trec8, base_warehouse, tmp_path):
    def rows(path):
        con = duckdb.connect(path, read_only=True)
        try:
            return con.execute("SELECT run_id, topic, docno, given_rank, score FROM runs WHERE run_id "
                               "NOT IN ('disco1', 'Flab8as')").fetchall()
        finally:
            con.close()
    fuzz(tmp_path, base_warehouse, [trec8 / "runs" / f for f in RUN_FILES], 6, ["runs"], rows)


def test_fuzzed_qrels_files_load_exactly_or_fail_cleanly(trec8, base_warehouse, tmp_path):
    def rows(path):
        con = duckdb.connect(path, read_only=True)
        try:
            return con.execute("SELECT topic, docno, rel FROM qrels WHERE qrels = 'fuzzed'").fetchall()
        finally:
            con.close()
    qrels = gzip.decompress((trec8 / "qrels.trec8.gz").read_bytes()).split(b"\n")
    part = tmp_path / "part.gz"  # ten topics: enough variety, quick to load
    part.write_bytes(gzip.compress(b"\n".join(line for line in qrels if line[:3] < b"411")))
    fuzz(tmp_path, base_warehouse, [part], 4, ["qrels", "--name", "fuzzed"], rows)


# ------------------------------------------------------------------ kill -9

def test_kill_9_during_a_load_leaves_all_or_none_of_the_batch(trec8, base_warehouse, tmp_path):
    """A load killed at random moments: the warehouse reopens with every run of the batch,
    complete, or none of them, and what it held before unchanged."""
    runs = [trec8 / "runs" / f for f in RUN_FILES + ["input.cirtrc82.gz"]]
    lines = {}
    for p in runs:
        for line in gzip.decompress(p.read_bytes()).splitlines():
            if line.strip():
                run_id = line.split()[5].decode()
                lines[run_id] = lines.get(run_id, 0) + 1
    before = snapshot(base_warehouse)
    con = duckdb.connect(base_warehouse, read_only=True)  # the runs tables' version irw recorded
    (version,) = con.execute("SELECT irw_recorded_runs_fp()").fetchone()
    con.close()
    work = str(tmp_path / "w.duckdb")
    command = [sys.executable, "-c", "from irwarehouse.cli import app; app()", "--db", work,
               "load", "runs", *map(str, runs)]
    tmpdir = tmp_path / "tmpdir"  # the killed loads' temporary files: removed by the next command
    tmpdir.mkdir()
    env = {**os.environ, "TMPDIR": str(tmpdir)}

    def fresh():
        for leftover in (work, work + ".wal"):
            if os.path.exists(leftover):
                os.remove(leftover)
        shutil.copy(base_warehouse, work)

    def check(where: str) -> str:
        con = duckdb.connect(work)  # replays the write-ahead log, as opening it in irw does
        try:
            counts = dict(con.execute("SELECT run_id, count(*) FROM runs GROUP BY run_id").fetchall())
            loaded = {r[0] for r in con.execute("SELECT run_id FROM run_loads").fetchall()}
            batch = set(lines) & set(counts)
            assert batch in (set(), set(lines)), f"{where}: part of the batch is in the warehouse"
            assert all(counts[r] == lines[r] for r in batch) and batch <= loaded, where
            for table in ("runs", "run_topics", "run_loads", "irw_base", "irw_run_state"):
                con.execute(f"DELETE FROM {table} WHERE list_contains($ids, run_id)",
                            {"ids": sorted(lines)})  # take the batch out, and irw's record of it:
            con.execute("UPDATE irw_state SET fp = $fp WHERE name = 'runs'", {"fp": version})
            con.execute("UPDATE irw_base_built SET runs_fp = irw_recorded_runs_fp()")
        finally:
            con.close()
        assert snapshot(work) == before, f"{where}: what the warehouse held before changed"
        return "all" if batch else "none"

    fresh()
    started = time.monotonic()
    assert subprocess.run(command, capture_output=True, env=env).returncode == 0
    duration = time.monotonic() - started
    assert check("not killed") == "all"
    rng = random.Random(SEED)
    outcomes = []
    for quarter in range(4):  # one moment in each quarter of the load's duration
        fresh()
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        at = rng.uniform(quarter / 4, (quarter + 1) / 4) * duration
        time.sleep(at)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
        outcomes.append(check(f"seed {SEED}, killed after {at:.2f} s of a {duration:.2f} s load"))
    print(f"kill -9 at random moments of a {duration:.1f} s load: {outcomes}")
    root = tmpdir / f"irw-{os.getuid()}"
    assert subprocess.run(command[:5] + ["runs", "list"], capture_output=True, env=env).returncode == 0
    assert not [p for p in root.iterdir() if p.is_dir()], "a killed load's temporary files were left"
    # a killed load's copy of the warehouse (connection.swapped), recorded in its temporary
    # directory, went with it
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tmpdir", "w.duckdb"]


# ------------------------------------------------------------------ concurrent first loads

IRW = [sys.executable, "-c", "from irwarehouse.cli import app; app()"]
FIXTURE_RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "runs"


def _together(*commands, env=None) -> list[tuple[int, str]]:
    """Start the commands at once; their exit statuses and stderr."""
    procs = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
             for c in commands]
    return [(p.wait(timeout=300), p.stderr.read()) for p in procs]


def _loaded(db) -> list[str]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return [r[0] for r in con.execute("SELECT run_id FROM run_loads ORDER BY 1").fetchall()]
    finally:
        con.close()


def test_concurrent_first_loads_never_lose_the_file(tmp_path):
    """Loads started together on a warehouse file that does not exist yet: one creates it
    while the other waits (the directory's lock, --wait), then loads into it. Loading the
    same run twice, one of them fails as any second load would -- without removing the file;
    two different runs both load; a first load that fails beside one that succeeds leaves
    the other's run; no file is ever lost."""
    bad = tmp_path / "bad.txt"
    bad.write_text("101 Q0 D101-000 1 notanumber bad\n")
    for round_ in range(2):
        db = tmp_path / f"same{round_}.duckdb"
        load = [*IRW, "--db", str(db), "load", "runs", str(FIXTURE_RUNS / "beta1.txt")]
        outcomes = _together(load, load)
        assert sorted(code for code, _ in outcomes) == [0, 1], outcomes
        assert "already loaded" in next(err for code, err in outcomes if code)
        assert db.exists() and _loaded(db) == ["beta1"]
        db = tmp_path / f"two{round_}.duckdb"
        outcomes = _together(*([*IRW, "--db", str(db), "load", "runs", str(FIXTURE_RUNS / name)]
                               for name in ("beta1.txt", "beta2.txt")))
        assert [code for code, _ in outcomes] == [0, 0], outcomes
        assert _loaded(db) == ["beta1", "beta2"]
    db = tmp_path / "failing.duckdb"
    outcomes = _together(*([*IRW, "--db", str(db), "load", "runs", str(path)]
                           for path in (bad, FIXTURE_RUNS / "beta1.txt")))
    assert [code for code, _ in outcomes] == [1, 0], outcomes
    assert "line 1" in outcomes[0][1] and _loaded(db) == ["beta1"]


def test_a_creation_under_way_is_waited_for_as_wait_says(tmp_path):
    """Another process creating a warehouse in the directory (holding its lock) is waited
    for --wait seconds, then named; a longer wait loads once it is done."""
    import fcntl

    db = tmp_path / "w.duckdb"
    fd = os.open(tmp_path, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        started = time.monotonic()
        result = subprocess.run([*IRW, "--db", str(db), "--wait", "0.5", "load", "runs",
                                 str(FIXTURE_RUNS / "beta1.txt")], capture_output=True, text=True)
        assert result.returncode == 1 and time.monotonic() - started >= 0.5
        assert result.stderr.strip() == (f"error: the warehouse {db} is being created by another process "
                                         "(its first load); waited 0.5 s. Try again when it is done, or "
                                         "wait longer (--wait SECONDS)")
        waiting = subprocess.Popen([*IRW, "--db", str(db), "--wait", "60", "load", "runs",
                                    str(FIXTURE_RUNS / "beta1.txt")], stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)
        assert waiting.poll() is None and not db.exists()
    finally:
        os.close(fd)  # the "creation" ends
    assert waiting.wait(timeout=120) == 0, waiting.stderr.read()
    assert _loaded(db) == ["beta1"]


# ------------------------------------------------------------------ a full TMPDIR

FULL = """
mount -t tmpfs -o size=256k tmpfs "$T" || exit 77
head -c $((256 * 1024 - 4 * 1024)) /dev/zero > "$T/fill"
export TMPDIR="$T"
"$@"
"""


def test_a_full_tmpdir_breaks_no_command_that_needs_it_not_and_is_named(tmp_path):
    """TMPDIR on a disk with a few kilobytes left (a small file system of its own, mounted
    where the system lets an unprivileged user do so): a query that needs no temporary file
    runs (the template cache and irw's marker are done without), and a load that must
    decompress into TMPDIR names the directory."""
    db = tmp_path / "w.duckdb"
    cli_for(str(db))("load", "qrels", Path(__file__).resolve().parents[1] / "fixtures" / "qrels.txt",
                     "--name", "fixture")
    full = tmp_path / "full"
    full.mkdir()
    env = {**os.environ, "T": str(full), "PYTHONPATH": str(Path(__file__).resolve().parents[1])}

    def under_full_tmpdir(*args):
        try:
            return subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", FULL,
                                   "sh", *IRW, "--db", str(db), *args], env=env, capture_output=True,
                                  text=True, timeout=300)
        except OSError as exc:
            pytest.skip(f"cannot run unshare to mount a small file system: {exc}")

    result = under_full_tmpdir("sql", "SELECT 42 AS answer")
    if result.returncode == 77 or "unshare" in result.stderr[:200]:
        pytest.skip(f"this system lets no unprivileged mount of a small file system: {result.stderr[:200]}")
    assert result.returncode == 0 and "42" in result.stdout, result.stderr
    result = under_full_tmpdir("load", "runs", str(FIXTURE_RUNS / "gamma1.txt.gz"))
    assert result.returncode == 1
    assert f"no space left in {full}/irw-{os.getuid()}/" in result.stderr, result.stderr
    assert "TMPDIR" in result.stderr and "Errno" not in result.stderr
