"""One door: every ``irw`` command is a thin layer over one public method.

For every command of the command line, the same work through the Python API gives the same
result: the command's ``--format json`` output equals the method's table, and a command
that changes the warehouse or writes files leaves the same tables (times aside) and the same
files as the method does on a copy. :func:`test_every_command_is_covered` keeps the list
complete: a new command without a case here fails it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest

from conftest import FIXTURES, build_sql_warehouse, cli_for
from irwarehouse import Warehouse, output
from irwarehouse.cli import app

# ------------------------------------------------------------------------- helpers


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> str:
    """The fixture warehouse of the SQL product (conftest.build_sql_warehouse) with two topic
    splits and two systems of two runs each, built once; each test works on a copy."""
    import pandas as pd

    path = str(tmp_path_factory.mktemp("door") / "w.duckdb")
    build_sql_warehouse(cli_for(path))
    with Warehouse(path) as w:
        w.split("fixture", "h1", half=1, rest="h2")
        w.load_meta(pd.DataFrame({"run_id": ["alpha1", "alpha2", "beta1", "beta2"],
                                  "system": ["alpha", "alpha", "beta", "beta"]}))
    return path


@pytest.fixture(scope="module")
def bare(tmp_path_factory) -> str:
    """A warehouse with the fixtures' qrels and runs only."""
    path = str(tmp_path_factory.mktemp("bare") / "w.duckdb")
    invoke = cli_for(path)
    invoke("load", "qrels", FIXTURES / "qrels.txt", "--name", "fixture")
    invoke("load", "runs", FIXTURES / "runs", "--meta", FIXTURES / "runs.tsv")
    return path


def copies(source: str | None, tmp_path: Path) -> tuple[str, str]:
    """Two copies of the warehouse ``source`` (two new paths when None): the command's and
    the method's."""
    paths = []
    for side in ("cli", "api"):
        (tmp_path / side).mkdir()
        path = str(tmp_path / side / "w.duckdb")
        if source is not None:
            shutil.copy(source, path)
        paths.append(path)
    return paths[0], paths[1]


def content(path: str) -> dict:
    """Every base table's rows, sorted, without its time columns (when a row was written
    differs between two runs of the same work)."""
    con = duckdb.connect(path, read_only=True)
    try:
        tables = [r[0] for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' "
            "AND table_type = 'BASE TABLE' ORDER BY 1").fetchall()]
        out = {}
        for table in tables:
            columns = [r[0] for r in con.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = 'main' "
                "AND table_name = ? AND data_type NOT LIKE 'TIMESTAMP%' ORDER BY ordinal_position",
                [table]).fetchall()]
            cols = ", ".join(f'"{c}"' for c in columns)
            out[table] = con.execute(f'SELECT {cols} FROM "{table}" ORDER BY ALL').fetchall()
        return out
    finally:
        con.close()


def table_of(result) -> list:
    """What ``--format json`` prints for a method's result (a Result, records or a list)."""
    records = result.records() if hasattr(result, "records") else result
    if getattr(result, "info", None):  # scores: each record with its run's order and tie policy
        records = output.with_ranking(records, result.info)
    return json.loads(output.to_json(records))


def files_of(directory: Path) -> dict:
    """The files under ``directory`` by relative path, with their bytes."""
    return {str(p.relative_to(directory)): p.read_bytes()
            for p in sorted(directory.rglob("*")) if p.is_file()}


# ------------------------------------------------------------------ commands that read

