"""Copies of the warehouse for other tools.

``export(con, directory, fmt)`` writes every public table as a Parquet or CSV file, with
``schema.sql`` (the tables, then every view and macro) and ``load.sql`` (the data, from the
files by relative path) -- DuckDB's own export layout, so ``IMPORT DATABASE 'DIR'`` (or
``.read schema.sql`` and ``.read load.sql`` inside DIR) gives a working warehouse in any
DuckDB 1.4 or later, without this package.

``publish(con, out)`` writes a compact DuckDB file for dashboards: the same tables, views
and macros, in the storage version every current DuckDB client reads (irwarehouse.storage),
without the internal caches.

The views and macros come from :func:`irwarehouse.db.schema_statements`, the statements that
create them in every warehouse; the tables' definitions from the warehouse's own catalogue.
Tables whose names start with ``irw_`` are internal caches and bookkeeping: they are not
copied (they are derived from the public tables, irw rebuilds them when needed, and a copy
would describe the source file rather than the copy); the copies get them empty, from the
schema statements, so irw can also work on a recreated or published warehouse.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from pathlib import Path

import duckdb

from . import db, storage
from .errors import IrwError

FORMATS = ("parquet", "csv")
SCHEMA_FILE = "schema.sql"
LOAD_FILE = "load.sql"
HEADER = "-- Written by irw export (irwarehouse)"
# How the data files are written and read back: CSV keeps NULL (empty, unquoted) apart from
# the empty string (written "") only when quoted values are never read as NULL.
_WRITE_OPTIONS = {"parquet": "FORMAT parquet", "csv": "FORMAT csv, HEADER"}
_READ_OPTIONS = {"parquet": "FORMAT parquet", "csv": "FORMAT csv, HEADER, ALLOW_QUOTED_NULLS false"}


def public_tables(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str, str]]:
    """(schema, table, CREATE TABLE statement) of every public table of the warehouse: all
    its tables except the internal ``irw_*`` ones (and temporary tables)."""
    return con.execute(
        "SELECT schema_name, table_name, sql FROM duckdb_tables() "
        "WHERE database_name = current_database() AND NOT temporary AND NOT internal "
        "AND NOT starts_with(table_name, 'irw_') "
        "ORDER BY schema_name <> 'main', schema_name, table_name").fetchall()


def _qualified(schema: str, table: str) -> str:
    return db.quote_ident(table) if schema == "main" else f"{db.quote_ident(schema)}.{db.quote_ident(table)}"


def _file_name(schema: str, table: str, fmt: str) -> str:
    return f"{table}.{fmt}" if schema == "main" else f"{schema}.{table}.{fmt}"


def _schema_script(tables: list[tuple[str, str, str]]) -> list[str]:
    """The statements that create the tables (as the warehouse defines them), then every
    view and macro (as every warehouse gets them)."""
    statements = [f"CREATE SCHEMA IF NOT EXISTS {db.quote_ident(s)};"
                  for s in sorted({s for s, _, _ in tables if s != "main"})]
    statements += [ddl if ddl.rstrip().endswith(";") else ddl + ";" for _, _, ddl in tables]
    return statements + db.schema_statements()


def _load_statements(tables, fmt: str, directory: Path | None = None) -> list[str]:
    """COPY ... FROM each table's file: by name (relative) or inside ``directory``."""
    out = []
    for schema, table, _ in tables:
        name = _file_name(schema, table, fmt)
        path = name if directory is None else str(directory / name)
        out.append(f"COPY {_qualified(schema, table)} FROM {db.quote_literal(path)} "
                   f"({_READ_OPTIONS[fmt]});")
    return out


def _write(con, directory: Path, fmt: str) -> dict:
    """Write the tables' files, schema.sql and load.sql into the existing ``directory``."""
    tables = public_tables(con)
    rows = {}
    # one transaction: the files are one consistent snapshot even while others write
    with db.transaction(con):
        for schema, table, _ in tables:
            target = directory / _file_name(schema, table, fmt)
            (count,) = con.execute(
                f"COPY (SELECT * FROM {_qualified(schema, table)}) TO "
                f"{db.quote_literal(str(target))} ({_WRITE_OPTIONS[fmt]})").fetchone()
            rows[_qualified(schema, table).replace('"', "")] = int(count)
    header = [HEADER,
              "-- Recreate the warehouse in a new DuckDB database:",
              f"--   IMPORT DATABASE 'this directory'   (or, inside it: .read {SCHEMA_FILE} then .read {LOAD_FILE})",
              ""]
    (directory / SCHEMA_FILE).write_text(
        "\n".join(header) + "\n\n".join(_schema_script(tables)) + "\n", encoding="utf-8")
    (directory / LOAD_FILE).write_text(
        "\n".join(_load_statements(tables, fmt)) + "\n", encoding="utf-8")
    return {"tables": rows, "format": fmt}


def _new_directory(parent: Path, name: str) -> Path:
    """A new hidden working directory beside the target (same file system, usual permissions)."""
    path = parent / f".{name}.tmp-{uuid.uuid4().hex[:8]}"
    path.mkdir()
    return path


