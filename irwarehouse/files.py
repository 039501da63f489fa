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
  complete, so a failure or an interrupt leaves the old file (or none) as it was.

Temporary names carry the process id (``irw-<pid>-...``), so that what a killed process left
behind is removed by the next command (:func:`sweep`).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Callable, Iterator

from .errors import IrwError

DUCKDB_MAGIC = b"DUCK"  # at byte 8 of every DuckDB database file


def is_database(path: str | os.PathLike) -> bool:
    """Is ``path`` a DuckDB database file (or the write-ahead log of one)?"""
    p = Path(path)
    if p.name.endswith(".wal") and Path(str(p)[:-4]).is_file():
        return True
    try:
        with open(p, "rb") as fh:
            head = fh.read(12)
    except OSError:
        return False
    return head[8:12] == DUCKDB_MAGIC


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
    """A name beside ``target`` for the file being written (removed by :func:`sweep` if the
    process that made it dies)."""
    return target.absolute().parent / f".{target.name}.{TEMP_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}{suffix}"


@contextlib.contextmanager
def output_file(path: str, *, replace: bool, what: str, protected: tuple[str, ...] = (),
                replaceable: Callable[[Path], bool] | None = None,
                source: str = "the warehouse") -> Iterator[Path]:
    """Write one file safely: yields a temporary path beside ``path`` to write; when the
    block ends without an error, the file is renamed onto ``path`` (atomically); otherwise
    it is removed and ``path`` stays as it was. See :func:`check_target` for the rules."""
    target = check_target(path, replace=replace, what=what, protected=protected,
                          replaceable=replaceable, source=source)
    sweep(target.absolute().parent)
    tmp = temporary_name(target)
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
        sweep(self.path)
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

TEMP_PREFIX = "irw-"
# beside an output: .NAME.irw-<pid>-<hex>.tmp; in TMPDIR: irw-<kind>-<pid>-<hex>
_TEMP = re.compile(r"^(?:\..+\.irw-(\d+)-[0-9a-f]{8}\.tmp(?:\.wal)?|irw-[a-z]+-(\d+)-[0-9a-f]{8})$")


def temp_dir(kind: str, where: str | None = None) -> str:
    """A new private temporary directory ``irw-<kind>-<pid>-<random>`` (in TMPDIR, or
    ``where``): the caller removes it; :func:`sweep` removes it if the process dies first."""
    base = where or tempfile.gettempdir()
    path = os.path.join(base, f"{TEMP_PREFIX}{kind}-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    os.mkdir(path, 0o700)
    return path


@contextlib.contextmanager
def temporary_directory(kind: str) -> Iterator[str]:
    """:func:`temp_dir`, removed when the block ends."""
    path = temp_dir(kind)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def sweep(directory: str | os.PathLike | None = None) -> list[str]:
    """Remove what irw processes that are gone left in ``directory`` (default TMPDIR): the
    temporary files and directories named with their process id. Returns what it removed."""
    directory = Path(directory or tempfile.gettempdir())
    removed = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        match = _TEMP.match(entry.name)
        if not match or _alive(int(match.group(1) or match.group(2))):
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                if not entry.stat(follow_symlinks=False).st_uid == os.getuid():
                    continue
                shutil.rmtree(entry.path, ignore_errors=True)
            elif entry.stat(follow_symlinks=False).st_uid == os.getuid():
                os.unlink(entry.path)
            else:
                continue
        except OSError:
            continue
        removed.append(entry.path)
    return removed


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