READS = {
    "eval": (["eval", "-m", "AP", "-m", "P@10", "--no-store"],
             lambda w: w.eval(["AP", "P@10"], per_topic=False, store=False)),
    "eval --per-topic": (["eval", "-m", "nDCG@5", "--per-topic", "--runs", "team:alpha", "--no-store"],
                         lambda w: w.eval(["nDCG@5"], runs="team:alpha", store=False)),
    "eval several qrels": (["eval", "-m", "AP", "--qrels", "fixture,fixture-lo-alpha", "--no-store"],
                           lambda w: w.eval("AP", "fixture,fixture-lo-alpha", per_topic=False, store=False)),
    "eval files": (["eval", FIXTURES / "qrels.txt", FIXTURES / "runs", "-m", "AP", "--per-topic"],
                   lambda w: Warehouse.eval_files(FIXTURES / "qrels.txt", [FIXTURES / "runs"], "AP")),
    "sql": (["sql", "SELECT run_id, count(*) AS n FROM runs GROUP BY ALL ORDER BY ALL"],
            lambda w: w.sql("SELECT run_id, count(*) AS n FROM runs GROUP BY ALL ORDER BY ALL")),
    "measures": (["measures"], lambda w: Warehouse.measures()),
    "compare": (["compare", "alpha1", "beta1", "-m", "AP", "-m", "P@10", "--test", "t", "--test", "wilcoxon"],
                lambda w: w.compare("alpha1", "beta1", ["AP", "P@10"], tests=["t", "wilcoxon"])),
    "discpower": (["discpower", "-m", "AP", "-m", "P@10", "--test", "randomization", "-B", "200"],
                  lambda w: w.discpower(["AP", "P@10"], test="randomization", B=200)),
    "pvalues": (["pvalues", "-m", "AP", "--correction", "holm"],
                lambda w: w.pvalues("AP", correction="holm")),
    "correlate": (["correlate", "-m", "AP", "-m", "P@10"], lambda w: w.correlate("AP", "P@10")),
    "correlate --matrix": (["correlate", "--matrix", "-m", "AP", "-m", "RR", "-q", "fixture", "-q", "fixture-lo-alpha"],
                           lambda w: w.correlation_matrix(["AP", "RR"], ["fixture", "fixture-lo-alpha"])),
    "correlate --matrix --condition": (["correlate", "--matrix", "-c", "AP@5:fixture-lo-alpha", "-c", "RR:fixture",
                                        "-c", "AP:fixture", "--of", "pvalues", "-s", "tau_ap", "--layout", "lower"],
                                       lambda w: w.correlation_matrix(conditions=["AP@5:fixture-lo-alpha", "RR:fixture",
                                                                                  "AP:fixture"],
                                                                      of="pvalues", statistics=["tau_ap"])),
    "ci": (["ci", "-m", "AP", "--level", "0.9"], lambda w: w.ci("AP", level=0.9)),
    "ci --by system": (["ci", "-m", "AP", "--by", "system"], lambda w: w.ci("AP", by="system")),
    "eval --by system": (["eval", "-m", "AP", "-m", "P@10", "--by", "system", "--no-store"],
                         lambda w: w.eval(["AP", "P@10"], per_topic=False, by="system", store=False)),
    "eval --per-topic --by system": (["eval", "-m", "AP", "--per-topic", "--by", "system", "--no-store"],
                                     lambda w: w.eval("AP", by="system", store=False)),
    "pvalues --by system": (["pvalues", "-m", "AP", "--by", "system", "--level", "0.9", "--test", "bootstrap",
                             "-B", "200"],
                            lambda w: w.pvalues("AP", by="system", level=0.9, test="bootstrap", B=200)),
    "compare --by system": (["compare", "alpha", "beta", "-m", "AP", "--by", "system", "--test", "randomization",
                             "-B", "300"],
                            lambda w: w.compare("alpha", "beta", "AP", by="system", tests="randomization", B=300)),
    "discpower --by system": (["discpower", "-m", "AP", "--by", "system", "--test", "tukey", "-B", "200"],
                              lambda w: w.discpower("AP", by="system", test="tukey", B=200)),
    "power": (["power", "-m", "AP", "-m", "P@10", "--delta", "0.05", "--delta", "0.1", "--anova"],
              lambda w: w.power(["AP", "P@10"], [0.05, 0.1], anova=True)),
    "summary": (["summary", "-m", "AP", "-m", "P@10", "--by", "topic"],
                lambda w: w.summary(["AP", "P@10"], by="topic")),
    "runs list": (["runs", "list"], lambda w: w.runs()),
    "runs deeply-judged": (["runs", "deeply-judged", "--depth", "2"],
                           lambda w: [{"run_id": r} for r in w.deeply_judged(depth=2)]),
    "qrels list": (["qrels", "list"], lambda w: w.qrels()),
    "qrels compare": (["qrels", "compare", "fixture", "fixture-lo-alpha", "--rel-level", "2"],
                      lambda w: w.compare_qrels("fixture", "fixture-lo-alpha", rel_level=2)),
    "qrels compare --show confusion": (["qrels", "compare", "fixture", "fixture-lo-alpha", "--show", "confusion",
                                        "--per-topic"],
                                       lambda w: w.compare_qrels("fixture", "fixture-lo-alpha", "confusion",
                                                                 per_topic=True)),
    "qrels compare --show only-a": (["qrels", "compare", "fixture", "fixture-lo-alpha", "-s", "only-a"],
                                    lambda w: w.compare_qrels("fixture", "fixture-lo-alpha", "only-a")),
    "qrels rankings": (["qrels", "rankings", "fixture", "fixture-lo-alpha", "-m", "AP", "-m", "P@10",
                        "--show", "groups", "--permutations", "500", "--seed", "2"],
                       lambda w: w.compare_rankings("fixture", "fixture-lo-alpha", ["AP", "P@10"], what="groups",
                                                    permutations=500, seed=2)),
    "qrels rankings --show decisions": (["qrels", "rankings", "fixture", "fixture-lo-alpha", "-m", "AP",
                                         "--show", "decisions", "--test", "bootstrap", "-B", "200"],
                                        lambda w: w.compare_rankings("fixture", "fixture-lo-alpha", "AP",
                                                                     what="decisions", test="bootstrap", B=200)),
    "repro": (["repro", "alpha1", "alpha", "-m", "AP", "-m", "P@10", "--baseline", "gamma1",
               "--reproduced-baseline", "beta", "-q", "fixture"],
              lambda w: w.repro("alpha1", "alpha", ["AP", "P@10"], baseline="gamma1",
                                reproduced_baseline="beta", qrels="fixture")),
    "repro --show order": (["repro", "alpha1", "beta1", "-m", "AP", "-q", "fixture", "--show", "order",
                            "--per-topic"],
                           lambda w: w.repro("alpha1", "beta1", "AP", qrels="fixture", show="order",
                                             per_topic=True)),
    "repro --show spread": (["repro", "alpha1", "alpha", "-m", "AP", "-q", "fixture", "--show", "spread"],
                            lambda w: w.repro("alpha1", "alpha", "AP", qrels="fixture", show="spread")),
    "collections list": (["collections", "list"], lambda w: w.collections()),
    "standardize list": (["standardize", "list"], lambda w: w.factor_sets()),
    "standardize show": (["standardize", "show", "self"], lambda w: w.factors("self")),
    "splits list": (["splits", "list"], lambda w: w.splits()),
    **{f"pool stats {what}": (["pool", "stats", what, "--runs", "pooled", "--depth", "10"],
                              lambda w, what=what: w.pool_stats(what, runs="pooled", depth=10))
       for what in ("topics", "multiplicity", "teams", "unique", "judged", "collection", "qrels")},
}

