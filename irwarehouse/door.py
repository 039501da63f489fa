"""The door's frame: a warehouse's connection (opened on first use, released while a load
reads its files), DuckDB's sandbox for users' SQL, one transaction per call and one thread
at a time. :class:`irwarehouse.api.Warehouse` is a :class:`Door` with the methods of every
area; the decorators :func:`_atomic` and :func:`_owned` give each method its transaction and
its thread. Files in, scores out (:func:`_files_in`) reads files into a door of its own.
"""

from __future__ import annotations

import functools
import os
import threading
from contextlib import ExitStack, contextmanager

from . import catalogue, connection, judgment_kinds, schema, statements
from .catalogue import DEFAULT_COLLECTION
from .connection import transaction
from .engine import base, files_in, loading
from .errors import IrwError
from .inputs import _meta_file, _source_files
from .result import Batches, Result


def check_settings(wait: float | None = None, memory_limit: str | None = None) -> None:
    """Check the settings of opening a warehouse (``--wait``, ``--memory-limit``): an
    IrwError saying what is wrong."""
    import math

    if wait is not None and not (isinstance(wait, (int, float)) and math.isfinite(wait) and wait >= 0):
        raise IrwError(f"{wait!r} is not a number of seconds >= 0")
    if memory_limit is not None:
        connection.memory_limit(memory_limit)


_SANDBOX_KEPT = ("this in-memory warehouse ran SQL in DuckDB's sandbox (Warehouse.sql), which "
                 "lasts as long as the warehouse: it reads and writes no file any more. Load "
                 "files and write copies before the first sql call, or use a warehouse file")


def _atomic(method=None, *, files: bool = False):
    """One call, one transaction: a call that fails leaves the warehouse as it was, scores it
    would have stored on the way included (nested calls join the outer transaction). The
    first call also makes the warehouse ready (schema.prepare), in the same transaction.
    ``files``: the call reads or writes files through DuckDB (an export, a factor file), so
    its connection must be out of the sandbox of an earlier sql call (Warehouse._connection)."""
    if method is None:
        return functools.partial(_atomic, files=files)

    @functools.wraps(method)
    def call(self, *args, **kwargs):
        with self._owner:
            con = self._connection(files=files)
            with transaction(con):
                if not self._prepared:
                    schema.prepare(con, self.path, self.read_only, self._notify)
                result = method(self, *args, **kwargs)
            self._prepared = True
            return result
    return call


def _owned(method):
    """A call that uses the warehouse's connection outside :func:`_atomic` (a load, users'
    SQL): one thread at a time (:class:`_Owner`)."""
    @functools.wraps(method)
    def call(self, *args, **kwargs):
        with self._owner:
            return method(self, *args, **kwargs)
    return call


class _Owner:
    """One thread at a time in a warehouse: its DuckDB connection and its transaction are
    not shared between threads. A call while another thread's is under way is an IrwError
    saying so (nested calls of one thread join); each thread opens a Warehouse of its own."""

    def __init__(self):
        self._lock = threading.Lock()
        self._thread: int | None = None
        self._depth = 0

    def __enter__(self):
        me = threading.get_ident()
        if self._thread != me:
            if not self._lock.acquire(blocking=False):
                raise IrwError("this Warehouse is in use by another thread, and one warehouse "
                               "serves one thread at a time: open a Warehouse in each thread "
                               "(a warehouse file can be open read-only in several at once)")
            self._thread = me
        self._depth += 1
        return self

    def __exit__(self, *exc):
        self._depth -= 1
        if self._depth == 0:
            self._thread = None
            self._lock.release()



