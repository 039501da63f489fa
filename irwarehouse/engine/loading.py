"""Loading runs, qrels and run metadata.

The bulk work happens inside DuckDB (``sql/stage_lines.sql``: read, split, cast), so a
whole TREC archive loads in seconds. Every load is one transaction: lines are staged,
checked, and only then moved into the public tables; any problem raises an
:class:`IrwError` naming the file, the line and the problem, and nothing is loaded.
Line numbers are found by re-reading the offending file in Python, only on that error path.
"""

from __future__ import annotations

import bz2
import contextlib
import csv
import errno
import glob
import gzip
import io
import lzma
import math
import os
import re
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Iterable

import duckdb

from .. import catalogue, names, numbers, output, sql, state
from ..catalogue import DEFAULT_COLLECTION
from ..connection import engine_of, has_table, memory_bytes, transaction, without_order
from ..errors import Interrupts, IrwError, note, shown
from ..files import remove_temp, temp_dir, temporary_directory
from ..sql import run_script
from .base import invalidate_bases, update_bases
from .evaluation import refresh_scores


# Ranking policies (SPEC section 1), defined in sql/_ranking.sql.
POLICIES = ("trec_eval", "given", "score_then_rank", "trec_eval_10")

BATCH = 16  # files per DuckDB read: large enough to parallelise, small enough for progress
BATCH_SHARE = 1 / 8  # of the memory limit: the text of the run files staged at once
# Ranking only the judged documents (files in, scores out): counting the rows above each
# costs about what sorting the rankings does when it compares this many pairs per line.
COUNT_PAIRS = 2
FRAME_ROW_BYTES = 40  # a DataFrame row taken as a line of run text this long

# Number syntax (README, "Input files"): rank and grade are integers, the score a decimal
# number, optionally in exponent notation. Nothing else: no spaces, no "_" separators, no hex,
# no inf or nan. The SQL staging and the Python locator both match these expressions.

# Staged columns: (name, field, SQL type of a number, its syntax).
RUN_COLUMNS = [("topic", 1, None, None), ("docno", 3, None, None), ("run_id", 6, None, None),
               ("given_rank", 4, "BIGINT", numbers.INTEGER_SYNTAX), ("score", 5, "DOUBLE", numbers.DECIMAL_SYNTAX)]
QRELS_COLUMNS = [("topic", 1, None, None), ("docno", 3, None, None),
                 ("rel", 4, "INTEGER", numbers.INTEGER_SYNTAX)]


class Frame:
    """A pandas DataFrame (or anything DuckDB scans as one: an Arrow table, a polars frame)
    of runs or qrels, loaded as data: DuckDB's DataFrame scan stages its rows where a file's
    lines go (sql/frames.sql), and the load checks and ranks them as it does a file's; a
    row that no file line could stand for is an error naming the row, the column and the
    problem. ``columns``: each field's column of the frame (runs: topic, docno, score,
    given_rank, run_id; qrels: topic, docno, rel), None for an absent rank or run column
    (``run_id`` then names the run)."""

    name = "the DataFrame"

    def __init__(self, frame, kind: str, columns: dict[str, str | None], run_id: str | None = None):
        self.frame, self.kind, self.columns, self.run_id = frame, kind, columns, run_id

    def __str__(self) -> str:
        return self.name

    @contextlib.contextmanager
    def registered(self, con):
        """The frame as ``irw_frame`` of ``con``, with each field's (column, kind) and the
        template's parameters."""
        from ..connection import register, unregister

        register(con, "irw_frame", self.frame)
        try:
            types = dict((r[0], r[1]) for r in con.execute("DESCRIBE SELECT * FROM irw_frame").fetchall())
            cols = {field: (name, _kind(types[str(name)])) if name is not None else None
                    for field, name in self.columns.items()}
            params = {"rows": len(self.frame), "run_id": self.run_id}
            yield cols, params
        finally:
            unregister(con, "irw_frame")

    def numbers(self):
        return ([("given_rank", "BIGINT", numbers.INTEGER_SYNTAX), ("score", "DOUBLE", numbers.DECIMAL_SYNTAX)]
                if self.kind == "runs" else [("rel", "INTEGER", numbers.INTEGER_SYNTAX)])

    def stage(self, con, target: str, nfields: int) -> None:
        with self.registered(con) as (cols, params):
            query = sql.statement("frames.sql", "stage", target, cols, self.numbers(), nfields)
            con.execute(query, sql.used(params, query))

    def problem(self, extra_ok: bool = False) -> str:
        """What is wrong with the first row a load refuses: ``the DataFrame, row R, column
        C: problem``, or a repeated document with the row that first held it."""
        from ..connection import open_duckdb

        con = open_duckdb()  # a connection of its own: the load's may be in a failed transaction
        try:
            with self.registered(con) as (cols, params):
                found = self._bad_value(con, cols, params)
                if found:
                    return found
                key = ["run_id", "topic", "docno"] if self.kind == "runs" else ["topic", "docno"]
                query = sql.statement("frames.sql", "repeated", cols, self.numbers(), key)
                row = con.execute(query, sql.used(params, query)).fetchone()
                if row:
                    if self.kind == "runs":
                        what = f"document {shown(row[4])} appears twice for run {shown(row[2])}, topic {shown(row[3])}"
                    else:
                        what = f"document {shown(row[3])} is judged twice for topic {shown(row[2])}"
                    return f"{self.name}, row {row[0]}: {what} (first at row {row[1]})"
        finally:
            con.close()
        return ""

    def _bad_value(self, con, cols, params) -> str:
        query = sql.statement("frames.sql", "first_bad", cols, self.numbers())
        row = con.execute(query, sql.used(params, query)).fetchone()
        if row is None:
            return ""
        values = iter(row[1:])
        order = ("topic", "docno", "given_rank", "score", "rel", "run_id")
        staged = {f: (next(values), next(values)) for f, c in cols.items() if c}
        for field in sorted(staged, key=order.index):
            value, raw = staged[field]
            problem = _field_problem(field, value, raw, cols[field][1])
            if problem:
                return f"{self.name}, row {row[0]}, column {shown(cols[field][0])}: {problem}"
        return f"{self.name}, row {row[0]}: the run id is empty"

    def run_row(self, run_id: str) -> int | None:
        """The first row of the run ``run_id``."""
        from ..connection import open_duckdb

        con = open_duckdb()
        try:
            with self.registered(con) as (cols, params):
                query = sql.statement("frames.sql", "run_row", cols, self.numbers())
                return con.execute(query, sql.used({**params, "id": run_id}, query)).fetchone()[0]
        finally:
            con.close()