# commands that read, but may evaluate runs not yet scored first (and so open for writing)
EVALUATING = {
    "standardize scores": (["standardize", "scores", "self", "--per-topic"],
                           lambda w: w.standardized_scores("self", per_topic=True)),
    "standardize reference-size": (["standardize", "reference-size", "-m", "AP", "--sizes", "2,3",
                                    "--samples", "30", "--seed", "4"],
                                   lambda w: w.reference_size("AP", sizes=[2, 3], samples=30, seed=4)),
    "splits compare": (["splits", "compare", "h1", "h2", "-m", "AP"],
                       lambda w: w.compare_splits("h1", "h2", "AP")),
    "splits compare --per-run": (["splits", "compare", "h1", "h2", "-m", "AP", "--per-run"],
                                 lambda w: w.compare_splits("h1", "h2", "AP", per_run=True)),
    "splits random": (["splits", "random", "fixture", "-m", "AP", "--splits", "30", "--seed", "2"],
                      lambda w: w.random_splits("AP", "fixture", splits=30, seed=2)),
    "ties": (["ties", "-m", "AP", "-m", "nDCG@10"], lambda w: w.ties(["AP", "nDCG@10"])),
}


@pytest.mark.parametrize("case", sorted(READS))
def test_reading_commands(warehouse, case):
    args, method = READS[case]
    result = cli_for(warehouse)(*args, "--format", "json")
    with Warehouse(warehouse, read_only=True) as w:
        expected = table_of(method(w))
    assert expected, f"{case}: no rows to compare"
    assert json.loads(result.stdout) == expected


