"""Systems that each have several runs -- random seeds, folds, prompt variants (SPEC section 5,
"Systems with several runs").

A run's metadata names its system (``run_meta.system``, ``irw load meta``); a run without one
is its own system, named by its run id. A system's per-topic score is the mean of its runs'
scores on that topic, and its mean the mean of those over the topics; its *spread* is the
standard deviation (n - 1), minimum and maximum of its runs' means.

Systems are a property of the score matrix the analyses receive, not a second code path in
each of them: :func:`group_means` turns a runs x topics matrix into a systems x topics one,
and every test, interval and effect size of :mod:`irwarehouse.stats` then works on systems
as it works on runs (``irwarehouse.significance.Matrix.by_system`` does this for the
warehouse's matrices). :func:`aggregate_rows` does the same for per-topic score rows
(``irw eval --by system``), and :func:`within_spread` flags the pairs of systems whose
difference is smaller than their runs' spread.

This module is foundation: numpy only (imported when systems are asked for), no warehouse.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

from .errors import IrwError

UNITS = ("run", "system")
SPREAD_COLUMNS = ("runs", "run_sd", "run_min", "run_max")


def check_unit(by: str) -> str:
    """``by`` checked: what a table's rows are, ``run`` or ``system``."""
    if by not in UNITS:
        raise IrwError(f"unknown --by {by!r}; valid: {', '.join(UNITS)}")
    return by


@dataclass(frozen=True)
class Systems:
    """Which runs make up each system: ``members[k]`` are the run ids of system
    ``names[k]``, in the order the runs were given; systems in order of name."""

    names: tuple[str, ...]
    members: tuple[tuple[str, ...], ...]

    @classmethod
    def of(cls, run_ids, system_of: Mapping[str, str | None]) -> "Systems":
        """Group ``run_ids`` by their system, ``system_of[run]`` (a run whose system is None
        or absent is its own system, named by its run id). A run without a system whose id
        is the name other runs give their system is an error: it would be put in their
        system without saying so."""
        groups: dict[str, list[str]] = {}
        alone = []
        for run in run_ids:
            system = system_of.get(run)
            if system is None:
                alone.append(run)
                system = run
            groups.setdefault(system, []).append(run)
        for run in alone:
            others = [r for r in groups[run] if r != run]
            if others:
                raise IrwError(f"run {run} has no system, so it is its own system {run}, but "
                               f"run{'s' if len(others) > 1 else ''} {', '.join(others)} name "
                               f"{run} as their system: give run {run} its system (irw load "
                               "meta, column system)")
        names = tuple(sorted(groups))
        return cls(names, tuple(tuple(groups[s]) for s in names))

    def __len__(self) -> int:
        return len(self.names)

    def as_dict(self) -> dict[str, list[str]]:
        """system -> its run ids."""
        return {s: list(m) for s, m in zip(self.names, self.members)}

    def system_of(self) -> dict[str, str]:
        """run id -> its system."""
        return {r: s for s, m in zip(self.names, self.members) for r in m}

    def groups(self, run_ids):
        """The rows of each system's runs in a matrix whose rows are ``run_ids``: (order,
        starts, counts) -- the row indices sorted by system (in the systems' order), where
        each system's rows start, and how many runs it has (numpy arrays), for ``reduceat``."""
        import numpy as np

        position = {r: k for k, r in enumerate(run_ids)}
        missing = [r for m in self.members for r in m if r not in position]
        if missing:
            raise IrwError(f"the matrix has no row for run {missing[0]} of system "
                           f"{self.system_of()[missing[0]]}")
        order = np.array([position[r] for m in self.members for r in m], dtype=np.intp)
        counts = np.array([len(m) for m in self.members], dtype=np.intp)
        starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.intp)
        return order, starts, counts


def group_means(X, systems: Systems, run_ids):
    """The systems x topics matrix of the runs x topics matrix ``X`` (rows ``run_ids``): each
    system's per-topic score is the mean of its runs' scores on that topic."""
    import numpy as np

    X = np.asarray(X, dtype=np.float64)
    order, starts, counts = systems.groups(run_ids)
    return np.add.reduceat(X[order], starts, axis=0) / counts[:, None]


def spread(run_means, systems: Systems, run_ids) -> dict:
    """Per system: ``runs`` (how many), and the standard deviation (n - 1; NaN for one run),
    minimum and maximum of its runs' means (``run_means``, one per run of ``run_ids``):
    ``run_sd``, ``run_min``, ``run_max`` (numpy arrays in the systems' order)."""
    import numpy as np

    values = np.asarray(run_means, dtype=np.float64)
    order, starts, counts = systems.groups(run_ids)
    v = values[order]
    mean = np.add.reduceat(v, starts) / counts
    squares = np.add.reduceat((v - np.repeat(mean, counts)) ** 2, starts)
    with np.errstate(divide="ignore", invalid="ignore"):
        sd = np.where(counts > 1, np.sqrt(squares / (counts - 1)), np.nan)
    return {"runs": counts, "run_sd": sd, "run_min": np.minimum.reduceat(v, starts),
            "run_max": np.maximum.reduceat(v, starts)}


def within_spread(diff, sd_a, sd_b):
    """Whether the difference between two systems' means is smaller than their runs' spread:
    |diff| < the larger of the two systems' standard deviations of their runs' means (a
    system of one run has no spread: NaN counts as 0), i.e. two runs of one of them could
    differ by as much. numpy arrays (or numbers) in, a boolean array out."""
    import numpy as np

    spread_ab = np.fmax(np.nan_to_num(np.asarray(sd_a, dtype=np.float64), nan=0.0),
                        np.nan_to_num(np.asarray(sd_b, dtype=np.float64), nan=0.0))
    return np.abs(np.asarray(diff, dtype=np.float64)) < spread_ab


