"""Evaluation: render ``sql/evaluate.sql`` for a list of measures and run it in DuckDB.

Python only builds the template context -- SQL fragments derived from validated measure
parameters (numbers and fixed keywords, never user text) -- and stores the result.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import db, state
from .errors import IrwError, note, printable
from .measures import GAIN_MEASURES, Measure

if TYPE_CHECKING:
    import pandas as pd

TOPIC_POLICIES = ("qrels", "run", "all")


def _key(value: int) -> str:
    return str(value).replace("-", "m")


@dataclass
class _Threshold:
    value: str  # SQL: the relevance threshold (a number, or an expression in a macro)
    window: bool
    key: str

    @property
    def R(self):
        return f"R_{self.key}"

    @property
    def N(self):
        return f"N_{self.key}"

    @property
    def c_rel(self):
        return f"c_rel_{self.key}" if self.window else "c_rel"

    @property
    def c_nonrel(self):
        return f"c_nonrel_{self.key}" if self.window else "c_nonrel"


def _threshold(value: int) -> _Threshold:
    return _Threshold(db.sql_number(value), window=value != 1, key="t" + _key(value))


@dataclass
class _GainSet:
    key: str
    expr: str
    gmax: str  # SQL: the largest gain of the map (per topic for the default map)
    window: bool = False

    @property
    def cg(self):
        return "cg" if self.key == "g" else f"cg_{self.key}"


DISCOUNT_SQL = {  # the rank discount at position `pos` for log base `b` (SQL expressions)
    "log2p1": "(ln({b}) / ln({pos} + 1))",
    "jk": "(ln({b}) / ln(greatest({b}, {pos})))",
}


class _MeasureContext:
    """What a measure's SQL file sees as ``m``: SQL fragments for one measure. The engine
    renders them from a parsed measure's values; a measure macro (:class:`_MacroContext`)
    from the macro's parameters."""

    def __init__(self, index: int, measure: Measure, threshold: _Threshold, gainset: _GainSet | None,
                 dialect: str = "duckdb"):
        self.id = f"m{index}"
        self.label = str(measure)
        self.name = measure.name
        self.module = db.module(f"measures/{measure.name}.sql", dialect)
        self.judged_only = measure.judged_only
        self.pos = "crank" if self.judged_only else "rank"
        self.n = "coalesce(n_judged, 0)" if self.judged_only else "n"
        k = measure.cutoff
        self.k = db.sql_number(k) if k is not None else None
        self.within = f"{self.pos} <= {self.k}" if k is not None else "TRUE"
        self.ideal_within = f"irank <= {self.k}" if k is not None else "TRUE"
        self._set_threshold(threshold)
        definition = measure.definition
        self.p = db.sql_number(float(measure.get("p"))) if definition.param("p") else None
        self.beta = db.sql_number(float(measure.get("beta"))) if definition.param("beta") else None
        self._discount = measure.get("discount") if definition.param("discount") else None
        self._base = float(measure.get("base")) if definition.param("base") else 2.0
        self._set_gains(gainset)

    def _set_threshold(self, threshold: _Threshold) -> None:
        self.rel = f"grade >= {threshold.value}"
        self.R, self.N = threshold.R, threshold.N
        self.c_rel, self.c_nonrel = threshold.c_rel, threshold.c_nonrel

    def _set_gains(self, gainset: _GainSet | None) -> None:
        if gainset is not None:
            self.gkey, self.gain, self.cg = gainset.key, gainset.expr, gainset.cg
            self.gmax = gainset.gmax
        else:
            self.gkey = self.gain = self.cg = self.gmax = None

    def pos_in(self, alias: str) -> str:
        """The position column of the relation ``alias``."""
        return f"{alias}.{self.pos}"

    def by_cutoff(self, at_k: str, whole: str) -> str:
        """``at_k`` when the measure has a cut-off, ``whole`` when it has none."""
        return at_k if self.k is not None else whole

    def by_judged(self, condensed: str, full: str) -> str:
        """``condensed`` for the judged-only form, ``full`` otherwise."""
        return condensed if self.judged_only else full

    def disc(self, pos: str) -> str:
        """The rank discount 1/log_b(i + 1) (log2p1) or 1/log_b(max(b, i)) (jk)."""
        if self._discount != "jk" and self._base == 2.0:
            return f"(1.0 / log2({pos} + 1))"
        return DISCOUNT_SQL[self._discount or "log2p1"].format(b=db.sql_number(self._base), pos=pos)


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
    return _GainSet("g", DEFAULT_GAIN, "gmax_g")


DEFAULT_GAIN = "CASE WHEN grade >= 1 THEN grade ELSE 0 END"