@pytest.mark.parametrize("case", sorted(EVALUATING))
def test_evaluating_commands(warehouse, tmp_path, case):
    args, method = EVALUATING[case]
    a, b = copies(warehouse, tmp_path)
    result = cli_for(a)(*args, "--format", "json")
    with Warehouse(b) as w:
        expected = table_of(method(w))
    assert expected, f"{case}: no rows to compare"
    assert json.loads(result.stdout) == expected
    assert content(a) == content(b)


def test_eval_stores_as_the_method_does(warehouse, tmp_path):
    a, b = copies(warehouse, tmp_path)
    result = cli_for(a)("eval", "-m", "Q", "-m", "RBP(p=0.5)", "--runs", "pooled", "--format", "json")
    with Warehouse(b) as w:
        expected = table_of(w.eval(["Q", "RBP(p=0.5)"], runs="pooled", per_topic=False))
    assert json.loads(result.stdout) == expected
    assert content(a) == content(b)


def test_report(warehouse, tmp_path):
    """The paper table printed (markdown), and the page written (html)."""
    args = ["report", "-m", "AP", "-m", "P@10", "--test", "bootstrap", "-B", "200"]
    printed = cli_for(warehouse)(*args, "--format", "markdown").stdout
    with Warehouse(warehouse, read_only=True) as w:
        assert printed == w.report(["AP", "P@10"], test="bootstrap", B=200).render("markdown")
        w.report(["AP", "P@10"], test="bootstrap", B=200, format="html", out=tmp_path / "api.html")
    cli_for(warehouse)(*args, "--out", tmp_path / "cli.html")
    assert (tmp_path / "cli.html").read_text() == (tmp_path / "api.html").read_text()


def test_report_against(warehouse, tmp_path):
    """The page judging a second judgment set, written by the command and by the method."""
    args = ["report", "--qrels", "fixture", "--against", "fixture-lo-alpha", "-m", "AP", "--permutations", "500"]
    cli_for(warehouse)(*args, "--out", tmp_path / "cli.html")
    with Warehouse(warehouse, read_only=True) as w:
        w.report("AP", "fixture", against="fixture-lo-alpha", permutations=500, out=tmp_path / "api.html")
    assert (tmp_path / "cli.html").read_text() == (tmp_path / "api.html").read_text()


# ------------------------------------------------------------------ commands that change it

def _results(source: str, directory: Path) -> str:
    """Scores with their evaluations as `irw spark eval` writes them (Parquet), from the
    scores of ``source``."""
    directory.mkdir()
    con = duckdb.connect(source, read_only=True)
    try:
        where = "WHERE measure = 'AP' AND qrels = 'fixture'"
        con.execute(f"COPY (SELECT * FROM scores {where}) TO '{directory}/scores.parquet' (FORMAT parquet)")
        con.execute(f"COPY (SELECT * FROM evaluations {where}) TO '{directory}/evaluations.parquet' (FORMAT parquet)")
    finally:
        con.close()
    return str(directory)


