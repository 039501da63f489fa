"""The exception type the faces turn into a clean message, and the helpers every message uses.

A message that irw prints is one line: it names what was wrong, where, and what to do. User
input echoed in it is cut when long (:func:`shown`), and control characters are escaped
(:func:`printable`), so that a message can neither flood a terminal nor drive it.
"""

from __future__ import annotations

import re
from contextlib import contextmanager


class IrwError(Exception):
    """A user-facing error: bad input, unknown name, invalid option.

    The message says what was wrong, where, and (where possible) what is valid. It is one
    printable line whatever it quotes: a file name or an id holding a newline or a control
    character is written with escapes (:func:`inline`), so the message can neither break in
    two nor drive a terminal.
    """

    def __init__(self, message="", *args):
        super().__init__(inline(message), *args)


class StatusError(IrwError):
    """An IrwError that ends a command with a given exit status: ``irw trec-eval`` ends with
    the statuses trec_eval gives the same failure (1 usage, 2 input, 7 no topic to
    evaluate)."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


class IrwNote(UserWarning):
    """Something a user should know about a result that is not an error (a run that shares
    no topic with the qrels, say), read as ``LABEL: message`` (label ``note``, or what it is
    about: ``no rows``). Issued with :func:`note`; the command line prints it on stderr, a
    notebook shows it as a warning."""

    def __init__(self, message: str, label: str = "note"):
        message = inline(message)
        super().__init__(message)
        self.label, self.text = label, message

    def __str__(self) -> str:
        return f"{self.label}: {self.text}"


def note(message: str, label: str = "note") -> None:
    """Tell the user something about the result being computed (see :class:`IrwNote`)."""
    import warnings

    warnings.warn(IrwNote(message, label), stacklevel=2)


# C0 controls and DEL, and the C1 controls: never printed raw
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` with control characters written as escapes (``\\x1b``); tabs and newlines
    stay."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))


_BREAKS = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def inline(text: str) -> str:
    """``text`` on one line (as a message quotes it): newlines, carriage returns, tabs and
    the Unicode line and paragraph separators written as ``\\n``, ``\\r``, ``\\t``,
    ``\\u2028``, ``\\u2029``, other control characters as escapes (:func:`printable`)."""
    return printable("".join(_BREAKS.get(c, c) for c in str(text)))


def shown(value, limit: int | None = 60) -> str:
    """User input -- a value, an id, a file name -- as quoted in a message: ``repr`` of its
    text, cut to ``limit`` characters (None: never) with the number of characters left out,
    control characters escaped. The one way a message quotes what it was given."""
    text = str(value)
    if limit is not None and len(text) > limit:
        text = text[:limit] + f"... ({len(text) - limit:,} more characters)"
    return printable(repr(text))


MAX_SEED = 2**63 - 1


def check_seed(seed, what: str = "seed"):
    """A random seed: an integer from 0 to 2**63 - 1 (numpy refuses negative ones)."""
    import numbers

    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise IrwError(f"the {what} must be an integer from 0 to {MAX_SEED}, got {shown(seed)}")
    if not 0 <= int(seed) <= MAX_SEED:
        raise IrwError(f"the {what} must be an integer from 0 to {MAX_SEED}, got {seed}")
    return int(seed)


# The longest line an error prints; longer ones are cut in the middle.
MAX_MESSAGE = 1000


def one_line(message: str) -> str:
    """The first line of ``message``, printable and at most MAX_MESSAGE characters long."""
    lines = str(message).strip().splitlines() or ["failed"]
    text = printable(lines[0])
    if len(text) > MAX_MESSAGE:
        cut = len(text) - MAX_MESSAGE
        text = text[:MAX_MESSAGE // 2] + f" ... ({cut:,} characters left out) ... " + text[-MAX_MESSAGE // 2:]
    return text


# What DuckDB reports, read from its error's type (duckdb.OutOfMemoryException,
# duckdb.IOException, ...), and what a user should do about it. Within a type, DuckDB's
# first line may be quoted (a file name, say), never searched for a word that decides.

def duckdb_problem(exc: BaseException, limit: str | None = None) -> str:
    """One line for an error DuckDB raised -- the first one of a failed transaction
    (:func:`first_error`) --: what a user should do where its type tells, else DuckDB's own
    first line. ``limit``: the memory limit as the user gave it."""
    import duckdb

    exc = first_error(exc)
    text = str(exc).strip()
    first = inline(text.splitlines()[0]) if text else type(exc).__name__
    if isinstance(exc, duckdb.OutOfMemoryException):
        return (f"DuckDB ran out of memory within the memory limit ({limit or 'see --memory-limit'}): "
                "give it more with --memory-limit (e.g. --memory-limit 4GB) or IRW_MEMORY_LIMIT")
    if isinstance(exc, duckdb.PermissionException):
        return f"not allowed: {first}"
    if isinstance(exc, duckdb.IOException):
        full = disk_full(text)
        if full:
            return full
        wal = _quoted_path(text)
        if wal and wal.endswith(".wal") and isinstance(exc, duckdb.IOException):
            return (f"cannot write the warehouse's journal ({shown(wal, None)}): its directory is "
                    "not writable; read it with a command that only reads (e.g. irw eval --no-store)")
        return f"database: {first}"
    return f"database: {first}"


def _quoted_path(text: str) -> str | None:
    """The file name DuckDB quotes in an error's first line (``... file "NAME" ...``)."""
    match = re.search(r'"([^"]+)"', text.splitlines()[0] if text else "")
    return match.group(1) if match else None


