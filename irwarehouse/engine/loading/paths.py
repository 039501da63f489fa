"""What a load reads: files named directly, by glob, or as directories."""

from __future__ import annotations

import glob
import os
from typing import Iterable

from ...errors import IrwError, note
from ...files import file_kind
from .frames import Frame, _frames
from .reading import encoding_name, looks_like_qrels


def expand_paths(patterns: Iterable[str], runs: bool = False, encoding: str = "utf-8") -> list[str]:
    """Files named directly, by glob, or as directories: a directory's files at any depth,
    except hidden ones (a name starting with '.', or inside a directory whose name does:
    ``.git/``, ``.old/``), which are skipped with a note saying how many. A DataFrame
    (:class:`Frame`) is taken as it is. ``runs``: the files are runs, and a directory's
    files that look like qrels (:func:`looks_like_qrels`: a common layout keeps the qrels
    beside the runs) are skipped with a note naming each."""
    files: list[str] = []
    skipped: list[str] = []
    for pattern in patterns:
        if isinstance(pattern, Frame):
            files.append(pattern)
            continue
        if os.path.isdir(pattern):
            found = _directory_files(pattern, skipped)
            if not found:
                raise IrwError(f"{pattern}: the directory holds no files"
                               + (" (only hidden ones)" if skipped else ""))
            if runs:
                found = _without_qrels(pattern, found, encoding_name(encoding))
        elif any(ch in pattern for ch in "*?["):
            found = sorted(p for p in glob.glob(pattern) if os.path.isfile(p))
            if not found:
                raise IrwError(f"{pattern}: no file matches this pattern")
        else:
            if not os.path.exists(pattern):
                flag = pattern.lower() in ("true", "false", "yes", "no", "on", "off")
                raise IrwError(f"{pattern}: no such file" + (
                    " (options such as --replace are flags: they take no value)" if flag else ""))
            if not os.path.isfile(pattern):
                raise IrwError(f"{pattern}: not a regular file ({file_kind(pattern)}): irw reads run "
                               "and qrels files more than once (to check them, and to name a bad "
                               "line), so save the input to a file first")
            found = [pattern]
        for f in found:
            if f not in files:
                files.append(f)
    if not files:
        raise IrwError("no input files given")
    if _frames(files) and len(files) > 1:
        raise IrwError("a DataFrame is loaded on its own, not with files or other frames")
    for f in files:
        if not isinstance(f, Frame) and not os.access(f, os.R_OK):
            raise IrwError(f"{f}: cannot read the file (permission denied)")
    if skipped:
        listed = ", ".join(skipped[:3]) + (f", ... ({len(skipped) - 3} more)" if len(skipped) > 3 else "")
        plural = len(skipped) != 1
        note(f"skipped {len(skipped)} hidden file{'s' if plural else ''} or "
             f"director{'ies' if plural else 'y'} ({listed}); name a hidden file directly to load it")
    return files


def _directory_files(directory: str, skipped: list[str]) -> list[str]:
    """The files below ``directory`` (sorted), hidden ones left out and noted in ``skipped``."""
    found = []
    for root, dirs, filenames in os.walk(directory):
        for d in sorted(dirs):
            if d.startswith("."):
                skipped.append(os.path.join(root, d) + os.sep)
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in filenames:
            path = os.path.join(root, name)
            if name.startswith("."):
                skipped.append(path)
            elif os.path.isfile(path):
                found.append(path)
    return sorted(found)


def _without_qrels(directory: str, found: list[str], encoding: str) -> list[str]:
    """The run files among a directory's files ``found``: those that look like qrels are
    skipped, each with a note; none left is an error."""
    runs = []
    for path in found:
        if looks_like_qrels(path, encoding):
            note(f"skipped {path}: it looks like a qrels file (4 fields); load it with irw load qrels")
        else:
            runs.append(path)
    if not runs:
        raise IrwError(f"{directory}: the directory holds no run files, only qrels files "
                       "(load them with irw load qrels)")
    return runs
