"""DataFrames loaded as data: staged where a file's lines go, checked as a file's lines
are, and named by row and column when something is wrong."""

from __future__ import annotations

import contextlib
import math

from ... import numbers, sql
from ...errors import shown
from .reading import _INTEGER, _RANGES

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
        from ...connection import register, unregister

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
        from ...connection import open_duckdb

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
        from ...connection import open_duckdb

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


class Named(str):
    """The path of a file irw wrote from what a user gave (a stream's copy, an ir_datasets
    source written out), which the catalogue and messages name by ``shown`` instead."""

    def __new__(cls, path: str, shown: str):
        made = super().__new__(cls, path)
        made.shown = shown
        return made


def _names(files) -> list[str]:
    """The files of a load by name (a DataFrame: 'the DataFrame'; a :class:`Named` file:
    what the user gave)."""
    return [getattr(f, "shown", str(f)) for f in files]