def disk_full(text: str) -> str | None:
    """The message for an I/O error that is a full disk (errno ENOSPC, as DuckDB and the
    system spell it), naming the directory of the file that could not be written."""
    import errno
    import os

    if os.strerror(errno.ENOSPC) not in text:
        return None
    path = _quoted_path(text)
    where = (f"in {shown(os.path.dirname(path) or '.', None)}" if path else
             "for DuckDB's data or temporary files")
    return (f"no space left on the disk {where}: free some, or set TMPDIR to a directory on "
            "another disk (DuckDB's temporary files go there)")


def first_error(exc: BaseException) -> BaseException:
    """The error to report for ``exc``: itself, unless it is DuckDB's "transaction is
    aborted" (a duckdb.TransactionException) raised after an earlier DuckDB error of the
    same transaction -- e.g. by a clean-up statement run while that error was on its way --
    in which case the earlier one, the cause."""
    import duckdb

    seen = set()
    while isinstance(exc, duckdb.TransactionException) and id(exc) not in seen:
        seen.add(id(exc))
        earlier = exc.__context__ or exc.__cause__
        while earlier is not None and not isinstance(earlier, duckdb.Error):
            earlier = earlier.__context__ or earlier.__cause__
        if earlier is None:
            break
        exc = earlier
    return exc


class Interrupts:
    """How irw treats Ctrl-C (SIGINT): as an interrupt (KeyboardInterrupt) until something
    is committed. While a COMMIT runs, and in a command after it committed (``keep``), an
    interrupt is only noted (``pending``): the work is kept and the command reports it, so
    that an interrupted command either changed nothing or says what it did."""

    deferring = 0      # > 0: inside a COMMIT
    keep = False       # after a commit, the rest of the command runs on (the command line)
    commits = 0        # transactions that changed a database, committed in this process
    pending = False    # an interrupt arrived while deferred
    requested = False  # an interrupt arrived before anything was committed: no COMMIT follows,
                       # even where code took the interrupt for an error and carried on
    stops: list = []   # what stops the work under way at an interrupt (DuckDB's queries:
                       # irwarehouse.connection.settings.interrupt_all)

    @classmethod
    def handler(cls, signum, frame):
        if cls.deferring or (cls.keep and cls.commits):
            cls.pending = True
            return
        cls.requested = True
        for stop in cls.stops:
            stop()
        raise KeyboardInterrupt

    @classmethod
    def check(cls) -> None:
        """Raise KeyboardInterrupt when an interrupt was requested (for code that catches a
        query's failure and carries on: an interrupted query fails too)."""
        if cls.requested:
            raise KeyboardInterrupt

    @classmethod
    def caused(cls, exc: BaseException) -> bool:
        """Is ``exc`` an interrupt -- Ctrl-C or SIGTERM, as Python or DuckDB report it (by the
        error's type) -- or a failure it caused before anything was committed (a query
        stopped under a library that reports it as an error of its own)?"""
        import duckdb

        return (isinstance(exc, (KeyboardInterrupt, duckdb.InterruptException))
                or (cls.requested and not cls.commits))

    @classmethod
    def reset(cls, keep: bool) -> None:
        cls.keep, cls.commits, cls.pending, cls.requested = keep, 0, False, False

    @classmethod
    @contextmanager
    def stopping(cls):
        """Inside the block, Ctrl-C (SIGINT) first stops the work under way (``stops``: a
        query running in DuckDB does not return to Python, where the interrupt is raised,
        until it ends), then is handled as before (Python's: KeyboardInterrupt). Yields a
        list that holds the signal once one arrived. For the Python API (a notebook's Ctrl-C);
        the command line's handler (:meth:`handler`) stops the work itself and is left as it
        is, as is a signal ignored or left to the system. Main thread only."""
        import signal
        import threading

        arrived: list[int] = []
        if threading.current_thread() is not threading.main_thread():
            yield arrived
            return
        previous = signal.getsignal(signal.SIGINT)
        if previous is cls.handler or not callable(previous):
            yield arrived
            return

        def stop_then_previous(signum, frame):
            arrived.append(signum)
            for stop in cls.stops:
                stop()
            previous(signum, frame)

        signal.signal(signal.SIGINT, stop_then_previous)
        try:
            yield arrived
        finally:
            signal.signal(signal.SIGINT, previous)

    @classmethod
    @contextmanager
    def deferred(cls):
        """Interrupts are noted, not raised, inside the block (main thread only: elsewhere
        signals do not arrive)."""
        import signal
        import threading

        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = signal.getsignal(signal.SIGINT)
        cls.deferring += 1
        if previous is not cls.handler:
            signal.signal(signal.SIGINT, cls.handler)
        try:
            yield
        finally:
            cls.deferring -= 1
            if previous is not cls.handler:
                signal.signal(signal.SIGINT, previous)