class Door:
    """A warehouse's connection and what every call through it shares (see
    :class:`irwarehouse.api.Warehouse`, which adds the methods)."""

    def __init__(self, path: str | os.PathLike | None = ":memory:", *, read_only: bool = False,
                 create: bool = True, wait: float | None = None, memory_limit: str | None = None,
                 notify=None, _throwaway: bool = False):
        # _throwaway: an in-memory warehouse for one evaluation (eval_files), without measure
        # macros and caches (connection.mark_throwaway)
        check_settings(wait, memory_limit)
        self.path = connection.resolve_path(None if path is None else str(path))
        self.read_only = read_only
        self.create = create and not read_only
        self.wait, self.memory_limit = wait, memory_limit
        self.notes: list[str] = []
        self._notify = notify or self.notes.append
        self._con = None
        self._owner = _Owner()
        self._box = None  # DuckDB's sandbox the connection is in (users' SQL: sql())
        self._prepared = False
        self._throwaway = _throwaway and self.path == ":memory:"
        if self.path == ":memory:":
            self.con  # noqa: B018 - an in-memory warehouse exists only while it is open

    @classmethod
    def attach(cls, con, path: str | None = None) -> "Door":
        """A Warehouse over a connection that is open (and ready) already."""
        w = cls.__new__(cls)
        w.path, w.notes, w._con, w._prepared, w._box = path or "", [], con, True, None
        w._notify, w._owner = w.notes.append, _Owner()
        w.read_only = base.con_is_read_only(con)
        w.create, w.wait, w.memory_limit, w._throwaway = False, None, None, False
        return w

    @property
    def con(self):
        """The DuckDB connection to the warehouse (opened on first use)."""
        if self._con is None:
            self._con = connection.connect(self.path, read_only=self.read_only, create=self.create,
                                           wait=self.wait, memory=self.memory_limit)
            self._prepared = False
            if self.path == ":memory:":
                if self._throwaway:
                    connection.mark_throwaway(self._con)
                with transaction(self._con):
                    schema.prepare(self._con, self.path, False, self._notify,
                                   measure_macros=not self._throwaway)
                self._prepared = True
        return self._con

    @property
    def engine(self) -> connection.DuckDBEngine:
        return connection.DuckDBEngine(self.con)

    def close(self) -> None:
        if self._con is not None:
            self._con.close()
            self._con = None
            self._box = None

    def _connection(self, box: "connection.Sandbox | None" = None, files: bool = False):
        """The connection: in DuckDB's sandbox ``box`` (users' SQL); or, with ``files``, out
        of any (a call that reads or writes files through DuckDB); else as it is. A
        connection enters a sandbox for good (DuckDB cannot lift it), so a warehouse file is
        opened anew to leave one, or to enter another, between calls (a connection taken
        before, ``w.con``, is then closed); an in-memory warehouse, which lives in its
        connection, stays in the sandbox of its first SQL."""
        if self._con is not None and self._box is not None and (
                (box is not None and box != self._box) or (box is None and files)):
            if self.path not in (":memory:", "") and not connection.in_transaction(self._con):
                self.close()
            elif box is not None:
                raise IrwError("this warehouse's DuckDB is in the sandbox of an earlier sql call, "
                               "which it keeps while it is open (an in-memory warehouse: always): "
                               "name every file its SQL may use in that first call")
            else:
                raise IrwError(_SANDBOX_KEPT)
        con = self.con
        if box is not None and self._box is None:
            box.apply(con)
            self._box = box
        elif files and connection.in_sandbox(con):
            # the file's DuckDB, shared by this process's connections to it, is in the
            # sandbox of another one's sql call: this connection, opened meanwhile, may be
            # what keeps it
            if self.path not in (":memory:", "") and not connection.in_transaction(con):
                self.close()
                con = self.con
        if files and box is None and connection.in_sandbox(con):
            raise IrwError(f"another connection of this process to {self.path} (another Warehouse, or "
                           "a connection taken from one) keeps DuckDB's sandbox of an earlier sql "
                           "call, which reads and writes no file: close it first")
        return con

    def __enter__(self) -> "Door":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.path!r}{', read_only=True' if self.read_only else ''})"

    @contextmanager
    def _staging(self, *sources):
        """A load's staging connection: the warehouse's own when it is in memory; otherwise
        an in-memory one, the file released meanwhile and attached for the final transaction
        (connection.Staging). ``sources``: what is loaded (files, or DataFrames)."""
        if self.read_only:
            raise IrwError("this warehouse is open read-only: open it for writing to load")
        if self.path == ":memory:":
            if self._box is not None and any(
                    isinstance(s, (str, os.PathLike)) or hasattr(s, "read")
                    or (isinstance(s, (list, tuple)) and s) for s in sources):
                raise IrwError(_SANDBOX_KEPT)
            stage = connection.Staging(self.path, con=self._connection())
        else:
            self.close()  # released while the files are read
            stage = connection.Staging(self.path, wait=self.wait, notify=self._notify, create=self.create,
                                       memory=self.memory_limit, prepare=schema.prepare)
        try:
            yield stage
        finally:
            stage.close()

    def _target(self, stage, collection: str | None) -> tuple[str, bool]:
        return catalogue.collection_for_load(self.path, stage.con if stage.attach is None else None,
                                             collection, self.wait)

    @_owned
    def sql(self, query: str, params=None, *, write: bool | None = None, files=(),
            batches: bool | int = False) -> "Result | Batches | None":
        """Run SQL; its result (None for a statement without one).

        The SQL runs in DuckDB's own sandbox (irwarehouse.connection.Sandbox): it reads and
        writes the warehouse and nothing else -- no file, no other database, no extension
        -- but, with ``write``, the directories and files named in ``files`` (none of which
        may be or hold a DuckDB database: irwarehouse.statements.allowed). ``write``
        (default: whether the warehouse is open for writing) allows statements that change
        something; without it only statements that read run. The call is one transaction:
        after statements that change the tables, irw's caches and stored scores are brought
        in line (as ``irw sql --write`` does), and tables left in a state no load would
        accept (a document twice in a ranking, a document judged twice, a table of the
        schema removed) are an error that undoes the call. The sandbox lasts as long as the
        warehouse's DuckDB connection: a warehouse file is opened anew for other calls, an
        in-memory one keeps it (``w.con`` runs SQL outside it, without irw's checks).

        ``batches`` (True, or the number of rows per batch): the result streamed, as an
        :class:`irwarehouse.result.Batches` -- its columns at once, its rows in batches as
        DuckDB produces them, so that memory holds one batch whatever the result's size. The
        call's transaction stays open until the batches are read to the end (then it
        commits) or closed (then it is rolled back)."""
        import duckdb

        write = (not self.read_only) if write is None else bool(write)
        if write and self.read_only:
            raise IrwError("this warehouse is open read-only: open it for writing to change it")
        if isinstance(files, (str, os.PathLike)):
            files = [files]
        if files and not write:
            raise IrwError("files may be read and written by SQL that runs with --write (write=True) only")
        directories, paths = statements.allowed(files)
        con = self._connection(connection.Sandbox(directories, paths))

        def failed(exc: BaseException) -> BaseException:
            if isinstance(exc, duckdb.PermissionException):
                return IrwError(statements.outside(exc, write))
            if isinstance(exc, duckdb.Error):
                return IrwError(f"SQL error: {str(exc).strip().splitlines()[0]}")
            return exc

        open_transaction = ExitStack()
        open_transaction.enter_context(transaction(con))

        def finish(error: BaseException | None) -> None:
            if error is None:
                try:
                    if write:
                        for message in schema.reconcile(con, edited=True):
                            self._notify(message)
                except BaseException as exc:
                    open_transaction.__exit__(type(exc), exc, exc.__traceback__)
                    raise
                open_transaction.close()
                self._prepared = True
            else:
                open_transaction.__exit__(type(error), error, error.__traceback__)

        try:
            if not self._prepared:
                schema.prepare(con, self.path, self.read_only, self._notify)
            statements.check(con, query, write)
            connection.settle(con)
            try:
                rel = con.sql(query, params=params) if params is not None else con.sql(query)
                if rel is not None and batches:
                    text = rel.sql_query()
                    con.execute(text, params) if params is not None else con.execute(text)
                    return Batches(rel.columns, rel.types, con.fetchmany, finish,
                                   None if batches is True else batches, failed)
                result = None if rel is None else Result(rel.columns, rel.fetchall())
            except duckdb.Error as exc:
                raise failed(exc) from None
        except BaseException as exc:
            finish(exc)
            raise
        finish(None)
        return result


