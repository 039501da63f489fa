"""Connections: opening a warehouse file (and waiting for it), DuckDB's settings,
transactions, the storage version of new files, and the engine protocol.

This is the lowest floor that touches a database. It knows nothing of the schema: a
warehouse is opened and checked here (:func:`connect`), and made ready for commands --
schema set up, changes made outside irw reconciled -- one floor up (irwarehouse.schema).

DuckDB lets one process write a file, or several read it: a file another process holds is
retried for ``wait`` seconds, then reported with the process that holds it. A load reads
and ranks its files in a connection of its own (:class:`Staging`), which attaches the
warehouse only for its final transaction -- or a copy of it, renamed onto it afterwards,
so that readers are not refused at all (:func:`swapped`).

Every DuckDB connection irw opens is made by :func:`open_duckdb`, with DuckDB's extension
auto-loading off; users' SQL runs in DuckDB's own sandbox (:class:`Sandbox`).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import math
import os
import re
import shutil
import stat
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import duckdb

from . import files
from .errors import Interrupts, IrwError, first_error, inline, shown
from .result import Result
from .sql import quote_literal, used

DEFAULT_DB = "irw.duckdb"
PUBLISHED_KEY = "published_from"  # irw_meta: this file is a copy irw publish wrote
# The layout of the warehouse's tables (irwarehouse.schema creates and upgrades it).
SCHEMA_VERSION = "8"  # the steps of each version: irwarehouse.schema.MIGRATIONS
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


# ------------------------------------------------------------------------ DuckDB's settings

# What every DuckDB connection irw opens is given when it is made (open_duckdb): DuckDB never
# installs or loads an extension by itself -- a query naming read_xlsx, or a file DuckDB would
# read with its sqlite extension, fails instead of fetching and running code.
DUCKDB_CONFIG = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}


def open_duckdb(path: str = ":memory:", read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection: the one place every connection irw opens -- a warehouse, a
    load's staging connection, a copy being published, a fast path's own -- is made, with
    :data:`DUCKDB_CONFIG`. A warehouse file is opened by :func:`connect` (which comes
    here), not directly."""
    return duckdb.connect(path, read_only=read_only, config=dict(DUCKDB_CONFIG))


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


class Sandbox:
    """DuckDB's own sandbox for users' SQL (irw sql, Warehouse.sql): external access off
    (``enable_external_access``), so that the SQL reads and writes the warehouse and nothing
    else -- no file read or written, no ATTACH, no INSTALL or LOAD -- but for the
    directories and files the user allowed (``allowed_directories`` / ``allowed_paths``),
    and the configuration locked (``lock_configuration``), so that no statement can undo
    it. DuckDB checks every path itself, however it is spelled (literal, variable, glob,
    ``..``): no parser of irw's decides. DuckDB's own files (the warehouse, its journal,
    the spill directory) stay reachable to DuckDB, and to nothing else. The settings are
    DuckDB's database instance's: every connection of this process to the same file shares
    them, until the last one closes."""

    def __init__(self, directories=(), paths=()):
        self.directories = tuple(sorted(set(directories)))
        self.paths = tuple(sorted(set(paths)))

    def __eq__(self, other):
        return (isinstance(other, Sandbox) and self.directories == other.directories
                and self.paths == other.paths)

    def __hash__(self):
        return hash((self.directories, self.paths))

    def __repr__(self):
        return f"Sandbox(directories={self.directories!r}, paths={self.paths!r})"

    def apply(self, con: duckdb.DuckDBPyConnection) -> None:
        """Put ``con`` in the sandbox, for as long as it lives (DuckDB turns external access
        back on only in a new database instance)."""
        settle(con)
        if is_configuration_locked(con):  # the file's DuckDB, shared with another connection
            if in_sandbox(con) and self._within(con):
                return
            raise IrwError("another connection of this process to the warehouse keeps DuckDB's "
                           "sandbox of an earlier sql call, which allows other files: close it first")
        listed = lambda items: "[" + ", ".join(quote_literal(i) for i in items) + "]"  # noqa: E731
        if self.directories:
            con.execute(f"SET allowed_directories = {listed(self.directories)}")
        if self.paths:
            con.execute(f"SET allowed_paths = {listed(self.paths)}")
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")


    def _within(self, con) -> bool:
        """Does the sandbox ``con`` is in allow what this one allows?"""
        dirs, paths = con.execute("SELECT current_setting('allowed_directories'), "
                                  "current_setting('allowed_paths')").fetchone()
        held = {os.path.abspath(str(x)) for x in list(dirs or []) + list(paths or [])}
        return all(os.path.abspath(str(x)) in held for x in self.directories + self.paths)


