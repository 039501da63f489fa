"""The warehouse with other DuckDB clients: the oldest supported DuckDB (the lower end of
pyproject's ``duckdb`` range) in its own environment, and the DuckDB CLI of the
``duckdb-cli`` package.

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

OLD_DUCKDB = "1.4.4"  # the lower end of the duckdb range in pyproject.toml
TESTS = Path(__file__).resolve().parent


@pytest.fixture(scope="session")
def old_duckdb(request) -> dict:
    """The environment of a subprocess that imports duckdb OLD_DUCKDB (and irwarehouse from
    this checkout)."""
    target = installed(request, f"duckdb=={OLD_DUCKDB}")
    path = os.pathsep.join([str(target), str(ROOT), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path}


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


def test_old_duckdb_reads_what_irw_writes(sql_warehouse, old_duckdb, tmp_path):
    """A warehouse written by this irw, its published copy and its export: every view and
    macro gives the same rows in DuckDB OLD_DUCKDB as here."""
    published, exported = str(tmp_path / "dash.duckdb"), str(tmp_path / "export")
    invoke = cli_for(sql_warehouse)
    invoke("publish", published)
    invoke("export", exported)
    targets = [sql_warehouse, published, exported]
    old = _python(old_duckdb, str(TESTS / "sql_probe.py"), *targets)
    assert old["duckdb"] == OLD_DUCKDB
    for target in targets:
        ours, theirs = _probe(target), old["targets"][target]
        assert ours["uncovered"] == [] and theirs["uncovered"] == []
        assert all(ours["results"].values()), "every probe has rows (else it proves nothing)"
        assert theirs["results"].keys() == ours["results"].keys(), target
        assert sql_probe.close(theirs["results"], ours["results"]) == [], target


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
    from irwarehouse import connection

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
