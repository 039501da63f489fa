"""The one guard for every file irw writes, and irw's temporary files.

Every output -- a report, an export, a published copy, a factor file, an experiment's tables
and figures -- goes through :func:`output_file` (one file) or :func:`output_directory` (a
directory of files). The rules:

- irw never writes onto a DuckDB database: not the warehouse, not another one. The one
  exception is a database irw wrote as an output of the same kind (``irw publish --replace``
  over an earlier published copy), which the caller recognises (``replaceable``).
- An existing file is overwritten only with ``replace`` (``--replace``); a directory's
  contents that irw did not write are never deleted or overwritten.
- A file is written under a temporary name beside its target and renamed onto it when
  complete, so a failure or an interrupt leaves the old file (or none) as it was. The
  temporary name is recorded before anything is written there (:func:`file_beside`), so
  that what a process killed while writing (``kill -9``) left there -- its hidden
  ``.NAME.irw-...tmp`` -- is removed by the next irw command.

irw's other temporary files live in its own temporary root, in directories that prove their
owner (:func:`temp_dir`, :func:`sweep`). A temporary file that must sit beside its target
(an output being written, an export's directory, a load's copy of the warehouse, each renamed
onto its target: :func:`file_beside`) is recorded in that directory, so that it is removed
with it -- that file, proven by its record, and nothing else outside the root.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import shutil
import stat
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Callable, Iterator

from .errors import IrwError, shown

DUCKDB_MAGIC = b"DUCK"  # at byte 8 of every DuckDB database file


def is_database(path: str | os.PathLike) -> bool:
    """Is ``path`` a DuckDB database file (or the write-ahead log of one)? Only a regular
    file is read (a named pipe or a device is never opened: reading one could wait forever)."""
    p = Path(path)
    if p.name.endswith(".wal") and Path(str(p)[:-4]).is_file():
        return True
    try:
        if not stat.S_ISREG(os.stat(p).st_mode):
            return False
        with open(p, "rb") as fh:
            head = fh.read(12)
    except OSError:
        return False
    return head[8:12] == DUCKDB_MAGIC


def file_kind(path: str | os.PathLike) -> str | None:
    """What ``path`` is when it exists but is not a regular file (following links): 'a
    directory', 'a named pipe (FIFO)', 'a device', 'a socket'; None for a regular file or
    nothing at all. Found without opening it."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def standard_input():
    """Standard input as a binary stream, for ``-`` on a command line (read once, into a
    temporary file); an IrwError when the process has none (``<&-``: Python then sets
    ``sys.stdin`` to None)."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        raise IrwError("standard input is closed: nothing to read for - (give a file, or "
                       "pipe the input into irw)")
    return stream


def read_once_problem(path: str | os.PathLike) -> str | None:
    """Why a file irw reads once, from start to end (run metadata, a list of ids), cannot be
    read: None for a regular file or a pipe (a named pipe, or process substitution
    ``<(...)``, which names one as /dev/fd/N); else 'no such file' or what it is. Files
    irw reads twice or seeks in (runs and qrels) must be regular files."""
    if not os.path.exists(path):
        return "no such file"
    kind = file_kind(path)
    return None if kind in (None, "a named pipe (FIFO)") else f"it is {kind}, not a file"


def _same(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def check_target(path: str, *, replace: bool, what: str, protected: tuple[str, ...] = (),
                 replaceable: Callable[[Path], bool] | None = None,
                 source: str = "the warehouse") -> Path:
    """Refuse to write ``what`` to ``path`` when the rules above forbid it; returns the
    path. ``protected``: files that are never written (the warehouse, called ``source`` in
    the message)."""
    if path is None or not str(path).strip():
        raise IrwError(f"no file given for the {what}")
    target = Path(path)
    for guarded in protected:
        if guarded and guarded != ":memory:" and (
                _same(target, guarded) or _same(target, str(guarded) + ".wal")):
            raise IrwError(f"{target} is {source}: irw never writes the {what} onto it; "
                           "choose another file")
    if target.is_dir():
        raise IrwError(f"{target} is a directory: give a file name for the {what}")
    if target.exists() or target.is_symlink():
        if is_database(target) and not (replaceable and replaceable(target)):
            raise IrwError(f"{target} is a DuckDB database: irw never writes the {what} over a "
                           "database; choose another file")
        if not replace:
            raise IrwError(f"{target} exists; use --replace to overwrite it")
        if not target.is_file():
            raise IrwError(f"{target} exists and is not a regular file")
    parent = target.absolute().parent
    if not parent.is_dir():
        raise IrwError(f"{target}: the directory {parent} does not exist")
    return target


def temporary_name(target: Path, suffix: str = ".tmp") -> Path:
    """A hidden name beside ``target`` for the file being written, removed by the writer
    (whatever the outcome, but ``kill -9``)."""
    return target.absolute().parent / f".{target.name}.irw-{uuid.uuid4().hex[:12]}{suffix}"


@contextlib.contextmanager
def output_file(path: str, *, replace: bool, what: str, protected: tuple[str, ...] = (),
                replaceable: Callable[[Path], bool] | None = None,
                source: str = "the warehouse") -> Iterator[Path]:
    """Write one file safely: yields a temporary path beside ``path`` to write; when the
    block ends without an error, the file is renamed onto ``path`` (atomically); otherwise
    it is removed and ``path`` stays as it was. See :func:`check_target` for the rules."""
    target = check_target(path, replace=replace, what=what, protected=protected,
                          replaceable=replaceable, source=source)
    try:
        beside = file_beside(target, companions=(".wal",), make=None)
        tmp = beside.__enter__()
    except OSError as exc:
        raise IrwError(f"cannot write the {what} {target}: {exc.strerror or exc}") from None
    try:
        try:
            yield tmp
            if not tmp.exists():
                raise IrwError(f"the {what} was not written to {target}")
            check_target(str(target), replace=replace, what=what, protected=protected,
                         replaceable=replaceable, source=source)  # nothing appeared meanwhile
            os.replace(tmp, target)
        except OSError as exc:  # named by the target, not by the temporary name
            raise IrwError(f"cannot write the {what} {target}: {exc.strerror or exc}") from None
    finally:
        _remove(tmp)
        beside.__exit__(None, None, None)


def write_text(path: str, text: str, *, replace: bool, what: str,
               protected: tuple[str, ...] = ()) -> Path:
    """Write ``text`` (UTF-8) to ``path`` through :func:`output_file`."""
    with output_file(path, replace=replace, what=what, protected=protected) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


class OutputDirectory:
    """A directory irw writes several files into (an experiment's ``--out``): it may be new,
    empty, or hold what irw wrote there before, listed in its manifest (MANIFEST). Files irw
    wrote before are overwritten; any other file is left alone, and writing over one is an
    error unless ``replace``. Each file is written through :func:`output_file`."""

    MANIFEST = ".irw-written"

    def __init__(self, path: str, *, replace: bool = False, what: str = "output",
                 protected: tuple[str, ...] = (), adopt: Callable[[Path], bool] | None = None):
        if path is None or not str(path).strip():
            raise IrwError(f"no directory given for the {what}")
        self.path, self.replace, self.what, self.protected = Path(path), replace, what, protected
        if self.path.exists() and not self.path.is_dir():
            raise IrwError(f"{self.path} exists and is not a directory (the {what} is a directory)")
        for guarded in protected:
            if guarded and guarded != ":memory:" and _same(self.path, guarded):
                raise IrwError(f"{self.path} is the warehouse: choose a directory for the {what}")
        if not self.path.absolute().parent.is_dir():
            raise IrwError(f"directory {self.path.absolute().parent} does not exist (for the {what} {self.path})")
        self.path.mkdir(exist_ok=True)
        self._written = self._read_manifest(adopt)

    def _read_manifest(self, adopt) -> set[str]:
        """The files irw wrote here; without a manifest (a directory an older irw wrote),
        the files ``adopt`` recognises as irw's."""
        try:
            return set((self.path / self.MANIFEST).read_text(encoding="utf-8").split("\n")) - {""}
        except OSError:
            pass
        if adopt is None or not adopt(self.path):
            return set()
        return {str(p.relative_to(self.path)) for p in self.path.rglob("*") if p.is_file()}

    def _record(self, name: str) -> None:
        if name in self._written:
            return
        self._written.add(name)
        manifest = self.path / self.MANIFEST
        tmp = temporary_name(manifest)
        try:
            tmp.write_text("\n".join(sorted(self._written)) + "\n", encoding="utf-8")
            os.replace(tmp, manifest)
        finally:
            _remove(tmp)

    @contextlib.contextmanager
    def file(self, name: str) -> Iterator[Path]:
        """Write the file ``name`` (a path relative to the directory): yields its temporary
        path (see :func:`output_file`)."""
        target = self.path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        own = name in self._written
        if target.exists() and not own and not self.replace and not is_database(target):
            raise IrwError(f"{target} exists and irw did not write it there: move it away, or "
                           f"choose another directory for the {self.what}")
        with output_file(str(target), replace=True, what=self.what,
                         protected=self.protected) as tmp:
            yield tmp
        self._record(name)

    def write_text(self, name: str, text: str) -> Path:
        with self.file(name) as tmp:
            tmp.write_text(text, encoding="utf-8")
        return self.path / name


# ------------------------------------------------------------------------ temporary files
#
# irw's temporary directories live in one root of its own, ``$TMPDIR/irw-<uid>`` (TEMP_ROOT
# below), private to the user. Each process that needs one makes an owner directory there
# and proves it is irw's and alive: the directory holds a marker file (OWNER_MARKER) that
# starts with OWNER_MAGIC, and the process holds an advisory lock (flock) on that file for
# its lifetime. A lock is released by the system when its holder ends, however it ends, and
# it is seen from other process namespaces and other machines sharing the directory, where a
# process id means nothing. The clean-up (:func:`sweep`) removes an owner directory only when
# it carries the marker and its lock is free; it looks nowhere but in the root. The marker
# is written only once the lock is held, so a directory being set up is never taken for a
# dead one.

OWNER_MARKER = ".irw-owner"
OWNER_MAGIC = b"irwarehouse temporary directory\n"


def temp_root() -> Path:
    """irw's own temporary root, ``$TMPDIR/irw-<uid>`` (created, private to the user): the
    only place :func:`sweep` removes anything. One that is not a directory of this user's,
    or that others may write, is refused."""
    root = Path(tempfile.gettempdir()) / f"irw-{os.getuid()}"
    try:
        os.mkdir(root, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise IrwError(f"cannot create irw's temporary directory {shown(str(root), None)}: "
                       f"{exc.strerror} (TMPDIR chooses where it goes)") from None
    info = os.lstat(root)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o022:
        raise IrwError(f"{shown(str(root), None)} is not a private directory of this user's, so irw "
                       "does not keep temporary files there: remove it, or set TMPDIR to another "
                       "directory")
    return root


class _Owner:
    """This process's owner directory in :func:`temp_root` (made on first use, locked for
    the process's lifetime, removed when it exits); one per root, should TMPDIR change."""

    made: dict[Path, tuple[Path, int]] = {}  # root -> (owner directory, its locked marker)
    pid: int | None = None

    @classmethod
    def directory(cls) -> Path:
        if cls.pid != os.getpid():  # a child process owns nothing of its parent's
            cls.made, cls.pid = {}, os.getpid()
            atexit.register(cls.remove)
        root = temp_root()
        if root in cls.made and cls.made[root][0].is_dir():
            return cls.made[root][0]
        sweep(root)  # what irw processes that ended without cleaning up left there
        path = root / uuid.uuid4().hex[:16]
        try:
            os.mkdir(path, 0o700)
            fd = os.open(path / OWNER_MARKER, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BaseException:
                os.close(fd)
                raise
        except OSError as exc:
            shutil.rmtree(path, ignore_errors=True)
            raise IrwError(f"cannot make a temporary directory in {shown(str(root), None)}: "
                           f"{exc.strerror} (TMPDIR chooses where it goes)") from None
        try:  # the proof, written once the lock is held; on a full disk the directory is
            # used without it (removed when the process ends; the sweep cannot take it)
            os.write(fd, OWNER_MAGIC + f"pid {os.getpid()} on {os.uname().nodename}\n".encode())
        except OSError:
            pass
        cls.made[root] = (path, fd)
        return path

    @classmethod
    def owns(cls, path: str) -> bool:
        return cls.pid == os.getpid() and any(str(owner) == path for owner, _ in cls.made.values())

    @classmethod
    def remove(cls) -> None:
        if cls.pid != os.getpid():
            return
        for path, fd in cls.made.values():
            _remove_recorded(path)
            shutil.rmtree(path, ignore_errors=True)
            with contextlib.suppress(OSError):
                os.close(fd)
        cls.made = {}


def temp_dir(kind: str) -> str:
    """A new private temporary directory ``<kind>-<random>`` in this process's owner
    directory (see above): the caller removes it (:func:`remove_temp`), and if the process
    ends first, the next irw's :func:`sweep` removes it with the owner directory."""
    owner = _Owner.directory()
    path = owner / f"{kind}-{uuid.uuid4().hex[:8]}"
    try:
        os.mkdir(path, 0o700)
    except OSError as exc:
        raise IrwError(f"cannot make a temporary directory in {shown(str(owner), None)}: "
                       f"{exc.strerror} (TMPDIR chooses where it goes)") from None
    return str(path)


def temp_path(kind: str) -> str:
    """A new name ``<kind>-<random>`` in this process's owner directory, not created: for
    what another program makes there and removes (DuckDB's spill directory)."""
    return str(_Owner.directory() / f"{kind}-{uuid.uuid4().hex[:8]}")


def remove_temp(path: str | os.PathLike) -> None:
    """Remove a directory :func:`temp_dir` made (only such a one: inside the owner
    directory of this process)."""
    if _Owner.owns(str(Path(path).parent)):
        shutil.rmtree(path, ignore_errors=True)


@contextlib.contextmanager
def temporary_directory(kind: str) -> Iterator[str]:
    """:func:`temp_dir`, removed when the block ends."""
    path = temp_dir(kind)
    try:
        yield path
    finally:
        remove_temp(path)


def _owner_gone(entry: os.DirEntry) -> bool:
    """Is ``entry`` an owner directory (it holds the marker, with irw's text) whose lock is
    free (its owner has ended)?"""
    try:
        fd = os.open(os.path.join(entry.path, OWNER_MARKER), os.O_RDWR | os.O_NOFOLLOW)
    except OSError:
        return False  # no marker (or not readable): not provably irw's
    try:
        if os.read(fd, len(OWNER_MAGIC)) != OWNER_MAGIC:
            return False  # being set up, or not irw's
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # its owner holds it: alive
        return True
    finally:
        os.close(fd)


def sweep(root: str | os.PathLike | None = None) -> list[str]:
    """Remove from irw's temporary root (default :func:`temp_root`) the owner directories
    whose owners have ended: each must hold the marker, and its lock must be free; with each,
    the files beside other files it recorded (:func:`file_beside`) that are still the files
    recorded. Nothing else is looked at, in the root or anywhere. Returns what it removed
    (the owner directories)."""
    root = Path(root) if root is not None else temp_root()
    removed = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return removed
    for entry in entries:
        if _Owner.owns(entry.path):
            continue
        try:
            if not entry.is_dir(follow_symlinks=False) or entry.stat(follow_symlinks=False).st_uid != os.getuid():
                continue
        except OSError:
            continue
        if _owner_gone(entry):
            _remove_recorded(entry.path)
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(entry.path)
    return removed


# ------------------------------------------------------------------------ files beside a target
#
# A file irw writes beside another and then renames onto it -- an output (output_file), an
# export's directory, a load's copy of the warehouse (irwarehouse.connection.swapped) --
# cannot live in the temporary root: a rename is atomic only within one file system. Such a
# file is recorded in this process's owner directory: a record (RECORD_PREFIX...) holding
# RECORD_MAGIC, what proves the file and its absolute path. If the process ends without
# removing the file (kill -9), the sweep that removes the owner directory removes the file
# too, and only when all of this holds: the record is in a directory that proves it is irw's
# (the marker) and that its owner has ended (the marker's lock is free), and the path still
# names the file recorded. A file irw makes itself (an empty file, a directory) is recorded
# once it exists, by its device and inode: the very file the process made, not one that took
# its name since (between its creation and its record, a few system calls, a kill -9 leaves
# an empty file or directory that nothing removes). A file another writer makes (DuckDB, a
# figure, a CSV writer) is recorded before it exists, by its random name and the device and
# inode of its directory, and removed only while it is a regular file or a directory of this
# user there. A file named like irw's but not recorded is never removed.

RECORD_PREFIX = "beside-"
RECORD_MAGIC = "irwarehouse file beside a target\n"


NAMED = "name"  # a record's first word when it proves a file by its name and directory


@contextlib.contextmanager
def file_beside(target: str | os.PathLike, companions: tuple[str, ...] = (),
                make: str | None = "file") -> Iterator[Path]:
    """A new hidden name beside ``target`` (:func:`temporary_name`), recorded in this
    process's owner directory (see above): yields its path; when the block ends, what is
    there (unless it was renamed away meanwhile) and its record are removed. ``make``:
    'file' makes an empty file (mode 0600) there, 'directory' an empty directory (0700);
    None makes nothing, for a writer that makes the file itself. ``companions``: suffixes
    of files another program makes beside it (``.wal``: DuckDB's write-ahead log), removed
    with it. An OSError (the directory is not writable, the disk is full) leaves nothing
    behind."""
    path = temporary_name(Path(target), ".tmp")
    record = _Owner.directory() / f"{RECORD_PREFIX}{uuid.uuid4().hex[:16]}"
    if make is None:
        parent = os.stat(path.parent)
        proof = f"{NAMED} {parent.st_dev} {parent.st_ino}"
    else:
        made = _make(path, make)
        proof = f"{made.st_dev} {made.st_ino}"
    try:
        with open(record, "x", encoding="utf-8") as out:
            out.write(f"{RECORD_MAGIC}{proof} {' '.join(companions)}\n{path}\n")
    except BaseException:
        _remove_proven(path, proof.split(" "), ())
        with contextlib.suppress(OSError):
            os.remove(record)
        raise
    try:
        yield path
    finally:
        _remove_proven(path, proof.split(" "), companions)
        with contextlib.suppress(OSError):
            os.remove(record)


def _make(path: Path, make: str) -> os.stat_result:
    """Make an empty file or directory at ``path`` (it must not exist); its stat."""
    if make == "directory":
        os.mkdir(path, 0o700)
        try:
            return os.lstat(path)
        except BaseException:
            os.rmdir(path)
            raise
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        return os.fstat(fd)
    except BaseException:
        os.remove(path)  # made by this call, an instant ago
        raise
    finally:
        os.close(fd)


def _remove_recorded(owner: str | os.PathLike) -> None:
    """Remove the files beside their targets that the owner directory ``owner`` recorded
    (:func:`file_beside`), each only while its path still names the file recorded."""
    try:
        entries = [e for e in os.scandir(owner) if e.name.startswith(RECORD_PREFIX)]
    except OSError:
        return
    for entry in entries:
        try:
            with open(entry.path, encoding="utf-8") as fh:
                text = fh.read(8192)
        except (OSError, ValueError):
            continue
        if not text.startswith(RECORD_MAGIC):
            continue
        lines = text[len(RECORD_MAGIC):].split("\n")
        words = lines[0].split(" ")
        size = 3 if words[0] == NAMED else 2
        if len(lines) > 1 and os.path.isabs(lines[1]):
            _remove_proven(lines[1], words[:size], tuple(c for c in words[size:] if c))


def _remove_proven(path: str | os.PathLike, proof: list[str], companions: tuple[str, ...]) -> None:
    """Remove ``path`` if it is still what its record's ``proof`` names -- the regular file
    or directory of this user with that device and inode, or (``name DEV INO``) a regular
    file or directory of this user in the directory of that device and inode -- and then
    its ``companions`` (path + suffix) that are regular files of this user."""
    try:
        named = proof[0] == NAMED
        dev, ino = (int(w) for w in (proof[1:3] if named else proof[:2]))
        info = os.lstat(path)
        where = os.stat(os.path.dirname(path)) if named else info
    except (OSError, ValueError, IndexError):
        return
    is_dir = stat.S_ISDIR(info.st_mode)
    if not ((stat.S_ISREG(info.st_mode) or is_dir) and info.st_uid == os.getuid()
            and where.st_dev == dev and where.st_ino == ino):
        return
    with contextlib.suppress(OSError):
        shutil.rmtree(path) if is_dir else os.remove(path)
    for suffix in companions:
        companion = f"{path}{suffix}"
        with contextlib.suppress(OSError):
            found = os.lstat(companion)
            if stat.S_ISREG(found.st_mode) and found.st_uid == os.getuid():
                os.remove(companion)


def _remove(path: Path) -> None:
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink()
    except FileNotFoundError:
        pass
    except OSError:
        pass
