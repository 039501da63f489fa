"""Apache Superset on a published warehouse, in one command (docs/sql-and-bi.md):

    python tests/clients/superset_check.py [--venv DIR] [--keep DIR]

run with the Python of an environment where irwarehouse is installed. It

1. installs Superset with its DuckDB extra into a virtual environment of its own (DIR, by
   default ~/.cache/irwarehouse/superset-6.1.0; made once, reused after), with the three
   packages ``pip install 'apache-superset[duckdb]'`` leaves out or gets wrong pinned
   (SUPERSET);
2. loads the bundled fixtures into a warehouse, evaluates them and publishes a copy
   (``irw publish``), in a new working directory (kept in DIR with ``--keep``);
3. sets Superset up there (its metadata in SQLite, an admin user) and drives Superset's own
   application in-process through its REST API (Flask's test client, no browser):
   registers the copy as a read-only database, a dataset on the view ``score_means``, a
   virtual dataset on the measure macro ``measure.nDCG``, queries chart data from both, runs
   a measure macro in SQL Lab, and publishes again to see that the next query reads the new
   copy;
4. prints a short report of each step and checks every number against ``irw eval``: the
   exit status is 1 when one differs or a step fails.

The tests do not run it (installing Superset takes a few minutes and about 1 GB).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SUPERSET = [
    "apache-superset[duckdb]==6.1.0",
    # Superset 6.1.0's command line imports rich (superset/cli/test_db.py) without requiring
    # it: every `superset` command fails with "No module named 'rich'"
    "rich==15.0.0",
    # flask-caching 2.5 passes ignore_delete_many_errors to every cache, and Superset 6.1.0's
    # metastore cache does not take it (TypeError when the application starts)
    "flask-caching==2.4.1",
    # Superset 6.1.0 imports cachetools (superset/db_engine_specs/aws_iam.py) without requiring
    # it; without it, connecting a DuckDB database fails: "Could not load database driver for: duckdb"
    "cachetools==8.0.2",
]
ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
IRW = [sys.executable, "-c", "from irwarehouse.cli import app; app()"]
MEASURES = ["AP", "nDCG@10", "nDCG(discount=jk)@10"]
VIRTUAL_SQL = "SELECT * FROM measure.nDCG('fixture', k := 10)"
SQLLAB_SQL = ("SELECT run_id, round(avg(value), 4) AS ndcg10 FROM measure.nDCG('fixture', k := 10, "
              "discount := 'jk') GROUP BY run_id ORDER BY ndcg10 DESC, run_id")
LIMITED_SQL = "SELECT run_id FROM run_info ORDER BY run_id LIMIT 3"
ADMIN = {"username": "admin", "password": "admin"}
RESULT = "irw-superset-check: "  # the driver's line of results, among whatever Superset prints


# ---------------------------------------------------------------- in irw's environment

def run(command: list[str], log: Path, **kw) -> str:
    """Run ``command``; its stderr goes to ``log``; on failure, say so and stop."""
    with open(log, "a") as err:
        err.write(f"\n$ {' '.join(command)}\n")
        err.flush()
        r = subprocess.run(command, stdout=subprocess.PIPE, stderr=err, text=True, **kw)
    if r.returncode:
        tail = "".join(log.read_text().splitlines(keepends=True)[-20:])
        sys.exit(f"failed ({r.returncode}): {' '.join(command)}\n{tail}")
    return r.stdout


def install(venv: Path) -> str:
    """Superset in ``venv``, installed once for these requirements; its version."""
    marker = venv / "irw-requirements.txt"
    wanted = "\n".join(SUPERSET) + "\n"
    python = venv / "bin" / "python"
    if not (marker.exists() and marker.read_text() == wanted and python.exists()):
        print(f"installing Superset into {venv} (a few minutes) ...", file=sys.stderr, flush=True)
        shutil.rmtree(venv, ignore_errors=True)
        venv.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        *SUPERSET], check=True)
        marker.write_text(wanted)
    return str(python)


def irw_means(db: Path, log: Path) -> dict:
    """{measure: {run_id: mean}} as `irw eval` gives them."""
    args = [a for m in MEASURES for a in ("-m", m)]
    rows = json.loads(run([*IRW, "--db", str(db), "eval", *args, "--no-store", "--format", "json"], log))
    out: dict = {}
    for row in rows:
        out.setdefault(row["measure"], {})[row["run_id"]] = row["value"]
    return out


def top(means: dict, n: int) -> list:
    return sorted(means.items(), key=lambda kv: (-kv[1], kv[0]))[:n]


def same(got: list, expected: list, digits: int | None = None) -> bool:
    """Rows (run_id, value) equal: run ids exactly, values to 1e-12 or to ``digits``."""
    if [r for r, _ in got] != [r for r, _ in expected]:
        return False
    if digits is not None:
        return all(v == round(e, digits) for (_, v), (_, e) in zip(got, expected))
    return all(math.isclose(v, e, rel_tol=0, abs_tol=1e-12) for (_, v), (_, e) in zip(got, expected))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--venv", type=Path, default=Path.home() / ".cache" / "irwarehouse" / "superset-6.1.0",
                        help="Superset's virtual environment (made when missing)")
    parser.add_argument("--keep", type=Path, help="work in this new directory and keep it")
    options = parser.parse_args()
    python = install(options.venv.absolute())
    if options.keep:
        options.keep.mkdir(parents=True)
        work = options.keep.absolute()
    else:
        work = Path(tempfile.mkdtemp(prefix="irw-superset-"))
    try:
        return check(python, work)
    finally:
        if not options.keep:
            shutil.rmtree(work, ignore_errors=True)


def check(python: str, work: Path) -> int:
    log = work / "log.txt"
    db, copy = work / "warehouse.duckdb", work / "dashboard.duckdb"
    irw = [*IRW, "--db", str(db)]
    run([*irw, "load", "qrels", str(FIXTURES / "qrels.txt"), "--name", "fixture"], log)
    run([*irw, "load", "runs", str(FIXTURES / "runs"), "--meta", str(FIXTURES / "runs.tsv")], log)
    run([*irw, "eval", *[a for m in MEASURES for a in ("-m", m)]], log)
    run([*irw, "publish", str(copy)], log)
    expected = irw_means(db, log)

    home = work / "superset"
    home.mkdir()
    (home / "superset_config.py").write_text(
        f"SECRET_KEY = {os.urandom(24).hex()!r}\n"
        f"SQLALCHEMY_DATABASE_URI = {'sqlite:///' + str(home / 'superset.db')!r}\n"
        "WTF_CSRF_ENABLED = False\n"  # the test client posts without a form
        "TALISMAN_ENABLED = False\n")
    env = {**os.environ, "SUPERSET_HOME": str(home), "SUPERSET_CONFIG_PATH": str(home / "superset_config.py"),
           "FLASK_APP": "superset.app:create_app()"}
    superset = str(Path(python).parent / "superset")
    run([superset, "db", "upgrade"], log, env=env)
    run([superset, "fab", "create-admin", "--username", ADMIN["username"], "--password", ADMIN["password"],
         "--firstname", "irw", "--lastname", "check", "--email", "admin@example.org"], log, env=env)
    run([superset, "init"], log, env=env)
    config = {"copy": str(copy), "republish": [
        [*irw, "eval", "-m", "P@10"], [*irw, "publish", str(copy), "--replace"]]}
    out = run([python, __file__, "--drive", json.dumps(config)], log, env=env)
    (result,) = [line[len(RESULT):] for line in out.splitlines() if line.startswith(RESULT)]
    got = json.loads(result)
    return report(got, expected)


def report(got: dict, expected: dict) -> int:
    wrong = []

    def line(text: str, ok: bool = True) -> None:
        print(("" if ok else "MISMATCH ") + text)
        if not ok:
            wrong.append(text)

    def rows(pairs) -> str:
        return ", ".join(f"{r} {v:.4f}" for r, v in pairs)

    v = got["versions"]
    print(f"Superset {v['superset']} (SQLAlchemy {v['sqlalchemy']}, duckdb-engine {v['duckdb_engine']}, "
          f"duckdb {v['duckdb']}); irw: fixtures loaded, {', '.join(MEASURES)} evaluated, published to "
          "dashboard.duckdb")
    s = got["steps"]
    line(f"1. database: {s['database']['uri']}, engine parameters {s['database']['extra']}; "
         f"connection test: {s['database']['test']}; schemas: {', '.join(s['database']['schemas'])}",
         s["database"]["test"] == "OK" and "dashboard.main" in s["database"]["schemas"])
    line(f"2. writing through Superset's engine: refused ({s['read_only']})",
         "read-only mode" in s["read_only"])
    line(f"3. dataset dashboard.main.score_means, columns: {', '.join(s['dataset'])}",
         s["dataset"] == ["qrels", "collection", "run_id", "measure", "mean", "n_topics"])
    line(f"4. virtual dataset ndcg_at_10 ({VIRTUAL_SQL}), columns: {', '.join(s['virtual'])}",
         s["virtual"] == ["collection", "run_id", "topic", "value"])
    ap = [tuple(r) for r in s["chart_ap"]]
    line(f"5. chart data, mean AP by run on score_means, top 3: {rows(ap)} (irw eval: equal)",
         same(ap, top(expected["AP"], 3)))
    ndcg = [tuple(r) for r in s["chart_ndcg"]]
    line(f"6. chart data, mean nDCG@10 by run on the virtual dataset, top 3: {rows(ndcg)} (irw eval: equal)",
         same(ndcg, top(expected["nDCG@10"], 3)))
    lab = [tuple(r) for r in s["sqllab"]["rows"]]
    line(f"7. SQL Lab, {SQLLAB_SQL}: {len(lab)} rows, first {rows(lab[:3])} "
         "(irw eval -m 'nDCG(discount=jk)@10', rounded: equal)",
         same(lab, top(expected["nDCG(discount=jk)@10"], 8), digits=4))
    print(f"   SQL Lab, {LIMITED_SQL} (row limit 1000): {s['sqllab']['limited_rows']} rows; it ran "
          f"{s['sqllab']['limited_executed']}")
    line(f"8. measures in score_means: {', '.join(s['measures_before'])}; after irw eval -m P@10 and irw "
         f"publish --replace, the next chart query: {', '.join(s['measures_after'])}",
         s["measures_before"] == sorted(MEASURES) and s["measures_after"] == sorted(MEASURES + ["P@10"]))
    print("all steps agree with irw" if not wrong else f"{len(wrong)} step(s) differ")
    return 1 if wrong else 0


# ---------------------------------------------------------------- in Superset's environment

def drive(config: dict) -> dict:
    """Superset's application, driven through its REST API with Flask's test client."""
    from importlib import metadata

    import duckdb
    import sqlalchemy
    from superset.app import create_app

    app = create_app()
    client = app.test_client()

    def call(method: str, url: str, body=None, status=200) -> dict:
        r = client.open(url, method=method, json=body, headers=headers)
        if r.status_code != status:
            raise SystemExit(f"{method} {url}: {r.status_code} {r.get_data(as_text=True)[:2000]}")
        return r.get_json()

    headers: dict = {}
    token = call("POST", "/api/v1/security/login", {**ADMIN, "provider": "db", "refresh": False})
    headers["Authorization"] = "Bearer " + token["access_token"]
    steps: dict = {}

    uri = "duckdb:///" + config["copy"]
    extra = json.dumps({"engine_params": {"connect_args": {"read_only": True}}})
    database = {"database_name": "irw", "sqlalchemy_uri": uri, "extra": extra}
    test = call("POST", "/api/v1/database/test_connection/", database)
    db_id = call("POST", "/api/v1/database/", {**database, "expose_in_sqllab": True}, status=201)["id"]
    schemas = call("GET", f"/api/v1/database/{db_id}/schemas/")["result"]
    steps["database"] = {"uri": "duckdb:///.../dashboard.duckdb", "extra": extra, "test": test["message"],
                         "schemas": sorted(schemas)}

    with app.app_context():
        from superset import db as metadata_db
        from superset.models.core import Database

        engine_of = metadata_db.session.get(Database, db_id)
        try:
            with engine_of.get_sqla_engine() as engine, engine.connect() as conn:
                conn.exec_driver_sql("CREATE TABLE irw_written (x INTEGER)")
            steps["read_only"] = "not refused: the file was written"
        except Exception as exc:  # DuckDB's refusal, through SQLAlchemy
            steps["read_only"] = str(exc).split("\n")[0].split(") ", 1)[-1]

    def columns(dataset_id: int) -> list[str]:
        found = call("GET", f"/api/v1/dataset/{dataset_id}?q=(columns:!(columns.column_name))")
        return [c["column_name"] for c in found["result"]["columns"]]

    dataset = call("POST", "/api/v1/dataset/", {"database": db_id, "schema": "dashboard.main",
                                                "table_name": "score_means"}, status=201)["id"]
    steps["dataset"] = columns(dataset)
    virtual = call("POST", "/api/v1/dataset/", {"database": db_id, "schema": "dashboard.main",
                                                "table_name": "ndcg_at_10", "sql": VIRTUAL_SQL}, status=201)["id"]
    steps["virtual"] = columns(virtual)

    def chart(dataset_id: int, groupby: str, metric: str, label: str, filters=(), descending=True,
              limit=3) -> list:
        metric = {"expressionType": "SQL", "sqlExpression": metric, "label": label}
        query = {"columns": [groupby], "metrics": [metric], "filters": list(filters),
                 "orderby": [[metric, not descending], [groupby, True]], "row_limit": limit}
        body = {"datasource": {"id": dataset_id, "type": "table"}, "queries": [query],
                "result_format": "json", "result_type": "full", "force": True}
        (result,) = call("POST", "/api/v1/chart/data", body)["result"]
        return [[row[groupby], row[label]] for row in result["data"]]

    steps["chart_ap"] = chart(dataset, "run_id", "AVG(mean)", "AP",
                              [{"col": "measure", "op": "==", "val": "AP"},
                               {"col": "qrels", "op": "==", "val": "fixture"}])
    steps["chart_ndcg"] = chart(virtual, "run_id", "AVG(value)", "nDCG@10")
    lab = call("POST", "/api/v1/sqllab/execute/", {"database_id": db_id, "sql": SQLLAB_SQL,
                                                   "runAsync": False, "queryLimit": 1000})
    limited = call("POST", "/api/v1/sqllab/execute/", {"database_id": db_id, "sql": LIMITED_SQL,
                                                       "runAsync": False, "queryLimit": 1000})
    steps["sqllab"] = {"rows": [[r["run_id"], r["ndcg10"]] for r in lab["data"]],
                       "limited_rows": len(limited["data"]),
                       "limited_executed": " ".join(limited["query"]["executedSql"].split())}

    def measures() -> list[str]:
        return sorted(m for m, _ in chart(dataset, "measure", "COUNT(*)", "n", descending=False, limit=100))

    steps["measures_before"] = measures()
    for command in config["republish"]:
        subprocess.run(command, check=True, capture_output=True)
    steps["measures_after"] = measures()
    versions = {"superset": metadata.version("apache-superset"), "sqlalchemy": sqlalchemy.__version__,
                "duckdb_engine": metadata.version("duckdb-engine"), "duckdb": duckdb.__version__}
    return {"versions": versions, "steps": steps}


if __name__ == "__main__":
    if sys.argv[1:2] == ["--drive"]:
        print(RESULT + json.dumps(drive(json.loads(sys.argv[2]))))
    else:
        sys.exit(main())
