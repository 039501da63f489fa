"""The warehouse with other DuckDB clients: the oldest DuckDB that reads what irw writes
(connection.OLDEST_READER) and the release before it, the oldest DuckDB irw runs on (the
lower end of pyproject's ``duckdb`` range), each in its own environment, and the DuckDB CLI
of the ``duckdb-cli`` package.

The clients are installed from the package registry with ``pip install --target`` into
pytest's cache directory (once; a later run reuses them), and run in subprocesses with that
directory first on ``PYTHONPATH``, so they import the old ``duckdb`` and everything else from
this environment. Without the registry the tests are skipped -- unless
``IRW_REQUIRE_SHARED_DATA=1`` (CI), which makes them fail.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import duckdb
import pytest

import sql_probe
from conftest import CLI, FIXTURES, ROOT, cli_for, installed

from irwarehouse import connection

OLD_DUCKDB = "1.4.4"  # the lower end of the duckdb range in pyproject.toml
READER = connection.OLDEST_READER  # the oldest DuckDB that reads what irw writes
BEFORE_READER = "1.4.1"  # the release before READER
TESTS = Path(__file__).resolve().parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def duckdb_env(request, version: str) -> dict:
    """The environment of a subprocess that imports duckdb ``version`` (and irwarehouse from
    this checkout)."""
    target = installed(request, f"duckdb=={version}")
    path = os.pathsep.join([str(target), str(ROOT), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path}


@pytest.fixture(scope="session")
def old_duckdb(request) -> dict:
    return duckdb_env(request, OLD_DUCKDB)


def _python(env: dict, *args: str, cwd=None) -> dict:
    r = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, cwd=cwd,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _probe(target: str) -> dict:
    con = sql_probe.open_target(target)
    try:
        return sql_probe.probe(con)
    finally:
        con.close()


def test_supported_range_in_pyproject():
    """pyproject's duckdb range starts at OLD_DUCKDB (tested below) and holds the DuckDB
    this environment runs (its other end)."""
    from packaging.specifiers import SpecifierSet

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    (spec,) = [d[len("duckdb"):] for d in deps if re.match(r"duckdb\s*[<>=]", d)]
    spec = SpecifierSet(spec)
    assert f">={OLD_DUCKDB}" in {str(s) for s in spec}
    assert duckdb.__version__ in spec and OLD_DUCKDB in spec


@pytest.fixture(scope="module")
def copies(sql_warehouse, tmp_path_factory) -> list[str]:
    """The fixture warehouse, its published copy and its export."""
    where = tmp_path_factory.mktemp("copies")
    published, exported = str(where / "dash.duckdb"), str(where / "export")
    invoke = cli_for(sql_warehouse)
    invoke("publish", published)
    invoke("export", exported)
    return [sql_warehouse, published, exported]


@pytest.mark.parametrize("version", [READER, OLD_DUCKDB])
def test_old_duckdb_reads_what_irw_writes(copies, request, version):
    """A warehouse written by this irw, its published copy and its export: every view and
    macro gives the same rows in DuckDB ``version`` as here -- the oldest release that reads
    them (READER, the version the documents name), and the oldest irw runs on."""
    targets = copies
    old = _python(duckdb_env(request, version), str(TESTS / "sql_probe.py"), *targets)
    assert old["duckdb"] == version
    for target in targets:
        ours, theirs = _probe(target), old["targets"][target]
        assert ours["uncovered"] == [] and theirs["uncovered"] == []
        assert all(ours["results"].values()), "every probe has rows (else it proves nothing)"
        assert theirs["results"].keys() == ours["results"].keys(), target
        assert sql_probe.close(theirs["results"], ours["results"]) == [], target


BEFORE = """
import json, sys
import duckdb
con = duckdb.connect(sys.argv[1], read_only=True)
out = {"duckdb": duckdb.__version__, "runs": con.execute("SELECT count(*) FROM run_info").fetchone()[0]}
try:
    out["ap"] = len(con.execute("SELECT * FROM measure.AP('fixture')").fetchall())
except duckdb.Error as exc:
    out["error"] = str(exc).splitlines()[0]
