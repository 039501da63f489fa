"""Copies of the warehouse for other tools.

``export(con, directory, fmt)`` writes every public table as a Parquet or CSV file, with
``schema.sql`` (the tables, then every view and macro) and ``load.sql`` (the data, from the
files by relative path) -- DuckDB's own export layout, so ``IMPORT DATABASE 'DIR'`` (or
``.read schema.sql`` and ``.read load.sql`` inside DIR) gives a working warehouse in any
DuckDB 1.4.2 or later (connection.OLDEST_READER), without this package.

``publish(con, out)`` writes a compact DuckDB file for dashboards: the same tables, views
and macros, in the storage version every current DuckDB client reads (connection.STORAGE_VERSION),
without the internal caches.

The views and macros come from :func:`irwarehouse.schema.schema_statements`, the statements that
create them in every warehouse; the tables' definitions from the warehouse's own catalogue.
Tables whose names start with ``irw_`` are internal caches and bookkeeping: they are not
copied (they are derived from the public tables, irw rebuilds them when needed, and a copy
would describe the source file rather than the copy); the copies get them empty, from the
schema statements, so irw can also work on a recreated or published warehouse.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import duckdb

from . import connection, files, schema, sql, state
from .engine.base import ensure_bases
from .errors import IrwError, shown

FORMATS = ("parquet", "csv")
SCHEMA_FILE = "schema.sql"
LOAD_FILE = "load.sql"
HEADER = "-- Written by irw export (irwarehouse)"
# How the data files are written and read back: sql/export.sql (options).


def public_tables(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str, str]]:
    """(schema, table, CREATE TABLE statement) of every public table of the warehouse: all
    its tables except the internal ``irw_*`` ones (and temporary tables)."""
    return con.execute(sql.statement("export.sql", "public_tables")).fetchall()


def _qualified(schema: str, table: str) -> str:
    return sql.quote_ident(table) if schema == "main" else f"{sql.quote_ident(schema)}.{sql.quote_ident(table)}"


_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
MAX_NAME = 255  # bytes of a file name on common file systems


def _safe(name: str) -> str:
    """``name`` as part of a file name: letters, digits, ``_`` and ``-`` as they are, every
    other byte of its UTF-8 (``/``, ``.``, ``%``, white space...) as ``%XX``. Different
    names give different file names, and none leads out of the directory."""
    return "".join(c if c in _SAFE else "".join(f"%{b:02X}" for b in c.encode("utf-8")) for c in name)


def _file_name(schema: str, table: str, fmt: str) -> str:
    """The file an export writes a table to, inside its directory (:func:`_safe`); a name
    too long for a file name is refused."""
    name = (_safe(table) if schema == "main" else f"{_safe(schema)}.{_safe(table)}") + f".{fmt}"
    if len(name.encode()) > MAX_NAME:
        raise IrwError(f"table {shown(table)}{'' if schema == 'main' else ' of schema ' + shown(schema)} "
                       "cannot be exported: its name is too long for a file name; rename it "
                       "(irw sql --write \"ALTER TABLE ... RENAME TO ...\")")
    return name


def _schema_script(tables: list[tuple[str, str, str]]) -> list[str]:
    """The statements that create the sequences (which the check of runs draws from), the
    tables (as the warehouse defines them), then every view and macro (as every warehouse
    gets them), and record the schema version (without it, the copy would be a database
    holding tables but no irw warehouse)."""
    statements = [sql.statement("export.sql", "create_schema", s)
                  for s in sorted({s for s, _, _ in tables if s != "main"})]
    statements += schema.sequence_statements()
    statements += [ddl if ddl.rstrip().endswith(";") else ddl + ";" for _, _, ddl in tables]
    return statements + schema.schema_statements() + [
        sql.statement("export.sql", "schema_version", connection.SCHEMA_VERSION)]


def _load_statements(tables, fmt: str, directory: Path | None = None) -> list[str]:
    """COPY ... FROM each table's file: by name (relative) or inside ``directory``."""
    out = []
    for owner, table, _ in tables:
        name = _file_name(owner, table, fmt)
        path = name if directory is None else str(directory / name)
        out.append(sql.statement("export.sql", "load_table", _qualified(owner, table), path, fmt))
    return out


