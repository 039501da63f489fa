"""Shared fixtures.

Tests that need the shared real data (TREC-8, trec_eval's test suite) read it from
``../shared/data`` next to the project (or ``$IRW_SHARED_DATA``). Without it they are
skipped -- unless ``IRW_REQUIRE_SHARED_DATA=1`` (set by CI), which makes them fail.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
SHARED = Path(os.environ.get("IRW_SHARED_DATA", ROOT.parent / "shared" / "data"))


# The test files that take minutes, longest first. They start first: with a file to a worker
# (`--dist loadfile`), a long file scheduled last keeps one worker busy after the others
# have finished (pytest-xdist otherwise orders files by their number of tests).
LONGEST_FIRST = ("test_docs.py", "test_spark.py", "test_one_door.py", "test_clients.py",
                 "test_sql_product.py", "test_trec8.py", "test_eval_files.py", "test_safety.py")


def pytest_configure(config):
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False  # keep the order below


def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the rest as collected


def unavailable(message: str):
    """Skip the test for want of something outside the project (shared data, a package
    registry, a browser, Java), saying what -- or fail it where that is required
    (``IRW_REQUIRE_SHARED_DATA=1``: CI)."""
    if os.environ.get("IRW_REQUIRE_SHARED_DATA") == "1":
        pytest.fail(message + " -- IRW_REQUIRE_SHARED_DATA=1 requires it")
    pytest.skip(message)


def _shared(sub: str) -> Path:
    path = SHARED / sub
    if not path.exists():
        unavailable(f"shared data {path} is absent (it is not part of the project; "
                    "set IRW_SHARED_DATA to its location)")
    return path


@pytest.fixture(scope="session")
def trec_eval_suite() -> Path:
    return _shared("trec_eval_test")


@pytest.fixture(scope="session")
def trec8() -> Path:
    return _shared("trec8")


@pytest.fixture(scope="session")
def trec_eval_10(request, tmp_path_factory) -> str:
    """trec_eval 10.0's binary, built once from its source in ``../shared/tools`` (the
    reference for ``irw trec-eval``; never part of the project) into pytest's cache; test
    workers take turns building it."""
    source = SHARED.parent / "tools" / "trec_eval-10.0.tar.gz"
    if not source.exists():
        unavailable(f"trec_eval 10.0's source {source} is absent (it is not part of the "
                    "project; set IRW_SHARED_DATA to the shared data beside it)")
    if getattr(request.config, "cache", None) is not None:
        cache = Path(request.config.cache.mkdir("irw-trec-eval-10"))
    else:
        cache = tmp_path_factory.mktemp("irw-trec-eval-10")
    binary = cache / "trec_eval" / "trec_eval"
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not binary.exists():
            shutil.rmtree(cache / "trec_eval", ignore_errors=True)
            try:
                subprocess.run(["tar", "xzf", str(source), "-C", str(cache)], check=True,
                               capture_output=True, timeout=120)
                subprocess.run(["make", "-C", str(cache / "trec_eval")], check=True,
                               capture_output=True, timeout=600)
            except (OSError, subprocess.SubprocessError) as exc:
                detail = getattr(exc, "stderr", b"") or b""
                unavailable(f"cannot build trec_eval 10.0 from {source}: {exc} "
                            f"{detail.decode(errors='replace')[-300:]}")
    return str(binary)


@pytest.fixture()
def con():
    from irwarehouse import schema

    connection = schema.connect(":memory:")
    yield connection
    connection.close()


def cli_for(path: str):
    """``invoke(*args, ok=True)`` runs the real CLI in-process on the warehouse ``path``;
    with ``ok`` a failing command fails the test with its output."""
    from irwarehouse.cli import app

    runner = CliRunner()

    def invoke(*args, ok=True):
        result = runner.invoke(app, ["--db", path, *map(str, args)])
        if ok and result.exit_code != 0:
            raise AssertionError(f"irw {' '.join(map(str, args))} failed ({result.exit_code}):\n"
                                 f"{result.output}\n{result.exception!r}")
        return result

    invoke.db_path = path
    return invoke


@pytest.fixture()
def cli(tmp_path):
    """Run the real CLI in-process against a warehouse file in a temporary directory."""
    return cli_for(str(tmp_path / "test.duckdb"))


@pytest.fixture(scope="module")
def evaluated_fixtures(tmp_path_factory) -> Path:
    """A warehouse file with the fixture collection loaded (qrels ``fixture``, the runs with
    their metadata) and AP and P@10 evaluated, once per test module: tests copy it."""
    path = tmp_path_factory.mktemp("fixtures") / "w.duckdb"
    cli = cli_for(str(path))
    cli("load", "qrels", FIXTURES / "qrels.txt", "--name", "fixture")
    cli("load", "runs", FIXTURES / "runs", "--meta", FIXTURES / "runs.tsv")
    cli("eval", "-m", "AP", "-m", "P@10")
    return path


@pytest.fixture(scope="session")
def trec8_db(trec8, tmp_path_factory):
    """A warehouse holding the full TREC-8 runset and qrels (loaded once per test session),
    its base materialized with the ties of its documents, as a first evaluation under tie
    policy expected leaves it (tests open it read-only)."""
    from irwarehouse import schema
    from irwarehouse.engine import base, loading

    path = str(tmp_path_factory.mktemp("trec8") / "trec8.duckdb")
    con = schema.connect(path)
    loading.load_qrels(con, [str(trec8 / "qrels.trec8.gz")], "trec8")
    loading.load_runs(con, [str(trec8 / "runs")], meta=str(trec8 / "runs.tsv"))
    base.ensure_base(con, "trec8")
    base.ensure_ties(con, "trec8")
    con.close()
    return path


def error_of(result) -> str:
    """The error a failed command printed: exactly one line ``error: ...``."""
    lines = result.stderr.strip().splitlines()
    assert result.exit_code != 0, result.output
    assert lines and lines[-1].startswith("error: "), result.stderr
    assert len([line for line in lines if line.startswith("error: ")]) == 1, result.stderr
    assert "Traceback" not in result.output
    return lines[-1]


@pytest.fixture(scope="session")
def trec8_db_9(trec8_db, tmp_path_factory):
    """The TREC-8 warehouse with every run ranked under trec_eval_9 (scores compared as 32-bit
    floats, as trec_eval 9 and pytrec_eval compare them): a copy of trec8_db whose runs'
    policy is set with SQL, which irw ranks again under it."""
    import shutil

    from irwarehouse import Warehouse

    path = str(tmp_path_factory.mktemp("trec8_9") / "trec8.duckdb")
    shutil.copyfile(trec8_db, path)
    with Warehouse(path) as w:
        w.sql("UPDATE run_loads SET ranking_policy = 'trec_eval_9'", write=True)
    return path


def snapshot(path: str) -> dict:
    """Row count and content hash of every table of the warehouse file ``path``."""
    import duckdb

    con = duckdb.connect(path, read_only=True)
    try:
        tables = [r[0] for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' "
            "AND table_type = 'BASE TABLE' ORDER BY 1").fetchall()]
        return {t: con.execute(f'SELECT count(*), sum(hash(t))::VARCHAR FROM "{t}" AS t').fetchone()
                for t in tables}
    finally:
        con.close()


def generated_diversity(seed: int) -> tuple[list[str], list[str]]:
    """Diversity judgments (qrels lines) of 12 topics, 3-8 intents each: one topic with no
    relevant document, intents with none, grades 0-2 and -1; and run lines of 4 runs with
    tied scores and unjudged documents, one topic missing from a run."""
    rng = random.Random(seed)
    qrels, runs = [], []
    for t in range(1, 13):
        intents = rng.randint(3, 8)
        docs = [f"D{t}-{i}" for i in range(rng.randint(5, 40))]
        barren = {rng.randint(1, intents)} if t % 3 else set()
        for d in docs:
            for j in rng.sample(range(1, intents + 1), rng.randint(1, intents)):
                rel = 0 if t == 1 or j in barren else rng.choice([0, 0, 1, 1, 2, -1])
                qrels.append(f"{t} {j} {d} {rel}")
        for r in range(4):
            if r == 3 and t == 5:
                continue
            pool = docs + [f"U{t}-{i}" for i in range(10)]
            chosen = rng.sample(pool, min(len(pool), rng.randint(1, 30)))
            for rank, d in enumerate(chosen, 1):
                runs.append(f"{t} Q0 {d} {rank} {rng.randint(0, 6)} run{r}")
    return qrels, runs


def build_sql_warehouse(invoke) -> None:
    """Fill a warehouse with something in every public table and view: the fixtures loaded,
    scores for two qrels, a derived qrels, a factor set and saved test results; the fixture
    qrels also read as one judgment group (``--format jg``, last: commands that take the only
    qrels come before), which the preference measures read (qrels_prefs)."""
    invoke("load", "qrels", FIXTURES / "qrels.txt", "--name", "fixture")
    invoke("load", "runs", FIXTURES / "runs", "--meta", FIXTURES / "runs.tsv")
    invoke("eval", "-m", "AP", "-m", "P@10", "-m", "nDCG(discount=jk)@10", "-m", "RBP(p=0.8)",
           "-m", "Bpref")
    invoke("pool", "leave-out", "--team", "alpha", "--runs", "pooled", "--depth", "10")
    invoke("eval", "-m", "AP", "-m", "P@10", "--qrels", "fixture-lo-alpha")
    invoke("standardize", "factors", "-m", "AP", "--name", "self")
    invoke("discpower", "-m", "AP", "--test", "t", "--save", "fixture-t")
    invoke("pvalues", "-m", "AP", "--save", "fixture-ap")
    invoke("correlate", "--matrix", "-m", "AP", "-m", "P@10", "--save", "fixture-matrix")
    invoke("load", "qrels", FIXTURES / "qrels.txt", "--name", "fixture-jg", "--format", "jg")


@pytest.fixture(scope="session")
def sql_warehouse(tmp_path_factory) -> str:
    """A fixture warehouse file written by the current irw, for tests that only read it."""
    path = str(tmp_path_factory.mktemp("sql_warehouse") / "fixture.duckdb")
    build_sql_warehouse(cli_for(path))
    return path


# ------------------------------------------------------------ other DuckDB clients

CLI = "1.5.6"  # the newest duckdb-cli on the package registry


def installed(request, *requirements: str) -> Path:
    """``requirements`` installed (without dependencies: pinned, e.g. by :func:`resolved`)
    into a directory of their own in pytest's cache, once (test workers take turns)."""
    if getattr(request.config, "cache", None) is not None:
        cache = Path(request.config.cache.mkdir("irw-clients"))
    else:  # pytest's cache is switched off: install afresh for this session
        cache = request.getfixturevalue("tmp_path_factory").mktemp("irw-clients")
    name = re.sub(r"[^A-Za-z0-9.]+", "-", "+".join(requirements))
    if len(name) > 100:
        name = name[:80] + "-" + hashlib.sha1(name.encode()).hexdigest()[:12]
    target = cache / name
    done = target / ".installed"
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            _install(requirements, target)
            done.touch()
    return target


