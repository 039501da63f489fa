"""Printing results: ``--format table|csv|json|trec``, the same convention for every command.

``json`` prints one JSON array of flat objects and nothing else on stdout; ``csv`` has a
header row; ``table`` is aligned text for people; ``trec`` is trec_eval's
``measure<TAB>topic<TAB>value`` lines (commands with per-topic scores only).
"""

from __future__ import annotations

import json
import math
import sys

import pandas as pd

from .errors import IrwError

FORMATS = ("table", "csv", "json", "trec")


def _clean(value):
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item"):  # numpy scalar
        return _clean(value.item())
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    return value


def to_json(frame: pd.DataFrame) -> str:
    records = [{k: _clean(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]
    return json.dumps(records, indent=1, default=str)


def _cell(value, digits: int) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def to_table(frame: pd.DataFrame, digits: int = 4) -> str:
    if frame.empty:
        return "(no rows)"
    columns = [str(c) for c in frame.columns]
    rows = [[_cell(v, digits) for v in row] for row in frame.itertuples(index=False, name=None)]
    numeric = [pd.api.types.is_numeric_dtype(frame[c]) for c in frame.columns]
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(columns)]

    def line(cells):
        return "  ".join(c.rjust(w) if num else c.ljust(w)
                         for c, w, num in zip(cells, widths, numeric)).rstrip()

    out = [line(columns), "  ".join("-" * w for w in widths)]
    out.extend(line(r) for r in rows)
    return "\n".join(out)


def emit(frame: pd.DataFrame, fmt: str, table: pd.DataFrame | None = None, digits: int = 4) -> None:
    """Print ``frame`` (flat records) as ``fmt``; ``table`` is an optional wider view for people."""
    if fmt == "json":
        sys.stdout.write(to_json(frame) + "\n")
    elif fmt == "csv":
        frame.to_csv(sys.stdout, index=False)
    elif fmt == "table":
        sys.stdout.write(to_table(table if table is not None else frame, digits) + "\n")
    elif fmt == "trec":
        raise IrwError("--format trec is only available for `irw eval`")
    else:
        raise IrwError(f"unknown format {fmt!r}; valid: {', '.join(FORMATS)}")


def trec_lines(per_topic: pd.DataFrame, means: pd.DataFrame, measure_order: list[str],
               include_topics: bool) -> str:
    """trec_eval's output: per topic (with -q) then ``all``; a ``runid`` line per run."""
    out = []
    order = {m: i for i, m in enumerate(measure_order)}
    for run_id in dict.fromkeys(means["run_id"]):
        out.append(f"{'runid':<22}\tall\t{run_id}")
        if include_topics:
            rows = per_topic[per_topic["run_id"] == run_id]
            for topic in sorted(rows["topic"].unique()):
                for r in sorted(rows[rows["topic"] == topic].itertuples(), key=lambda r: order[r.measure]):
                    out.append(f"{r.measure:<22}\t{topic}\t{r.value:.4f}")
        rows = means[means["run_id"] == run_id]
        for r in sorted(rows.itertuples(), key=lambda r: order[r.measure]):
            out.append(f"{r.measure:<22}\tall\t{r.value:.4f}")
    return "\n".join(out) + "\n"