# Where the base rows come from (see base_rows in sql/_base.sql).
BASE_SOURCES = ("cache", "subset", "fresh", "rerank")


def _engine_inputs(dialect: str = "duckdb") -> dict:
    """The inputs of evaluate.sql as bound parameters (the engine)."""
    return {**{name: db.param(name, dialect)
               for name in ("qrels", "topic_qrels", "base_qrels", "collection", "runs")},
            "all_runs": False}


def render_sql(measures: list[Measure], topics: str = "qrels", max_docs: int | None = None,
               rel_level: int | None = None, base_source: str = "cache",
               dialect: str = "duckdb") -> str:
    """The SQL that computes ``measures`` (bind qrels, topic_qrels, collection, runs, and
    base_qrels when ``base_source`` is 'subset') in the SQL engine ``dialect`` (db.DIALECTS;
    other engines than DuckDB compute the base 'fresh' from their tables)."""
    if topics not in TOPIC_POLICIES:
        raise IrwError(f"unknown topic policy {topics!r}; valid: {', '.join(TOPIC_POLICIES)}")
    if max_docs is not None and not 1 <= max_docs <= 2**31 - 1:
        raise IrwError("--max-docs must be from 1 to 2147483647")
    if base_source not in BASE_SOURCES:
        raise ValueError(base_source)
    contexts, thresholds, gainsets = _contexts(measures, dialect)
    return db.render("evaluate.sql", dialect, measures=contexts, thresholds=thresholds,
                     gainsets=gainsets, topics=topics, max_docs=max_docs,
                     topic_threshold=rel_level if rel_level is not None else 1,
                     sources=[base_source], P=_engine_inputs(dialect), checks=[], window_guard=None)


def _contexts(measures: list[Measure], dialect: str = "duckdb"):
    """The measure contexts of ``measures`` (ids m0, m1, ... in order), with the relevance
    thresholds and gain maps they use."""
    thresholds: dict[int, _Threshold] = {}
    gainsets: dict[str, _GainSet] = {}
    contexts = []
    for index, measure in enumerate(measures):
        t = measure.get("rel") if measure.definition.param("rel") else None
        t = int(t) if t is not None else 1
        threshold = thresholds.setdefault(t, _threshold(t))
        gainset = None
        if measure.name in GAIN_MEASURES:
            candidate = _gain_of(measure, t)
            gainset = gainsets.setdefault(candidate.key, candidate)
            if measure.name == "Q" and gainset.key != "g":
                gainset.window = True
        contexts.append(_MeasureContext(index, measure, threshold, gainset, dialect))
    return contexts, list(thresholds.values()), list(gainsets.values())


class _MacroContext(_MeasureContext):
    """``m`` in a measure macro: the same fragments written over the macro's parameters
    (k, rel, gains, discount, base, p, beta, judged_only), so the choices the engine makes
    when rendering are made in SQL."""

    def __init__(self, definition):  # noqa: D107 - deliberately not calling the parent
        has = definition.param
        self.id = "m0"
        self.label = definition.name
        self.name = definition.name
        self.module = db.module(f"measures/{definition.name}.sql")
        self.pos = "(CASE WHEN judged_only THEN crank ELSE rank END)" if has("judged_only") else "rank"
        self.n = "(CASE WHEN judged_only THEN coalesce(n_judged, 0) ELSE n END)" if has("judged_only") else "n"
        if definition.cutoff:
            self.k = "k"
            self.within = f"(k IS NULL OR {self.pos} <= k)"
            self.ideal_within = "(k IS NULL OR irank <= k)"
        else:
            self.k = None
            self.within = self.ideal_within = "TRUE"
        self.threshold = (_Threshold("coalesce(rel, 1)", window=True, key="t") if has("rel")
                          else _threshold(1))
        self._set_threshold(self.threshold)
        self.p = "(p::DOUBLE)" if has("p") else None
        self.beta = "(beta::DOUBLE)" if has("beta") else None
        self._has_discount = bool(has("discount"))
        self.gainset = None
        if definition.name in GAIN_MEASURES:
            binary = ("WHEN rel IS NOT NULL THEN CASE WHEN grade >= rel THEN 1.0 ELSE 0.0 END "
                      if definition.name != "Q" else "")
            self.gainset = _GainSet(
                "d", f"(CASE WHEN gains IS NOT NULL THEN coalesce(gains[grade], 0)::DOUBLE {binary}"
                     f"ELSE {DEFAULT_GAIN} END)",
                "(CASE WHEN gains IS NOT NULL THEN list_max(map_values(gains))::DOUBLE "
                + ("WHEN rel IS NOT NULL THEN 1 " if binary else "") + "ELSE gmax_g END)",
                window=definition.name == "Q")  # only Q sums gains (cg)
        self._set_gains(self.gainset)
        guards = (["coalesce(rel, 1) <> 1"] if has("rel") else []) + (
            ["gains IS NOT NULL"] if definition.name == "Q" else [])
        self.window_guard = f"({' OR '.join(guards)})" if guards else None
        self.args = ["q"] + (["k := NULL"] if definition.cutoff else []) + [
            f"{p.name} := {_macro_default(p)}" for p in definition.params] + [
            "runs := NULL", "run_collection := NULL"]
        self.checks = _macro_checks(definition)

    def pos_in(self, alias: str) -> str:
        return f"(CASE WHEN judged_only THEN {alias}.crank ELSE {alias}.rank END)"

    def by_cutoff(self, at_k: str, whole: str) -> str:
        return whole if self.k is None else f"(CASE WHEN k IS NULL THEN {whole} ELSE {at_k} END)"

    def by_judged(self, condensed: str, full: str) -> str:
        return f"(CASE WHEN judged_only THEN {condensed} ELSE {full} END)"

    def disc(self, pos: str) -> str:
        b = "(base::DOUBLE)"
        return (f"(CASE WHEN discount = 'jk' THEN {DISCOUNT_SQL['jk'].format(b=b, pos=pos)} "
                f"ELSE {DISCOUNT_SQL['log2p1'].format(b=b, pos=pos)} END)")