_LABELS = {"topic": "the topic", "docno": "the docno", "run_id": "the run id",
           "given_rank": "the rank", "score": "the score", "rel": "the relevance"}


def _field_problem(field: str, value, raw, kind: str) -> str | None:
    """What is wrong with a frame's value ``raw`` (as text) of ``field``, staged as
    ``value`` (None: refused); None when nothing is."""
    label = _LABELS[field]
    if raw is None:
        return f"{label} is missing (None or NaN)"
    if field == "topic" and value and value.lstrip().startswith("#"):
        return (f"{label} {shown(value)} begins with '#', which makes a line of a run or qrels "
                "file a comment line")
    if field in ("topic", "docno", "run_id"):
        return f"{label} is empty" if value == "" else None
    if value is not None and (field != "score" or math.isfinite(value)):
        return None
    if field == "score":
        if value is not None:
            return f"{label} {shown(raw)} is not a finite number"
        if kind in ("text", "integer", "real"):
            return (f"{label} {shown(raw)} is not a number: write a decimal number, optionally "
                    "with an exponent (12.5, -3, 1.2e-05)")
        return f"{label} {shown(raw)} is not a number (the column's type is not numeric)"
    low, high = _RANGES["BIGINT" if field == "given_rank" else "INTEGER"]
    if kind == "text" and not _INTEGER.fullmatch(raw) or kind == "other":
        return f"{label} {shown(raw)} is not an integer"
    if kind == "real":
        try:
            if float(raw) != int(float(raw)):
                return f"{label} {shown(raw)} is not an integer"
        except (ValueError, OverflowError):
            return f"{label} {shown(raw)} is not an integer"
    return f"{label} {shown(raw)} is out of range ({low} to {high})"


def _kind(duckdb_type: str) -> str:
    """text, integer, real or other, for a column of DuckDB type ``duckdb_type``."""
    t = duckdb_type.upper()
    if t == "VARCHAR" or t.startswith("ENUM"):
        return "text"
    if t in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
             "UINTEGER", "UBIGINT", "UHUGEINT"):
        return "integer"
    if t in ("FLOAT", "DOUBLE", "REAL") or t.startswith("DECIMAL"):
        return "real"
    return "other"


def _frames(files) -> list:
    return [f for f in files if isinstance(f, Frame)]


def _names(files) -> list[str]:
    """The files of a load by name (a DataFrame: 'the DataFrame')."""
    return [str(f) for f in files]


def expand_paths(patterns: Iterable[str]) -> list[str]:
    """Files named directly, by glob, or as directories: a directory's files at any depth,
    except hidden ones (a name starting with '.', or inside a directory whose name does:
    ``.git/``, ``.old/``), which are skipped with a note saying how many. A DataFrame
    (:class:`Frame`) is taken as it is."""
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
                raise IrwError(f"{pattern}: not a regular file")
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


# ---------------------------------------------------------------------------- reading files
# What a run or qrels file may look like (README, "Input files"). The SQL staging
# (sql/stage_*.sql) and the Python locator below implement the same rules.

_INTEGER = numbers.INTEGER
_DECIMAL = numbers.DECIMAL
_RANGES = {"BIGINT": (-2**63, 2**63 - 1), "INTEGER": (-2**31, 2**31 - 1)}

