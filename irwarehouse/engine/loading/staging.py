"""Staging: files read into temporary tables of a load's connection, in batches, by
DuckDB's CSV reader or the whitespace splitter (sql/stage_*.sql); the staging database of
ranked rows; and the skeleton every load shares (:func:`stage_and_write`): stage outside
any transaction, then one final transaction, and what was staged removed whatever
happens."""

from __future__ import annotations

import contextlib
import os
from concurrent.futures import ThreadPoolExecutor

import duckdb

from ... import catalogue, output, sql
from ...connection import engine_of, has_table, transaction
from ...errors import Interrupts, IrwError
from ...files import remove_temp, temp_dir, temporary_directory
from ...sql import run_script
from .frames import _frames
from .reading import (MAX_LINE, _INSIDE_FIELDS, _WHITESPACE, _delimiter, _lines, _verify,
                      compression, encoding_name)

BATCH = 16  # files per DuckDB read: large enough to parallelise, small enough for progress


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


def stage_and_write(con, stage, write, *, final, implicit: bool, collection: str,
                    progress: list | None = None, after=None):
    """The one skeleton of a load. ``stage(bar)`` reads and checks the files into tables of
    ``con`` (outside any transaction: a failure there leaves the warehouse untouched); then
    ``write(staged)`` moves what it returned into the warehouse in one final transaction --
    attached by ``final(rows)`` when ``con`` is a staging connection (connection.Staging)
    -- after checking that an ``implicit`` collection is still the warehouse's only one;
    ``after(written)`` reads the warehouse once the transaction is committed. What was
    staged is removed whatever happens. ``progress``: the files a progress bar counts (the
    phases after reading are shown too)."""
    try:
        with (_progress_bar(progress, "reading runs", phases=3) if progress is not None
              else contextlib.nullcontext(None)) as bar:
            staged = stage(bar)
            _phase(bar, "writing to the warehouse")
            with final(_rows_staged(con)) if final else contextlib.nullcontext():
                with transaction(con):
                    if implicit:
                        catalogue.check_still_only(con, collection)
                    written = write(staged)
                if after is not None:
                    written = after(written)
            _phase(bar, "done")
        return written
    finally:
        _drop_staged(con)