def _macro_default(param) -> str:
    if param.default is None:
        return "NULL"
    if isinstance(param.default, bool):
        return "true" if param.default else "false"
    if isinstance(param.default, str):
        return db.quote_literal(param.default)
    return repr(param.default)


def _macro_checks(definition) -> list[tuple[str, str]]:
    """(condition, message): a measure macro raises the message when the condition holds."""
    name = definition.name
    checks = [("NOT EXISTS (SELECT 1 FROM qrels_info WHERE qrels = q)",
               f"measure.{name}: no such qrels (see SELECT qrels FROM qrels_info)"),
              ("run_collection IS NOT NULL AND NOT EXISTS (SELECT 1 FROM run_loads AS cl "
               "WHERE cl.collection = run_collection)",
               f"measure.{name}: no runs in that collection (see SELECT * FROM collections)")]
    if definition.cutoff:
        checks.append(("k IS NOT NULL AND k < 1", f"measure.{name}: k must be a positive integer"))
    for p in definition.params:
        if p.name == "rel":
            checks.append(("rel IS NOT NULL AND rel < 0", f"measure.{name}: rel must be >= 0"))
        elif p.name == "p":
            checks.append(("p IS NULL OR p <= 0 OR p >= 1", f"measure.{name}: p must be in (0, 1)"))
        elif p.name == "base":
            checks.append(("base IS NULL OR base <= 1", f"measure.{name}: base must be > 1"))
        elif p.name == "beta":
            checks.append(("beta IS NULL OR beta < 0", f"measure.{name}: beta must be >= 0"))
        elif p.name == "discount":
            checks.append(("discount IS NULL OR discount NOT IN ('log2p1', 'jk')",
                           f"measure.{name}: discount must be log2p1 or jk"))
        elif p.name == "gains":
            checks.append(("gains IS NOT NULL AND (list_min(map_values(gains)) < 0 "
                           "OR list_max(map_values(gains)) <= 0)",
                           f"measure.{name}: gains must be >= 0 with at least one > 0"))
    return checks


def _macro_inputs() -> dict:
    """The inputs of evaluate.sql as the parameters of a measure macro."""
    return {"qrels": "q", "topic_qrels": "(SELECT topic_qrels FROM qrels_info WHERE qrels = q)",
            "base_qrels": "(SELECT root FROM irw_st)",
            "collection": "coalesce(run_collection, collection_of(q))", "runs": "runs", "all_runs": True}


def macro_definitions() -> list[dict]:
    """Every catalogue measure as a table macro: name, parameter list and body (evaluate.sql
    rendered over the macro's parameters)."""
    from .measures import CATALOGUE

    out = []
    for definition in CATALOGUE.values():
        m = _MacroContext(definition)
        body = db.render("evaluate.sql", measures=[m], thresholds=[m.threshold],
                         gainsets=[m.gainset] if m.gainset else [], topics="qrels",
                         max_docs=None, topic_threshold=1, sources=list(BASE_SOURCES),
                         P=_macro_inputs(), checks=m.checks, window_guard=m.window_guard)
        out.append({"name": definition.name, "args": m.args,
                    "body": f"SELECT {_macro_inputs()['collection']} AS collection, run_id, topic, value "
                            f"FROM ({body.rstrip()}) AS measured"})
    return out