def is_configuration_locked(con) -> bool:
    return bool(con.execute("SELECT current_setting('lock_configuration')").fetchone()[0])


def in_sandbox(con) -> bool:
    """Is ``con``'s database in DuckDB's sandbox (external access off)?"""
    return not con.execute("SELECT current_setting('enable_external_access')").fetchone()[0]


@contextmanager
def unordered(con):
    """Bulk work that keeps no insertion order: the statements of a load, of the base and of
    an evaluation say ORDER BY wherever order matters, and without insertion order DuckDB
    writes large results in parallel and in less memory. Elsewhere (users' SQL, exports) a
    query without ORDER BY keeps the order rows were stored in, as in any DuckDB client. A
    connection in the sandbox (its configuration locked: :class:`Sandbox`) keeps the order.
    When the work fails, the setting is put back only if the transaction still allows it:
    the work's own error is the one to report, not that of a statement after it."""
    before, locked = con.execute("SELECT current_setting('preserve_insertion_order'), "
                                 "current_setting('lock_configuration')").fetchone()
    if locked or not before:
        yield
        return
    con.execute("SET preserve_insertion_order = false")
    try:
        yield
    except BaseException:
        try:
            con.execute("SET preserve_insertion_order = true")
        except duckdb.Error:  # an aborted transaction: restored after its rollback
            _order_to_restore[id(con)] = True
        raise
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
    with ``create`` (in :data:`STORAGE_VERSION`, atomically: :func:`create_file`), and check
    that it is an irw warehouse of a layout this irw reads (a new, empty database is one).
    A file another process holds -- or a directory where another process is creating a
    warehouse -- is waited for ``wait`` seconds (default DEFAULT_WAIT, or $IRW_WAIT), then
    reported with the process that holds it. ``memory``: DuckDB's memory limit (see
    :func:`memory_limit`)."""
    path = resolve_path(path)
    if path == ":memory:":
        con = open_duckdb(path)
    else:
        deadline = Deadline(wait)
        check_path(path)
        if not Path(path).exists():
            if read_only or not create:
                raise IrwError(_no_warehouse(path))
            _create_once(path, deadline)

        def attempt():
            with directory_lock(path, exclusive=False, deadline=deadline):
                if not Path(path).exists():  # removed by a first load that failed meanwhile
                    raise IrwError(_no_warehouse(path))
                check_path(path)
                return open_duckdb(path, read_only=read_only)

        con = deadline.retry(attempt, path, read_only)
    try:
        configure(con, memory)
        check_warehouse(con, path)
    except BaseException:
        con.close()
        raise
    return con


def _no_warehouse(path: str) -> str:
    return (f"no warehouse at {path}: create one by loading qrels or runs "
            "(irw load qrels FILE --name NAME, irw load runs FILES), or choose the file "
            "with --db or IRW_DB")


def check_path(path: str) -> None:
    """Refuse at once a warehouse path that is no database file: a directory, a named pipe,
    a device (which DuckDB could wait on forever), or a file that is not a DuckDB database
    (read from its header: a SQLite file never reaches DuckDB, which would want an
    extension to read it)."""
    kind = files.file_kind(path)
    if kind is not None:
        raise IrwError(f"{path} is {kind}, not a warehouse file: choose another --db")
    if Path(path).exists() and not files.is_database(path):
        raise IrwError(f"{path} is not a DuckDB database, so not an irw warehouse: choose another --db")


def _check_new_file(path: str) -> None:
    """A new warehouse file can be made at ``path``, or an error that says why not."""
    parent = Path(path).absolute().parent
    if not parent.is_dir():
        raise IrwError(f"cannot create the warehouse {path}: the directory {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise IrwError(f"cannot create the warehouse {path}: the directory {parent} is not writable")


def open_problem(path: str, exc: Exception) -> str:
    """One line saying why DuckDB could not open ``path`` (DuckDB's own first line: a
    damaged file says so, it is not taken for a file in use)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
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


