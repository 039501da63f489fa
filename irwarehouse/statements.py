"""Users' SQL (``irw sql``, ``Warehouse.sql``): the files it may use, and clear messages for
what it may not do.

What users' SQL can touch is decided by DuckDB itself: it runs in DuckDB's sandbox
(irwarehouse.connection.Sandbox) -- external access off, the configuration locked -- so
that it reads and writes the warehouse and nothing else, but for the directories and files
the user names (:func:`allowed`, ``--files``, only with ``--write``), which may hold no
DuckDB database. No spelling of a path gets around DuckDB's own check.

Before it runs, DuckDB parses the query into statements and names their types; irw uses
the types only to say clearly what would be refused anyway, and for what DuckDB's settings
cannot tell: without ``--write`` only statements that read run (queries: SELECT, FROM,
DESCRIBE, SHOW, SUMMARIZE, PIVOT, UNPIVOT; EXPLAIN of one; PRAGMAs that list the catalogue;
SET VARIABLE), so that the message names ``--write``; ATTACH and DETACH never run (an
allowed directory would otherwise take a new DuckDB database); and with ``--write`` the
call is one transaction of irw's own (so a change that leaves the tables in a state no load
would accept is rolled back), so transaction statements are refused.
"""

from __future__ import annotations

import os
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
    "DETACH": "DETACH changes the session's databases",
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


def _reading_pragma(text: str) -> bool:
    match = _PRAGMA.match(text)
    return bool(match and match.group(1).lower() in READING_PRAGMAS)


def parse(con, query: str, write: bool = False) -> list:
    """DuckDB's statements of ``query``; a syntax error is an IrwError. (DuckDB 1.4 reads
    the files of IMPORT DATABASE as it parses: the sandbox may stop it here.)"""
    if query is None or not str(query).strip():
        raise IrwError("no SQL given")
    import duckdb

    try:
        return list(con.extract_statements(query))
    except duckdb.PermissionException as exc:
        raise IrwError(outside(exc, write)) from None
    except duckdb.Error as exc:
        raise IrwError(f"SQL error: {str(exc).strip().splitlines()[0]}") from None


def problem(con, statement, write: bool) -> str | None:
    """Why ``statement`` may not run (None: it may)."""
    kind = _type(statement)
    text = statement.query
    if kind == "TRANSACTION":
        return ("transaction statements (BEGIN, COMMIT, ROLLBACK) are not run: irw runs the "
                "whole call as one transaction of its own")
    if kind in ("ATTACH", "DETACH"):
        return (f"{kind} is not run: SQL run by irw reads and writes the warehouse alone (and "
                "never opens or creates another DuckDB database)")
    if kind == "PRAGMA" and not _reading_pragma(text):
        # (settings are locked in the sandbox; DuckDB 1.4 lets a few PRAGMAs change them)
        return ("this PRAGMA is not run: it changes settings or copies data (the PRAGMAs that "
                "list the catalogue run, e.g. PRAGMA table_info('runs'))")
    if write:
        return None
    if kind == "EXPLAIN":
        inner = _EXPLAIN.sub("", text, count=1)
        if not inner.strip():
            return None
        statements = parse(con, inner, write)
        return next((p for p in (problem(con, s, write) for s in statements) if p), None)
    if kind in READING:
        return None
    if kind == "PRAGMA":
        return None  # (one that lists the catalogue: the others are refused above)
    if kind == "SET" and _SET_VARIABLE.match(text):
        return None
    what = _WHAT.get(kind, f"{kind} changes the warehouse")
    return f"irw sql is read-only without --write, and {what}; run it with --write"


def check(con, query: str, write: bool) -> list:
    """The statements of ``query`` when all of them may run (see the module's text), else an
    IrwError naming the first that may not."""
    statements = parse(con, query, write)
    for number, statement in enumerate(statements, 1):
        reason = problem(con, statement, write)
        if reason:
            where = f"statement {number}: " if len(statements) > 1 else ""
            raise IrwError(where + reason)
    return statements


# ------------------------------------------------------------------------ files users' SQL may use

MAX_CHECKED = 100_000  # entries of an allowed directory looked through for databases and links


def allowed(paths) -> tuple[list[str], list[str]]:
    """The directories and files users' SQL may read and write (``--files``), as DuckDB's
    ``allowed_directories`` and ``allowed_paths``: each as given and as its real path. A
    directory may hold no DuckDB database (nor a journal of one), at any depth, and no link
    that leads outside it; a file may not be a DuckDB database (a file that does not exist
    yet is one the SQL may write). Else an IrwError saying which and why."""
    directories: list[str] = []
    files: list[str] = []
    for given in paths or ():
        text = str(given)
        if not text.strip():
            raise IrwError("--files: an empty path")
        path = Path(os.path.abspath(os.path.expanduser(text)))
        real = Path(os.path.realpath(path))
        # as given too (DuckDB 1.4 compares a relative path with the allowed ones as written)
        spelled = [os.path.normpath(text)] if not os.path.isabs(text) and not text.startswith("~") else []
        if real.is_dir():
            _check_directory(text, real)
            directories += [str(path), str(real), *spelled]
        elif real.exists() and not real.is_file():
            raise IrwError(f"--files {shown(text, None)}: not a regular file or a directory")
        else:
            if is_database(real):
                raise IrwError(f"--files {shown(text, None)} is a DuckDB database: SQL run by irw "
                               "never reads or writes another database")
            if not real.parent.is_dir():
                raise IrwError(f"--files {shown(text, None)}: the directory {real.parent} does not exist")
            files += [str(path), str(real), *spelled]
    return sorted(set(directories)), sorted(set(files))


def _check_directory(given: str, real: Path) -> None:
    checked = 0
    for root, dirs, names in os.walk(real):
        for name in dirs + names:
            checked += 1
            if checked > MAX_CHECKED:
                raise IrwError(f"--files {shown(given, None)} holds more than {MAX_CHECKED:,} files and "
                               "directories, too many to check for databases: name a smaller directory")
            entry = Path(root) / name
            if entry.is_symlink():
                target = Path(os.path.realpath(entry))
                if target != real and real not in target.parents:
                    inside = os.path.join(given, os.path.relpath(entry, real))
                    raise IrwError(f"--files {shown(given, None)} holds a link that leads outside it "
                                   f"({shown(inside, None)}): name a directory without such links")
                continue
            if name in names and is_database(entry):
                inside = os.path.join(given, os.path.relpath(entry, real))
                raise IrwError(f"--files {shown(given, None)} holds a DuckDB database "
                               f"({shown(inside, None)}): SQL run by irw never reads or writes "
                               "another database; name a directory without one, or the files "
                               "themselves")


def outside(exc: Exception, write: bool) -> str:
    """The message for SQL that DuckDB's sandbox stopped (a duckdb.PermissionException): a
    file, a database or an extension outside the warehouse."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    match = re.search(r'"([^"]*)"', text)
    what = shown(match.group(1), None) if match else "a file"
    how = ("but the files named with --files" if write else
           "(with --write, and the files named with --files)")
    return (f"not allowed: {what} is outside the warehouse; irw sql reads and writes the "
            f"warehouse alone {how}, in DuckDB's sandbox")