def qrels_info(con, qrels: str) -> tuple[str, str]:
    """(name, topic_qrels) of an existing qrels, or an error listing the known ones."""
    row = con.execute("SELECT qrels, topic_qrels FROM qrels_info WHERE qrels = ?", [qrels]).fetchone()
    if row is None:
        known = [r[0] for r in con.execute("SELECT qrels FROM qrels_info ORDER BY qrels").fetchall()]
        if not known:
            raise IrwError("no qrels are loaded: use `irw load qrels FILE --name NAME` first")
        raise IrwError(f"unknown qrels {qrels!r}; known: {', '.join(known)}")
    return row[0], row[1]


def collection_of(con, qrels: str, collection: str | None = None) -> str:
    """The collection whose runs a command over ``qrels`` uses: ``collection`` when given (it
    must hold runs), else the qrels's own."""
    if collection is None:
        row = con.execute("SELECT collection FROM qrels_info WHERE qrels = ?", [qrels]).fetchone()
        if row is None:
            qrels_info(con, qrels)  # the error naming the known qrels
        return row[0]
    if con.execute("SELECT 1 FROM run_loads WHERE collection = ? LIMIT 1", [collection]).fetchone() is None:
        from .collection import names

        raise IrwError(f"no runs are loaded in collection {collection!r}; collections with runs: "
                       f"{', '.join(names(con, with_runs=True)) or 'none'}")
    return collection


def default_qrels(con) -> str:
    """The qrels to use when none is named: the only one loaded from a file."""
    names = [r[0] for r in con.execute(
        "SELECT qrels FROM qrels_info WHERE parent IS NULL ORDER BY created_at").fetchall()]
    if not names:
        raise IrwError("no qrels are loaded: use `irw load qrels FILE --name NAME` first")
    if len(names) > 1:
        raise IrwError(f"several qrels are loaded ({', '.join(names)}): choose one with --qrels")
    return names[0]


def ensure_base(con, qrels: str) -> None:
    """Materialize the base relation of a loaded qrels, unless it is current (built from the
    runs and judgments as they are). Derived qrels are evaluated from their root's base."""
    if state.base_current(con, qrels):
        return
    with db.transaction(con):
        con.execute("DELETE FROM irw_base WHERE qrels = ?", [qrels])
        con.execute("DELETE FROM irw_base_built WHERE qrels = ?", [qrels])
        con.execute("INSERT INTO irw_base SELECT * FROM irw_base_rows(?)", [qrels])
        con.execute("INSERT INTO irw_base_built VALUES (?, current_timestamp, ?, irw_qrels_fp(?))",
                    [qrels, state.session_runs_fp(con), qrels])


def ensure_bases(con) -> list[str]:
    """Materialize the base relation of every loaded qrels that lacks a current one; returns
    their names (all loaded qrels)."""
    names = [r[0] for r in con.execute(
        "SELECT qrels FROM qrels_info WHERE parent IS NULL ORDER BY qrels").fetchall()]
    for name in names:
        ensure_base(con, name)
    return names


def base_source(con, qrels: str, collection: str) -> tuple[str, dict]:
    """Where the base rows of ``qrels`` for the runs of ``collection`` come from, and the
    parameters that source binds. A writable connection materializes the root's base first
    (when the runs are of the root's collection); a read-only one uses it only if it is
    current (else the base is computed from the tables)."""
    root = state.root_qrels(con, qrels)
    if (not con_is_read_only(con) and state.runs_current(con)
            and collection_of(con, root) == collection):
        ensure_base(con, root)
    source = state.source(con, qrels, collection)
    return source, ({"base_qrels": root} if source == "subset" else {})


def base_query(con, qrels: str, run_ids: list[str], collection: str | None = None) -> tuple[str, dict]:
    """A query over the base rows (run_id, topic, rank, crank, grade, c_rel, cg) of ``qrels``
    for ``run_ids`` of ``collection`` (default: the qrels's), from the source the engine
    uses, with its parameters."""
    name, _ = qrels_info(con, qrels)
    collection = collection_of(con, name, collection)
    source, extra = base_source(con, name, collection)
    sql = db.render("base_relation.sql", source=source, P=_engine_inputs())
    params = {"qrels": name, "collection": collection, "runs": list(run_ids), **extra}
    return sql, {k: v for k, v in params.items() if f"${k}" in sql}


RESULT_COLUMNS = ("run_id", "topic", "measure", "value")