print(json.dumps(out))
"""


def test_the_release_before_the_oldest_reader_fails(copies, request):
    """DuckDB BEFORE_READER opens a published copy but cannot run its measure macros, as the
    documents say: READER is the oldest release that reads what irw writes. (Should this
    fail, BEFORE_READER reads it too, and the oldest reader named in connection.OLDEST_READER
    and the documents may go down.)"""
    got = _python(duckdb_env(request, BEFORE_READER), "-c", BEFORE, copies[1])
    assert got["duckdb"] == BEFORE_READER and got["runs"] == 8
    assert "ap" not in got, f"DuckDB {BEFORE_READER} now runs the measure macros ({got['ap']} rows)"
    assert "Table with name wide does not exist" in got["error"], got["error"]


# "DuckDB 1.4 and later", "any DuckDB client from 1.4 on": a claim of the versions that read
# what irw writes
CLAIM = re.compile(r"\b(\d+\.\d+(?:\.\d+)?)\s+(?:and|or)\s+later\b|\bfrom\s+(\d+\.\d+(?:\.\d+)?)\s+on\b")


def test_every_claim_names_the_oldest_reader():
    """Every claim of the README, the guides and the package that DuckDB from some version on
    reads the warehouse names READER, the version tested above (irw publish says it too:
    tests/test_export.py)."""
    sources = DOCUMENTS + sorted((ROOT / "irwarehouse").rglob("*.py"))
    claims = []
    for path in sources:
        text = path.read_text(encoding="utf-8")
        for match in CLAIM.finditer(text):
            if "duckdb" in text[max(0, match.start() - 80):match.start()].lower():
                claims.append((path.relative_to(ROOT).as_posix(), match.group(0),
                               match.group(1) or match.group(2)))
    assert len(claims) >= 6, claims  # README, sql-and-bi (2), commands, export.py, cli/export.py
    assert [c for c in claims if c[2] != READER] == []


# irw itself, step by step: (label, arguments; {db}, {fixtures} filled in). JSON steps are compared.
STEPS = [
    ("load qrels", ["load", "qrels", "{fixtures}/qrels.txt", "--name", "fixture"]),
    ("load runs", ["load", "runs", "{fixtures}/runs", "--meta", "{fixtures}/runs.tsv"]),
    ("eval", ["eval", "-m", "AP", "-m", "P@10", "-m", "nDCG(discount=jk)@10", "-m", "RBP(p=0.8)",
              "-m", "RBPres(p=0.8)", "-m", "Bpref", "--per-topic", "--format", "json"]),
    ("leave-out", ["pool", "leave-out", "--team", "alpha", "--runs", "pooled", "--depth", "10"]),
    ("eval leave-out", ["eval", "-m", "AP", "-m", "P@10", "--qrels", "fixture-lo-alpha",
                        "--per-topic", "--format", "json"]),
    ("multiplicity", ["pool", "stats", "multiplicity", "--runs", "pooled", "--depth", "10",
                      "--format", "json"]),
    ("compare", ["compare", "alpha1", "gamma2", "-m", "AP", "--test", "t", "--format", "json"]),
    ("factors", ["standardize", "factors", "-m", "AP", "--name", "self", "--format", "json"]),
    ("export", ["export", "export"]),
    ("publish", ["publish", "published.duckdb"]),
]
DRIVER = """
import json, sys
import duckdb
from typer.testing import CliRunner
from irwarehouse.cli import app
db, fixtures, steps = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
out = {"duckdb": duckdb.__version__, "steps": {}}
for label, args in steps:
    r = CliRunner().invoke(app, ["--db", db, *[a.format(fixtures=fixtures) for a in args]])
    out["steps"][label] = {"exit": r.exit_code, "stdout": r.stdout,
                           "error": repr(r.exception) if r.exit_code else None}
