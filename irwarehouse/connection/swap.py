"""A load written into a copy of the warehouse, renamed onto it afterwards (:func:`swapped`),
so that readers are not refused during the load.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
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
    checkpoint: opening it for writing replays the log), when it is not a plain file with
    one link (a copy would split its links), when the copy cannot be written (the disk is
    full) or be given what the file carries besides its bytes -- its owner, group, mode,
    extended attributes and POSIX ACL (:func:`_carry`) -- and where the file system has no
    flock. A warehouse that cannot be written at all -- the file read-only or immutable, its
    directory not writable -- is refused, naming it (:func:`_write_problem`)."""
    real = os.path.realpath(path)
    problem = _write_problem(path, real)
    if problem:
        raise IrwError(problem)
    fd = _swap_locks(real, path, deadline) if _swappable(real, rows) else None
    if fd is None:
        yield None
        return
    with contextlib.ExitStack() as held:
        held.callback(_unlock, fd)
        copy = None
        try:
            if os.path.exists(real + ".wal"):  # left by a writer that ended without a checkpoint
                raise OSError(errno.EEXIST, "a write-ahead log")
            copy = held.enter_context(files.file_beside(real, companions=(".wal",)))
            before = os.fstat(fd)
            _copy_from(fd, str(copy), before.st_size)
            _carry(fd, str(copy), before)
        except (OSError, IrwError) as exc:  # written in place instead, nothing held
            held.close()
            directory = os.path.dirname(real)
            if (copy is None and isinstance(exc, OSError) and exc.errno in _REFUSED
                    and _is_in(exc.filename, directory)):  # nor could a writer in place
                raise IrwError(_refused(path, directory, exc)) from None
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
    return (stat.S_ISREG(info.st_mode) and info.st_nlink == 1
            and info.st_size <= SWAP_BYTES_PER_ROW * rows and not os.path.exists(real + ".wal")
            and os.access(os.path.dirname(real), os.W_OK))


# The system's refusals to create a file in a directory: not writable, immutable, read-only.
_REFUSED = {errno.EACCES, errno.EPERM, errno.EROFS}
_READS_STILL_WORK = ("commands that only read it still work (e.g. irw runs list, irw eval --no-store)")


def _write_problem(path: str, real: str) -> str | None:
    """Why a load cannot write the warehouse ``path`` (the file ``real``) at all, in place or
    into a copy: the file cannot be written (read-only, immutable: ``chattr +i``), or its
    directory refuses the files a writer makes beside it (DuckDB's journal, or the copy);
    None when it can, or when there is no file."""
    if not os.path.isfile(real):
        return None
    directory = os.path.dirname(real)
    if not os.access(real, os.W_OK):
        why = "the file cannot be written (it is read-only or immutable)"
    elif not os.access(directory, os.W_OK) and not os.access(real + ".wal", os.W_OK):
        why = f"its directory {directory} is not writable"
    else:
        return None
    return f"cannot load into the warehouse {path}: {why}; {_READS_STILL_WORK}"


def _is_in(filename, directory: str) -> bool:
    return bool(filename) and os.path.dirname(os.path.abspath(os.fsdecode(filename))) == directory


def _refused(path: str, directory: str, exc: OSError) -> str:
    return (f"cannot load into the warehouse {path}: its directory {directory} refuses new files "
            f"({exc.strerror}); {_READS_STILL_WORK}")


_ACL = "system.posix_acl_access"  # a file's POSIX ACL, as an extended attribute
_NO_XATTRS = {errno.ENOTSUP, errno.EOPNOTSUPP}


def _carry(fd: int, copy: str, before: os.stat_result) -> None:
    """Give the copy what the warehouse (the open file ``fd``, as ``before``) carries besides
    its bytes: its owner and group, its mode, and its extended attributes (``user.*`` and the
    others) and POSIX ACL, byte for byte -- the ACL last, after the mode (setting a mode
    changes an ACL's mask). The copy loses any attribute the warehouse lacks (an ACL inherited
    from the directory's default). An OSError (the system refuses one of them) leaves the
    warehouse to be written in place."""
    now = os.stat(copy)
    if (now.st_uid, now.st_gid) != (before.st_uid, before.st_gid):
        os.chown(copy, before.st_uid if now.st_uid != before.st_uid else -1,
                 before.st_gid if now.st_gid != before.st_gid else -1)
    os.chmod(copy, stat.S_IMODE(before.st_mode))  # after chown, which may clear set-id bits
    try:
        names = os.listxattr(fd)
    except OSError as exc:
        if exc.errno not in _NO_XATTRS:
            raise
        names = []
    try:
        present = os.listxattr(copy)
    except OSError as exc:
        if exc.errno not in _NO_XATTRS or names:
            raise
        present = []
    for name in present:
        if name not in names:
            os.removexattr(copy, name)
    for name in sorted(names, key=lambda n: n == _ACL):
        os.setxattr(copy, name, os.getxattr(fd, name))


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
