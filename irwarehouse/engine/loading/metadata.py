"""Run metadata (run_id and any of team, kind, pooled, system) from a TSV or a DataFrame:
it changes only the columns it names."""

from __future__ import annotations

import csv
import io
import os

from ... import catalogue, names, sql
from ...connection import transaction
from ...errors import IrwError, shown
from ...files import read_once_problem
from .reading import _open_once


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
    problem = read_once_problem(path)
    if problem:
        raise IrwError(f"{path}: {problem}")
    with _open_once(path) as raw, io.TextIOWrapper(raw, encoding="utf-8-sig", errors="strict",
                                                   newline="") as fh:
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