def _pip(*args: str, what: str) -> subprocess.CompletedProcess:
    """pip with ``args``; for want of the package registry the test is skipped (or fails in
    CI: :func:`unavailable`)."""
    try:
        r = subprocess.run([sys.executable, "-m", "pip", *args, "--disable-pip-version-check"],
                           capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        unavailable(f"cannot run pip to {what}: {exc}")
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["no output"])[-1]
        unavailable(f"cannot {what} from the package registry: {last}")
    return r


def _install(requirements, target: Path) -> None:
    shutil.rmtree(target, ignore_errors=True)
    _pip("install", "--quiet", "--no-deps", "--target", str(target), *requirements,
         what=f"install {' '.join(requirements)}")


_resolved: dict[tuple, list[str]] = {}


def resolved(*requirements: str) -> list[str]:
    """What pip picks today for ``requirements`` in a new environment: every package it
    would install, ``name==version`` (asks the package registry, once a session)."""
    if requirements not in _resolved:
        r = _pip("install", "--dry-run", "--ignore-installed", "--quiet", "--report", "-",
                 *requirements, what=f"resolve {' '.join(requirements)}")
        report = json.loads(r.stdout)
        _resolved[requirements] = sorted(f"{p['metadata']['name']}=={p['metadata']['version']}"
                                         for p in report["install"])
    return _resolved[requirements]