def _write(con, directory: Path, fmt: str) -> dict:
    """Write the tables' files, schema.sql and load.sql into the existing ``directory``."""
    tables = public_tables(con)
    rows = {}
    # one transaction: the files are one consistent snapshot even while others write
    with connection.transaction(con):
        for owner, table, _ in tables:
            target = directory / _file_name(owner, table, fmt)
            (count,) = con.execute(sql.statement("export.sql", "write_table", _qualified(owner, table),
                                                 str(target), fmt)).fetchone()
            rows[_qualified(owner, table).replace('"', "")] = int(count)
    header = [HEADER,
              "-- Recreate the warehouse in a new DuckDB database:",
              f"--   IMPORT DATABASE 'this directory'   (or, inside it: .read {SCHEMA_FILE} then .read {LOAD_FILE})",
              ""]
    (directory / SCHEMA_FILE).write_text(
        "\n".join(header) + "\n\n".join(_schema_script(tables)) + "\n", encoding="utf-8")
    (directory / LOAD_FILE).write_text(
        "\n".join(_load_statements(tables, fmt)) + "\n", encoding="utf-8")
    return {"tables": rows, "format": fmt}


def _is_export(directory: Path) -> bool:
    schema = directory / SCHEMA_FILE
    if not schema.is_file():
        return False
    with open(schema, encoding="utf-8", errors="replace") as f:
        return f.readline().rstrip("\n") == HEADER


_LOADED = re.compile(r"^COPY .* FROM '((?:[^']|'')*)' \(", re.M)


def _export_files(directory: Path) -> set[str]:
    """The files an earlier export wrote into ``directory``: schema.sql, load.sql and the
    data files load.sql reads."""
    try:
        text = (directory / LOAD_FILE).read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    return {SCHEMA_FILE, LOAD_FILE} | {m.replace("''", "'") for m in _LOADED.findall(text)
                                        if "/" not in m and m not in (".", "..")}


def export(con: duckdb.DuckDBPyConnection, directory: str, fmt: str = "parquet",
           replace: bool = False) -> dict:
    """Write every public table to ``directory`` as ``fmt`` files with schema.sql and
    load.sql. The directory must be new or empty; with ``replace`` it may hold an earlier
    export, whose files are replaced -- any other file in it is left as it is (and one the
    new export would write over is an error). The files are written in a new directory
    beside it first (files.file_beside): on failure nothing changes."""
    if fmt not in FORMATS:
        raise IrwError(f"unknown export format {fmt!r}; valid: {', '.join(FORMATS)}")
    if directory is None or not str(directory).strip():
        raise IrwError("no directory given for the export")
    target = Path(directory)
    full = Path(os.path.abspath(directory))  # also for "." and paths ending in ".."
    warehouse = connection.database_path(con)
    if warehouse and full.exists() and files._same(full, warehouse):
        raise IrwError(f"{target} is the warehouse: choose a directory for the export")
    old: set[str] = set()
    if full.exists():
        if not full.is_dir():
            raise IrwError(f"{target} exists and is not a directory"
                           + (" (it is a DuckDB database)" if files.is_database(full) else ""))
        present = {p.name for p in full.iterdir()}
        if present:
            if not replace:
                raise IrwError(f"{target} is not empty; use --replace to replace an earlier export there")
            if not _is_export(full):
                raise IrwError(f"{target} does not hold an irw export (no {SCHEMA_FILE} written by "
                               "irw export): not replacing it")
            old = _export_files(full) & present
    parent = full.parent
    if not parent.is_dir():
        raise IrwError(f"directory {parent} does not exist")
    with files.file_beside(full, make="directory") as work:  # recorded: a kill -9 leaves nothing
        info = _write(con, work, fmt)
        new = {p.name for p in work.iterdir()}
        if full.exists():
            foreign = sorted(n for n in new if (full / n).exists() and n not in old)
            if foreign:
                raise IrwError(f"{target / foreign[0]} was not written by irw export: move it away "
                               "(the export would write over it)")
            # the directory stays (a shell may be in it), and so does everything in it that
            # the earlier export did not write; the earlier export's files make way
            for name in old - new:
                entry = full / name
                shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
            for entry in work.iterdir():
                os.replace(entry, full / entry.name)
            work.rmdir()
        else:
            os.replace(work, full)
    info.update(directory=str(target), schema_file=SCHEMA_FILE, load_file=LOAD_FILE)
    return info