def evaluate(con, qrels: str, measures: list[Measure], run_ids: list[str], topics: str = "qrels",
             max_docs: int | None = None, rel_level: int | None = None,
             store: bool = True, collection: str | None = None) -> pd.DataFrame:
    """Per-topic scores (run_id, topic, measure, value) of the runs ``run_ids`` of
    ``collection`` (default: the qrels's collection); stored in ``scores`` if ``store`` and
    the connection may write."""
    return _evaluate(con, qrels, measures, run_ids, topics, max_docs, rel_level, store,
                     collection, lambda result: result.df())


def evaluate_rows(con, qrels: str, measures: list[Measure], run_ids: list[str],
                  topics: str = "qrels", max_docs: int | None = None,
                  rel_level: int | None = None, store: bool = True,
                  collection: str | None = None) -> list[tuple]:
    """:func:`evaluate` as (run_id, topic, measure, value) tuples, without pandas."""
    return _evaluate(con, qrels, measures, run_ids, topics, max_docs, rel_level, store,
                     collection, lambda result: result.fetchall())


def _evaluate(con, qrels, measures, run_ids, topics, max_docs, rel_level, store, collection, fetch):
    name, collection = _compute(con, qrels, measures, run_ids, topics, max_docs, rel_level, collection)
    store = store and not con_is_read_only(con)
    try:
        if store:
            _store(con, name, collection, measures, run_ids, topics, max_docs, rel_level,
                   "irw_eval_result")
        return fetch(con.execute("SELECT * FROM irw_eval_result ORDER BY run_id, topic, measure"))
    finally:
        con.execute("DROP TABLE IF EXISTS irw_eval_result")


def _compute(con, qrels, measures, run_ids, topics, max_docs, rel_level, collection) -> tuple[str, str]:
    """The scores of one qrels into the temporary table irw_eval_result; (qrels, collection)."""
    name, topic_qrels = qrels_info(con, qrels)
    collection = collection_of(con, name, collection)
    _check_runs_in(con, collection, run_ids)
    note_unshared_topics(con, topic_qrels, collection, run_ids)
    params = {"qrels": name, "topic_qrels": topic_qrels, "collection": collection,
              "runs": list(run_ids)}
    source, extra = base_source(con, name, collection)
    params.update(extra)
    sql = render_sql(measures, topics=topics, max_docs=max_docs, rel_level=rel_level,
                     base_source=source)
    con.execute(f"CREATE OR REPLACE TEMP TABLE irw_eval_result AS SELECT * FROM ({sql})", params)
    return name, collection


def _store(con, name, collection, measures, run_ids, topics, max_docs, rel_level, table,
           where: str = "TRUE", params: dict | None = None) -> None:
    """Keep the scores (run_id, topic, measure, value) of the temporary table ``table`` (its
    rows where ``where`` holds, binding ``params``) in ``scores`` for qrels ``name``, replacing
    those of the same runs and measures, and record the evaluation."""
    labels = [str(m) for m in measures]
    with db.transaction(con):
        con.execute("DELETE FROM scores WHERE qrels = $qrels AND collection = $collection "
                    "AND list_contains($runs, run_id) AND list_contains($labels, measure)",
                    {"qrels": name, "collection": collection, "runs": list(run_ids),
                     "labels": labels})
        con.execute(f"INSERT INTO scores SELECT $name, $collection, run_id, topic, measure, value "
                    f"FROM {table} WHERE {where}", {"name": name, "collection": collection, **(params or {})})
        con.executemany(
            "INSERT INTO evaluations (evaluated_at, qrels, collection, measure, n_runs, "
            "topics, max_docs, rel_level) VALUES (current_timestamp, ?, ?, ?, ?, ?, ?, ?)",
            [(name, collection, label, len(run_ids), topics, max_docs, rel_level)
             for label in labels])


# --------------------------------------------------------------------------- many qrels

def many_kind(measure: Measure) -> str | None:
    """How :func:`evaluate_many` computes ``measure`` for many derived qrels of one root in one
    pass (sql/evaluate_many.sql): 'rows' or 'delta' as its measure file declares (``many``),
    when the setting allows it; None: evaluated per qrels (condensed forms, a relevance
    threshold below 1 or other than 1 for a 'delta' measure, a gain map giving grades below 1
    a positive gain, and the measures declaring nothing)."""
    kind = getattr(db.module(f"measures/{measure.name}.sql"), "many", None)
    if kind is None or measure.judged_only:
        return None
    threshold = measure.get("rel") if measure.definition.param("rel") else None
    threshold = int(threshold) if threshold is not None else 1
    if threshold < 1 or (kind == "delta" and threshold != 1):
        return None
    gains = measure.get("gains") if measure.definition.param("gains") else None
    if gains and any(g < 1 and float(v) > 0 for g, v in gains):
        return None
    return kind