print(json.dumps(out))
"""


def test_irw_runs_under_old_duckdb(old_duckdb, tmp_path):
    """irw loads, evaluates, pools, exports and publishes the fixtures under DuckDB
    OLD_DUCKDB with the same numbers as here, and the warehouses both write hold the same."""
    env_now = {**os.environ,
               "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    runs = {}
    with ThreadPoolExecutor(2) as pool:
        for name, env in (("old", old_duckdb), ("now", env_now)):
            work = tmp_path / name
            work.mkdir()
            runs[name] = pool.submit(_python, env, "-c", DRIVER, "irw.duckdb", str(FIXTURES),
                                     json.dumps(STEPS), cwd=work)
    old, now = runs["old"].result(), runs["now"].result()
    assert old["duckdb"] == OLD_DUCKDB and now["duckdb"] == duckdb.__version__
    for label, _ in STEPS:
        a, b = old["steps"][label], now["steps"][label]
        assert a["exit"] == 0 and b["exit"] == 0, (label, a, b)
        if a["stdout"].lstrip().startswith("["):
            x, y = json.loads(a["stdout"]), json.loads(b["stdout"])
            assert x and sql_probe.close(x, y) == [], label
    con = duckdb.connect(str(tmp_path / "old" / "irw.duckdb"), read_only=True)
    assert connection.storage_version(con) == "v1.4.0+"
    con.close()
    for target in ("irw.duckdb", "published.duckdb", "export"):
        x, y = _probe(str(tmp_path / "old" / target)), _probe(str(tmp_path / "now" / target))
        assert x["results"].keys() == y["results"].keys()
        assert sql_probe.close(x["results"], y["results"]) == [], target


def _as_in(got, expected):
    """The CLI's JSON writes BIGINT values as strings: read them as the numbers they are
    where the reference has a number."""
    if isinstance(expected, list) and isinstance(got, list) and len(got) == len(expected):
        return [_as_in(g, e) for g, e in zip(got, expected)]
    if isinstance(expected, dict) and isinstance(got, dict):
        return {k: _as_in(g, expected.get(k)) for k, g in got.items()}
    if isinstance(got, str) and not isinstance(expected, (str, bool)) and expected is not None:
        return type(expected)(got)
    return got


def _cli_rows(binary: str, database: str, sql: str, *options: str, cwd=None) -> list[list]:
    r = subprocess.run([binary, "-no-init", *options, "-json", database, "-c", sql],
                       capture_output=True, text=True, timeout=120, cwd=cwd)
    assert r.returncode == 0, f"{sql}: {r.stderr}"
    return [list(row.values()) for row in json.loads(r.stdout or "[]")]


def test_duckdb_cli_reads_what_irw_writes(sql_warehouse, duckdb_cli, tmp_path):
    """The DuckDB CLI opens the warehouse and its published copy and runs every view and
    macro probe with the same rows; it recreates the warehouse from an export; and the
    README's example command works."""
    version = subprocess.run([duckdb_cli, "-version"], capture_output=True, text=True).stdout
    assert version.startswith(f"v{CLI}")
    published, exported = str(tmp_path / "dash.duckdb"), tmp_path / "export"
    invoke = cli_for(sql_warehouse)
    invoke("publish", published)
    invoke("export", exported, "--format", "csv")
    con = duckdb.connect(sql_warehouse, read_only=True)
    probes, uncovered = sql_probe.queries(con)
    expected = sql_probe.run(con, probes)
    con.close()
    assert uncovered == [] and all(expected.values())
    for database in (sql_warehouse, published):
        got = {name: _cli_rows(duckdb_cli, database, sql, "-readonly") for name, sql in probes.items()}
        assert sql_probe.close(_as_in(got, expected), expected) == [], database
    # an export, in a new database, from its directory and from anywhere
    for name in ("view score_means", "macro main.unique_contributions"):
        script = f".read schema.sql\n.read load.sql\n{probes[name]};"
        got = subprocess.run([duckdb_cli, "-no-init", "-json", ":memory:"], input=script,
                             capture_output=True, text=True, cwd=exported, timeout=120)
        assert got.returncode == 0, got.stderr
        rows = [list(r.values()) for r in json.loads(got.stdout)]
        assert sql_probe.close(_as_in(rows, expected[name]), expected[name]) == [], name
        imported = _cli_rows(duckdb_cli, ":memory:", f"IMPORT DATABASE '{exported}'; {probes[name]}")
        assert sql_probe.close(_as_in(imported, expected[name]), expected[name]) == [], name
    # the README: "The same database file works without irwarehouse" (opened for writing)
    team_ap = _cli_rows(duckdb_cli, published,
                        "SELECT team, avg(value) FROM scores JOIN run_info USING (run_id) "
                        "WHERE measure = 'AP' AND qrels = 'fixture' GROUP BY team ORDER BY team")
    assert [t for t, _ in team_ap] == ["alpha", "beta", "delta", "gamma"]