WRITES = {
    "load qrels": (None, ["load", "qrels", FIXTURES / "qrels.txt", "--name", "q", "--description", "d"],
                   lambda w: w.load_qrels(str(FIXTURES / "qrels.txt"), "q", description="d")),
    "load runs": (None, ["load", "runs", FIXTURES / "runs", "--meta", FIXTURES / "runs.tsv", "--order", "given"],
                  lambda w: w.load_runs(str(FIXTURES / "runs"), meta=str(FIXTURES / "runs.tsv"), order="given")),
    "load meta": ("bare", ["load", "meta", FIXTURES / "runs.tsv"],
                  lambda w: w.load_meta(str(FIXTURES / "runs.tsv"))),
    "load collection": (None, ["load", "collection", FIXTURES, "--name", "fx"],
                        lambda w: w.load_collection(str(FIXTURES), "fx")),
    "runs drop": ("warehouse", ["runs", "drop", "delta2,team:gamma"],
                  lambda w: w.drop_runs("delta2,team:gamma")),
    "qrels drop": ("warehouse", ["qrels", "drop", "fixture-lo-alpha"],
                   lambda w: w.drop_qrels("fixture-lo-alpha")),
    "refresh": ("warehouse", ["refresh"], lambda w: w.refresh()),
    "sql --write": ("warehouse", ["sql", "--write", "UPDATE run_meta SET kind = 'manual' WHERE run_id = 'alpha1'"],
                    lambda w: w.sql("UPDATE run_meta SET kind = 'manual' WHERE run_id = 'alpha1'", write=True)),
    "pool depth": ("warehouse", ["pool", "depth", "--name", "d5", "--runs", "pooled", "--depth", "5"],
                   lambda w: w.pool("depth", "d5", runs="pooled", depth=5)),
    "pool shallow": ("warehouse", ["pool", "shallow", "--name", "s3", "--depth", "3", "--description", "x"],
                     lambda w: w.pool("shallow", "s3", depth=3, description="x")),
    "pool leave-out": ("warehouse", ["pool", "leave-out", "--all-teams", "--prefix", "lo-", "--depth", "10"],
                       lambda w: w.pool("leave-out", teams="all", prefix="lo-", depth=10)),
    "pool take": ("warehouse", ["pool", "take", "--team", "beta", "--team", "gamma", "--name", "bg"],
                  lambda w: w.pool("take", "bg", teams=["beta", "gamma"])),
    "standardize factors": ("warehouse", ["standardize", "factors", "-m", "AP", "-m", "nDCG@5", "--name", "f2",
                                          "--reference", "pooled"],
                            lambda w: w.standardize("f2", ["AP", "nDCG@5"], reference="pooled")),
    "standardize drop": ("warehouse", ["standardize", "drop", "self"], lambda w: w.drop_factors("self")),
    "splits make": ("warehouse", ["splits", "make", "fixture", "--name", "t", "--topics", "101-103", "--rest", "u"],
                    lambda w: w.split("fixture", "t", topics="101-103", rest="u")),
    "discpower --save": ("warehouse", ["discpower", "-m", "AP", "--save", "d"],
                         lambda w: w.discpower(["AP"], save="d")),
    "pvalues --save": ("warehouse", ["pvalues", "-m", "P@10", "--save", "p"],
                       lambda w: w.pvalues("P@10", save="p")),
    "discpower --save --by system": ("warehouse", ["discpower", "-m", "AP", "--by", "system", "--save", "ds",
                                                   "--level", "0.8"],
                                     lambda w: w.discpower(["AP"], by="system", save="ds", level=0.8)),
    "correlate --matrix --save": ("warehouse", ["correlate", "--matrix", "-m", "AP", "-m", "P@10", "--save", "m"],
                                  lambda w: w.correlation_matrix(["AP", "P@10"], save="m")),
}


@pytest.mark.parametrize("case", sorted(WRITES))
def test_changing_commands(request, tmp_path, case):
    source, args, method = WRITES[case]
    a, b = copies(request.getfixturevalue(source) if source else None, tmp_path)
    cli_for(a)(*args)
    with Warehouse(b) as w:
        method(w)
    assert content(a) == content(b)


def test_load_results(warehouse, bare, tmp_path):
    results = _results(warehouse, tmp_path / "results")
    a, b = copies(bare, tmp_path)
    assert "stored" in cli_for(a)("load", "results", results).output
    with Warehouse(b) as w:
        assert w.load_results(results)["scores"] > 0
    assert content(a) == content(b)


