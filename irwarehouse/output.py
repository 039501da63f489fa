"""Printing results: ``--format table|csv|json|trec``, the same convention for every command.

``json`` prints one JSON array of flat objects and nothing else on stdout; ``csv`` has a
header row; ``table`` is aligned text for people; ``trec`` is trec_eval's
``measure<TAB>topic<TAB>value`` lines (commands with per-topic scores only).

What is printed is a pandas DataFrame or a list of dicts (one per row, the columns in the
order of the first row's keys): commands that have no frame print without importing pandas.
"""

from __future__ import annotations

import datetime
import json
import math
import sys
from typing import TYPE_CHECKING, Union

from .errors import IrwError, printable

if TYPE_CHECKING:
    import pandas as pd

Rows = Union["pd.DataFrame", list]

FORMATS = ("table", "csv", "json", "trec")


def _clean(value):
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item"):  # numpy scalar
        return _clean(value.item())
    if isinstance(value, (datetime.date, datetime.time)):  # also pandas.Timestamp
        return value.isoformat()
    return value


def _records(data: Rows) -> list[dict]:
    return data if isinstance(data, list) else data.to_dict(orient="records")


def _columns(data: Rows) -> list[str]:
    if isinstance(data, list):
        return list(data[0]) if data else []
    return [str(c) for c in data.columns]


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) or (hasattr(value, "dtype") and value.dtype.kind in "biuf")


def _numeric(data: Rows) -> list[bool]:
    """Which columns are numeric (right-aligned in a table)."""
    if not isinstance(data, list):
        from pandas.api.types import is_numeric_dtype

        return [is_numeric_dtype(data[c]) for c in data.columns]
    numeric = []
    for c in _columns(data):
        values = [row[c] for row in data if row[c] is not None]
        numeric.append(bool(values) and all(_is_number(v) for v in values))
    return numeric


def to_json(data: Rows) -> str:
    records = [{k: _clean(v) for k, v in row.items()} for row in _records(data)]
    return json.dumps(records, indent=1, default=str)


def to_csv(data: Rows, out) -> None:
    if not isinstance(data, list):
        data.to_csv(out, index=False)
        return
    import csv

    writer = csv.writer(out, lineterminator="\n")
    columns = _columns(data)
    writer.writerow(columns)
    for row in data:
        writer.writerow(["" if _clean(row[c]) is None else row[c] for c in columns])


def _cell(value, digits: int) -> str:
    """A table cell: floats to ``digits`` decimals, control characters escaped (a run id or
    docno holding an ESC byte must not drive the terminal)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return printable(str(value))


def to_table(data: Rows, digits: int = 4) -> str:
    if len(data) == 0:
        return "(no rows)"
    columns = _columns(data)
    if isinstance(data, list):
        rows = [[_cell(row[c], digits) for c in columns] for row in data]
    else:
        rows = [[_cell(v, digits) for v in row] for row in data.itertuples(index=False, name=None)]
    numeric = _numeric(data)
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(columns)]

    def line(cells):
        return "  ".join(c.rjust(w) if num else c.ljust(w)
                         for c, w, num in zip(cells, widths, numeric)).rstrip()

    columns = [printable(c) for c in columns]
    widths = [max(len(c), w) for c, w in zip(columns, widths)]
    out = [line(columns), "  ".join("-" * w for w in widths)]
    out.extend(line(r) for r in rows)
    return "\n".join(out)


def emit(frame: Rows, fmt: str, table: Rows | None = None, digits: int = 4) -> None:
    """Print ``frame`` (flat records: a DataFrame or a list of dicts) as ``fmt``; ``table``
    is an optional wider view for people."""
    if fmt == "json":
        sys.stdout.write(to_json(frame) + "\n")
    elif fmt == "csv":
        to_csv(frame, sys.stdout)
    elif fmt == "table":
        sys.stdout.write(to_table(table if table is not None else frame, digits) + "\n")
    elif fmt == "trec":
        raise IrwError("--format trec is only available for `irw eval`")
    else:
        raise IrwError(f"unknown format {fmt!r}; valid: {', '.join(FORMATS)}")


def pivot(per: list[tuple], index: list[str], labels: list[str]) -> list[dict]:
    """Wide rows from (*index, measure, value) tuples: one per distinct index (sorted), a
    column per measure of ``labels`` that occurs (in that order); a missing value is None."""
    rows: dict[tuple, dict] = {}
    for *key, measure, value in per:
        rows.setdefault(tuple(key), {})[measure] = value
    present = {m for values in rows.values() for m in values}
    columns = [m for m in labels if m in present]
    return [{**dict(zip(index, key)), **{m: values.get(m) for m in columns}}
            for key, values in sorted(rows.items())]


def trec_lines(per_topic: list[tuple], means: list[tuple], measure_order: list[str],
               include_topics: bool) -> str:
    """trec_eval's output: per topic (with -q) then ``all``; a ``runid`` line per run.
    ``per_topic``: (run_id, topic, measure, value); ``means``: (run_id, measure, value, n)."""
    order = {m: i for i, m in enumerate(measure_order)}
    topics: dict[str, dict[str, list]] = {}
    for run_id, topic, measure, value in per_topic:
        topics.setdefault(run_id, {}).setdefault(topic, []).append((measure, value))
    alls: dict[str, list] = {}
    for run_id, measure, value, _n in means:
        alls.setdefault(run_id, []).append((measure, value))
    out = []
    for run_id, run_means in alls.items():
        out.append(f"{'runid':<22}\tall\t{run_id}")
        if include_topics:
            for topic, values in sorted(topics.get(run_id, {}).items()):
                for measure, value in sorted(values, key=lambda r: order[r[0]]):
                    out.append(f"{measure:<22}\t{topic}\t{value:.4f}")
        for measure, value in sorted(run_means, key=lambda r: order[r[0]]):
            out.append(f"{measure:<22}\tall\t{value:.4f}")
    return "\n".join(out) + "\n"
