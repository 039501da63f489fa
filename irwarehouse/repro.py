"""Whether a result reproduces (Breuer et al., SIGIR 2020): an original run and its
reproduction (same qrels) or replication (another qrels), each optionally with a baseline,
compared as ``repro_eval`` compares them (``irw repro``, ``Warehouse.repro``).

The per-topic rankings come from SQL (``sql/repro.sql``, over the warehouse's ranked runs),
the per-topic scores from the score matrices the significance tests use
(:func:`irwarehouse.significance.matrices`); the statistics are those of
:mod:`irwarehouse.repro_stats`. Several reproductions of one original (the runs of one
system, ``run_meta.system``) are compared one by one and summarised by their spread.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import catalogue, repro_stats, sql
from .engine import evaluation
from .errors import IrwError
from .measures import Measure
from .significance import matrices

# The cut-offs at which repro_eval's users report KTU and RBO (its guide and the paper).
CUTOFFS = (5, 10, 20, 50, 100, 1000)
ROLES = ("advanced", "baseline")
EFFECT_COLUMNS = ["kind", "role", "original", "reproduced", "qrels", "reproduced_qrels", "measure",
                  "topics", "mean_original", "mean_reproduced", "rmse", "test", "p_value", "er",
                  "delta_ri"]
ORDER_COLUMNS = ["role", "original", "reproduced", "cutoff", "topic", "ktu", "ktu_ranks", "rbo"]
SHOWN = ("effects", "order", "spread")


@dataclass(frozen=True)
class Setting:
    """What is compared: the original run and its reproductions (run ids), and, for the
    effects, the original baseline and the reproductions' baselines (one per reproduction);
    each side's qrels and collection."""

    original: str
    reproduced: tuple[str, ...]
    baseline: str | None
    reproduced_baselines: tuple[str, ...]
    qrels: str
    reproduced_qrels: str
    collection: str
    reproduced_collection: str

    @property
    def replication(self) -> bool:
        return self.qrels != self.reproduced_qrels

    @property
    def kind(self) -> str:
        return "replication" if self.replication else "reproduction"

    def pairs(self):
        """(role, original run, its reproductions) of each compared role."""
        yield "advanced", self.original, self.reproduced
        if self.baseline is not None:
            yield "baseline", self.baseline, self.reproduced_baselines


def _runs_named(con, name: str, collection: str, what: str) -> tuple[str, ...]:
    """A run id, or the runs of a system (run_meta.system), of ``collection``."""
    loaded = catalogue.loaded_runs(con, collection)
    if name in loaded:
        return (name,)
    systems = catalogue.systems_of(con, loaded, collection)
    members = sorted(systems.members[systems.names.index(name)]) if name in systems.names else []
    if not members:
        raise IrwError(f"{what} {name!r} is neither a run nor a system of collection {collection!r}")
    return tuple(members)


def setting(con, original: str, reproduced: str, baseline: str | None,
            reproduced_baseline: str | None, qrels: str | None,
            reproduced_qrels: str | None) -> Setting:
    """The runs and qrels named, resolved and checked."""
    if (baseline is None) != (reproduced_baseline is None):
        raise IrwError("give both --baseline and --reproduced-baseline, or neither")
    q = qrels or catalogue.default_qrels(con)
    rq = reproduced_qrels or q
    coll, rcoll = catalogue.collection_of(con, q), catalogue.collection_of(con, rq)
    orig = _runs_named(con, original, coll, "original")
    if len(orig) != 1:
        raise IrwError(f"the original {original!r} must be one run, not a system of {len(orig)}")
    reps = _runs_named(con, reproduced, rcoll, "reproduced")
    base, rbases = None, ()
    if baseline is not None:
        b = _runs_named(con, baseline, coll, "baseline")
        if len(b) != 1:
            raise IrwError(f"the baseline {baseline!r} must be one run, not a system of {len(b)}")
        base = b[0]
        rbases = _runs_named(con, reproduced_baseline, rcoll, "reproduced baseline")
        if len(rbases) == 1:
            rbases = rbases * len(reps)
        elif len(rbases) != len(reps):
            raise IrwError(f"{len(reps)} reproductions but {len(rbases)} reproduced baselines: "
                           "give one baseline run, or a system with as many runs")
    return Setting(orig[0], reps, base, tuple(rbases), q, rq, coll, rcoll)


# ------------------------------------------------------------------ effectiveness


