"""One command, one transaction (:func:`transaction`), and bulk work that keeps no insertion
order (:func:`unordered`).
"""

from __future__ import annotations

import functools
from contextlib import contextmanager

import duckdb

from ..errors import Interrupts, first_error

_open_transactions: dict[int, int] = {}
# Per connection: statements that wait for its transaction to end (after_transaction).
_after_end: dict[int, list[str]] = {}


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
            after_transaction(con, "SET preserve_insertion_order = true")
        raise
    con.execute("SET preserve_insertion_order = true")


def without_order(fn):
    """``fn(con, ...)`` run :func:`unordered`."""
    @functools.wraps(fn)
    def call(con, *args, **kwargs):
        with unordered(con):
            return fn(con, *args, **kwargs)
    return call



def after_transaction(con, statement: str) -> None:
    """Run ``statement`` (a fixed statement, no user value) on ``con`` once the transaction
    of :func:`transaction` open there ends, committed or rolled back; at once when none is
    open. For what DuckDB refuses within a transaction that did the work: a setting in an
    aborted transaction, or detaching a database the transaction read (which DuckDB 1.5 refuses).
    A statement that fails then is left (the connection is gone, or the transaction's own
    error is the one to report)."""
    if in_transaction(con):
        _after_end.setdefault(id(con), []).append(statement)
    else:
        _run_after(con, [statement])


def _run_after(con, statements: list[str]) -> None:
    for statement in statements:
        try:
            con.execute(statement)
        except duckdb.Error:
            pass


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
    with Interrupts.stopping() as interrupted:  # Ctrl-C in the Python API stops the query too
        try:
            yield con
        except BaseException as exc:
            _open_transactions.pop(key, None)
            try:
                con.execute("ROLLBACK")
            except duckdb.Error:  # the connection is gone (closed, or interrupted for good)
                pass
            _run_after(con, _after_end.pop(key, []))
            if interrupted and not isinstance(exc, KeyboardInterrupt):  # the query stopped by it
                raise KeyboardInterrupt from None
            cause = first_error(exc)
            if cause is not exc:  # the first error of the transaction, not "transaction is aborted"
                raise cause from None
            raise
        else:
            if Interrupts.requested:  # interrupted before: nothing is kept
                _open_transactions.pop(key, None)
                con.execute("ROLLBACK")
                _run_after(con, _after_end.pop(key, []))
                raise KeyboardInterrupt
            _open_transactions.pop(key, None)
            writes = not _read_only(con)
            try:
                with Interrupts.deferred():
                    con.execute("COMMIT")
                    Interrupts.commits += writes
            finally:
                _run_after(con, _after_end.pop(key, []))


def _read_only(con) -> bool:
    """Is ``con`` a read-only connection (its commits keep nothing)?"""
    return con.execute("SELECT current_setting('access_mode')").fetchall()[0][0] == "read_only"


def in_transaction(con) -> bool:
    """Is an irw transaction open on ``con``?"""
    return bool(_open_transactions.get(id(con)))
