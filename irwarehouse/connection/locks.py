"""Waiting for a warehouse another process holds (:class:`Deadline`), the directory's lock
of a first load (:func:`directory_lock`), and who holds a file.
"""

from __future__ import annotations

import errno
import fcntl
import math
import os
import re
import time
from contextlib import contextmanager
from pathlib import Path

import duckdb

from ..errors import IrwError, inline, shown
from .settings import DEFAULT_WAIT


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


def open_problem(path: str, exc: Exception) -> str:
    """One line saying why DuckDB could not open ``path`` (DuckDB's own first line: a
    damaged file says so, it is not taken for a file in use)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return f"cannot open the warehouse {path}: {text}"
