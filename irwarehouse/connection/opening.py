"""Opening a warehouse file (:func:`connect`): its path checked, created atomically in the
storage version irw writes (:func:`create_file`), waited for while another process holds it,
and refused when it is not an irw warehouse this irw reads.
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path

import duckdb

from .. import files
from ..errors import IrwError
from ..sql import quote_literal
from .locks import Deadline, directory_lock
from .settings import SCHEMA_VERSION, STORAGE_VERSION, configure, open_duckdb, resolve_path, stored_meta


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
        if path != ":memory:":  # a new in-memory database is empty: a new warehouse
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
    extension to read it), or a symbolic link that never reaches a file (a loop: every
    opening would find no file, and a load would try to create it without end)."""
    loop = _link_loop(path)
    if loop:
        raise IrwError(f"{path} {loop}, not a warehouse file: choose another --db")
    kind = files.file_kind(path)
    if kind is not None:
        raise IrwError(f"{path} is {kind}, not a warehouse file: choose another --db")
    if Path(path).exists() and not files.is_database(path):
        raise IrwError(f"{path} is not a DuckDB database, so not an irw warehouse: choose another --db")


def _link_loop(path: str) -> str | None:
    """What loop of symbolic links ``path`` leads into: 'is a loop of symbolic links (a -> b ->
    a)', or where a directory of its path loops; None when following its links ends (at a
    file, or at nothing)."""
    try:
        os.stat(path)
        return None
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            return None
    chain, seen, current = [path], set(), path
    while len(chain) < 40:
        key = os.path.abspath(current)
        if key in seen or not os.path.islink(current):
            break
        seen.add(key)
        target = os.readlink(current)
        current = os.path.join(os.path.dirname(current), target)
        chain.append(target)
    if len(chain) > 1:
        return f"is a loop of symbolic links ({' -> '.join(chain)})"
    return "lies in a loop of symbolic links (a directory of its path leads back to itself)"


def _check_new_file(path: str) -> None:
    """A new warehouse file can be made at ``path``, or an error that says why not."""
    parent = Path(path).absolute().parent
    if not parent.is_dir():
        raise IrwError(f"cannot create the warehouse {path}: the directory {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise IrwError(f"cannot create the warehouse {path}: the directory {parent} is not writable")




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