_OWN_OBJECTS = """
SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND NOT temporary
UNION ALL SELECT view_name FROM duckdb_views()
WHERE database_name = current_database() AND NOT temporary AND NOT internal
UNION ALL SELECT function_name FROM duckdb_functions()
WHERE database_name = current_database() AND NOT internal AND function_type IN ('macro', 'table_macro')
UNION ALL SELECT sequence_name FROM duckdb_sequences() WHERE database_name = current_database() AND NOT temporary
UNION ALL SELECT 'schema ' || schema_name FROM duckdb_schemas()
WHERE database_name = current_database() AND NOT internal AND schema_name <> 'main'
"""


def _warehouse_problem(con: duckdb.DuckDBPyConnection, path: str) -> str | None:
    version = stored_meta(con).get("schema_version")
    if version is None:
        # an empty database (a new warehouse) has no tables, views, macros, sequences or
        # schemas of its own; one holding any is another program's
        names = {r[0] for r in con.execute(_OWN_OBJECTS).fetchall()}
        if not names:
            return None
        held = ", ".join(sorted(names)[:5]) + (", ..." if len(names) > 5 else "")
        return (f"{path} is a DuckDB database but not an irw warehouse (it holds {held}); "
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

    A load may create the warehouse: the first load into a file that does not exist. It
    then holds the lock of the file's directory (:func:`directory_lock`) from the moment it
    finds no file until its final transaction is committed or the file it made is removed,
    so that a load that fails leaves no file and never removes one another process wrote:
    another command on that file waits for the lock (``wait``), then finds the warehouse
    made, or none.

    ``prepare(con, path, read_only, notify)`` makes the warehouse ready for the load (its
    schema set up, changes made outside irw reconciled: irwarehouse.schema.prepare); it runs
    in the final transaction, with the load."""

    def __init__(self, path: str | None = None, wait: float | None = None, notify=None,
                 create: bool = True, memory: str | None = None, prepare=None, con=None):
        self.path, self.wait, self.notify, self.prepare = resolve_path(path), wait, notify, prepare
        self.create = create
        self.owned = con is None
        if self.path == ":memory:":
            self.con, self.attach = con if con is not None else connect(self.path, memory=memory), None
            if con is None and prepare is not None:
                with transaction(self.con):
                    prepare(self.con, self.path, False, notify)
            return
        check_path(self.path)
        if not create and not Path(self.path).exists():
            raise IrwError(_no_warehouse(self.path))
        Deadline(wait)  # a bad --wait: before any reading
        self.con = open_duckdb()
        try:
            configure(self.con, memory)
        except BaseException:
            self.con.close()
            raise
        self.attach = self._attach

    @contextmanager
    def _attach(self, rows: int = 0):
        """The final transaction of a load that writes about ``rows`` rows: the warehouse
        attached to the staging connection (created first by a first load), or a copy of
        it renamed onto it afterwards (:func:`swapped`)."""
        deadline = Deadline(self.wait)
        while True:
            if Path(self.path).exists() or not self.create:
                with swapped(self.path, rows, deadline) as copy:
                    if copy is not None:  # a file of this process's own: nobody else holds it
                        self.con.execute(f"ATTACH {quote_literal(copy)} AS irw_warehouse")
                        with self._transaction(created=False):
                            yield self.con
                        return

                # a warehouse: attached once no first load of it is under way
                def attempt():
                    with directory_lock(self.path, exclusive=False, deadline=deadline):
                        if not Path(self.path).exists():
                            return False  # a first load that failed removed it: make it anew
                        check_path(self.path)
                        self.con.execute(f"ATTACH {quote_literal(self.path)} AS irw_warehouse")
                        return True

                if deadline.retry(attempt, self.path, False):
                    with self._transaction(created=False):
                        yield self.con
                    return
                if not self.create:
                    raise IrwError(_no_warehouse(self.path))
                continue
            with directory_lock(self.path, exclusive=True, deadline=deadline) as locked:
                if Path(self.path).exists():
                    continue  # another process made it meanwhile: load into it
                _check_new_file(self.path)
                if not create_file(self.path):
                    continue
                try:
                    deadline.retry(lambda: self.con.execute(
                        f"ATTACH {quote_literal(self.path)} AS irw_warehouse"), self.path, False)
                    with self._transaction(created=True):
                        yield self.con
                except BaseException:
                    # the file this load made, and nobody else used (the directory's lock
                    # kept them waiting), goes with the load
                    if locked:
                        for leftover in (self.path, self.path + ".wal"):
                            with contextlib.suppress(FileNotFoundError):
                                os.remove(leftover)
                    raise
            return

    @contextmanager
    def _transaction(self, created: bool):
        """The final transaction on the attached warehouse, then its detaching."""
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

    def close(self) -> None:
        if self.owned:
            self.con.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# ------------------------------------------------------------------------ swapping a copy in

# A load writes into a copy of the warehouse, renamed onto it when done, when copying the
# file costs less than about this many bytes per row the load writes (the copy is read at
# disk speed; a row written costs about as much CPU as copying a few hundred bytes).
SWAP_BYTES_PER_ROW = 64


@contextmanager
def swapped(path: str, rows: int, deadline: "Deadline"):
    """Where a load's final transaction writes: a copy of the warehouse ``path``, renamed onto
    it when the block ends without an error (None: the warehouse itself, see below).

    DuckDB refuses every reader while a process has the file open for writing. A load that
    writes into a copy and renames it onto the warehouse leaves readers reading the old file
    for the whole load: they never wait, and see all of the load or none of it (a reader
    that has the old file open keeps reading it until it reconnects). Meanwhile this process
    holds a reader's lock on the warehouse, so that no one writes it in place, and an
    exclusive flock, so that two such loads take turns (each copies what the other wrote):
    nothing written to the warehouse is lost. Both are taken under the directory's shared
    lock (:func:`directory_lock`: no copy of a warehouse whose first load is under way) and
    waited for until ``deadline`` (``--wait``), as opening a busy warehouse is. Before the
    rename the reader's lock is taken again (a writer in place holding the file refuses it)
    and the file must still be the one copied, else nothing is loaded (POSIX locks do not
    keep a process's own connections out, and closing any descriptor of the file drops
    them: a second connection of the same process writing the warehouse in place meanwhile
    is caught there).

    The copy is a file beside the warehouse that this process records in its temporary
    directory (irwarehouse.files.file_beside): if the process is killed, the next irw
    process removes that copy and its write-ahead log, and nothing else.

    The warehouse is written in place when copying it would cost more than the rows
    (SWAP_BYTES_PER_ROW), when it has a write-ahead log (a writer ended without a
    checkpoint: opening it for writing replays the log), when it is not a plain file of
    this user and one of its groups with one link (a copy would change its owner or group,
    or split its links), when the copy cannot be written (the directory is not writable,
    the disk is full), and where the file system has no flock."""
    real = os.path.realpath(path)
    fd = _swap_locks(real, path, deadline) if _swappable(real, rows) else None
    if fd is None:
        yield None
        return
    with contextlib.ExitStack() as held:
        held.callback(_unlock, fd)
        try:
            if os.path.exists(real + ".wal"):  # left by a writer that ended without a checkpoint
                raise OSError(errno.EEXIST, "a write-ahead log")
            copy = held.enter_context(files.file_beside(real, companions=(".wal",)))
            before = os.fstat(fd)
            _copy_from(fd, str(copy), before.st_size)
            shutil.copymode(real, copy)
            if os.stat(copy).st_gid != before.st_gid:
                os.chown(copy, -1, before.st_gid)
        except (OSError, IrwError):  # written in place instead, nothing held
            held.close()
            yield None
            return
        yield str(copy)
        with Interrupts.deferred():  # the load is committed in the copy: it goes in whole
            try:
                fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # still no writer in place
                now = os.stat(real)
            except OSError:
                now = None
            if (now is None or (now.st_ino, now.st_size, now.st_mtime_ns) != (
                    before.st_ino, before.st_size, before.st_mtime_ns)
                    or os.path.exists(real + ".wal")):
                raise IrwError(f"the warehouse {path} was replaced or changed by another program "
                               "during the load: nothing was loaded; load again")
            with open(copy, "rb+") as fh:
                os.fsync(fh.fileno())
            os.replace(copy, real)
            _sync_directory(os.path.dirname(real))


def _swappable(real: str, rows: int) -> bool:
    """Is the warehouse file ``real`` written into a copy by a load of ``rows`` rows (see
    :func:`swapped`)?"""
    try:
        info = os.stat(real)
    except OSError:
        return False
    return (stat.S_ISREG(info.st_mode) and info.st_nlink == 1 and info.st_uid == os.getuid()
            and (info.st_gid == os.getgid() or info.st_gid in os.getgroups())
            and info.st_size <= SWAP_BYTES_PER_ROW * rows and not os.path.exists(real + ".wal")
            and os.access(os.path.dirname(real), os.W_OK))


class _Busy(Exception):
    """The swap's locks are held by another process (a load into a copy, or a writer)."""


def _swap_locks(real: str, path: str, deadline: "Deadline") -> int | None:
    """An open descriptor of the warehouse holding an exclusive flock (loads into a copy take
    turns) and a shared POSIX lock (DuckDB's, as a reader's: no one writes it in place),
    taken under the directory's shared lock and waited for until ``deadline``; None where
    the file is gone or the file system has no such locks (then written in place). The
    flock is taken on the file the path names after taking it (an earlier load may have
    renamed its copy onto it)."""
    def attempt() -> int | None:
        with directory_lock(path, exclusive=False, deadline=deadline):
            try:
                fd = os.open(real, os.O_RDONLY)
            except OSError:
                return None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                if os.fstat(fd).st_ino != os.stat(real).st_ino:
                    raise BlockingIOError  # replaced meanwhile: lock the new file
                fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except OSError as exc:
                holder = _writer_of(fd)
                os.close(fd)
                if isinstance(exc, (BlockingIOError, PermissionError)) or exc.errno in (errno.EAGAIN, errno.EACCES):
                    raise _Busy(holder) from None
                if exc.errno in _NO_LOCK or isinstance(exc, FileNotFoundError):
                    return None
                raise
            return fd

    while True:
        try:
            return attempt()
        except _Busy as busy:
            if deadline.expired():
                raise IrwError(_held(path, busy.args[0], False, deadline.wait)) from None
            deadline.sleep()


def _writer_of(fd: int) -> str:
    """The process that holds a POSIX write lock on the open file ``fd`` (a DuckDB writer),
    as ``process 4242 (its command line)``; else 'another process' (another load into a
    copy, holding the flock)."""
    import struct

    layout = "hhqqi"  # struct flock on Linux: type, whence, start, length, pid
    if sys.platform.startswith("linux"):
        try:
            found = fcntl.fcntl(fd, fcntl.F_GETLK, struct.pack(layout, fcntl.F_RDLCK, os.SEEK_SET, 0, 0, 0))
            kind, _, _, _, pid = struct.unpack(layout, found)
            if kind != fcntl.F_UNLCK and pid > 0:
                return f"process {pid}{_command_of(str(pid))}"
        except (OSError, struct.error):
            pass
    return "another process"


def _copy_from(fd: int, target: str, size: int) -> None:
    """Copy the first ``size`` bytes of the open file ``fd`` into the empty file ``target``,
    reading through ``fd`` itself: closing any other descriptor of the file would release
    this process's POSIX locks on it."""
    out = os.open(target, os.O_WRONLY | os.O_TRUNC)
    try:
        offset = 0
        while offset < size:
            try:
                done = os.copy_file_range(fd, out, size - offset, offset)
            except (AttributeError, OSError):  # not offered here: read and write
                done = os.write(out, os.pread(fd, min(size - offset, 1 << 22), offset))
            if done <= 0:
                raise OSError(errno.EIO, "the warehouse ended early while it was copied")
            offset += done
    finally:
        os.close(out)


def _unlock(fd: int) -> None:
    with contextlib.suppress(OSError):
        fcntl.lockf(fd, fcntl.LOCK_UN)
    with contextlib.suppress(OSError):
        fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)