def _scores(con, s: Setting, measures: list[Measure], topics: str) -> dict[str, tuple]:
    """Per measure: (original side matrix, reproduced side matrix), rows as named by
    ``s`` (the original side: original, baseline; the reproduced side: reproductions, then
    their baselines). A reproduction's two sides share one topic set."""
    orig_runs = [s.original] + ([s.baseline] if s.baseline else [])
    rep_runs = list(dict.fromkeys(s.reproduced + s.reproduced_baselines))
    if not s.replication:
        runs = list(dict.fromkeys(orig_runs + rep_runs))
        per = evaluation.evaluate(con, s.qrels, measures, runs, topics=topics).df()
        both = matrices(per, s.qrels, measures, runs)
        return {label: (m, m) for label, m in both.items()}
    per_o = evaluation.evaluate(con, s.qrels, measures, orig_runs, topics=topics).df()
    per_r = evaluation.evaluate(con, s.reproduced_qrels, measures, rep_runs, topics=topics).df()
    mo = matrices(per_o, s.qrels, measures, orig_runs)
    mr = matrices(per_r, s.reproduced_qrels, measures, rep_runs)
    return {label: (mo[label], mr[label]) for label in mo}


def _row(m, run: str) -> np.ndarray:
    return m.X[m.run_ids.index(run)]


def _rows(m, runs) -> np.ndarray:
    return np.array([_row(m, r) for r in runs])


def effects(con, s: Setting, measures: list[Measure], topics: str = "run") -> pd.DataFrame:
    """Per measure, role and reproduction: both means, RMSE (a reproduction), the p-value
    (paired t-test for a reproduction, Student's unpaired one for a replication), and on the
    advanced rows ER and ΔRI when baselines are given."""
    out = []
    test = "Student t (unpaired)" if s.replication else "paired t"
    for label, (mo, mr) in _scores(con, s, measures, topics).items():
        ratio = delta = None
        if s.baseline is not None:
            args = (_row(mo, s.original), _row(mo, s.baseline), _rows(mr, s.reproduced),
                    _rows(mr, s.reproduced_baselines))
            ratio, delta = repro_stats.effect_ratio(*args), repro_stats.delta_ri(*args)
        for role, orig, reps in s.pairs():
            x, Y = _row(mo, orig), _rows(mr, reps)
            err = repro_stats.rmse(x, Y) if not s.replication else [None] * len(reps)
            p = repro_stats.p_values(x, Y, paired=not s.replication)
            for i, rep in enumerate(reps):
                adv = role == "advanced" and ratio is not None
                out.append((s.kind, role, orig, rep, s.qrels, s.reproduced_qrels, label,
                            len(mr.topics), float(x.mean()), float(Y[i].mean()),
                            None if err[i] is None else float(err[i]), test, float(p[i]),
                            float(ratio[i]) if adv else None, float(delta[i]) if adv else None))
    return pd.DataFrame(out, columns=EFFECT_COLUMNS)


# ------------------------------------------------------------------ order of documents


def _pair_rows(con, collection: str, run_a: str, run_b: str, depth: int) -> pd.DataFrame:
    P = {name: sql.param(name) for name in ("collection", "run_a", "run_b", "depth")}
    query = sql.statement("repro.sql", "pair", P)
    params = {"collection": collection, "run_a": run_a, "run_b": run_b, "depth": depth}
    return con.execute(query, sql.used(params, query)).df()


def _order_of_pair(frame: pd.DataFrame, cutoffs) -> list[tuple]:
    """(cutoff, topic, ktu, ktu_ranks, rbo) per cut-off and topic of one pair's rows."""
    out = []
    topics = list(dict.fromkeys(frame["topic"]))
    code = {t: i for i, t in enumerate(topics)}
    for k in cutoffs:
        ra = frame["rank_a"].where(frame["rank_a"] <= k)
        rb = frame["rank_b"].where(frame["rank_b"] <= k)
        shared = ra.notna() & rb.notna()
        first = np.maximum(ra[shared], rb[shared]).to_numpy(dtype=np.int64)
        t_index = frame["topic"][shared].map(code).to_numpy(dtype=np.int64)
        rbo = repro_stats.rbo(t_index, first, len(topics))
        for topic, g in frame.assign(ra=ra, rb=rb).groupby("topic", sort=False):
            a = g.dropna(subset=["ra"]).sort_values("ra")["docno"].tolist()
            b = g.dropna(subset=["rb"]).sort_values("rb")["docno"].tolist()
            out.append((k, topic, repro_stats.ktu_positions(a, b), repro_stats.ktu_ranks(a, b),
                        float(rbo[code[topic]])))
    return out


