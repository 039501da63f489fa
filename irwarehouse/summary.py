"""Summaries of per-topic scores: per run over its topics, or per topic over the runs.

From the same per-topic scores as ``irw eval`` (its topic set, a run that lacks a topic
scoring 0 on it under the default topic set); plain Python over the rows, no pandas.
"""

from __future__ import annotations

import math

from .engine import evaluation
from .errors import IrwError
from .measures import Measure

BY = ("run", "topic")
COLUMNS = ("n", "mean", "sd", "min", "max")


def summarize_rows(per_topic, by: str = "run", labels: list[str] | None = None) -> list[dict]:
    """From (run_id, topic, measure, value) rows: per run (``by="run"``) or per topic
    (``by="topic"``) and measure, ``n`` (topics, or runs), ``mean`` (the exactly rounded sum
    divided by n, as ``irw eval``), ``sd`` (sample standard deviation, n - 1 in the
    denominator; None when n < 2), ``min`` and ``max``.  Keys sorted; measures in the order
    of ``labels`` (default: of first appearance)."""
    if by not in BY:
        raise IrwError(f"unknown --by {by!r}; valid: {', '.join(BY)}")
    key_index = 0 if by == "run" else 1
    groups: dict[tuple, list[float]] = {}
    order = {label: k for k, label in enumerate(labels or [])}
    for row in per_topic:
        measure, value = row[2], row[3]
        order.setdefault(measure, len(order))
        if value is not None and not math.isnan(value):
            groups.setdefault((row[key_index], measure), []).append(value)
    out = []
    for (key, measure), values in sorted(groups.items(), key=lambda kv: (kv[0][0], order[kv[0][1]])):
        n = len(values)
        mean = math.fsum(values) / n
        sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else None
        out.append({"run_id" if by == "run" else "topic": key, "measure": measure, "n": n,
                    "mean": mean, "sd": sd, "min": min(values), "max": max(values)})
    return out


def summary(con, qrels: str, measures: list[Measure], run_ids: list[str], topics: str = "qrels",
            by: str = "run") -> list[dict]:
    """:func:`summarize_rows` of the per-topic scores of ``measures`` (not stored)."""
    if by not in BY:
        raise IrwError(f"unknown --by {by!r}; valid: {', '.join(BY)}")
    rows = evaluation.evaluate(con, qrels, measures, run_ids, topics=topics, store=False).rows()
    return summarize_rows(rows, by, [str(m) for m in measures])
