"""Query every public view and macro of a warehouse, the way an SQL client would.

Used by the tests of the clients (an older DuckDB, the DuckDB CLI, SQLAlchemy) and of
``irw export`` / ``irw publish``. Imports nothing from irwarehouse, so it also runs under
another DuckDB in its own environment:

    python tests/sql_probe.py WAREHOUSE.duckdb|EXPORT_DIR ...

prints JSON: the DuckDB version and, per target, each probe's rows. A directory is an
``irw export``, imported into a new in-memory database first.

Every public macro needs a call in ``MACRO_CALLS`` (those of the schema ``measure`` are called
with the qrels and the example arguments the table ``measures`` gives); an uncovered one is
reported, so a test notices a new macro.
"""

from __future__ import annotations

import json
import math
import os
import sys

import duckdb

QRELS = "fixture"
POOLED = "(SELECT list(run_id ORDER BY run_id) FROM run_info WHERE pooled)"
MACRO_CALLS = {
    "ranking": f"SELECT * FROM ranking('{QRELS}')",
    "judged_ranking": f"SELECT * FROM judged_ranking('{QRELS}')",
    "pool_of": f"SELECT * FROM pool_of(collection_of('{QRELS}'), {POOLED}, 10)",
    "pooled_qrels": f"SELECT * FROM pooled_qrels('{QRELS}', {POOLED}, 10)",
    "pool_multiplicity": f"SELECT * FROM pool_multiplicity('{QRELS}', {POOLED}, 10)",
    "multiplicity_bands": f"SELECT * FROM multiplicity_bands('{QRELS}', {POOLED}, 10)",
    "team_contributions": f"SELECT * FROM team_contributions('{QRELS}', {POOLED}, 10)",
    "unique_contributions": f"SELECT * FROM unique_contributions('{QRELS}', {POOLED}, 10)",
    "pool_topic_stats": f"SELECT * FROM pool_topic_stats('{QRELS}', {POOLED}, 10)",
    "team_unique_stats": f"SELECT * FROM team_unique_stats('{QRELS}', {POOLED}, 10)",
    "deeply_judged_runs": f"SELECT * FROM deeply_judged_runs('{QRELS}', 2)",
    "std_normal_cdf": "SELECT x, std_normal_cdf(x) FROM (SELECT range / 4 - 10.0 AS x FROM range(81))",
    "std_z": "SELECT std_z(0.7, 0.5, 0.2), std_z(0.7, 0.5, 0)",
    "collection_of": f"SELECT collection_of('{QRELS}')",
}
MACRO_SCHEMA_CALLS = {"measure": "SELECT * FROM measure.{name}('{qrels}'{arguments})"}
# The qrels a measure macro is called with, by the kind of judgments it reads (the column
# judgments of the table measures); the fixture qrels for the others.
KIND_QRELS = {"prefs": QRELS + "-jg"}


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def queries(con) -> tuple[dict[str, str], list[str]]:
    """(name -> SQL) for every public view and macro of the connection's database, and the
    public macros nothing here knows how to call. Timestamp columns are left out (they say
    when, not what)."""
    out, uncovered = {}, []
    views = con.execute(
        "SELECT schema_name, view_name FROM duckdb_views() WHERE NOT internal "
        "AND database_name = current_database() AND NOT starts_with(view_name, 'irw_') "
        "ORDER BY ALL").fetchall()
    for schema, view in views:
        columns = [c for c, t in con.execute(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_catalog = current_database() AND table_schema = ? AND table_name = ? "
            "ORDER BY ordinal_position", [schema, view]).fetchall() if not t.startswith("TIMESTAMP")]
        name = view if schema == "main" else f"{schema}.{view}"
        out[f"view {name}"] = (f"SELECT {', '.join(map(_ident, columns))} "
                               f"FROM {_ident(schema)}.{_ident(view)} ORDER BY ALL")
    macros = con.execute(
        "SELECT DISTINCT schema_name, function_name FROM duckdb_functions() WHERE NOT internal "
        "AND database_name = current_database() AND function_type IN ('macro', 'table_macro') "
        "AND NOT starts_with(function_name, 'irw_') ORDER BY ALL").fetchall()
    examples = dict(con.execute("SELECT name, example_arguments FROM measures").fetchall())
    kinds = dict(con.execute("SELECT name, judgments FROM measures").fetchall())
    for schema, macro in macros:
        if schema == "main" and macro in MACRO_CALLS:
            call = MACRO_CALLS[macro]
        elif schema in MACRO_SCHEMA_CALLS:
            arguments = examples.get(macro) if schema == "measure" else None
            call = MACRO_SCHEMA_CALLS[schema].format(
                name=_ident(macro), qrels=KIND_QRELS.get(kinds.get(macro), QRELS),
                arguments=f", {arguments}" if arguments else "")
        else:
            uncovered.append(f"{schema}.{macro}")
            continue
        out[f"macro {schema}.{macro}"] = f"SELECT * FROM ({call}) ORDER BY ALL"
    return out, uncovered


def _value(v):
    if isinstance(v, (list, tuple)):
        return [_value(x) for x in v]
    if isinstance(v, dict):
        return {k: _value(x) for k, x in v.items()}
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if hasattr(v, "__float__"):
        return float(v)
    return str(v)


def run(con, probes: dict[str, str]) -> dict[str, list[list]]:
    """Each probe's rows, as JSON-able lists."""
    return {name: [[_value(v) for v in row] for row in con.execute(sql).fetchall()]
            for name, sql in probes.items()}


def probe(con) -> dict:
    """``{'results': {name: rows}, 'uncovered': [...]}`` for the connection's database."""
    probes, uncovered = queries(con)
    return {"results": run(con, probes), "uncovered": uncovered}


def close(a, b, path="") -> list[str]:
    """Where two probe results differ (numbers to 1e-9 relative, 1e-12 absolute)."""
    if isinstance(a, bool) or isinstance(b, bool) or isinstance(a, str) or isinstance(b, str) \
            or a is None or b is None:
        return [] if a == b else [f"{path}: {a!r} != {b!r}"]
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if math.isnan(a) and math.isnan(b):
            return []
        return [] if math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) else [f"{path}: {a!r} != {b!r}"]
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return [f"{path}: keys {sorted(a.keys() ^ b.keys())} differ"]
        return [d for k in a for d in close(a[k], b[k], f"{path}/{k}")]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} rows != {len(b)} rows"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in close(x, y, f"{path}[{i}]")]
    return [f"{path}: {a!r} != {b!r}"]


def open_target(target: str):
    """A read-only connection to a warehouse file, or a new database holding an export."""
    if os.path.isdir(target):
        con = duckdb.connect()
        con.execute(f"IMPORT DATABASE '{target.replace(chr(39), chr(39) * 2)}'")
        return con
    return duckdb.connect(target, read_only=True)


def main(targets: list[str]) -> None:
    out = {"duckdb": duckdb.__version__, "targets": {}}
    for target in targets:
        con = open_target(target)
        try:
            out["targets"][target] = probe(con)
        finally:
            con.close()
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