def order(con, s: Setting, cutoffs=CUTOFFS) -> pd.DataFrame:
    """KTU (repro_eval's and over the documents' ranks) and RBO per role, reproduction,
    cut-off and topic, and their means over the topics (topic ``all``). A replication
    ranks other documents: no rows."""
    rows = []
    if s.replication:
        return pd.DataFrame(rows, columns=ORDER_COLUMNS)
    for role, orig, reps in s.pairs():
        for rep in dict.fromkeys(reps):
            frame = _pair_rows(con, s.collection, orig, rep, max(cutoffs))
            if frame.empty:
                raise IrwError(f"runs {orig!r} and {rep!r} have no topic in common")
            per = pd.DataFrame(_order_of_pair(frame, cutoffs), columns=ORDER_COLUMNS[3:])
            means = per.groupby("cutoff", sort=False)[["ktu", "ktu_ranks", "rbo"]].mean().reset_index()
            means.insert(1, "topic", "all")
            for part in (means, per):
                part.insert(0, "reproduced", rep)
                part.insert(0, "original", orig)
                part.insert(0, "role", role)
                rows.append(part)
    return pd.concat(rows, ignore_index=True)[ORDER_COLUMNS]


def spread(effect: pd.DataFrame, order_frame: pd.DataFrame) -> pd.DataFrame:
    """Over the reproductions of each role and measure (effects) or cut-off (the order
    statistics' means over the topics): the number of reproductions and the mean, sd
    (n − 1), min and max of every statistic."""
    keys = ["role", "measure", "cutoff", "statistic"]
    long = [effect.assign(cutoff=None).melt(
        id_vars=["role", "measure", "cutoff", "reproduced"],
        value_vars=["mean_reproduced", "rmse", "p_value", "er", "delta_ri"], var_name="statistic")]
    if not order_frame.empty:
        means = order_frame[order_frame["topic"] == "all"].assign(measure=None)
        long.append(means.melt(id_vars=["role", "measure", "cutoff", "reproduced"],
                               value_vars=["ktu", "ktu_ranks", "rbo"], var_name="statistic"))
    frame = pd.concat(long, ignore_index=True).dropna(subset=["value"])
    frame["value"] = frame["value"].astype(float)
    frame[["measure", "cutoff"]] = frame[["measure", "cutoff"]].astype(object)
    grouped = frame.groupby(keys, sort=False, dropna=False)["value"]
    out = grouped.agg(reproductions="count", mean="mean", sd="std", min="min", max="max").reset_index()
    out["cutoff"] = pd.Series([None if pd.isna(k) else int(k) for k in out["cutoff"]], dtype=object)
    return out


def analyse(con, s: Setting, measures: list[Measure], topics: str = "run") -> dict[str, pd.DataFrame]:
    """The three tables of ``irw repro``: effects, order and (over the reproductions) spread."""
    effect = effects(con, s, measures, topics)
    order_frame = order(con, s)
    return {"effects": effect, "order": order_frame, "spread": spread(effect, order_frame)}


def save(con, s: Setting, name: str, tables: dict[str, pd.DataFrame], params: dict) -> None:
    """Keep the effects and the order of documents in repro_effects and repro_order under
    ``name`` (the saved results' one mechanism: :func:`irwarehouse.significance.save`)."""
    from . import significance

    params = {**params, "cutoffs": list(CUTOFFS), "rbo_p": repro_stats.RBO_P,
              "rbo_depth": repro_stats.RBO_DEPTH}
    significance.save(con, "repro_effects", name,
                      tables["effects"].assign(collection=s.reproduced_collection), params)
    significance.save(con, "repro_order", name, tables["order"].assign(collection=s.collection), params)


def run(con, original: str, reproduced: str, measures: list[Measure], baseline: str | None = None,
        reproduced_baseline: str | None = None, qrels: str | None = None,
        reproduced_qrels: str | None = None, topics: str = "run", show: str = "effects",
        per_topic: bool = False, name: str | None = None) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """``irw repro``: the table ``show`` (effects, order or spread; the order's means over
    the topics only, unless ``per_topic``) and all three; kept under ``name`` when given."""
    if show not in SHOWN:
        raise IrwError(f"unknown table {show!r}; valid: {', '.join(SHOWN)}")
    if not measures:
        raise IrwError("give at least one measure (-m)")
    s = setting(con, original, reproduced, baseline, reproduced_baseline, qrels, reproduced_qrels)
    tables = analyse(con, s, measures, topics)
    if name is not None:
        save(con, s, name, tables, {"original": original, "reproduced": reproduced,
                                    "baseline": baseline, "reproduced_baseline": reproduced_baseline,
                                    "topics": topics})
    shown = tables[show]
    if show == "order" and not per_topic:
        shown = shown[shown["topic"] == "all"].reset_index(drop=True)
    return shown, tables