def test_standardize_export_and_import(warehouse, tmp_path):
    cli_for(warehouse)("standardize", "export", "self", tmp_path / "cli.csv")
    with Warehouse(warehouse, read_only=True) as w:
        w.export_factors("self", tmp_path / "api.csv")
    assert (tmp_path / "cli.csv").read_bytes() == (tmp_path / "api.csv").read_bytes()
    a, b = copies(warehouse, tmp_path)
    cli_for(a)("standardize", "import", tmp_path / "cli.csv", "--name", "again")
    with Warehouse(b) as w:
        w.import_factors(tmp_path / "cli.csv", name="again")
    assert content(a) == content(b)


def test_export_and_publish(warehouse, tmp_path):
    cli_for(warehouse)("export", tmp_path / "cli", "--format", "csv")
    cli_for(warehouse)("publish", tmp_path / "cli.duckdb")
    with Warehouse(warehouse, read_only=True) as w:
        w.export(tmp_path / "api", format="csv")
        w.publish(tmp_path / "api.duckdb")
    assert files_of(tmp_path / "cli") == files_of(tmp_path / "api")
    assert content(str(tmp_path / "cli.duckdb")) == content(str(tmp_path / "api.duckdb"))


EXPERIMENTS = {
    "depth-grid": (["--pool-depths", "5,10", "--eval-depths", "5,10"], {"pool_depths": "5,10", "eval_depths": "5,10"}),
    "bias": (["--parts", "a", "-m", "AP", "-m", "P@10", "-B", "100", "--pool-depth", "10"],
             {"parts": "a", "measure": ["AP", "P@10"], "samples": 100, "pool_depth": 10}),
    "uncertainty": (["--parts", "a", "--phis", "0.5,0.8"], {"parts": ["a"], "phis": ["0.5,0.8"]}),
    "agreement": (["--n", "4", "-m", "AP", "-m", "P@10"], {"n": ["4"], "measure": ["AP", "P@10"]}),
    "standardization": (["--splits", "20", "--sizes", "2,3", "--samples", "20"],
                        {"splits": 20, "sizes": "2,3", "samples": 20}),
    "judges": (["--against", "fixture-lo-alpha", "-m", "AP", "--samples", "200", "--permutations", "200"],
               {"against": "fixture-lo-alpha", "measure": ["AP"], "samples": 200, "permutations": 200}),
}


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_experiments(warehouse, tmp_path, name):
    """An experiment through the command line and through Warehouse.experiment: the same main
    table printed, the same tables written (figures are pictures of them)."""
    args, params = EXPERIMENTS[name]
    a, b = copies(warehouse, tmp_path)
    result = cli_for(a)("experiment", name, *args, "--out", tmp_path / "cli", "--format", "json")
    with Warehouse(b) as w:
        outcome = w.experiment(name, tmp_path / "api", **params)
    assert json.loads(result.stdout) == table_of(outcome.main_table())

    def tables(directory: Path) -> dict:
        return {k: v for k, v in files_of(directory).items() if k.endswith(".csv")}
    assert tables(tmp_path / "cli") and tables(tmp_path / "cli") == tables(tmp_path / "api")
    assert content(a) == content(b)


# ------------------------------------------------------------------ Spark

SPARK_CASES = {
    "spark eval": (["spark", "eval", "-m", "AP", "-m", "P@10", "--runs", "pooled"],
                   lambda wh, out: wh.eval(["AP", "P@10"], runs="pooled", out=out)),
    "spark pool depth": (["spark", "pool", "depth", "--name", "d5", "--depth", "5"],
                         lambda wh, out: wh.pool("depth", "d5", depth=5, out=out)),
    "spark pool shallow": (["spark", "pool", "shallow", "--name", "s3", "--depth", "3"],
                           lambda wh, out: wh.pool("shallow", "s3", depth=3, out=out)),
    "spark pool leave-out": (["spark", "pool", "leave-out", "--team", "alpha", "--depth", "10"],
                             lambda wh, out: wh.pool("leave-out", teams=["alpha"], depth=10, out=out)),
    "spark pool take": (["spark", "pool", "take", "--team", "beta", "--name", "b"],
                        lambda wh, out: wh.pool("take", "b", teams=["beta"], out=out)),
    "spark pool stats": (["spark", "pool", "stats", "teams", "--runs", "pooled", "--depth", "10"],
                         lambda wh, out: wh.pool_stats("teams", runs="pooled", depth=10, out=out)),
}