def render_many_sql(measures: list[Measure], topics: str = "qrels", max_docs: int | None = None,
                    rel_level: int | None = None) -> dict[str, str]:
    """The three queries computing ``measures`` (each with a :func:`many_kind`) for the qrels
    $qrels (a list) derived from the loaded qrels $root whose base is current, for the runs
    $runs of $collection (sql/evaluate_many.sql): 'judgments' (into the temporary table
    irw_many_judgments: which of them are subsets of the root), 'removed' (into
    irw_many_removed), 'scores' (columns qrels, run_id, topic, measure, value; the qrels
    that are subsets of the root)."""
    if topics not in TOPIC_POLICIES:
        raise IrwError(f"unknown topic policy {topics!r}; valid: {', '.join(TOPIC_POLICIES)}")
    if max_docs is not None and not 1 <= max_docs <= 2**31 - 1:
        raise IrwError("--max-docs must be from 1 to 2147483647")
    contexts, thresholds, gainsets = _contexts(measures)
    for context, measure in zip(contexts, measures):
        context.many = many_kind(measure)
        if context.many is None:
            raise ValueError(f"{measure} is evaluated per qrels")
    return {part: db.render("evaluate_many.sql", part=part, judgments="irw_many_judgments",
                            removed="irw_many_removed", measures=contexts, thresholds=thresholds,
                            gainsets=gainsets, topics=topics, max_docs=max_docs,
                            topic_threshold=rel_level if rel_level is not None else 1,
                            P={name: db.param(name) for name in ("root", "qrels", "collection", "runs")})
            for part in MANY_PARTS}


MANY_PARTS = ("judgments", "removed", "scores")


def evaluate_many(con, qrels_list: list[str], measures: list[Measure], run_ids,
                  topics: str = "qrels", max_docs: int | None = None, rel_level: int | None = None,
                  store: bool = True, collection: str | None = None) -> pd.DataFrame:
    """:func:`evaluate` for each qrels of ``qrels_list``, as one frame (qrels, run_id, topic,
    measure, value) in the order of the list. ``run_ids``: a list, or {qrels: list}. Derived
    qrels of one root (their judgments a subset of the root's with the same grades, the root's
    base current, the runs of the root's collection) are evaluated together, in one pass over
    the root's base for the measures that allow it (:func:`many_kind`); the rest per qrels.
    The scores are the same either way."""
    import pandas as pd

    def fetch(names, columns):
        import numpy as np

        *keys, value = columns
        value = value.filled(np.nan) if np.ma.isMaskedArray(value) else np.asarray(value)
        return pd.DataFrame(dict(zip(("qrels", *RESULT_COLUMNS), [*keys, value.astype(np.float64)])))

    return _evaluate_many(con, qrels_list, measures, run_ids, topics, max_docs, rel_level, store,
                          collection, fetch)


def evaluate_many_rows(con, qrels_list: list[str], measures: list[Measure], run_ids,
                       topics: str = "qrels", max_docs: int | None = None,
                       rel_level: int | None = None, store: bool = True,
                       collection: str | None = None) -> dict[str, list[tuple]]:
    """:func:`evaluate_many` as {qrels: (run_id, topic, measure, value) tuples}, without pandas."""
    def fetch(names, columns):
        qrels, *rest = columns
        rows = list(zip(*(column.tolist() for column in rest)))  # a masked (NULL) score: None
        out: dict[str, list[tuple]] = {q: [] for q in names}
        start = 0
        for q, n in zip(*_runs_of(qrels)):
            out[q] = rows[start:start + n]
            start += n
        return out

    return _evaluate_many(con, qrels_list, measures, run_ids, topics, max_docs, rel_level, store,
                          collection, fetch)


