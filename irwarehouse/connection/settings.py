"""DuckDB's settings: the warehouse's path and versions, the memory limit, the one place a
DuckDB connection is made (:func:`open_duckdb`) and the settings every one is given
(:func:`configure`), and small look-ups every floor above asks of a connection.
"""

from __future__ import annotations

import contextlib
import os
import re
import weakref

import duckdb

from .. import files
from ..errors import Interrupts, IrwError, shown
from ..sql import quote_literal


DEFAULT_DB = "irw.duckdb"
PUBLISHED_KEY = "published_from"  # irw_meta: this file is a copy irw publish wrote
# The layout of the warehouse's tables (irwarehouse.schema creates and upgrades it).
SCHEMA_VERSION = "11"  # the steps of each version: irwarehouse.schema.MIGRATIONS
# The oldest DuckDB release that can open files irw creates (DuckDB's
# storage_compatibility_version): DuckDB 2.0 would otherwise write its own format, which
# DuckDB 1.x clients (the DuckDB CLI, BI tools that pin duckdb<2) cannot read. A file keeps
# the version it was created with.
STORAGE_VERSION = "v1.4.0"
# The oldest DuckDB that reads what irw writes -- a warehouse, its published copy, its
# export -- with every view and macro. DuckDB 1.4.0 and 1.4.1 open a file in STORAGE_VERSION
# but fail in every measure macro ("Table with name wide does not exist"). Tested at this
# release and at the one before it (tests/test_clients.py). irw itself needs more (the
# duckdb range of pyproject.toml).
OLDEST_READER = "1.4.2"


def resolve_path(path: str | None) -> str:
    return path or os.environ.get("IRW_DB") or DEFAULT_DB


DEFAULT_WAIT = 30.0  # seconds to wait for a warehouse another process holds


# DuckDB's memory: a share of the machine's memory, capped, so that a load or an evaluation
# holds a bounded resident size whatever the archive (DuckDB spills to disk beyond it).
MEMORY_SHARE = 0.5


MEMORY_CAP = 2 * 2**30  # bytes


_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([KMGT]i?B|B)\s*", re.I)


def memory_limit(limit: str | None = None) -> str:
    """DuckDB's memory limit: ``limit``, else $IRW_MEMORY_LIMIT, else half the machine's
    memory capped at 2 GiB (e.g. '2048MiB'). A limit is a positive size with its unit."""
    if limit is None:
        limit = os.environ.get("IRW_MEMORY_LIMIT") or None
    if limit is not None:
        text = str(limit).strip()
        match = _SIZE.fullmatch(text)
        if not match or float(match.group(1)) <= 0:
            raise IrwError(f"memory limit {shown(text)} is not a size (write e.g. 2GB, 1500MB, 4GiB)")
        return text
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        total = MEMORY_CAP
    return f"{min(int(total * MEMORY_SHARE), MEMORY_CAP) // 2**20}MiB"


_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


def memory_bytes(con: duckdb.DuckDBPyConnection) -> int:
    """The connection's memory limit in bytes (DuckDB shows it as e.g. '1.9 GiB')."""
    text = con.execute("SELECT current_setting('memory_limit')").fetchone()[0]
    match = re.fullmatch(r"\s*([0-9.]+)\s*([A-Za-z]*)\s*", str(text))
    if not match or match.group(2).lower() not in _UNITS:
        return MEMORY_CAP
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


_given_limit: str | None = None


def memory_limit_text() -> str:
    """The memory limit of this process's connections, for messages: as the user gave it
    (``--memory-limit``, IRW_MEMORY_LIMIT), else the default with its size."""
    return _given_limit or f"the default, {memory_limit()}"


# What every DuckDB connection irw opens is given when it is made (open_duckdb): DuckDB never
# installs or loads an extension by itself -- a query naming read_xlsx, or a file DuckDB would
# read with its sqlite extension, fails instead of fetching and running code. And DuckDB
# draws no progress bar (a connection's own setting, set once it is made) on standard
# output, where irw writes tables, CSV and JSON.
DUCKDB_CONFIG = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}