def _is_export(directory: Path) -> bool:
    schema = directory / SCHEMA_FILE
    if not schema.is_file():
        return False
    with open(schema, encoding="utf-8", errors="replace") as f:
        return f.readline().rstrip("\n") == HEADER


def export(con: duckdb.DuckDBPyConnection, directory: str, fmt: str = "parquet",
           replace: bool = False) -> dict:
    """Write every public table to ``directory`` as ``fmt`` files with schema.sql and
    load.sql. The directory must be new or empty; with ``replace`` it may hold an earlier
    export, which is replaced as a whole. The files are written beside it first: on failure
    nothing changes."""
    if fmt not in FORMATS:
        raise IrwError(f"unknown export format {fmt!r}; valid: {', '.join(FORMATS)}")
    target = Path(directory)
    full = Path(os.path.abspath(directory))  # also for "." and paths ending in ".."
    if full.exists():
        if not full.is_dir():
            raise IrwError(f"{target} exists and is not a directory")
        if any(full.iterdir()):
            if not replace:
                raise IrwError(f"{target} is not empty; use --replace to replace an earlier export there")
            if not _is_export(full):
                raise IrwError(f"{target} does not hold an irw export (no {SCHEMA_FILE} written by "
                               "irw export): not replacing it")
    parent = full.parent
    if not parent.is_dir():
        raise IrwError(f"directory {parent} does not exist")
    work = _new_directory(parent, full.name)
    try:
        info = _write(con, work, fmt)
        if full.exists():
            # the directory stays (a shell may be in it); its content -- nothing, or an
            # earlier export -- makes way for the new files
            for entry in full.iterdir():
                shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
            for entry in work.iterdir():
                entry.replace(full / entry.name)
            work.rmdir()
        else:
            work.replace(full)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    info["directory"] = str(target)
    return info


def _database_path(con) -> str | None:
    row = con.execute("SELECT path FROM duckdb_databases() "
                      "WHERE database_name = current_database()").fetchone()
    return row[0] if row and row[0] else None


def _make_current(new: duckdb.DuckDBPyConnection) -> None:
    """A published copy is the warehouse as it stands: record that (so that nothing is taken
    for a change made outside irw) and materialize the base relation of every loaded qrels,
    so that the measure macros answer as fast as in the warehouse itself."""
    from . import evaluate, state

    new.execute("INSERT OR REPLACE INTO irw_meta VALUES ('schema_version', ?), ('schema_fingerprint', ?)",
                [db.SCHEMA_VERSION, db.schema_fingerprint()])
    state.record_runs(new)
    for (name,) in new.execute("SELECT qrels FROM qrels_info ORDER BY qrels").fetchall():
        state.record_qrels(new, name)
    evaluate.ensure_bases(new)


def publish(con: duckdb.DuckDBPyConnection, out: str, replace: bool = False) -> dict:
    """Write a compact DuckDB file ``out`` for dashboards and other read-only clients: every
    public table, view and macro, in :data:`irwarehouse.storage.STORAGE_VERSION`, with the
    base relation of every loaded qrels materialized (for the measure macros). An existing ``out`` is replaced only with ``replace``; it is replaced at once,
    when the new file is complete."""
    target, full = Path(out), Path(os.path.abspath(out))
    source = _database_path(con)
    if source and full.exists() and os.path.samefile(source, full):
        raise IrwError(f"{target} is the warehouse being published: choose another file")
    if full.exists() and not replace:
        raise IrwError(f"{target} exists; use --replace to overwrite it")
    if full.exists() and not full.is_file():
        raise IrwError(f"{target} exists and is not a file")
    parent = full.parent
    if not parent.is_dir():
        raise IrwError(f"directory {parent} does not exist")
    with tempfile.TemporaryDirectory(prefix=f".{full.name}.", dir=parent) as work:
        files = Path(work) / "files"
        files.mkdir()
        info = _write(con, files, "parquet")
        tables = public_tables(con)
        snapshot = Path(work) / "snapshot.duckdb"
        storage.create_file(str(snapshot))
        new = duckdb.connect(str(snapshot))
        try:
            db.configure(new)
            with db.transaction(new):
                for statement in _schema_script(tables) + _load_statements(tables, "parquet", files):
                    new.execute(statement)
                _make_current(new)
            info["views"] = new.execute(
                "SELECT count(*) FROM duckdb_views() WHERE NOT internal "
                "AND database_name = current_database()").fetchone()[0]
            info["macros"] = new.execute(
                "SELECT count(*) FROM duckdb_functions() WHERE NOT internal "
                "AND database_name = current_database() "
                "AND function_type IN ('macro', 'table_macro')").fetchone()[0]
            info["storage_version"] = storage.storage_version(new)
            new.execute("CHECKPOINT")
        finally:
            new.close()
        wal = Path(str(full) + ".wal")
        if wal.exists():  # left by a client that wrote to the file being replaced
            wal.unlink()
        snapshot.replace(full)
    info["file"] = str(target)
    info["bytes"] = full.stat().st_size
    return info
