"""Read a warehouse file through SQLAlchemy + duckdb-engine, as BI tools and pandas do.

Used by tests/test_clients.py in environments of their own (the pins of the ``bi`` extra,
and what pip picks without them). Imports nothing from irwarehouse:

    python tests/sqlalchemy_probe.py WAREHOUSE.duckdb ...

prints JSON: the versions of SQLAlchemy, duckdb-engine and duckdb, and per warehouse
(``targets``) each step's result (``{"ok": ...}``) or the first line of its error
(``{"error": ...}``).
"""

from __future__ import annotations

import json
import sys
import warnings
from importlib import metadata

import duckdb
import pandas as pd
import sqlalchemy as sa

NDCG = "SELECT run_id, topic, value FROM measure.nDCG(:q, k := 10) ORDER BY run_id, topic"


def steps(engine) -> dict:
    inspector = sa.inspect(engine)

    def rows(frame):
        return frame.values.tolist()

    def read_only():
        with engine.connect() as conn:
            conn.execute(sa.text("CREATE TABLE irw_probe (x INTEGER)"))

    def query(sql, **params):
        with engine.connect() as conn:
            return rows(pd.read_sql(sa.text(sql), conn, params=params))

    return {
        "schemas": lambda: inspector.get_schema_names(),
        "views": lambda: sorted(inspector.get_view_names()),
        "tables": lambda: sorted(inspector.get_table_names()),
        "view columns": lambda: [c["name"] for c in inspector.get_columns("score_means")],
        "table columns": lambda: [c["name"] for c in inspector.get_columns("runs")],
        "primary key": lambda: inspector.get_pk_constraint("runs")["constrained_columns"],
        "foreign keys": lambda: inspector.get_foreign_keys("runs"),
        "Table(autoload_with=...)": lambda: [c.name for c in
                                             sa.Table("score_means", sa.MetaData(), autoload_with=engine).columns],
        "pandas.read_sql_table": lambda: sorted(rows(pd.read_sql_table("score_means", engine))),
        "query": lambda: query("SELECT * FROM score_means ORDER BY ALL"),
        "measure macro": lambda: query(NDCG, q="fixture"),
        "read-only": read_only,
    }


def _steps(path: str) -> dict:
    engine = sa.create_engine(f"duckdb:///{path}", connect_args={"read_only": True})
    out = {}
    try:
        for name, step in steps(engine).items():
            try:
                out[name] = {"ok": step()}
            except Exception as exc:  # what a BI tool would show
                text = str(exc).strip()
                out[name] = {"error": text.splitlines()[0] if text else type(exc).__name__}
    finally:
        engine.dispose()
    return out


def main(paths: list[str]) -> None:
    warnings.simplefilter("ignore")  # duckdb-engine warns that it reflects no indexes
    print(json.dumps({"sqlalchemy": sa.__version__, "duckdb_engine": metadata.version("duckdb-engine"),
                      "duckdb": duckdb.__version__,
                      "targets": {path: {"steps": _steps(path)} for path in paths}}))


if __name__ == "__main__":
    main(sys.argv[1:])