def _sync_directory(directory: str) -> None:
    """Make a rename in ``directory`` durable (where the system allows it)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# ------------------------------------------------------------------------ waiting, locks

class Deadline:
    """How long to wait for a file another process holds: ``wait`` seconds (None: $IRW_WAIT,
    else DEFAULT_WAIT) from now, shared by every wait of one opening."""

    def __init__(self, wait: float | None):
        if wait is None:
            text = os.environ.get("IRW_WAIT") or str(DEFAULT_WAIT)
            try:
                wait = float(text)
            except ValueError:
                wait = math.nan
            if not (math.isfinite(wait) and wait >= 0):
                raise IrwError(f"IRW_WAIT {shown(text)} is not a number of seconds >= 0")
        elif not (isinstance(wait, (int, float)) and math.isfinite(wait) and wait >= 0):
            raise IrwError(f"wait {shown(wait)} is not a number of seconds >= 0")
        self.wait = float(wait)
        self.end = time.monotonic() + self.wait
        self.pause = 0.05

    def expired(self) -> bool:
        return time.monotonic() >= self.end

    def sleep(self) -> None:
        time.sleep(max(0.0, min(self.pause, self.end - time.monotonic())) or 0.01)
        self.pause = min(self.pause * 2, 0.5)

    def retry(self, fn, path: str, read_only: bool):
        """``fn()``, tried again while DuckDB finds the file locked by another process
        (:func:`is_locked`), until the deadline; then the error naming the holder."""
        while True:
            try:
                return fn()
            except duckdb.Error as exc:
                if not is_locked(exc):
                    raise IrwError(open_problem(path, exc)) from None
                if self.expired():
                    raise IrwError(_held(path, lock_holder(exc), read_only, self.wait)) from None
                self.sleep()


def _held(path: str, holder: str, read_only: bool, wait: float) -> str:
    if read_only:
        return (f"the warehouse {path} is in use by {holder}, which is writing it; waited "
                f"{wait:g} s. Try again when it is done, wait longer (--wait SECONDS), or "
                "read a published copy (irw publish) meanwhile")
    return (f"the warehouse {path} is in use by {holder}, which has it open; waited {wait:g} s. "
            "Try again when it is closed, or wait longer (--wait SECONDS). A client that keeps "
            "the warehouse open, even read-only, blocks every command that writes: let "
            "dashboards and notebooks read a published copy (irw publish COPY.duckdb), and "
            "reconnect them after each publish")


# flock on a directory cannot be had on some file systems (NFS emulates flock with byte-range
# locks, which a directory opened read-only cannot take): there the lock is skipped.
_NO_LOCK = {errno.EBADF, errno.ENOLCK, errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EACCES,
            errno.EPERM}


@contextmanager
def directory_lock(path: str, exclusive: bool, deadline: Deadline):
    """The lock (flock) of the directory that holds the warehouse file ``path``: held
    exclusively by a load while it creates the file (Staging), shared by every opening of
    a file there, so that nobody opens a warehouse whose first load has not ended -- they
    wait, until ``deadline``. Yields whether the lock is held (False where the file system
    has no such locks)."""
    directory = str(Path(path).absolute().parent)
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        yield False
        return
    try:
        mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
        while True:
            try:
                fcntl.flock(fd, mode | fcntl.LOCK_NB)
                held = True
                break
            except BlockingIOError:
                if deadline.expired():
                    raise IrwError(
                        f"the warehouse {path} is being created by another process (its first "
                        f"load); waited {deadline.wait:g} s. Try again when it is done, or wait "
                        "longer (--wait SECONDS)") from None
                deadline.sleep()
            except OSError as exc:
                if exc.errno not in _NO_LOCK:
                    raise
                held = False
                break
        yield held
    finally:
        os.close(fd)  # releases the lock


def is_locked(exc: Exception) -> bool:
    """Did DuckDB refuse to open a file because another process holds its lock? Read from
    the error's type (an I/O error) and DuckDB's own wording of that one refusal at its
    start -- never from a word anywhere in the message (a damaged file's error speaks of
    "blocks")."""
    return isinstance(exc, duckdb.IOException) and str(exc).startswith("IO Error: Could not set lock on file")


def lock_holder(exc: Exception) -> str:
    """The process DuckDB names as holding a file: ``process 4242 (its command line)``."""
    pid = re.search(r"\(PID (\d+)\)", str(exc))
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


def _create_once(path: str, deadline: Deadline) -> None:
    """Create the warehouse file ``path`` unless another process does it first."""
    with directory_lock(path, exclusive=True, deadline=deadline):
        if not Path(path).exists():
            _check_new_file(path)
            create_file(path)


def create_file(path: str) -> bool:
    """Create an empty DuckDB database file at ``path`` in :data:`STORAGE_VERSION`,
    atomically: it is made complete under a temporary name beside ``path`` and linked into
    place only if no file is there. Returns whether this call made it (False: one was there
    first, and is left as it is)."""
    target = Path(path)
    tmp = files.temporary_name(target)
    con = open_duckdb()
    try:
        con.execute(f"ATTACH {quote_literal(str(tmp))} AS irw_new_file "
                    f"(STORAGE_VERSION {quote_literal(STORAGE_VERSION)})")
        con.execute("DETACH irw_new_file")
    finally:
        con.close()
    try:
        os.link(tmp, target)
        return True
    except FileExistsError:
        return False
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EXDEV, errno.EMLINK):
            raise IrwError(f"cannot create the warehouse {path}: {exc.strerror}") from None
        # no hard links here: exclusive creation decides who makes it
        try:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            return False
        with os.fdopen(fd, "wb") as out, open(tmp, "rb") as source:
            out.write(source.read())
        return True
    finally:
        for leftover in (tmp, Path(str(tmp) + ".wal")):
            with contextlib.suppress(FileNotFoundError):
                os.remove(leftover)


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
_order_to_restore: dict[int, bool] = {}  # connections whose insertion order waits for a rollback


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
    except BaseException as exc:
        _open_transactions.pop(key, None)
        try:
            con.execute("ROLLBACK")
            if _order_to_restore.pop(key, False):
                con.execute("SET preserve_insertion_order = true")
        except duckdb.Error:  # the connection is gone (closed, or interrupted for good)
            pass
        cause = first_error(exc)
        if cause is not exc:  # the first error of the transaction, not "transaction is aborted"
            raise cause from None
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
