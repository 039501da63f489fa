"""A load written into a copy of the warehouse, renamed onto it afterwards (:func:`swapped`),
so that readers are not refused during the load.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import shutil
import stat
import sys
from contextlib import contextmanager

from .. import files
from ..errors import Interrupts, IrwError
from .locks import _NO_LOCK, Deadline, _command_of, _held, directory_lock


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
