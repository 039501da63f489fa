"""Reading run and qrels files: compression recognised by the first bytes, text encodings,
lines and their fields, and the number syntax (README, "Input files"). The SQL staging
(sql/stage_*.sql) and the Python locator of a bad line (:mod:`.checks`) implement the
same rules; Python reads a file's lines only to name a bad one."""

from __future__ import annotations

import bz2
import contextlib
import errno
import gzip
import io
import lzma
import math
import os
import re
import zlib

from ... import numbers
from ...errors import IrwError, shown

# What a run or qrels file may look like (README, "Input files"). The SQL staging
# (sql/stage_*.sql) and the Python locator (checks) implement the same rules.

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
    return _compression_of(path, head)


def _compression_of(path: str, head: bytes) -> str | None:
    """The compression of ``path`` by its first bytes ``head`` (see :func:`compression`)."""
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


@contextlib.contextmanager
def _open_once(path: str):
    """The content of a file read once from start to end, as a binary stream decompressed
    by its first bytes, opening the file once: a pipe (process substitution) can be read."""
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise IrwError(f"{path}: cannot read the file ({exc.strerror})") from None
    with fh:
        kind = _compression_of(path, fh.peek(8)[:8])
        if kind is None:
            yield fh
        else:
            with _FILE_OPENERS[kind](fh) as stream:
                yield stream


_FILE_OPENERS = {"gzip": lambda fh: gzip.GzipFile(fileobj=fh, mode="rb"), "bzip2": bz2.BZ2File,
                 "xz": lzma.LZMAFile}


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


QRELS_LOOK = 5  # lines of a file looked at to tell a qrels file among run files
_ITERATION = re.compile(r"[+-]?[0-9]+|[Qq]0")


def looks_like_qrels(path: str, encoding: str = "utf-8") -> bool:
    """Does a file look like qrels rather than a run: its first lines (QRELS_LOOK, neither
    blank nor comments) have 4 fields each, the second an iteration (0, Q0) and the fourth
    an integer grade? A file that cannot be read here does not."""
    seen = 0
    try:
        for _, fields in _lines(path, encoding):
            if not (len(fields) == 4 and _ITERATION.fullmatch(fields[1]) and _INTEGER.fullmatch(fields[3])):
                return False
            seen += 1
            if seen == QRELS_LOOK:
                break
    except IrwError:
        return False
    return seen > 0


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
