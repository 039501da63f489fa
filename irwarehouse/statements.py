"""What a user's SQL would do, found before it runs (``irw sql``, ``Warehouse.sql``).

DuckDB parses a query into statements and tells each one's type. Without ``--write``,
irw runs only statements that read: queries (SELECT and its forms: FROM, DESCRIBE, SHOW,
SUMMARIZE, PIVOT, UNPIVOT), EXPLAIN of one, a few PRAGMAs that list the catalogue, and
SET VARIABLE. Everything else -- COPY ... TO, EXPORT DATABASE, ATTACH, INSTALL, SET (a
profiling output is a file), PREPARE/EXECUTE, CALL, any change to a table -- is refused
with a message naming ``--write``; a read-only connection alone would still let COPY and
EXPORT write files anywhere. With ``--write``, every statement runs inside irw's own
transaction (so a change that leaves the tables in a state no load would accept is rolled
back), so transaction statements are refused, and COPY ... TO may not name a DuckDB
database (the warehouse, say).
"""

from __future__ import annotations

import re
from pathlib import Path

from .errors import IrwError, shown
from .files import is_database

# The statement types that only read.
READING = {"SELECT", "MULTI"}
# PRAGMAs that only list the catalogue (PRAGMA is also what COPY FROM DATABASE parses to).
READING_PRAGMAS = {"table_info", "show_tables", "show_tables_expanded", "database_list",
                   "database_size", "version", "storage_info", "show", "functions",
                   "collations", "platform", "metadata_info", "user_agent"}

_WHAT = {
    "COPY": "COPY writes a file (COPY ... TO) or a table (COPY ... FROM)",
    "EXPORT": "EXPORT DATABASE writes files",
    "ATTACH": "ATTACH opens (or creates) another database file",
    "DETACH": "DETACH changes the session",
    "LOAD": "INSTALL and LOAD fetch and run extensions",
    "SET": "SET changes settings (a profiling output, say, is a file)",
    "PREPARE": "PREPARE stores a statement to EXECUTE later",
    "EXECUTE": "EXECUTE runs a prepared statement",
    "CALL": "CALL runs a procedure (use SELECT * FROM function(...) to read)",
    "TRANSACTION": "transaction statements are irw's own",
    "PRAGMA": "this PRAGMA changes settings or copies data",
}


def _type(statement) -> str:
    return str(statement.type).rsplit(".", 1)[-1]


_EXPLAIN = re.compile(r"^\s*EXPLAIN\s+(?:\(\s*[^)]*\)\s*)?(?:ANALYZE\s+)?", re.I)
_PRAGMA = re.compile(r"^\s*PRAGMA\s+([A-Za-z_]+)", re.I)
_SET_VARIABLE = re.compile(r"^\s*(?:SET|RESET)\s+VARIABLE\b", re.I)
_COPY_TO = re.compile(r"\bTO\s+'((?:[^']|'')*)'", re.I)


def parse(con, query: str) -> list:
    """DuckDB's statements of ``query``; a syntax error is an IrwError."""
    if query is None or not str(query).strip():
        raise IrwError("no SQL given")
    import duckdb

    try:
        return list(con.extract_statements(query))
    except duckdb.Error as exc:
        raise IrwError(f"SQL error: {str(exc).strip().splitlines()[0]}") from None


def problem(con, statement, write: bool) -> str | None:
    """Why ``statement`` may not run (None: it may)."""
    kind = _type(statement)
    text = statement.query
    if kind == "TRANSACTION":
        return ("transaction statements (BEGIN, COMMIT, ROLLBACK) are not run: irw runs the "
                "whole call as one transaction of its own")
    if write:
        if kind == "COPY":
            for target in _COPY_TO.findall(text):
                path = target.replace("''", "'")
                if Path(path).exists() and is_database(path):
                    return (f"COPY ... TO {shown(path)} would write over a DuckDB database; irw "
                            "does not run it: choose another file")
        return None
    if kind == "EXPLAIN":
        inner = _EXPLAIN.sub("", text, count=1)
        if not inner.strip():
            return None
        statements = parse(con, inner)
        return next((p for p in (problem(con, s, write) for s in statements) if p), None)
    if kind in READING:
        return None
    if kind == "PRAGMA":
        match = _PRAGMA.match(text)
        if match and match.group(1).lower() in READING_PRAGMAS:
            return None
    if kind == "SET" and _SET_VARIABLE.match(text):
        return None
    what = _WHAT.get(kind, f"{kind} changes the warehouse")
    return f"irw sql is read-only without --write, and {what}; run it with --write"


def check(con, query: str, write: bool) -> list:
    """The statements of ``query`` when all of them may run (see the module's text), else an
    IrwError naming the first that may not."""
    statements = parse(con, query)
    for number, statement in enumerate(statements, 1):
        reason = problem(con, statement, write)
        if reason:
            where = f"statement {number}: " if len(statements) > 1 else ""
            raise IrwError(where + reason)
    return statements
