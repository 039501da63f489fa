"""Evaluation: render ``sql/evaluate.sql`` for a list of measures and run it in DuckDB.

Python only builds the template context -- SQL fragments derived from validated measure
parameters (numbers and fixed keywords, never user text) -- and stores the result.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import db
from .errors import IrwError
from .measures import GAIN_MEASURES, Measure

if TYPE_CHECKING:
    import pandas as pd

TOPIC_POLICIES = ("qrels", "run", "all")


def _key(value: int) -> str:
    return str(value).replace("-", "m")


@dataclass
class _Threshold:
    value: int
    window: bool

    @property
    def key(self):
        return "t" + _key(self.value)

    @property
    def R(self):
        return f"R_{self.key}"

    @property
    def N(self):
        return f"N_{self.key}"

    @property
    def c_rel(self):
        return "c_rel" if self.value == 1 else f"c_rel_{self.key}"

    @property
    def c_nonrel(self):
        return "c_nonrel" if self.value == 1 else f"c_nonrel_{self.key}"


@dataclass
class _GainSet:
    key: str
    expr: str
    gmax: str  # SQL: the largest gain of the map (per topic for the default map)
    window: bool = False

    @property
    def cg(self):
        return "cg" if self.key == "g" else f"cg_{self.key}"


class _MeasureContext:
    """What a measure's SQL file sees as ``m``."""

    def __init__(self, index: int, measure: Measure, threshold: _Threshold, gainset: _GainSet | None):
        self.id = f"m{index}"
        self.label = str(measure)
        self.name = measure.name
        self.module = db.module(f"measures/{measure.name}.sql")
        self.judged_only = measure.judged_only
        self.pos = "crank" if self.judged_only else "rank"
        self.n = "n_judged" if self.judged_only else "n"
        k = measure.cutoff
        self.k = db.sql_number(k) if k is not None else None
        self.within = f"{self.pos} <= {self.k}" if k is not None else "TRUE"
        self.ideal_within = f"irank <= {self.k}" if k is not None else "TRUE"
        self.rel = f"grade >= {db.sql_number(threshold.value)}"
        self.R, self.N = threshold.R, threshold.N
        self.c_rel, self.c_nonrel = threshold.c_rel, threshold.c_nonrel
        definition = measure.definition
        self.p = db.sql_number(float(measure.get("p"))) if definition.param("p") else None
        self.beta = db.sql_number(float(measure.get("beta"))) if definition.param("beta") else None
        self._discount = measure.get("discount") if definition.param("discount") else None
        self._base = float(measure.get("base")) if definition.param("base") else 2.0
        if gainset is not None:
            self.gkey, self.gain, self.cg = gainset.key, gainset.expr, gainset.cg
            self.gmax = gainset.gmax
        else:
            self.gkey = self.gain = self.cg = self.gmax = None

    def disc(self, pos: str) -> str:
        """The rank discount 1/log_b(i + 1) (log2p1) or 1/log_b(max(b, i)) (jk)."""
        base = db.sql_number(self._base)
        if self._discount == "jk":
            return f"(ln({base}) / ln(greatest({base}, {pos})))"
        if self._base == 2.0:
            return f"(1.0 / log2({pos} + 1))"
        return f"(ln({base}) / ln({pos} + 1))"


def _gain_of(measure: Measure, threshold: int) -> _GainSet:
    """The gain a gain-based measure uses: an explicit map, binary (``rel`` given) or the
    default gain = grade for grades >= 1 (whose g_max is the topic's largest grade)."""
    gains = measure.get("gains")
    if gains:
        cases = " ".join(f"WHEN {db.sql_number(g)} THEN {db.sql_number(float(v))}" for g, v in gains)
        key = "m" + "_".join(f"{_key(g)}x{str(v).replace('.', 'p')}" for g, v in gains)
        return _GainSet(key, f"CASE grade {cases} ELSE 0.0 END",
                        db.sql_number(float(max(v for _, v in gains))))
    if measure.has("rel") and measure.name != "Q":
        return _GainSet("b" + _key(threshold),
                        f"CASE WHEN grade >= {db.sql_number(threshold)} THEN 1.0 ELSE 0.0 END", "1")
    return _GainSet("g", "CASE WHEN grade >= 1 THEN grade ELSE 0 END", "gmax_g")