def aggregate_rows(rows, systems_of: Mapping[str, Systems], several: bool):
    """Per-topic score rows of runs -- ([qrels,] run_id, topic, measure, value), as ``irw
    eval`` gives them -- as rows of systems, ([qrels,] system, topic, measure, value): the
    mean over the system's runs that have a value (``systems_of[qrels]``: the systems of
    each qrels's runs; the key None when not ``several``). Rows in order of qrels and of
    their first row, system (by name), topic and measure (in order of their first row)."""
    import numpy as np

    rows = list(rows)
    if not rows:
        return []
    width = 1 if several else 0
    columns = [np.asarray(c, dtype=object) for c in zip(*rows)]
    qrels = columns[0] if several else np.full(len(rows), None, dtype=object)
    runs, topics, measures = columns[width], columns[width + 1], columns[width + 2]
    values = np.asarray(columns[width + 3], dtype=np.float64)  # None: NaN
    q_code, q_names = _codes(qrels, first_seen=True) if several else (np.zeros(len(rows), np.int64), [None])
    r_code, r_names = _codes(runs)
    pair, pair_inverse = np.unique(q_code * len(r_names) + r_code, return_inverse=True)
    lookup = {q: systems_of[q].system_of() for q in q_names}
    system_of_pair = [lookup[q_names[k // len(r_names)]][r_names[k % len(r_names)]] for k in pair.tolist()]
    system = np.asarray(system_of_pair, dtype=object)[pair_inverse]
    s_code, _ = _codes(system)
    t_code, _ = _codes(topics, first_seen=True)
    m_code, _ = _codes(measures, first_seen=True)
    key = _combined([q_code, s_code, t_code, m_code])
    unique, first, group = np.unique(key, return_index=True, return_inverse=True)
    present = ~np.isnan(values)
    sums = np.bincount(group[present], weights=values[present], minlength=len(unique))
    counts = np.bincount(group[present], minlength=len(unique))
    with np.errstate(divide="ignore", invalid="ignore"):
        means = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    value = [None if math.isnan(v) else v for v in means.tolist()]
    parts = [system[first], topics[first], measures[first]]
    if several:
        parts.insert(0, qrels[first])
    return list(zip(*(p.tolist() for p in parts), value))


def _codes(values, first_seen: bool = False):
    """Integer codes of the values (numpy object array of strings): in sorted order of the
    values, or in order of first appearance; and the values of the codes."""
    import numpy as np

    names, first, inverse = np.unique(values.astype(str), return_index=True, return_inverse=True)
    if not first_seen:
        return inverse.astype(np.int64), names.tolist()
    rank = np.empty(len(names), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(names))
    return rank[inverse], [names[k] for k in np.argsort(first, kind="stable").tolist()]


def _combined(codes):
    import numpy as np

    key = np.zeros(len(codes[0]), dtype=np.int64)
    for column in codes:
        key = key * (int(column.max(initial=0)) + 1) + column
    return key


def system_scores(per, systems_of: Mapping[str, Systems], per_topic: bool = True,
                  how: str = "mean"):
    """``irw eval --by system``: the per-topic scores of runs (a Result of ([qrels,] run_id,
    topic, measure, value), ``systems_of[qrels]`` the systems of each qrels's runs) as those
    of their systems (:func:`aggregate_rows`); with ``per_topic`` False, each system's
    aggregate over the topics (``how``, as Result.aggregate) with its number of runs and
    the sd, min and max of its runs' aggregates: ([qrels,] system, measure, value,
    n_topics, runs, run_sd, run_min, run_max)."""
    import numpy as np

    from .result import Result

    several = per.columns[0] == "qrels"
    mapping = dict(systems_of) if several else {None: next(iter(systems_of.values()))}
    rows = aggregate_rows(per.rows(), mapping, several)
    keys = ["qrels"] if several else []
    if per_topic:
        return Result(keys + ["system", "topic", "measure", "value"], rows)
    means = Result(keys + ["run_id", "topic", "measure", "value"], rows).aggregate(how).rows()
    run_means = per.aggregate(how).rows()  # [qrels,] run_id, measure, value, n_topics
    if not run_means:
        return Result(keys + ["system", "measure", "value", "n_topics", *SPREAD_COLUMNS], [])
    width = len(keys)
    lookup = {q: s.system_of() for q, s in mapping.items()}
    group_keys = [(*r[:width], lookup[r[0] if several else None][r[width]], r[width + 1])
                  for r in run_means]
    values = np.array([np.nan if r[width + 2] is None else r[width + 2] for r in run_means])
    unique = list(dict.fromkeys(group_keys))
    index = {k: g for g, k in enumerate(unique)}
    group = np.array([index[k] for k in group_keys], dtype=np.intp)
    order = np.argsort(group, kind="stable")
    counts = np.bincount(group, minlength=len(unique))
    starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.intp)
    v = values[order]
    mean = np.add.reduceat(v, starts) / counts
    squares = np.add.reduceat((v - np.repeat(mean, counts)) ** 2, starts)
    with np.errstate(divide="ignore", invalid="ignore"):
        sd = np.where(counts > 1, np.sqrt(squares / (counts - 1)), np.nan)
    low, high = np.minimum.reduceat(v, starts), np.maximum.reduceat(v, starts)
    out = []
    for row in means:
        g = index[tuple(row[:width + 2])]
        sd_g = sd[g].item()
        out.append((*row, int(counts[g]), None if math.isnan(sd_g) else sd_g, low[g].item(),
                    high[g].item()))
    return Result(keys + ["system", "measure", "value", "n_topics", *SPREAD_COLUMNS], out)