def _make_current(new: duckdb.DuckDBPyConnection) -> None:
    """A published copy is the warehouse as it stands: record that (so that nothing is taken
    for a change made outside irw) and materialize the base relation of every loaded qrels,
    so that the measure macros answer as fast as in the warehouse itself."""
    new.executemany(sql.statement("install.sql", "set_meta"),
                    [("schema_version", connection.SCHEMA_VERSION),
                     ("schema_fingerprint", schema.schema_fingerprint())])
    state.record_runs(new)
    state.record_qrels(new, [name for (name,) in new.execute("SELECT qrels FROM qrels_info ORDER BY qrels").fetchall()])
    ensure_bases(new)


def is_published_copy(path: Path, wait: float | None = None) -> bool:
    """Is ``path`` a copy ``irw publish`` wrote (which ``publish --replace`` may replace)? A
    copy a client holds open for writing is not replaced (its writes would be lost): after
    ``wait`` seconds (as for the warehouse), an error names the client."""
    deadline = connection.Deadline(wait)
    while True:
        try:
            con = connection.open_duckdb(str(path), read_only=True)
            break
        except duckdb.Error as exc:
            if not connection.is_locked(exc):
                return False
            if deadline.expired():
                raise IrwError(f"{path} is open for writing in {connection.lock_holder(exc)}: "
                               "a published copy is replaced only while its clients read it; open "
                               "it read-only (duckdb -readonly, read_only=True) and publish again") from None
            deadline.sleep()
    try:
        if not connection.has_table(con, "irw_meta"):
            return False
        return bool(con.execute("SELECT count(*) FROM irw_meta WHERE key = ?", [connection.PUBLISHED_KEY]).fetchall()[0][0])
    finally:
        con.close()


def publish(con: duckdb.DuckDBPyConnection, out: str, replace: bool = False,
            wait: float | None = None) -> dict:
    """Write a compact DuckDB file ``out`` for dashboards and other read-only clients: every
    public table, view and macro, in :data:`irwarehouse.connection.STORAGE_VERSION`, with the
    base relation of every loaded qrels materialized (for the measure macros). The copy is
    marked as published (irw_meta); an existing ``out`` is replaced only with ``replace``
    and only when it is such a copy -- never the warehouse or another database. It is
    replaced at once, when the new file is complete (files.output_file)."""
    source = connection.database_path(con)
    with files.output_file(out, replace=replace, what="published copy",
                           protected=(source,) if source else (),
                           replaceable=lambda path: is_published_copy(path, wait),
                           source="the warehouse being published") as snapshot:
        with files.temporary_directory("publish") as work:
            parquet = Path(work) / "files"
            parquet.mkdir()
            info = _write(con, parquet, "parquet")
            tables = public_tables(con)
            connection.create_file(str(snapshot))
            new = connection.open_duckdb(str(snapshot))
            try:
                connection.configure(new)
                with connection.transaction(new):
                    for statement in _schema_script(tables) + _load_statements(tables, "parquet", parquet):
                        new.execute(statement)
                    _make_current(new)
                    new.execute(sql.statement("install.sql", "set_meta"),
                                [connection.PUBLISHED_KEY, source or ":memory:"])
                info["views"] = new.execute(sql.statement("export.sql", "count_views")).fetchone()[0]
                info["macros"] = new.execute(sql.statement("export.sql", "count_macros")).fetchone()[0]
                info["storage_version"] = connection.storage_version(new)
                info["readers"] = f"DuckDB {connection.OLDEST_READER} and later"
                new.execute(sql.statement("export.sql", "checkpoint"))
            finally:
                new.close()
        wal = Path(str(out) + ".wal")
        if wal.exists():  # left by a client that wrote to the file being replaced
            wal.unlink()
    info["file"] = str(out)
    info["bytes"] = Path(out).stat().st_size
    return info