def _files_in(qrels, runs, name: str, then, *, fast: bool = True, meta=None, save=None,
              replace: bool = False, order: str = "trec_eval", extra_fields: bool = False,
              encoding: str = "utf-8", wait: float | None = None, memory_limit: str | None = None,
              batched: bool = False, kind=None):
    """Files in: what ``then(con, path, collection)`` computes over the qrels file ``qrels``
    (as ``name``) and the runs ``runs`` read with every check of a load. With ``fast`` and
    neither run metadata ``meta`` nor a warehouse ``save``, without a warehouse
    (engine.files_in.staged: ``path`` is None, ``con`` holds the files as views named as a
    warehouse's tables, of which ``runs`` may hold the ranked rows of judged documents only);
    else loaded into an in-memory warehouse (or the warehouse ``save``), in the load's
    transaction. ``batched``: without a warehouse, the runs are read when ``then`` evaluates
    them, in batches (engine.files_in.staged). ``kind``: the qrels file's judgment kind
    (judgment_kinds.KINDS; default trec), read as a load reads it."""
    if fast and meta is None and save is None:
        with _source_files(qrels, "qrels", judgments=kind) as qrels_paths, \
                _source_files(runs, "runs") as run_paths:
            if len(qrels_paths) != 1:
                raise IrwError(f"one qrels file expected, got {len(qrels_paths)}")
            with files_in.staged(qrels_paths[0], run_paths, name=name, policy=order,
                                 extra_fields=extra_fields, encoding=encoding,
                                 memory=memory_limit, batched=batched,
                                 kind=kind or judgment_kinds.KINDS[judgment_kinds.GRADED]) as con:
                return then(con, None, DEFAULT_COLLECTION)
    with Door(":memory:" if save is None else save, wait=wait, memory_limit=memory_limit,
                   _throwaway=save is None) as w:
        with w._staging() as stage, _source_files(qrels, "qrels", judgments=kind) as qrels_paths, \
                _source_files(runs, "runs") as run_paths, _meta_file(meta) as meta_path:
            if len(qrels_paths) != 1:
                raise IrwError(f"one qrels file expected, got {len(qrels_paths)}")
            target, implicit = w._target(stage, None)
            loaded = loading.load_collection(
                stage.con, target, qrels_paths[0], run_paths, meta=meta_path, qrels_name=name,
                policy=order, replace=replace, extra_fields=extra_fields, final=stage.attach,
                encoding=encoding, implicit=implicit,
                then=lambda con: then(con, w.path, target), **({"kind": kind} if kind else {}))
        return loaded["then"]