def _evaluate_many(con, qrels_list, measures, run_ids, topics, max_docs, rel_level, store,
                   collection, fetch):
    names = list(dict.fromkeys(qrels_info(con, q)[0] for q in qrels_list))
    runs_of = {q: list(run_ids[q] if isinstance(run_ids, dict) else run_ids) for q in names}
    checked = set()
    for q in names:
        key = (qrels_info(con, q)[1], collection_of(con, q, collection), tuple(runs_of[q]))
        if key not in checked:
            checked.add(key)
            note_unshared_topics(con, key[0], key[1], runs_of[q])
    together = [m for m in measures if many_kind(m) is not None]
    sql = render_many_sql(together, topics, max_docs, rel_level) if together else None
    store = store and not con_is_read_only(con)
    con.execute("CREATE OR REPLACE TEMP TABLE irw_many_result (qi INTEGER, qrels VARCHAR, "
                "run_id VARCHAR, topic VARCHAR, measure VARCHAR, value DOUBLE)")
    position = {q: i for i, q in enumerate(names)}
    try:
        done: set[str] = set()
        for (root, c, runs), group in (_many_groups(con, names, collection, runs_of) if sql else {}).items():
            _check_runs_in(con, c, list(runs))
            params = {"root": root, "qrels": group, "collection": c, "runs": list(runs)}
            for part in ("judgments", "removed"):
                con.execute(f"CREATE OR REPLACE TEMP TABLE irw_many_{part} AS {sql[part]}",
                            _used(params, sql[part]))
            con.execute(f"INSERT INTO irw_many_result SELECT list_position($names, qrels) - 1, * "
                        f"FROM ({sql['scores']})", {**_used(params, sql["scores"]), "names": names})
            done.update(r[0] for r in con.execute(
                "SELECT DISTINCT qrels FROM irw_many_judgments AS k WHERE NOT EXISTS (SELECT 1 "
                "FROM irw_many_judgments AS x WHERE x.qid = k.qid AND x.topic IS NOT NULL "
                "AND x.jid IS NULL)").fetchall())
        for q in names:
            rest = [m for m in measures if m not in together] if q in done else list(measures)
            if rest:
                _compute(con, q, rest, runs_of[q], topics, max_docs, rel_level, collection)
                con.execute("INSERT INTO irw_many_result SELECT ?, ?, * FROM irw_eval_result",
                            [position[q], q])
                con.execute("DROP TABLE irw_eval_result")
            if store:
                _store(con, q, collection_of(con, q, collection), measures, runs_of[q], topics,
                       max_docs, rel_level, "irw_many_result", "qi = $qi", {"qi": position[q]})
        return fetch(names, _sorted_columns(con, names))
    finally:
        for table in ("irw_many_result", "irw_many_judgments", "irw_many_removed"):
            con.execute(f"DROP TABLE IF EXISTS {table}")


def _sorted_columns(con, names: list[str]) -> list:
    """The columns qrels, run_id, topic, measure, value of irw_many_result ordered by qrels (in
    the order of ``names``), run_id, topic and measure, as numpy arrays; the strings are
    fetched once each (the rows carry their numbers: quicker than fetching the strings)."""
    import numpy as np

    codes = {}
    for column in ("run_id", "topic", "measure"):
        codes[column] = [r[0] for r in con.execute(
            f"SELECT DISTINCT {column} FROM irw_many_result ORDER BY {column}").fetchall()]
    coded = con.execute(
        "SELECT r.qi, a.i AS ri, b.i AS ti, c.i AS mi, r.value FROM irw_many_result AS r "
        "JOIN (SELECT unnest($a) AS s, generate_subscripts($a, 1) - 1 AS i) AS a ON a.s = r.run_id "
        "JOIN (SELECT unnest($b) AS s, generate_subscripts($b, 1) - 1 AS i) AS b ON b.s = r.topic "
        "JOIN (SELECT unnest($c) AS s, generate_subscripts($c, 1) - 1 AS i) AS c ON c.s = r.measure "
        "ORDER BY r.qi, ri, ti, mi",
        {"a": codes["run_id"], "b": codes["topic"], "c": codes["measure"]}).fetchnumpy()
    strings = lambda values, index: np.array(values, dtype=object)[np.asarray(index, dtype=np.int64)]  # noqa: E731
    return [strings(names, coded["qi"]), strings(codes["run_id"], coded["ri"]),
            strings(codes["topic"], coded["ti"]), strings(codes["measure"], coded["mi"]),
            coded["value"]]  # a masked array where a score is NULL


def _runs_of(values) -> tuple[list, list]:
    """The runs of equal consecutive values (a numpy array): (values, lengths)."""
    import numpy as np

    values = np.asarray(values)
    if not len(values):
        return [], []
    starts = np.concatenate(([0], np.flatnonzero(values[1:] != values[:-1]) + 1))
    return values[starts].tolist(), np.diff(np.append(starts, len(values))).tolist()


def _used(params: dict, sql: str) -> dict:
    return {k: v for k, v in params.items() if f"${k}" in sql}