def open_duckdb(path: str = ":memory:", read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection: the one place every connection irw opens -- a warehouse, a
    load's staging connection, a copy being published, a fast path's own -- is made, with
    :data:`DUCKDB_CONFIG`. A warehouse file is opened by :func:`connect` (which comes
    here), not directly. It is recorded among the open connections that an interrupt stops
    (:func:`interrupt_all`)."""
    con = duckdb.connect(path, read_only=read_only, config=dict(DUCKDB_CONFIG))
    try:
        con.execute("SET enable_progress_bar = false")
    except duckdb.Error:  # the file's DuckDB is in the sandbox of another connection: locked
        pass
    _opened.add(con)
    return con


# The connections open_duckdb made that are still alive (weakly held: a closed and dropped
# connection leaves by itself).
_opened: weakref.WeakSet = weakref.WeakSet()


def interrupt_all() -> None:
    """Stop the query each open connection of this process runs (DuckDB's ``interrupt``;
    one that runs none, or is closed, is left as it is). Called by the interrupt handler
    (irwarehouse.errors.Interrupts.handler) before it raises KeyboardInterrupt: a query
    running in DuckDB does not return to Python, where the interrupt is raised, until it ends;
    interrupted, it fails at once, and its transaction is rolled back (:func:`transaction`)."""
    for con in list(_opened):
        with contextlib.suppress(duckdb.Error):
            con.interrupt()


if interrupt_all not in Interrupts.stops:
    Interrupts.stops.append(interrupt_all)


def configure(con: duckdb.DuckDBPyConnection, limit: str | None = None) -> None:
    """Settings of every connection irw opens: no progress bar (irw's stdout is its own), the
    memory limit (:func:`memory_limit`), and a private directory, in this process's temporary
    directory (irwarehouse.files.temp_path), to which DuckDB spills what does not fit (created
    on demand and removed by DuckDB when the connection closes)."""
    if is_configuration_locked(con):
        # a database this process holds open already, whose DuckDB users' SQL put in the
        # sandbox (Sandbox): configured by its first connection, and locked since
        return
    con.execute("SET enable_progress_bar = false")
    spill = files.temp_path("spill")
    try:
        con.execute(f"SET temp_directory = {quote_literal(spill)}")
    except duckdb.Error:
        pass  # a database this process already opened, and spilled from: it keeps its directory
    global _given_limit
    given = limit if limit is not None else (os.environ.get("IRW_MEMORY_LIMIT") or None)
    value = memory_limit(limit)
    if given is not None:
        _given_limit = str(given).strip()
    try:
        con.execute(f"SET memory_limit = {quote_literal(value)}")
    except duckdb.Error:
        raise IrwError(f"memory limit {shown(value)} is not a size (write e.g. 2GB, 1500MB, 4GiB)") from None


def is_configuration_locked(con) -> bool:
    return bool(con.execute("SELECT current_setting('lock_configuration')").fetchone()[0])


def storage_version(con: duckdb.DuckDBPyConnection) -> str | None:
    """The storage version of the connection's database file, e.g. ``'v1.4.0+'`` (None in
    memory)."""
    row = con.execute("SELECT tags['storage_version'] FROM duckdb_databases() "
                      "WHERE database_name = current_database()").fetchone()
    return row[0] if row and row[0] else None


def database_path(con) -> str | None:
    """The file of the connection's current database (None in memory)."""
    row = con.execute("SELECT path FROM duckdb_databases() "
                      "WHERE database_name = current_database()").fetchall()
    return row[0][0] if row and row[0][0] else None


def settle(con) -> None:
    """Finish the connection's pending result of execute() (DuckDB 2 refuses its relational
    API, ``con.sql``, while one is open; DuckDB 1.4 has none to finish)."""
    complete = getattr(con, "complete", None)
    if complete is not None:
        complete()


def register(con, name: str, frame) -> None:
    """``con.register(name, frame)`` after finishing a pending result (see :func:`settle`)."""
    settle(con)
    con.register(name, frame)


def unregister(con, name: str) -> None:
    """``con.unregister(name)`` after finishing a pending result (see :func:`settle`)."""
    settle(con)
    con.unregister(name)


def has_table(con, name: str, temporary: bool = False) -> bool:
    """Does the database (or, with ``temporary``, the session) have the table ``name``?
    (Asked rather than tried: inside a transaction a failed query aborts the transaction.)"""
    where = ("temporary" if temporary else
             "NOT temporary AND database_name = current_database() AND schema_name = 'main'")
    return con.execute(f"SELECT count(*) FROM duckdb_tables() WHERE {where} AND table_name = ?",
                       [name]).fetchall()[0][0] > 0


def stored_meta(con) -> dict[str, str]:
    if not has_table(con, "irw_meta"):  # a new warehouse, or not a warehouse
        return {}
    return dict(con.execute("SELECT key, value FROM irw_meta").fetchall())