@pytest.fixture(scope="session")
def duckdb_cli(request) -> str:
    """The DuckDB CLI of the ``duckdb-cli`` package (version CLI)."""
    binary = installed(request, f"duckdb-cli=={CLI}") / "duckdb_cli" / "duckdb"
    if not binary.exists():
        pytest.fail(f"duckdb-cli {CLI} has no binary at {binary}")
    return str(binary)


# ----------------------------------------------------------------- rank correlations by hand

def strict_orders(v):
    """Every strict ranking (item indices, top first) that breaks the ties of the scores v."""
    import itertools

    import numpy as np

    v = np.asarray(v)
    groups = [np.flatnonzero(v == value).tolist() for value in sorted(set(v.tolist()), reverse=True)]
    for combo in itertools.product(*(itertools.permutations(g) for g in groups)):
        yield [item for group in combo for item in group]


def tie_breakings(v) -> int:
    """How many strict rankings break the ties of the scores v."""
    import math

    import numpy as np

    return int(np.prod([math.factorial(c) for c in np.unique(v, return_counts=True)[1]]))


def yilmaz_tau_ap(reference, order):
    """tau_AP (Yilmaz, Aslam, Robertson 2008) of the strict ranking ``order`` against the
    strict ranking ``reference`` (item indices, top first), from its definition."""
    above = {item: r for r, item in enumerate(reference)}
    total = sum(sum(above[v] < above[order[i]] for v in order[:i]) / i for i in range(1, len(order)))
    return 2 * total / (len(order) - 1) - 1


def expected_tau_ap(reference_scores, scores):
    """tau_AP of the scores against the reference scores (higher = top) when ties are broken
    at random: the mean of :func:`yilmaz_tau_ap` over every way to break them."""
    import numpy as np

    return float(np.mean([yilmaz_tau_ap(a, b) for a in strict_orders(reference_scores)
                          for b in strict_orders(scores)]))