@pytest.fixture(scope="module")
def spark_data(warehouse, tmp_path_factory):
    """A Spark session and the warehouse as `irw export` writes it (skipped without Spark,
    except in CI)."""
    import os

    from irwarehouse import spark as irs

    try:
        import pyspark  # noqa: F401
    except ImportError:
        pyspark = None
    if pyspark is None or not irs.java_available():
        message = "Spark is not available (pyspark and Java 17 or later)"
        if os.environ.get("IRW_REQUIRE_SHARED_DATA") == "1":
            pytest.fail(message + " -- IRW_REQUIRE_SHARED_DATA=1 requires it")
        pytest.skip(message)
    session = irs.session("local[2]", {"spark.sql.shuffle.partitions": "4", "spark.ui.enabled": "false"})
    data = str(tmp_path_factory.mktemp("spark") / "export")
    cli_for(warehouse)("export", data)
    yield data
    session.stop()


def test_spark_commands(spark_data, tmp_path):
    """Every ``irw spark`` command writes what its SparkWarehouse method writes (one session
    for all: the command line uses the session the process has)."""
    from irwarehouse import spark as irs

    with irs.open(spark_data) as wh:
        for case, (args, method) in SPARK_CASES.items():
            out_cli, out_api = tmp_path / case.replace(" ", "-") / "cli", tmp_path / case.replace(" ", "-") / "api"
            cli_for(str(tmp_path / "unused.duckdb"))(*args, "--data", spark_data, "--out", out_cli)
            method(wh, str(out_api))
            con = duckdb.connect()
            try:
                for table in sorted(p.name for p in out_cli.iterdir()):
                    columns = [r[0] for r in con.execute(
                        f"DESCRIBE SELECT * FROM read_parquet('{out_cli / table}/*.parquet')").fetchall()
                        if not r[1].startswith("TIMESTAMP")]
                    got = [con.execute(f"SELECT {', '.join(columns)} FROM read_parquet('{out / table}/*.parquet') "
                                       "ORDER BY ALL").fetchall() for out in (out_cli, out_api)]
                    assert got[0] and got[0] == got[1], f"{case}: {table}"
            finally:
                con.close()
        printed = cli_for(str(tmp_path / "unused.duckdb"))("spark", "pool", "stats", "multiplicity", "--depth", "10",
                                                          "--data", spark_data, "--format", "json").stdout
        rows = [r.asDict() for r in wh.pool_stats("multiplicity", depth=10).collect()]
        assert json.loads(printed) == table_of(rows)


def test_trec_eval(tmp_path):
    """irw trec-eval prints Warehouse.trec_eval's lines, as trec_eval lays them out."""
    qrels, run = str(FIXTURES / "qrels.txt"), str(FIXTURES / "runs" / "beta1.txt")
    printed = cli_for(str(tmp_path / "unused.duckdb"))(
        "trec-eval", "-q", "-c", "-M", "20", "-m", "official", "-mrelstring.5", qrels, run).stdout
    report = Warehouse.trec_eval(qrels, run, ["official", "relstring.5"], complete=True, max_docs=20)
    assert printed == output.trec_eval_lines(report.topic_lines + report.summary_lines, report.zscores)
    assert printed.count("\n") > 100 and not (tmp_path / "unused.duckdb").exists()


# ------------------------------------------------------------------ completeness

def _commands() -> set[str]:
    import typer

    found = set()

    def walk(command, path):
        subs = getattr(command, "commands", None)
        if subs:
            for name, sub in subs.items():
                if not sub.hidden:
                    walk(sub, [*path, name])
        else:
            found.add(" ".join(path))
    walk(typer.main.get_command(app), [])
    return found


def test_every_command_is_covered():
    covered = {case.split(" --")[0].removesuffix(" several qrels") for case in [*READS, *EVALUATING, *WRITES]}
    covered |= {"eval", "report", "load results", "standardize export", "standardize import", "export",
                "publish", "trec-eval", *(f"experiment {name}" for name in EXPERIMENTS), *SPARK_CASES}
    covered |= {"pool stats"} if any(c.startswith("pool stats") for c in covered) else set()
    commands = _commands()
    assert len(commands) >= 50
    assert commands - covered == set(), "commands without a one-door test"