# Compressed files are recognised by their first bytes, whatever their name, and decompressed
# into a temporary file first (_sources): DuckDB reads plain text only.
_COMPRESSION = [(b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz")]
_NOT_READ = [(b"\x28\xb5\x2f\xfd", "zstd-compressed", "zstd -d"),
             (b"PK\x03\x04", "a zip archive", "unzip"),
             (b"\x04\x22\x4d\x18", "lz4-compressed", "lz4 -d"),
             (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive", "7z x")]
_OPENERS = {"gzip": gzip.open, "bzip2": bz2.open, "xz": lzma.open}

# Text encodings (--encoding): the name users give -> the name DuckDB and Python share.
ENCODINGS = {"utf-8": "utf-8", "utf8": "utf-8", "latin-1": "latin-1", "latin1": "latin-1",
             "iso-8859-1": "latin-1"}
MAX_LINE = 2_097_152  # bytes: DuckDB's max_line_size; a longer line is an error
_SPACE = " \t\n\r\v\f"  # the field separators (ASCII whitespace); \r and \n also end lines
_FIELDS = re.compile(f"[{_SPACE}]+")
_LATIN1_CONTROLS = re.compile(rb"[\x80-\x9f]")
# The separators within a line, and, per delimiter, those DuckDB's CSV reader splitting on
# that one would leave inside a field (the whitespace splitter of sql/stage_lines.sql splits
# on them).
_WHITESPACE = tuple(c.encode() for c in _SPACE if c not in "\r\n")
_INSIDE_FIELDS = {delim: tuple(w for w in _WHITESPACE if w != delim.encode()) for delim in "\t "}


def encoding_name(encoding: str) -> str:
    """The canonical name of a supported text encoding, or an error listing them."""
    name = ENCODINGS.get(str(encoding).strip().lower())
    if name is None:
        raise IrwError(f"unknown encoding {encoding!r}; valid: utf-8, latin-1")
    return name


def compression(path: str) -> str | None:
    """The compression of a file by its first bytes: gzip, bzip2, xz or None (plain text).
    Formats irw does not read are an error saying how to decompress them."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(8)
    except OSError as exc:
        raise IrwError(f"{path}: cannot read the file ({exc.strerror})") from None
    for magic, kind in _COMPRESSION:
        if head.startswith(magic):
            return kind
    for magic, kind, tool in _NOT_READ:
        if head.startswith(magic):
            raise IrwError(f"{path}: the file is {kind}, which irw does not read; decompress it "
                           f"first ({tool}), or compress it with gzip, bzip2 or xz")
    return None


def _damaged(path: str, kind: str | None, exc: Exception) -> str:
    """The message for a file that could not be read to its end."""
    if kind is None or (isinstance(exc, OSError) and exc.errno):
        return f"{path}: cannot read the file ({getattr(exc, 'strerror', None) or exc})"
    if isinstance(exc, EOFError):
        return f"{path}: the {kind} data ends early: the file is truncated"
    detail = str(exc).split(": ", 1)[-1] if isinstance(exc, zlib.error) else str(exc)
    return f"{path}: the {kind} data is corrupt ({detail or type(exc).__name__}): the file is damaged"


_READ_ERRORS = (OSError, EOFError, zlib.error, lzma.LZMAError)


def _open_binary(path: str, kind: str | None = None):
    """The file's content as a binary stream, decompressed by its first bytes."""
    kind = kind if kind is not None else compression(path)
    return _OPENERS[kind](path, "rb") if kind else open(path, "rb")


def _verify(path: str, kind: str | None, copy_to: str | None = None,
            look_for: tuple[bytes, ...] = ()) -> set[bytes]:
    """Read a file to its end, which for a compressed one checks its checksums and length;
    ``copy_to``: write the (decompressed) content there. Returns which of the single bytes
    ``look_for`` the content holds. A damaged stream is an IrwError; so is a full disk."""
    found: set[bytes] = set()
    try:
        with _open_binary(path, kind) as fh, (open(copy_to, "wb") if copy_to else
                                              contextlib.nullcontext()) as out:
            while chunk := fh.read(1 << 20):
                if out:
                    out.write(chunk)
                found.update(byte for byte in look_for if byte not in found and byte in chunk)
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise IrwError(f"{path}: no space left in {os.path.dirname(copy_to or path)} to "
                           "decompress the file (TMPDIR names another directory)") from None
        raise IrwError(_damaged(path, kind, exc)) from None
    except _READ_ERRORS as exc:
        raise IrwError(_damaged(path, kind, exc)) from None
    return found


def _open_text(path: str):
    """A (small) text file, decompressed by content, UTF-8."""
    return io.TextIOWrapper(_open_binary(path), encoding="utf-8", errors="strict")


def _raw_lines(path: str):
    """(line number, bytes) of every line: lines end at \\n, \\r\\n or a lone \\r (as in
    DuckDB's reader)."""
    kind = compression(path)
    number = 0
    try:
        with _open_binary(path, kind) as fh:
            for chunk in fh:
                chunk = chunk[:-1] if chunk.endswith(b"\n") else chunk
                chunk = chunk[:-1] if chunk.endswith(b"\r") else chunk
                for line in chunk.split(b"\r"):
                    number += 1
                    yield number, line
    except _READ_ERRORS as exc:
        raise IrwError(_damaged(path, kind, exc)) from None


def _decode(raw: bytes, encoding: str, where: str) -> str:
    """A line's text; an undecodable byte is an IrwError naming its column."""
    if encoding == "latin-1":
        bad = _LATIN1_CONTROLS.search(raw)
        if bad:
            raise IrwError(f"{where}: byte 0x{raw[bad.start()]:02x} (column {bad.start() + 1}) is a "
                           "control code, not a Latin-1 character (Windows-1252 text is not read)")
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        raise IrwError(f"{where}: byte 0x{raw[exc.start]:02x} (column {exc.start + 1}) is not valid "
                       "UTF-8; if the file is Latin-1, load it with --encoding latin-1") from None


def is_comment(fields: list[str]) -> bool:
    """Is a line of these fields a comment line? Its first field begins with '#' (the rule
    of sql/load.sql, comment, which the SQL readers apply)."""
    return fields[0].startswith("#")


def _lines(path: str, encoding: str = "utf-8"):
    """(line number, fields) for every line that is neither blank nor a comment, split on runs
    of ASCII whitespace. A line that is too long or not in ``encoding`` (a comment line
    included) is an IrwError naming it."""
    for number, raw in _raw_lines(path):
        if len(raw) + 2 > MAX_LINE:
            raise IrwError(f"{path}, line {number}: the line is {len(raw):,} bytes long, irw reads "
                           f"lines of up to {MAX_LINE:,} bytes (is this a run or qrels file?)")
        if number == 1 and encoding == "utf-8" and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]  # a byte order mark
        text = _decode(raw, encoding, f"{path}, line {number}")
        if text.strip(_SPACE):
            fields = _FIELDS.split(text.strip(_SPACE))
            if not is_comment(fields):
                yield number, fields


def _number_problem(value: str, label: str, index: int, cast: str) -> str | None:
    """What is wrong with ``value`` as the number in field ``index`` (None: nothing)."""
    what = f"{label} {shown(value, 40)} (field {index})"
    if cast == "DOUBLE":
        if not _DECIMAL.fullmatch(value):
            return (f"{what} is not a number: write a decimal number, optionally with an "
                    "exponent (12.5, -3, 1.2e-05)")
        if not math.isfinite(float(value)):
            return f"{what} is out of range (beyond ±1.8e308)"
        return None
    if not _INTEGER.fullmatch(value):
        return f"{what} is not an integer"
    low, high = _RANGES[cast]
    if len(value.lstrip("+-").lstrip("0")) > 25 or not low <= int(value) <= high:
        return f"{what} is out of range ({low} to {high})"
    return None


def _delimiter(path: str, nfields: int) -> str | None:
    """The delimiter of a file whose first line (not blank, not a comment) has ``nfields``
    fields separated by single tabs or by single spaces (no other whitespace): such files
    take the fast path of :func:`_stage`. None otherwise, or when the file cannot be read
    here."""
    try:
        line = next((raw for _, raw in _raw_lines(path)
                     if raw.strip() and not raw.strip().startswith(b"#")), b"")
    except IrwError:
        return None
    for delim, other in ((b"\t", b" "), (b" ", b"\t")):
        fields = line.split(delim)
        if len(fields) == nfields and all(fields) and not any(
                other in f or b"\v" in f or b"\f" in f for f in fields):
            return delim.decode()
    return None


class _ReadError(Exception):
    """DuckDB could not read a batch of files (the locator then names the problem)."""

    def __init__(self, paths: list[str], exc: Exception):
        super().__init__(str(exc))
        self.paths, self.exc = paths, exc


def _sources(files: list[str], tmp: str) -> dict[str, tuple[str, set[bytes]]]:
    """For each file: the plain text file DuckDB reads, and which whitespace bytes other than
    the newline it holds (_WHITESPACE). Compressed files are decompressed into ``tmp``, which
    checks them (DuckDB does not check a gzip stream's checksum); plain ones are read through.
    The files are taken in parallel (zlib, bz2 and lzma release the GIL)."""
    def prepare(item: tuple[int, str]) -> tuple[str, tuple[str, set[bytes]]]:
        number, path = item
        kind = compression(path)
        plain = os.path.join(tmp, f"{number}.txt") if kind else None
        held = _verify(path, kind, copy_to=plain, look_for=_WHITESPACE)
        return path, (plain or path, held)

    with ThreadPoolExecutor(min(os.cpu_count() or 1, 8)) as pool:
        return dict(pool.map(prepare, enumerate(files)))


def _stage(con, target: str, files: list[str], nfields: int, columns, progress,
           encoding: str = "utf-8") -> int:
    """Read and split ``files`` into the temporary table ``target``. First each file is read
    to its end in Python, compressed ones decompressed into a temporary directory
    (:func:`_sources`). Files separated by single tabs or spaces are then read by DuckDB's CSV
    reader (sql/stage_delimited.sql); the others, and all of them again if that reader meets
    a line it cannot stand for, are split on any whitespace (sql/stage_lines.sql). Comment
    lines are dropped; returns how many there were. A file that cannot be read is an
    IrwError naming it and, where there is one, the line. Runs outside a transaction: a
    failed fast read leaves the warehouse untouched."""
    shown = 0

    def tick(n: int) -> None:  # a fall-back re-read does not advance the bar past the end
        nonlocal shown
        n = min(n, len(files) - shown)
        if progress and n > 0:
            shown += n
            progress(n)

    encoding = encoding_name(encoding)
    if _frames(files):  # a DataFrame: loaded on its own (expand_paths); it has no comments
        for frame in files:
            frame.stage(con, target, nfields)
        return 0
    step = BATCH if progress else max(len(files), 1)
    with temporary_directory("load") as tmp:
        sources = _sources(files, tmp)
        number = {f: i for i, f in enumerate(files)}

        def read(template: str, group: list[str], params: dict, report: bool) -> None:
            _stage_batches(con, template, target, [sources[f][0] for f in group],
                           [number[f] for f in group], nfields, columns, step, tick,
                           {**params, "encoding": encoding, "max_line": MAX_LINE}, report=report)

        # A file holding whitespace that the CSV reader would keep inside a field goes to the
        # whitespace splitter.
        by_delim: dict[str | None, list[str]] = {}
        for f in files:
            delim = _delimiter(sources[f][0], nfields)
            if delim is not None and sources[f][1] & set(_INSIDE_FIELDS[delim]):
                delim = None
            by_delim.setdefault(delim, []).append(f)
        general = by_delim.pop(None, [])
        try:
            try:
                for delim, group in by_delim.items():
                    read("stage_delimited.sql", group, {"delim": delim}, False)
                fast = not sql.rows(con, "load.sql", "unsplit", {}, target)
            except duckdb.Error:
                Interrupts.check()  # an interrupt, not a file the fast reader cannot read
                fast = False
            if not fast:
                sql.run(con, "load.sql", "clear", {}, target)
                general = files
            read("stage_lines.sql", general, {}, True)
        except _ReadError as failure:
            batch = [f for f in files if sources[f][0] in failure.paths]
            raise IrwError(_read_problem(batch, encoding) or f"cannot read {', '.join(batch)}: "
                           f"{str(failure.exc).strip().splitlines()[0]}") from None
    return sql.rows(con, "load.sql", "drop_comments", {}, target)[0][0]


def _read_problem(files: list[str], encoding: str) -> str:
    """Why DuckDB could not read ``files``: the first line too long or not in ``encoding``,
    or a damaged stream ('' if Python finds nothing wrong)."""
    for path in files:
        try:
            for _ in _lines(path, encoding):
                pass
        except IrwError as exc:
            return str(exc)
    return ""


def _stage_batches(con, template: str, target: str, files: list[str], numbers: list[int],
                   nfields: int, columns, step: int, tick, params: dict,
                   report: bool = False) -> None:
    """Run a staging template over ``files`` (``numbers``: their numbers, which the staged
    rows' `file` column takes), ``step`` files per statement (all of them in one when no
    progress bar is shown: DuckDB reads the files in parallel). ``report``: a read error
    becomes a _ReadError naming the files."""
    for start in range(0, len(files), step):
        batch = files[start:start + step]
        try:
            run_script(con, template, {"files": batch, "numbers": numbers[start:start + step],
                                          **params}, target=target, nfields=nfields,
                          columns=columns)
        except duckdb.Error as exc:
            Interrupts.check()
            if not report:
                raise
            raise _ReadError(batch, exc) from None
        tick(len(batch))


def _progress_bar(files: list[str], label: str, phases: int = 0):
    """A progress bar on a terminal (stderr), nothing otherwise: one step per file read, and
    one per later phase of the load (see _phase)."""
    return output.progress_bar(len(files) + phases, label) if len(files) >= 2 else contextlib.nullcontext(None)


def _phase(bar, label: str, advance: bool = True) -> None:
    """Show the next phase's name; ``advance``: the previous phase (not the reading) is done."""
    if bar is not None:
        bar.label = label
        bar.update(1 if advance else 0)


# ---------------------------------------------------------------------------- runs

def _run_line_problem(fields: list[str], extra_ok: bool) -> str | None:
    if len(fields) < 6 or (len(fields) > 6 and not extra_ok):
        return (f"expected 6 fields (topic Q0 docno rank score run_id), found {len(fields)}"
                + ("" if len(fields) < 6 else "; use --ignore-extra-fields to ignore trailing text as trec_eval does"))
    return (_number_problem(fields[3], "rank", 4, "BIGINT")
            or _number_problem(fields[4], "score", 5, "DOUBLE"))


def _locate_problem(files: list[str], line_problem, key, twice, encoding: str = "utf-8") -> str:
    """The first bad line of ``files``: ``line_problem(fields)`` names what is wrong with a
    line; a repeated ``key(fields)`` is reported by ``twice(fields)``. Empty if none found.
    A DataFrame names its own first bad row (:meth:`Frame.problem`)."""
    for frame in _frames(files):
        found = frame.problem()
        if found:
            return found
    files = [f for f in files if not isinstance(f, Frame)]
    seen: dict[tuple, tuple[str, int]] = {}
    for path in files:
        for number, fields in _lines(path, encoding):
            problem = line_problem(fields)
            if problem:
                return f"{path}, line {number}: {problem}"
            k = key(fields)
            if k in seen:
                first_path, first_line = seen[k]
                return f"{path}, line {number}: {twice(fields)} (first at {first_path}, line {first_line})"
            seen[k] = (path, number)
    return ""


def _locate_run_problem(files: list[str], extra_ok: bool, encoding: str = "utf-8") -> str:
    return _locate_problem(
        files, lambda f: _run_line_problem(f, extra_ok), lambda f: (f[5], f[0], f[2]),
        lambda f: f"document {f[2]} appears twice for run {f[5]}, topic {f[0]}", encoding)


@without_order
def load_runs(con, patterns: Iterable[str], policy: str = "trec_eval", replace: bool = False,
              meta: str | None = None, extra_fields: bool = False, final=None,
              encoding: str = "utf-8", collection: str = DEFAULT_COLLECTION,
              implicit: bool = False) -> dict:
    """Load run files into ``collection``; returns a summary {collection, runs, lines, files,
    comments, replaced, refreshed[, meta]} (``comments``: comment lines skipped). ``implicit``: the collection was not named but chosen as the
    warehouse's only one (collection.for_load), which the final transaction checks again.

    The files are read, checked and ranked in temporary tables of ``con``, and moved into
    the warehouse in one final transaction. ``con`` is the warehouse's connection -- or,
    with ``final``, a staging connection and ``final(rows)`` a context manager that attaches the
    warehouse to it for writing about ``rows`` rows (connection.Staging.attach): the warehouse
    is then locked only for the final transaction, or not at all when the load writes into a
    copy of it (connection.swapped), and readers can use it while the files are read."""
    files = expand_paths(patterns)
    try:
        with _progress_bar(files, "reading runs", phases=3) as bar:
            comments = _stage_runs(con, files, policy, extra_fields, encoding, collection, bar)
            _phase(bar, "writing to the warehouse")
            with final(_rows_staged(con)) if final else contextlib.nullcontext():
                with transaction(con):
                    if implicit:
                        catalogue.check_still_only(con, collection)
                    summary = _insert_runs(con, files, policy, replace, collection)
                    summary["comments"] = comments
                    if meta:
                        summary["meta"] = _load_meta(con, meta, collection)
            _phase(bar, "done")
    finally:
        _drop_staged(con)
    return summary


def _rows_staged(con) -> int:
    """How many rows a load's final transaction writes: its ranked run lines and judgments."""
    rows = 0
    if sql.rows(con, "load.sql", "staging_path"):
        rows += sql.rows(con, "load.sql", "count", {}, "irw_staging.irw_ranked")[0][0]
    if has_table(con, "irw_staged_qrels", temporary=True):
        rows += sql.rows(con, "load.sql", "count", {}, "irw_staged_qrels")[0][0]
    return rows


_STAGED = ("irw_staged", "irw_batch_topics", "irw_staged_topics", "irw_staged_files",
           "irw_staged_sums", "irw_reranked", "irw_topics_across", "irw_staged_parts", "irw_staged_qrels")


def _drop_staged(con) -> None:
    """Remove what a load staged: its temporary tables and its staging database."""
    engine = engine_of(con)
    for table in _STAGED:
        engine.drop(table)
    _detach_staging(con)


def release_staging(con) -> None:
    """Detach a load's staging database from ``con`` and remove its file (a connection that
    is closed next needs no more: its temporary tables go with it)."""
    _detach_staging(con)


def _attach_staging(con, on_disk: bool) -> None:
    """Attach the database that holds a load's ranked rows (irw_staging) to ``con``: a file
    in a private temporary directory when ``on_disk``, else one in memory. On disk, DuckDB
    writes each batch's rows into the file as it inserts them, compressed, and evicts them
    from memory without writing them again, where rows of a temporary table would spill to
    the temporary directory uncompressed."""
    _detach_staging(con)
    path = os.path.join(temp_dir("stage"), "staging.duckdb") if on_disk else ":memory:"
    sql.run(con, "load.sql", "attach_staging", {}, path)


def _detach_staging(con) -> None:
    """Detach the staging database, if attached, and remove its file with its directory."""
    found = sql.rows(con, "load.sql", "staging_path")
    if found:
        sql.run(con, "load.sql", "detach_staging")
        if found[0][0]:
            remove_temp(os.path.dirname(found[0][0]))


def _stage_runs(con, files: list[str], policy: str, extra_fields: bool, encoding: str,
                collection: str, bar=None, judged: str | None = None) -> int:
    """Read, check and rank run files in tables of ``con`` (irw_staging.irw_ranked, and the
    temporary irw_staged_topics, irw_staged_files, irw_staged_parts), ready for
    :func:`_insert_runs`. Returns the number of comment lines skipped. ``judged`` (files in,
    scores out, :func:`stage_files`): a relation of judgments (topic, docno); irw_ranked then
    keeps only the ranked rows of judged documents, as a view ranking them within the query
    that reads it (when the files are one batch; every row, stored, otherwise), and no
    fingerprints are taken (irw_staged_parts): nothing is written to a warehouse.

    The files are taken in batches of about a memory budget's worth of text
    (:func:`_batches`): each is read, checked and ranked on its own, and its ranked rows are
    appended to irw_staging.irw_ranked -- in memory when the files are one batch, else in
    a staging database file (:func:`_attach_staging`), where they take about 27 bytes a
    line on disk and, once written, no memory. So the memory a load needs is bounded by
    the batch, not the archive, and a batch's checking and sorting do not spill. A run
    whose lines are in files of several batches is checked for duplicates and ranked again
    over all its lines at the end."""
    if policy not in POLICIES:
        raise IrwError(f"unknown ranking policy {policy!r}; valid: {', '.join(POLICIES)}")
    batches = _batches(con, files)
    fingerprints = judged is None
    if len(batches) > 1:  # a run's lines may be in several batches, ranked again over all of them
        judged = None
    # In memory only when the one batch fits its share of the memory limit: DuckDB (1.5 and
    # 2.0) can corrupt the rows of an attached in-memory database whose blocks it evicted
    # under memory pressure when they are read back into the warehouse, where the rows of a
    # staging file are read back intact (tests/test_loading.py, the load larger than the
    # memory limit). Files in, scores out with one batch stores no rows there (irw_ranked is
    # a view over the batch's lines) and writes no warehouse.
    _attach_staging(con, len(batches) > 1 or (judged is None and _text_size_of(batches[0]) > _budget(con)))
    run_script(con, "stage_runs.sql")
    comments = 0
    for number, batch in enumerate(batches):
        if bar is not None and number:
            bar.label = "reading runs"
        sql.run(con, "load.sql", "staged_runs")
        comments += _stage(con, "irw_staged", batch, 6, RUN_COLUMNS, bar.update if bar else None,
                           encoding)
        _phase(bar, "checking", advance=False)
        _check_runs(con, batch, extra_fields, encoding)
        if bar is not None:
            bar.label = "ranking"
        start = sql.rows(con, "load.sql", "count", {}, "irw_staging.irw_ranked")[0][0] if fingerprints else 0
        by_count = False
        if judged:  # few judged documents per ranking: their ranks counted, not sorted
            pairs, lines = sql.rows(con, "load.sql", "pairs_to_count", {}, judged)[0]
            by_count = pairs <= COUNT_PAIRS * max(lines, 1)
        run_script(con, "rank_runs.sql", {"batch": number, "files": _names(batch), "start": start,
                                             "collection": collection}, policy=policy,
                   judged=judged, sums=fingerprints, by_count=by_count)
    if sql.rows(con, "load.sql", "count", {}, "irw_staged_files")[0][0] == 0:
        raise IrwError(f"{', '.join(_names(files))}: no run lines found")
    across = [r[0] for r in sql.rows(con, "load.sql", "runs_across_batches")] if len(batches) > 1 else []
    if across:
        if sql.rows(con, "load.sql", "docno_twice_across", {"ids": across}):
            _run_problem(files, extra_fields, encoding, "a docno twice in a run's topic")
        run_script(con, "rank_runs_across.sql", {"ids": across, "collection": collection},
                      policy=policy)
    _check_run_ids(con, files, encoding)
    _phase(bar, "ranking")
    if fingerprints:
        run_script(con, "run_parts_staged.sql", {"policy": policy, "ids": _staged_run_ids(con),
                                                    "collection": collection})
    return comments


def _batches(con, files: list[str]) -> list[list[str]]:
    """``files`` in consecutive groups of about BATCH_SHARE of DuckDB's memory limit in text
    (:func:`_text_size`); a file is never split, and all of them are one group when they
    fit."""
    budget = _budget(con)
    batches: list[list[str]] = [[]]
    size = 0
    for path in files:
        text = _text_size(path)
        if batches[-1] and size + text > budget:
            batches.append([])
            size = 0
        batches[-1].append(path)
        size += text
    return batches


def _budget(con) -> float:
    """The text of run files staged at once: BATCH_SHARE of DuckDB's memory limit."""
    return memory_bytes(con) * BATCH_SHARE


def _text_size_of(paths) -> int:
    return sum(_text_size(path) for path in paths)


def _text_size(path) -> int:
    """About how many bytes of text a file holds: a gzip file's last four bytes give its size
    uncompressed (modulo 4 GiB); bzip2 and xz files are taken as 6 times their size; a
    DataFrame as FRAME_ROW_BYTES a row."""
    if isinstance(path, Frame):
        return len(path.frame) * FRAME_ROW_BYTES
    size = os.path.getsize(path)
    kind = compression(path)
    if kind == "gzip" and size >= 18:
        with open(path, "rb") as fh:
            fh.seek(-4, os.SEEK_END)
            return max(int.from_bytes(fh.read(4), "little"), size)
    return size * (6 if kind else 1)


def _check_runs(con, files: list[str], extra_fields: bool, encoding: str = "utf-8") -> None:
    """Check a batch's staged lines (irw_staged, read from ``files``): the fields, and a
    docno twice in a (run, topic); leaves the batch's ranking lengths in irw_batch_topics."""
    bad = sql.rows(con, "load.sql", "bad_run_line", {}, extra_fields)
    if not bad:
        # ranking lengths, and duplicates: a docno twice in a (run, topic)
        sql.run(con, "load.sql", "batch_topics")
        bad = sql.rows(con, "load.sql", "docno_twice_in_batch")
    if bad:
        _run_problem(files, extra_fields, encoding, _names(files)[bad[0][0]])


def _run_problem(files: list[str], extra_fields: bool, encoding: str, where: str):
    """Raise the error for what the checks found wrong (``where``: the file, or what): the
    file, line and problem, found by reading the files again in Python."""
    found = _locate_run_problem(files, extra_fields, encoding_name(encoding))
    raise IrwError(found or f"{where}: malformed run data")


def _check_run_ids(con, files: list[str], encoding: str) -> None:
    """Every run id loaded can be addressed by a run spec (irwarehouse.names); else an
    error naming the first line that gives a run such an id."""
    for run_id in _staged_run_ids(con):
        problem = names.run_id_problem(run_id)
        if problem:
            where = next((f"{frame}, row {row}" for frame in _frames(files)
                          for row in [frame.run_row(run_id)] if row is not None), None)
            where = where or next((f"{path}, line {number}" for path in files
                                   if not isinstance(path, Frame)
                                   for number, fields in _lines(path, encoding_name(encoding))
                                   if len(fields) > 5 and fields[5] == run_id), ", ".join(_names(files)))
            raise IrwError(f"{where}: {problem}")


def _staged_run_ids(con) -> list[str]:
    return [r[0] for r in sql.rows(con, "load.sql", "staged_run_ids")]


def _insert_runs(con, files: list[str], policy: str, replace: bool, collection: str) -> dict:
    run_ids = _staged_run_ids(con)
    existing = [r[0] for r in sql.rows(con, "load.sql", "loaded_among", {"ids": run_ids, "c": collection})]
    if existing and not replace:
        raise IrwError(_already_loaded(con, existing, collection))
    _delete_runs(con, collection, existing, scores=False)
    run_script(con, "load_runs.sql", {"policy": policy, "collection": collection})
    update_bases(con, collection, run_ids)
    state.record_runs(con, collection, run_ids, parts="irw_staged_parts")
    # the scores stored for replaced runs are recomputed, not dropped: they stay current
    refreshed = refresh_scores(con, runs=(collection, existing)) if existing else 0
    lines = sql.rows(con, "load.sql", "staged_lines")[0][0]
    return {"collection": collection, "runs": run_ids, "lines": lines, "files": len(files),
            "replaced": existing, "refreshed": refreshed}


def _already_loaded(con, run_ids: list[str], collection: str, shown: int = 10) -> str:
    """The error for runs loaded before: each run id with the file(s) of this load it is in."""
    rows = sql.rows(con, "load.sql", "files_of_runs", {"ids": run_ids})
    listed = "; ".join(f"{run_id} (in {files})" for run_id, files in rows[:shown])
    more = f"; and {len(rows) - shown} more" if len(rows) > shown else ""
    where = "" if catalogue.single_collection(con) else f" in collection {collection}"
    return f"run(s) already loaded{where}: {listed}{more}; use --replace to replace them"


def _delete_runs(con, collection: str, run_ids: list[str], scores: bool = True) -> None:
    """Remove runs' rankings, loading records and (with ``scores``) scores; their metadata
    stays."""
    if run_ids:
        sql.run(con, "load.sql", "delete_runs", {"ids": run_ids, "c": collection}, scores)


def drop_runs(con, run_ids: list[str], collection: str) -> None:
    """Remove runs of ``collection`` with their scores and their rows of the materialized
    bases. Their metadata (run_meta) stays, for a later load of the same run ids."""
    with transaction(con):
        _delete_runs(con, collection, list(run_ids))
        update_bases(con, collection, list(run_ids))
        state.record_runs(con, collection, list(run_ids))


# ---------------------------------------------------------------------------- qrels

def _qrels_line_problem(fields: list[str]) -> str | None:
    if len(fields) != 4:
        return f"expected 4 fields (topic iteration docno rel), found {len(fields)}"
    problem = _number_problem(fields[3], "relevance", 4, "INTEGER")
    prefix = _INTEGER.match(fields[3])
    if problem and prefix and not _INTEGER.fullmatch(fields[3]) and len(prefix.group()) <= 25:
        problem += f" (trec_eval would read it as {int(prefix.group())})"
    return problem


def _locate_qrels_problem(files: list[str], encoding: str = "utf-8") -> str:
    return _locate_problem(files, _qrels_line_problem, lambda f: (f[0], f[2]),
                           lambda f: f"document {f[2]} is judged twice for topic {f[0]}", encoding)


@without_order
def load_qrels(con, patterns: Iterable[str], name: str, replace: bool = False,
               description: str | None = None, final=None, encoding: str = "utf-8",
               collection: str = DEFAULT_COLLECTION, implicit: bool = False) -> dict:
    """Load qrels files under ``name`` into ``collection``; ``con``, ``final`` and
    ``implicit`` as for :func:`load_runs`."""
    files = expand_paths(patterns)
    try:
        comments = _stage_qrels(con, files, name, encoding)
        with final(_rows_staged(con)) if final else contextlib.nullcontext():
            with transaction(con):
                if implicit:
                    catalogue.check_still_only(con, collection)
                _insert_qrels(con, files, name, replace, description, collection)
            return {**_qrels_summary(con, name, collection), "comments": comments}
    finally:
        _drop_staged(con)


def stage_files(con, qrels_file: str, runs: Iterable[str], name: str, policy: str = "trec_eval",
                extra_fields: bool = False, encoding: str = "utf-8") -> None:
    """Files in, scores out (engine.files_in): read and check a qrels file (named ``name``)
    and run files into temporary tables of ``con`` with every check of
    :func:`load_collection`, and rank the runs under ``policy``, keeping of the ranked rows
    those of judged documents (see :func:`_stage_runs`). What is staged stays in ``con``
    (sql/files_in.sql reads it); :func:`release_staging` removes the staging file."""
    qrels_files = expand_paths([qrels_file])
    run_files = expand_paths(runs)
    _stage_qrels(con, qrels_files, name, encoding)
    with _progress_bar(run_files, "reading runs", phases=2) as bar:
        _stage_runs(con, run_files, policy, extra_fields, encoding, DEFAULT_COLLECTION, bar,
                    judged="temp.irw_staged_qrels")
        _phase(bar, "done")


def _qrels_summary(con, name: str, collection: str) -> dict:
    stats = sql.rows(con, "load.sql", "qrels_summary", {"name": name})[0]
    return {"qrels": name, "collection": collection, "topics": stats[0], "judgments": stats[1],
            "relevant": stats[2]}


def _stage_qrels(con, files: list[str], name: str, encoding: str) -> int:
    """Read and check qrels files into the temporary table irw_staged_qrels of ``con``;
    returns the number of comment lines skipped."""
    if name is None or not str(name).strip():
        raise IrwError("a qrels needs a name (--name)")
    names.check(names.qrels_problem(name))
    sql.run(con, "load.sql", "staged_qrels")
    comments = _stage(con, "irw_staged_qrels", files, 4, QRELS_COLUMNS, None, encoding)
    bad, twice, lines = sql.rows(con, "load.sql", "check_qrels")[0]
    if bad is not None or twice is not None:
        raise IrwError(_locate_qrels_problem(files, encoding_name(encoding))
                       or f"{_names(files)[bad if bad is not None else twice]}: malformed qrels")
    if lines == 0:
        raise IrwError(f"{', '.join(_names(files))}: no qrels lines found")
    return comments


def collection_layout(directory: str, qrels: str | None = None, runs: str | None = None,
                      meta: str | None = None) -> dict:
    """The files of a collection directory in the common layout: one qrels file (its name
    starts with 'qrels'), a directory 'runs' of run files, and optionally one metadata TSV
    (a file ending in .tsv). ``qrels``, ``runs`` and ``meta`` name them instead."""
    root = Path(directory)
    if not root.is_dir():
        raise IrwError(f"{directory}: no such directory")
    entries = sorted(p for p in root.iterdir() if not p.name.startswith("."))
    if qrels is None:
        found = [p for p in entries if p.is_file() and p.name.lower().startswith("qrels")]
        if len(found) != 1:
            raise IrwError(f"{directory}: expected one qrels file (a file whose name starts with "
                           f"'qrels'), found {len(found)}"
                           f"{': ' + ', '.join(p.name for p in found) if found else ''}; "
                           "name it with --qrels-file")
        qrels = str(found[0])
    if runs is None:
        if not (root / "runs").is_dir():
            raise IrwError(f"{directory}: expected a directory 'runs' holding the run files; "
                           "name it with --runs-dir")
        runs = str(root / "runs")
    if meta is None:
        found = [p for p in entries if p.is_file() and p.name.lower().endswith(".tsv")]
        if len(found) > 1:
            raise IrwError(f"{directory}: several metadata files "
                           f"({', '.join(p.name for p in found)}); name one with --meta")
        meta = str(found[0]) if found else None
    return {"qrels": qrels, "runs": runs, "meta": meta}


@without_order
def load_collection(con, name: str, qrels_file: str, runs: Iterable[str], meta: str | None = None,
                    qrels_name: str | None = None, policy: str = "trec_eval", replace: bool = False,
                    extra_fields: bool = False, final=None, encoding: str = "utf-8",
                    description: str | None = None, implicit: bool = False, then=None) -> dict:
    """Load a test collection -- its qrels, runs and run metadata -- as collection ``name``, in
    one final transaction (all or nothing). The qrels is named ``qrels_name`` (default:
    ``name``). ``con``, ``final`` and ``implicit`` as for :func:`load_runs`. ``then(con)``:
    work done in the same transaction once they are in (its result: the summary's ``then``),
    which a failure of it undoes with the load."""
    catalogue.check_collection_name(name)
    qrels_name = qrels_name or name
    qrels_files = expand_paths([qrels_file])
    run_files = expand_paths(runs)
    try:
        qrels_comments = _stage_qrels(con, qrels_files, qrels_name, encoding)
        with _progress_bar(run_files, "reading runs", phases=3) as bar:
            comments = _stage_runs(con, run_files, policy, extra_fields, encoding, name, bar)
            _phase(bar, "writing to the warehouse")
            with final(_rows_staged(con)) if final else contextlib.nullcontext():
                with transaction(con):
                    if implicit:
                        catalogue.check_still_only(con, name)
                    _insert_qrels(con, qrels_files, qrels_name, replace, description, name)
                    summary = _insert_runs(con, run_files, policy, replace, name)
                    summary["comments"] = comments
                    summary["meta"] = _load_meta(con, meta, name) if meta else 0
                    if then is not None:
                        summary["then"] = then(con)
                summary["qrels"] = {**_qrels_summary(con, qrels_name, name),
                                    "comments": qrels_comments}
            _phase(bar, "done")
    finally:
        _drop_staged(con)
    return summary


def _insert_qrels(con, files: list[str], name: str, replace: bool, description: str | None,
                  collection: str) -> None:
    info = next(iter(sql.rows(con, "load.sql", "qrels_entry", {"name": name})), None)
    if info and not replace:
        where = "" if info[1] == collection else f" (in collection {info[1]}; qrels names are unique in a warehouse)"
        raise IrwError(f"qrels {name!r} already exists{where}; use --replace to replace it")
    if info and info[1] != collection:
        raise IrwError(f"qrels {name!r} is in collection {info[1]}, not {collection}: a replaced "
                       "qrels stays in its collection (drop it first to move it: irw qrels drop NAME)")
    if info:  # replaced: the judgments go, the scores stored with them are recomputed
        catalogue.check_no_dependents(con, name)
        sql.run(con, "load.sql", "delete_qrels", {"name": name}, False)
        invalidate_bases(con, name)
    sql.run(con, "load.sql", "insert_qrels", {"name": name})
    catalogue.register_qrels(con, name, source=" ".join(_names(files)), kind="file", description=description,
                   collection=collection)
    state.record_qrels(con, name)
    if info:
        refresh_scores(con, qrels=name)


def drop_qrels(con, name: str) -> None:
    """Remove a qrels, its cached base and its scores (refused while qrels or factor sets
    derived from it exist)."""
    with transaction(con):
        if not sql.rows(con, "load.sql", "qrels_entry", {"name": name}):
            known = catalogue.qrels_names(con)
            raise IrwError(f"qrels {name!r} does not exist; known: {', '.join(known) or 'none'}")
        catalogue.check_no_dependents(con, name)
        sql.run(con, "load.sql", "delete_qrels", {"name": name}, True)
        invalidate_bases(con, name)
        state.record_qrels(con, name)


# ---------------------------------------------------------------------------- metadata

_TRUE = {"true", "t", "yes", "y", "1"}
_FALSE = {"false", "f", "no", "n", "0"}
META_COLUMNS = ("run_id", "team", "kind", "pooled", "system")


def _load_meta(con, path, collection: str) -> int:
    """Read a TSV with a header naming run_id and any of team, kind, pooled, system (UTF-8, a
    byte order mark allowed; fields may be quoted with double quotes), describing runs of
    ``collection``. It changes only the columns it names: a file of run_id and team leaves
    the kind and pooled flag of those runs as they were. An empty field sets the column to
    unknown (NULL); a run without a system is its own system. ``path`` may be a DataFrame of such columns instead, read as data (its
    rows checked as a file's lines are)."""
    if not isinstance(path, (str, os.PathLike)):
        return _meta_rows(con, [str(c) for c in path.columns], _frame_records(path),
                          lambda number: f"the DataFrame, row {number}", collection)
    try:
        return _read_meta(con, path, collection)
    except UnicodeDecodeError as exc:
        raise IrwError(f"{path}: byte 0x{exc.object[exc.start]:02x} is not valid UTF-8 "
                       "(a metadata file is UTF-8 text)") from None
    except csv.Error as exc:
        raise IrwError(f"{path}: cannot read it as tab-separated values ({exc})") from None


def _frame_records(frame):
    """(row number, fields as text) of a DataFrame's rows; a missing value is empty."""
    import pandas as pd

    for number, row in enumerate(frame.itertuples(index=False, name=None)):
        yield number, ["" if v is None or (not isinstance(v, str) and pd.isna(v)) else str(v) for v in row]


def _read_meta(con, path: str, collection: str) -> int:
    if os.path.isdir(path):
        raise IrwError(f"{path}: is a directory, not a metadata file (a TSV with a header: "
                       "run_id, team, kind, pooled, system)")
    if not os.path.isfile(path):
        raise IrwError(f"{path}: no such file")
    with io.TextIOWrapper(_open_binary(path), encoding="utf-8-sig", errors="strict", newline="") as fh:
        reader = csv.reader(fh, delimiter="\t")
        header = next(reader, None)
        if header is None:
            raise IrwError(f"{path}: the file is empty")
        return _meta_rows(con, header, enumerate(reader, start=2), lambda number: f"{path}, line {number}",
                          collection, f"{path}, line 1")


def _meta_rows(con, header: list[str], records, where, collection: str, head: str | None = None) -> int:
    """Check and store run metadata: ``header`` its columns, ``records`` (number, fields)
    its rows, ``where(number)`` how a message names a row."""
    head = head or "the DataFrame's columns"
    header = [h.strip() for h in header]
    if "run_id" not in header:
        raise IrwError(f"{head}: the header must name a run_id column (and any of "
                       f"team, kind, pooled, system); found {shown(', '.join(header))}")
    unknown = [h for h in header if h not in META_COLUMNS]
    if unknown:
        raise IrwError(f"{head}: unknown column(s) {shown(', '.join(unknown))}; valid: "
                       "run_id, team, kind, pooled, system")
    twice = next((h for h in header if header.count(h) > 1), None)
    if twice:
        raise IrwError(f"{head}: column {twice} is named twice")
    rows = []
    seen = set()
    for number, record in records:
        if not any(field.strip() for field in record):
            continue
        if len(record) != len(header):
            raise IrwError(f"{where(number)}: expected {len(header)} tab-separated fields, found {len(record)}")
        row = dict(zip(header, (f.strip() for f in record)))
        if not row["run_id"]:
            raise IrwError(f"{where(number)}: empty run_id")
        for problem in (names.run_id_problem(row["run_id"]), names.team_problem(row.get("team")),
                        names.system_problem(row.get("system"))):
            if problem:
                raise IrwError(f"{where(number)}: {problem}")
        if row["run_id"] in seen:
            raise IrwError(f"{where(number)}: run {row['run_id']} is described twice")
        seen.add(row["run_id"])
        pooled = None
        if "pooled" in row:
            value = row["pooled"].lower()
            if value in _TRUE:
                pooled = True
            elif value in _FALSE:
                pooled = False
            elif value:
                raise IrwError(f"{where(number)}: pooled must be true or false, got {shown(row['pooled'])}")
        rows.append((collection, row["run_id"], row.get("team") or None, row.get("kind") or None,
                     pooled, row.get("system") or None))
    if rows:  # one statement: a row at a time costs seconds for a thousand runs
        named = [c for c in ("team", "kind", "pooled", "system") if c in header]
        columns = dict(zip(("c", "r", "t", "k", "p", "s"), map(list, zip(*rows))))
        sql.run(con, "load.sql", "upsert_meta", columns, named)
    return len(rows)


def load_meta(con, path: str, collection: str | None = None) -> int:
    """Load run metadata for the runs of ``collection`` (default: the warehouse's only one)."""
    with transaction(con):
        return _load_meta(con, path, catalogue.only_collection(con, collection, new_ok=True))
