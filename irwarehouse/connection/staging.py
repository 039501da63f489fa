"""A load's connection (:class:`Staging`): files read and ranked in memory, the warehouse
attached -- or a copy of it -- only for the final transaction.
"""

from __future__ import annotations

import contextlib
import os
from contextlib import contextmanager
from pathlib import Path

from ..errors import IrwError
from ..sql import quote_literal
from . import swap
from .locks import Deadline, directory_lock
from .opening import _check_new_file, _no_warehouse, _warehouse_problem, check_path, connect, create_file
from .settings import configure, open_duckdb, resolve_path
from .transactions import transaction


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
                with swap.swapped(self.path, rows, deadline) as copy:
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