def test_pool_targets_are_planned_once(bare):
    """What ``irw pool KIND`` derives (its run set, and the qrels to build with their teams)
    is planned by one function, engine.pools.targets, that the warehouse and Spark both
    call: leave-out names a qrels per team (all teams of the run set with ``"all"``), take
    one over its teams, shallow pools every run whatever the run spec."""
    import inspect

    from irwarehouse import spark
    from irwarehouse.engine import pools
    from irwarehouse.errors import IrwError

    with Warehouse(bare, read_only=True) as w:
        con = w.con
        out = pools.targets(con, "leave-out", "fixture", "pooled", teams="all")
        assert out.spec == "pooled" and sorted(out.run_ids) == w.run_ids("pooled")
        assert out.targets == [(f"fixture-lo-{t}", [t]) for t in w.teams(runs="pooled")]
        assert pools.targets(con, "leave-out", "fixture", teams=["beta"], prefix="x-").targets == [("x-beta", ["beta"])]
        assert pools.targets(con, "take", "fixture", name="t", teams=["beta", "gamma"]).targets == [
            ("t", ["beta", "gamma"])]
        shallow = pools.targets(con, "shallow", "fixture", "alpha1", name="s")
        assert shallow.spec == "all" and shallow.targets == [("s", [])] and len(shallow.run_ids) > 1
        for kind, message in (("depth", "needs a name"), ("nope", "unknown kind")):
            with pytest.raises(IrwError, match=message):
                pools.targets(con, kind, "fixture")
    for method in (Warehouse.pool, spark.SparkWarehouse.pool):
        source = inspect.getsource(method)
        assert "pools.targets(" in source and "leave_out_targets" not in source and "shallow" not in source.split('"""')[-1]


def test_a_measure_name_is_parsed_once(bare, tmp_path, monkeypatch):
    """``irw eval`` parses each measure name once, at the edge, and the parsed measures flow
    down: on a warehouse, on files, and on files loaded into a warehouse (``--save``)."""
    from irwarehouse import measures

    parse, seen = measures.parse, []

    def counting(text):
        if text == "P@13":
            seen.append(text)
        return parse(text)

    monkeypatch.setattr(measures, "parse", counting)
    db = str(tmp_path / "w.duckdb")
    shutil.copy(bare, db)
    qrels, runs = FIXTURES / "qrels.txt", FIXTURES / "runs" / "beta1.txt"
    invoke = cli_for(db)
    for args in (("eval", "-m", "P@13", "-f", "json"), ("eval", qrels, runs, "-m", "P@13"),
                 ("eval", qrels, runs, "-m", "P@13", "--save", str(tmp_path / "saved.duckdb"))):
        seen.clear()
        invoke(*args)
        assert seen == ["P@13"], args


def test_irw_spark_eval_hands_over_the_parsed_measures(tmp_path, monkeypatch):
    """``irw spark eval`` parses its measures once, before Spark starts, and hands the
    parsed measures to SparkWarehouse.eval (here a stand-in that records what it gets)."""
    import contextlib

    from irwarehouse import measures
    from irwarehouse.cli import spark as spark_cli

    parse, seen, got = measures.parse, [], {}

    def counting(text):
        seen.append(text)
        return parse(text)

    class Recorder:
        def eval(self, given, *args, **kwargs):
            got["measures"] = given
            return {"measures": given, "scores": 0, "runs": 0, "qrels": "q", "path": "p"}

    monkeypatch.setattr(measures, "parse", counting)
    monkeypatch.setattr(spark_cli, "_open", lambda *args: contextlib.nullcontext(Recorder()))
    cli_for(str(tmp_path / "w.duckdb"))("spark", "eval", "-m", "P@13", "-m", "AP", "--data", tmp_path,
                                         "--out", tmp_path / "out")
    assert seen == ["P@13", "AP"]
    assert got["measures"] == [measures.parse("P@13"), measures.parse("AP")]