def render_sql(measures: list[Measure], topics: str = "qrels", max_docs: int | None = None,
               rel_level: int | None = None, base_source: str = "cache") -> str:
    """The SQL that computes ``measures`` (bind $qrels, $topic_qrels, $runs, and $base_qrels
    when ``base_source`` is 'subset')."""
    if topics not in TOPIC_POLICIES:
        raise IrwError(f"unknown topic policy {topics!r}; valid: {', '.join(TOPIC_POLICIES)}")
    if max_docs is not None and max_docs < 1:
        raise IrwError("--max-docs must be at least 1")
    thresholds: dict[int, _Threshold] = {}
    gainsets: dict[str, _GainSet] = {}
    contexts = []
    for index, measure in enumerate(measures):
        t = measure.get("rel") if measure.definition.param("rel") else None
        t = int(t) if t is not None else 1
        threshold = thresholds.setdefault(t, _Threshold(t, window=t != 1))
        gainset = None
        if measure.name in GAIN_MEASURES:
            candidate = _gain_of(measure, t)
            gainset = gainsets.setdefault(candidate.key, candidate)
            if measure.name == "Q" and gainset.key != "g":
                gainset.window = True
        contexts.append(_MeasureContext(index, measure, threshold, gainset))
    return db.render("evaluate.sql", measures=contexts, thresholds=list(thresholds.values()),
                     gainsets=list(gainsets.values()), topics=topics, max_docs=max_docs,
                     topic_threshold=rel_level if rel_level is not None else 1,
                     base_source=base_source)


def qrels_info(con, qrels: str) -> tuple[str, str]:
    """(name, topic_qrels) of an existing qrels, or an error listing the known ones."""
    row = con.execute("SELECT qrels, topic_qrels FROM qrels_info WHERE qrels = ?", [qrels]).fetchone()
    if row is None:
        known = [r[0] for r in con.execute("SELECT qrels FROM qrels_info ORDER BY qrels").fetchall()]
        if not known:
            raise IrwError("no qrels are loaded: use `irw load qrels FILE --name NAME` first")
        raise IrwError(f"unknown qrels {qrels!r}; known: {', '.join(known)}")
    return row[0], row[1]


def default_qrels(con) -> str:
    """The qrels to use when none is named: the only one loaded from a file."""
    names = [r[0] for r in con.execute(
        "SELECT qrels FROM qrels_info WHERE parent IS NULL ORDER BY created_at").fetchall()]
    if not names:
        raise IrwError("no qrels are loaded: use `irw load qrels FILE --name NAME` first")
    if len(names) > 1:
        raise IrwError(f"several qrels are loaded ({', '.join(names)}): choose one with --qrels")
    return names[0]


def root_qrels(con, qrels: str) -> str:
    """The loaded qrels a derived qrels descends from (its judgments are a subset of it)."""
    name = qrels
    while True:
        row = con.execute("SELECT parent FROM qrels_info WHERE qrels = ?", [name]).fetchone()
        if row is None or row[0] is None:
            return name
        name = row[0]


def ensure_base(con, qrels: str) -> None:
    """Materialize the base relation of a loaded qrels once (until its runs or judgments
    change). Derived qrels are evaluated from their root's base (see evaluate.sql)."""
    if con.execute("SELECT 1 FROM irw_base_built WHERE qrels = ?", [qrels]).fetchone():
        return
    with db.transaction(con):
        con.execute("DELETE FROM irw_base WHERE qrels = ?", [qrels])
        con.execute("INSERT INTO irw_base SELECT * FROM irw_base_rows(?)", [qrels])
        con.execute("INSERT INTO irw_base_built VALUES (?, current_timestamp)", [qrels])


RESULT_COLUMNS = ("run_id", "topic", "measure", "value")


def evaluate(con, qrels: str, measures: list[Measure], run_ids: list[str], topics: str = "qrels",
             max_docs: int | None = None, rel_level: int | None = None,
             store: bool = True) -> pd.DataFrame:
    """Per-topic scores (run_id, topic, measure, value); stored in ``scores`` if ``store``."""
    return _evaluate(con, qrels, measures, run_ids, topics, max_docs, rel_level, store,
                     lambda result: result.df())