def _many_groups(con, names: list[str], collection: str | None, runs_of: dict) -> dict[tuple, list[str]]:
    """The derived qrels of ``names`` that :func:`evaluate_many` may evaluate together, by
    (root, collection, run ids): those whose base would be the root's restricted to their
    judgments (state.source 'subset': the runs as irw recorded them, the root's base current,
    the runs of the root's collection; whether the judgments are a subset of the root's with
    the same grades is checked as they are evaluated). Only groups of two or more."""
    if not state.runs_current(con):
        return {}
    groups: dict[tuple, list[str]] = {}
    bases: dict[str, bool] = {}
    for q in names:
        root = state.root_qrels(con, q)
        c = collection_of(con, q, collection)
        if root == q or collection_of(con, root) != c:
            continue
        if root not in bases:
            if not con_is_read_only(con):
                ensure_base(con, root)
            bases[root] = state.base_current(con, root)
        if bases[root]:
            groups.setdefault((root, c, tuple(runs_of[q])), []).append(q)
    return {key: group for key, group in groups.items() if len(group) > 1}


def note_unshared_topics(con, topic_qrels: str, collection: str, run_ids: list[str]) -> None:
    """Say so (errors.note) when runs share no topic with the qrels that defines the topic
    set: they score 0 everywhere, which is rarely what was meant (topic '401.0' against
    '401', the qrels of another collection)."""
    lacking = [r[0] for r in con.execute("""
        SELECT r FROM (SELECT DISTINCT unnest($ids::VARCHAR[]) AS r) AS s
        WHERE NOT EXISTS (SELECT 1 FROM run_topics AS t WHERE t.collection = $c AND t.run_id = s.r
                          AND t.topic IN (SELECT topic FROM qrels WHERE qrels = $q))
        ORDER BY r""", {"ids": list(run_ids), "c": collection, "q": topic_qrels}).fetchall()]
    if not lacking:
        return

    def topics(sql: str, params: dict) -> str:
        values = [r[0] for r in con.execute(sql + " LIMIT 6", params).fetchall()]
        return ", ".join(printable(repr(v)) for v in values[:5]) + (", ..." if len(values) > 5 else "")

    theirs = topics("SELECT DISTINCT topic FROM run_topics WHERE collection = $c "
                    "AND list_contains($ids, run_id) ORDER BY topic", {"c": collection, "ids": lacking})
    ours = topics("SELECT DISTINCT topic FROM qrels WHERE qrels = $q ORDER BY topic", {"q": topic_qrels})
    if len(lacking) == len(set(run_ids)):
        note(f"no evaluated run shares a topic with qrels {topic_qrels}: every score is 0 (the "
             f"runs' topics: {theirs or 'none'}; the qrels's: {ours or 'none'})")
    else:
        shown_ids = ", ".join(lacking[:10]) + (f", ... ({len(lacking) - 10} more)" if len(lacking) > 10 else "")
        note(f"run{'s' if len(lacking) > 1 else ''} {shown_ids} share{'' if len(lacking) > 1 else 's'} "
             f"no topic with qrels {topic_qrels}: every score is 0 (their topics: {theirs or 'none'}; "
             f"the qrels's: {ours or 'none'})")


def _check_runs_in(con, collection: str, run_ids: list[str]) -> None:
    """Every run evaluated is a run of ``collection`` (a run id of another collection, e.g.
    a comparison across collections, would otherwise score 0 everywhere)."""
    lacking = con.execute("SELECT list(r ORDER BY r) FROM (SELECT DISTINCT unnest($ids::VARCHAR[]) AS r) "
                          "WHERE r NOT IN (SELECT run_id FROM run_loads WHERE collection = $c)",
                          {"ids": list(run_ids), "c": collection}).fetchone()[0]
    if lacking:
        shown = ", ".join(lacking[:10]) + (f", ... ({len(lacking) - 10} more)" if len(lacking) > 10 else "")
        raise IrwError(f"run(s) {shown} are not loaded in collection {collection}")


def no_rows_reason(con, qrels: str, run_ids: list[str], topics: str = "qrels",
                   rel_level: int | None = None) -> str:
    """Why an evaluation gave no rows, in words for the user."""
    name, topic_qrels = qrels_info(con, qrels)
    if not run_ids:
        return "no rows: no run is selected"
    if topics == "qrels":
        threshold = rel_level if rel_level is not None else 1
        if con.execute("SELECT count(*) FROM qrels WHERE qrels = ? AND rel >= ?",
                       [topic_qrels, threshold]).fetchone()[0] == 0:
            source = name if topic_qrels == name else f"{topic_qrels} (which defines the topics of {name})"
            return (f"no rows: qrels {source} has no relevant document (grade >= {threshold}), "
                    "so the default topic set, the topics with a relevant document, is empty; "
                    "--topics all evaluates every judged topic")
    if topics == "run":
        return (f"no rows: the selected runs share no topic with qrels {topic_qrels} "
                "(--topics run); --topics all evaluates every judged topic")
    return "no rows: the topic set is empty"


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
