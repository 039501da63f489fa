"""Connections: opening a warehouse file (and waiting for it), DuckDB's settings,
transactions, the storage version of new files, and the engine protocol.

This is the lowest floor that touches a database. It knows nothing of the schema: a
warehouse is opened and checked here (:func:`connect`), and made ready for commands --
schema set up, changes made outside irw reconciled -- one floor up (irwarehouse.schema).

DuckDB lets one process write a file, or several read it: a file another process holds is
retried for ``wait`` seconds, then reported with the process that holds it. A load reads
and ranks its files in a connection of its own (:class:`Staging`), which attaches the
warehouse only for its final transaction.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import re
import tempfile
import uuid
from contextlib import contextmanager
from pathlib import Path

import duckdb

from .errors import Interrupts, IrwError, inline, shown
from .files import TEMP_PREFIX, sweep
from .result import Result
from .sql import quote_literal, used

DEFAULT_DB = "irw.duckdb"
PUBLISHED_KEY = "published_from"  # irw_meta: this file is a copy irw publish wrote
# The layout of the warehouse's tables (irwarehouse.schema creates and upgrades it).
SCHEMA_VERSION = "7"  # the steps of each version: irwarehouse.schema.MIGRATIONS
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


_configured_limit: str | None = None


def memory_limit_text() -> str:
    """The memory limit the last connection was given (for messages)."""
    return _configured_limit or "the default"


def configure(con: duckdb.DuckDBPyConnection, limit: str | None = None) -> None:
    """Settings of every connection irw opens: no progress bar (irw's stdout is its own), the
    memory limit (:func:`memory_limit`), and a private directory, under the system's temporary
    directory, to which DuckDB spills what does not fit (created on demand and removed by
    DuckDB when the connection closes)."""
    con.execute("SET enable_progress_bar = false")
    sweep()  # what killed irw processes left in the temporary directory
    spill = os.path.join(tempfile.gettempdir(), f"{TEMP_PREFIX}spill-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        con.execute(f"SET temp_directory = {quote_literal(spill)}")
    except duckdb.Error:
        pass  # a database this process already opened, and spilled from: it keeps its directory
    global _configured_limit
    value = memory_limit(limit)
    _configured_limit = value
    try:
        con.execute(f"SET memory_limit = {quote_literal(value)}")
    except duckdb.Error:
        raise IrwError(f"memory limit {shown(value)} is not a size (write e.g. 2GB, 1500MB, 4GiB)") from None


@contextmanager
def unordered(con):
    """Bulk work that keeps no insertion order: the statements of a load, of the base and of
    an evaluation say ORDER BY wherever order matters, and without insertion order DuckDB
    writes large results in parallel and in less memory. Elsewhere (users' SQL, exports) a
    query without ORDER BY keeps the order rows were stored in, as in any DuckDB client."""
    before = con.execute("SELECT current_setting('preserve_insertion_order')").fetchone()[0]
    con.execute("SET preserve_insertion_order = false")
    try:
        yield
    finally:
        if before:
            con.execute("SET preserve_insertion_order = true")


def without_order(fn):
    """``fn(con, ...)`` run :func:`unordered`."""
    @functools.wraps(fn)
    def call(con, *args, **kwargs):
        with unordered(con):
            return fn(con, *args, **kwargs)
    return call


def connect(path: str | None = None, read_only: bool = False, create: bool = True,
            wait: float | None = None, memory: str | None = None) -> duckdb.DuckDBPyConnection:
    """Open the warehouse file ``path`` (``:memory:`` for a throw-away one), creating it only
    with ``create`` (in :data:`STORAGE_VERSION`), and check that it is an irw warehouse of a
    layout this irw reads (a new, empty database is one). A file another process holds is
    retried for ``wait`` seconds (default DEFAULT_WAIT, or $IRW_WAIT), then reported with the
    process that holds it. ``memory``: DuckDB's memory limit (see :func:`memory_limit`)."""
    path = resolve_path(path)
    if path != ":memory:" and not Path(path).exists() and (read_only or not create):
        raise IrwError(f"no warehouse at {path}: create one by loading qrels or runs "
                       "(irw load qrels FILE --name NAME, irw load runs FILES), or choose the file "
                       "with --db or IRW_DB")
    if not read_only and path != ":memory:" and not Path(path).exists():
        _check_new_file(path)
        create_file(path)
    con = _waiting(lambda: duckdb.connect(path, read_only=read_only and path != ":memory:"),
                   path, read_only, wait)
    try:
        configure(con, memory)
        check_warehouse(con, path)
    except BaseException:
        con.close()
        raise
    return con


def _check_new_file(path: str) -> None:
    """A new warehouse file can be made at ``path``, or an error that says why not."""
    parent = Path(path).absolute().parent
    if not parent.is_dir():
        raise IrwError(f"cannot create the warehouse {path}: the directory {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise IrwError(f"cannot create the warehouse {path}: the directory {parent} is not writable")


def open_problem(path: str, exc: Exception) -> str:
    """One line saying why DuckDB could not open ``path``."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if "not a valid DuckDB database file" in text:
        return f"{path} is not a DuckDB database, so not an irw warehouse: choose another --db"
    return f"cannot open the warehouse {path}: {text}"


def check_warehouse(con: duckdb.DuckDBPyConnection, path: str) -> None:
    """Refuse a DuckDB database that is not an irw warehouse (it has tables or views but no
    irw schema version) or that a newer irwarehouse wrote (a newer schema version): irw
    neither reads nor changes them. An empty database is a new warehouse. A refused
    connection is closed."""
    problem = _warehouse_problem(con, path)
    if problem:
        con.close()
        raise IrwError(problem)


def _warehouse_problem(con: duckdb.DuckDBPyConnection, path: str) -> str | None:
    version = stored_meta(con).get("schema_version")
    if version is None:
        names = {r[0] for r in con.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_catalog = current_database() AND table_schema = 'main'").fetchall()}
        if not names:
            return None
        shown = ", ".join(sorted(names)[:5]) + (", ..." if len(names) > 5 else "")
        return (f"{path} is a DuckDB database but not an irw warehouse (it holds {shown}); "
                "choose another --db")
    if not version.isdigit() or int(version) > int(SCHEMA_VERSION):
        return (f"{path} was written by a newer irwarehouse (warehouse schema version {version}; "
                f"this one reads up to {SCHEMA_VERSION}): upgrade irwarehouse")
    return None


class Staging:
    """A load's connection: an in-memory DuckDB (spilling beyond the memory limit, see
    :func:`configure`) in which files are read, checked and ranked -- the ranked rows of a
    load of several batches in a staging database file it attaches (engine.loading) --
    with the warehouse file attached to it only for the final transaction (``attach``), so that the warehouse is
    locked for that transaction alone and readers may use it while the files are read. For a
    ``:memory:`` warehouse, ``con`` is the warehouse itself (then ``attach`` is None).

    ``prepare(con, path, read_only, notify)`` makes the warehouse ready for the load (its
    schema set up, changes made outside irw reconciled: irwarehouse.schema.prepare); it runs
    in the final transaction, with the load."""

    def __init__(self, path: str | None = None, wait: float | None = None, notify=None,
                 create: bool = True, memory: str | None = None, prepare=None, con=None):
        self.path, self.wait, self.notify, self.prepare = resolve_path(path), wait, notify, prepare
        self.owned = con is None
        if self.path == ":memory:":
            self.con, self.attach = con if con is not None else connect(self.path, memory=memory), None
            if con is None and prepare is not None:
                with transaction(self.con):
                    prepare(self.con, self.path, False, notify)
            return
        if not create and not Path(self.path).exists():
            connect(self.path, create=False)  # the error that says how to create one
        self.con = duckdb.connect(":memory:")
        try:
            configure(self.con, memory)
        except BaseException:
            self.con.close()
            raise
        self.attach = self._attach

    @contextmanager
    def _attach(self):
        created = not Path(self.path).exists()
        if created:  # created only now, and removed if the load fails: a failed first load leaves no file
            _check_new_file(self.path)
            create_file(self.path)
        try:
            _waiting(lambda: self.con.execute(f"ATTACH {quote_literal(self.path)} AS irw_warehouse"),
                     self.path, False, self.wait)
            try:
                self.con.execute("USE irw_warehouse")
                problem = _warehouse_problem(self.con, self.path)
                if problem:
                    raise IrwError(problem)
                with transaction(self.con):  # the set-up and the load: one transaction
                    if self.prepare is not None:
                        self.prepare(self.con, self.path, False, self.notify)
                    yield self.con
            finally:
                self.con.execute("USE memory")
                self.con.execute("DETACH irw_warehouse")
        except BaseException:
            if created:
                for leftover in (self.path, self.path + ".wal"):
                    with contextlib.suppress(FileNotFoundError):
                        os.remove(leftover)
            raise

    def close(self) -> None:
        if self.owned:
            self.con.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _waiting(open_fn, path: str, read_only: bool, wait: float | None):
    """``open_fn()``, retried while another process holds the file, for ``wait`` seconds."""
    import time

    if wait is None:
        text = os.environ.get("IRW_WAIT") or str(DEFAULT_WAIT)
        try:
            wait = float(text)
        except ValueError:
            wait = math.nan
        if not (math.isfinite(wait) and wait >= 0):
            raise IrwError(f"IRW_WAIT {shown(text)} is not a number of seconds >= 0")
    elif not (math.isfinite(wait) and wait >= 0):
        raise IrwError(f"wait {shown(wait)} is not a number of seconds >= 0")
    deadline = time.monotonic() + max(wait, 0.0)
    pause = 0.05
    while True:
        try:
            return open_fn()
        except duckdb.Error as exc:
            if not is_locked(exc):
                raise IrwError(open_problem(path, exc)) from None
            if time.monotonic() >= deadline:
                holder = lock_holder(exc)
                if read_only:
                    raise IrwError(
                        f"the warehouse {path} is in use by {holder}, which is writing it; waited "
                        f"{wait:g} s. Try again when it is done, wait longer (--wait SECONDS), or "
                        "read a published copy (irw publish) meanwhile") from None
                raise IrwError(
                    f"the warehouse {path} is in use by {holder}, which has it open; waited {wait:g} s. "
                    "Try again when it is closed, or wait longer (--wait SECONDS). A client that keeps "
                    "the warehouse open, even read-only, blocks every command that writes: let "
                    "dashboards and notebooks read a published copy (irw publish COPY.duckdb), and "
                    "reconnect them after each publish") from None
            time.sleep(pause)
            pause = min(pause * 2, 0.5)


def is_locked(exc: Exception) -> bool:
    """Did DuckDB refuse to open a file because another process holds it?"""
    return "lock" in str(exc).lower()


def lock_holder(exc: Exception) -> str:
    """The process DuckDB names as holding a file: ``process 4242 (its command line)``."""
    pid = re.search(r"PID (\d+)", str(exc))
    return f"process {pid.group(1)}{_command_of(pid.group(1))}" if pid else "another process"


def _command_of(pid: str) -> str:
    """`` (command line)`` of a process, where the system tells it."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            words = fh.read().split(b"\0")
    except OSError:
        return ""
    # one line whatever the arguments hold (a newline would end the message before its advice)
    text = " ".join(w.decode(errors="replace") for w in words if w)
    return f" ({inline(text[:120])})" if text else ""


def create_file(path: str) -> None:
    """Create an empty DuckDB database file at ``path`` in :data:`STORAGE_VERSION`."""
    con = duckdb.connect()
    try:
        con.execute(f"ATTACH {quote_literal(path)} AS irw_new_file "
                    f"(STORAGE_VERSION {quote_literal(STORAGE_VERSION)})")
        con.execute("DETACH irw_new_file")
    finally:
        con.close()


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


_open_transactions: dict[int, int] = {}


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection):
    """All or nothing: commit on success, roll back on any exception (an interrupt
    included). Nested uses join the outermost transaction (which alone commits or rolls
    back), so that a command is one transaction however its parts are written. The COMMIT
    itself is not interrupted (:class:`Interrupts`)."""
    key = id(con)
    if _open_transactions.get(key):
        _open_transactions[key] += 1
        try:
            yield con
        finally:
            _open_transactions[key] -= 1
        return
    con.execute("BEGIN TRANSACTION")
    _open_transactions[key] = 1
    try:
        yield con
    except BaseException:
        _open_transactions.pop(key, None)
        try:
            con.execute("ROLLBACK")
        except duckdb.Error:  # the connection is gone (closed, or interrupted for good)
            pass
        raise
    else:
        if Interrupts.requested:  # interrupted before: nothing is kept
            _open_transactions.pop(key, None)
            con.execute("ROLLBACK")
            raise KeyboardInterrupt
        _open_transactions.pop(key, None)
        writes = not _read_only(con)
        with Interrupts.deferred():
            con.execute("COMMIT")
            Interrupts.commits += writes


def _read_only(con) -> bool:
    """Is ``con`` a read-only connection (its commits keep nothing)?"""
    return con.execute("SELECT current_setting('access_mode')").fetchall()[0][0] == "read_only"


def in_transaction(con) -> bool:
    """Is an irw transaction open on ``con``?"""
    return bool(_open_transactions.get(id(con)))


# ------------------------------------------------------------------------ the engine protocol

class Engine:
    """What irw's engine-independent work -- catalogue look-ups, run specs, evaluation,
    derived qrels, pool statistics -- asks of an SQL engine. DuckDB (:class:`DuckDBEngine`)
    and Spark (irwarehouse.spark.SparkEngine) implement it; a third engine is a branch of
    each macro of ``sql/_dialect.sql`` and one class.

    - ``dialect``: the branch of the templates it runs (irwarehouse.sql.DIALECTS);
    - ``caches_base``: whether the warehouse's materialized base relation (``irw_base``) may
      be used (DuckDB, but in a throw-away warehouse) or the base is computed from the tables
      (Spark);
    - ``rows(sql, params)``: run a query, its rows as tuples;
    - ``relation(sql, params)``: a query's result as the engine's own relation (a DuckDB
      relation, a Spark DataFrame), computed when it is read or written;
    - ``keep(name, sql, params)`` / ``drop(name)``: an intermediate result that later
      queries use by name (a temporary table; a cached temporary view);
    - ``write(table, relation)``: store a relation's rows in the table ``table`` of the
      warehouse (DuckDB) or of the results (Spark: written as Parquet);
    - ``read(sql, params)``: a query's result, read (an irwarehouse.result.Result).

    Queries name their parameters ``$name`` (the dialect's ``param`` macro renders them for
    the engine; hand-written look-ups use ``$name``, which other engines translate)."""

    dialect = "duckdb"
    caches_base = False

    def rows(self, sql: str, params: dict | None = None) -> list[tuple]:
        raise NotImplementedError

    def relation(self, sql: str, params: dict | None = None):
        raise NotImplementedError

    def keep(self, name: str, sql: str, params: dict | None = None) -> None:
        raise NotImplementedError

    def drop(self, name: str) -> None:
        raise NotImplementedError

    def write(self, table: str, relation) -> None:
        raise NotImplementedError

    def read(self, sql: str, params: dict | None = None):
        """A query's result, read: an irwarehouse.result.Result."""
        raise NotImplementedError

    def one(self, sql: str, params: dict | None = None):
        """The first row of a query (None when there is none)."""
        rows = self.rows(sql, params)
        return rows[0] if rows else None


class DuckDBEngine(Engine):
    """The engine protocol over a DuckDB connection (the warehouse's, or a staging one)."""

    dialect = "duckdb"

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self.con = con

    @property
    def caches_base(self) -> bool:
        """True but in a throw-away warehouse (:func:`mark_throwaway`)."""
        return not is_throwaway(self.con)

    def rows(self, sql: str, params: dict | None = None) -> list[tuple]:
        bound = used(params, sql) if isinstance(params, dict) else params
        return self.con.execute(sql, bound or []).fetchall()

    def relation(self, sql: str, params: dict | None = None):
        settle(self.con)
        bound = used(params or {}, sql)
        return self.con.sql(sql, params=bound) if bound else self.con.sql(sql)

    def keep(self, name: str, sql: str, params: dict | None = None) -> None:
        self.con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS {sql}", used(params or {}, sql))

    def drop(self, name: str) -> None:
        self.con.execute(f"DROP TABLE IF EXISTS temp.{name}")

    def write(self, table: str, relation) -> None:
        relation.insert_into(table)

    def read(self, sql: str, params: dict | None = None) -> Result:
        cursor = self.con.execute(sql, used(params or {}, sql))
        columns = [d[0] for d in cursor.description]
        return Result(columns, cursor.fetchall())


# A DuckDB variable that marks a connection as a throw-away warehouse.
_THROWAWAY = "irw_throwaway"


def mark_throwaway(con: duckdb.DuckDBPyConnection) -> None:
    """Mark ``con`` as a throw-away warehouse: one in memory that serves one evaluation and is
    closed (files in, scores out: Warehouse.eval_files). Caches written there would be read
    once, so the engine computes the base relation within its query instead of
    materializing it first (the same rows, by the same template)."""
    con.execute(f"SET VARIABLE {_THROWAWAY} = true")


def is_throwaway(con: duckdb.DuckDBPyConnection) -> bool:
    return bool(con.execute(f"SELECT getvariable('{_THROWAWAY}')").fetchone()[0])


def engine_of(source) -> Engine:
    """The engine of ``source``: an Engine as it is, a DuckDB connection wrapped, the engine of
    a warehouse (an object with an ``engine``: irwarehouse.api.Warehouse, SparkWarehouse)."""
    if isinstance(source, Engine):
        return source
    if isinstance(getattr(source, "engine", None), Engine):
        return source.engine
    return DuckDBEngine(source)