def evaluate_rows(con, qrels: str, measures: list[Measure], run_ids: list[str],
                  topics: str = "qrels", max_docs: int | None = None,
                  rel_level: int | None = None, store: bool = True) -> list[tuple]:
    """:func:`evaluate` as (run_id, topic, measure, value) tuples, without pandas."""
    return _evaluate(con, qrels, measures, run_ids, topics, max_docs, rel_level, store,
                     lambda result: result.fetchall())


def _evaluate(con, qrels, measures, run_ids, topics, max_docs, rel_level, store, fetch):
    name, topic_qrels = qrels_info(con, qrels)
    params = {"qrels": name, "topic_qrels": topic_qrels, "runs": list(run_ids)}
    if con_is_read_only(con):
        source = "fresh"
    else:
        root = root_qrels(con, name)
        ensure_base(con, root)
        source = "cache" if root == name else "subset"
        if source == "subset":
            params["base_qrels"] = root
    sql = render_sql(measures, topics=topics, max_docs=max_docs, rel_level=rel_level,
                     base_source=source)
    con.execute(f"CREATE OR REPLACE TEMP TABLE irw_eval_result AS SELECT * FROM ({sql})", params)
    try:
        if store:
            labels = [str(m) for m in measures]
            with db.transaction(con):
                con.execute("DELETE FROM scores WHERE qrels = $qrels AND list_contains($runs, run_id) "
                            "AND list_contains($labels, measure)",
                            {"qrels": name, "runs": list(run_ids), "labels": labels})
                con.execute("INSERT INTO scores SELECT ?, run_id, topic, measure, value "
                            "FROM irw_eval_result", [name])
                con.executemany("INSERT INTO evaluations VALUES (current_timestamp, ?, ?, ?, ?, ?)",
                                [(name, label, len(run_ids), topics, max_docs) for label in labels])
        return fetch(con.execute("SELECT * FROM irw_eval_result ORDER BY run_id, topic, measure"))
    finally:
        con.execute("DROP TABLE IF EXISTS irw_eval_result")


def con_is_read_only(con) -> bool:
    try:
        return bool(con.execute("SELECT current_setting('access_mode') = 'read_only'").fetchone()[0])
    except Exception:  # pragma: no cover - older DuckDB
        return False


GM_EPSILON = 1e-5
AGGREGATES = ("mean", "gm", "gm_trec")


def _log(x: float) -> float:
    if x > 0:
        return math.log(x)
    return -math.inf if x == 0 else math.nan


def aggregate_rows(per_topic, how: str = "mean") -> list[tuple]:
    """Per run and measure over topics, from (run_id, topic, measure, value) rows: a list of
    (run_id, measure, value, n_topics) in order of first appearance. ``mean`` (arithmetic,
    the exactly rounded sum divided by n); ``gm`` the geometric mean
    exp(mean(log(x + eps))) - eps (SPEC); ``gm_trec`` trec_eval's gm_map form
    exp(mean(log(max(x, eps)))). eps = 1e-5. Missing values (None, NaN) are left out."""
    if how not in AGGREGATES:
        raise IrwError(f"unknown aggregate {how!r}; valid: {', '.join(AGGREGATES)}")
    groups: dict[tuple, list[float]] = {}
    for run_id, _topic, measure, value in per_topic:
        values = groups.setdefault((run_id, measure), [])
        if value is not None and not math.isnan(value):
            values.append(value)
    out = []
    for (run_id, measure), values in groups.items():
        if how == "gm":
            values = [_log(v + GM_EPSILON) for v in values]
        elif how == "gm_trec":
            values = [_log(max(v, GM_EPSILON)) for v in values]
        mean = math.fsum(values) / len(values) if values else math.nan
        if how == "gm":
            mean = math.exp(mean) - GM_EPSILON
        elif how == "gm_trec":
            mean = math.exp(mean)
        out.append((run_id, measure, mean, len(values)))
    return out


def aggregate(per_topic: pd.DataFrame, how: str = "mean") -> pd.DataFrame:
    """:func:`aggregate_rows` of ``evaluate``'s frame, as a frame (run_id, measure, value,
    n_topics)."""
    import pandas as pd

    rows = per_topic[list(RESULT_COLUMNS)].itertuples(index=False, name=None)
    return pd.DataFrame(aggregate_rows(rows, how), columns=["run_id", "measure", "value", "n_topics"])
