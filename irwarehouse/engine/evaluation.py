"""Evaluation: every requested measure for the selected runs under one qrels, in one pass of
``sql/evaluate.sql`` over the base relation; storing the per-topic scores in the warehouse;
keeping the stored scores current.

:func:`scores_query` is the engine-independent part (the catalogue look-ups, the checks, the
query and its parameters): the DuckDB engine (:func:`evaluate`) and the Spark engine
(irwarehouse.spark) both run it.
"""

from __future__ import annotations

from .. import catalogue, sql
from ..connection import Engine, engine_of, transaction, without_order
from ..errors import IrwError, note, printable
from ..judgment_kinds import KINDS
from ..measures import Measure, parse
from ..options import DEFAULT_TIES, tie_policy
from ..result import Result
from . import base, rendering

RESULT_COLUMNS = ("run_id", "topic", "measure", "value")


def _P(engine: Engine, *names: str) -> dict:
    """The SQL of the bound parameters ``names`` in the engine's dialect."""
    return {name: sql.param(name, engine.dialect) for name in names}


def check_runs_in(source, collection: str, run_ids: list[str]) -> None:
    """Every run evaluated is a run of ``collection`` (a run id of another collection, e.g.
    a comparison across collections, would otherwise score 0 everywhere)."""
    engine = engine_of(source)
    query = sql.statement("checks.sql", "runs_missing", _P(engine, "ids", "collection"),
                          dialect=engine.dialect)
    lacking = [r[0] for r in engine.rows(query, {"ids": list(run_ids), "collection": collection})]
    if lacking:
        shown = ", ".join(lacking[:10]) + (f", ... ({len(lacking) - 10} more)" if len(lacking) > 10 else "")
        raise IrwError(f"run(s) {shown} are not loaded in collection {collection}")


def note_unshared_topics(source, topic_qrels: str, collection: str, run_ids: list[str]) -> None:
    """Say so (errors.note) when runs share no topic with the qrels that defines the topic
    set: they score 0 everywhere, which is rarely what was meant (topic '401.0' against
    '401', the qrels of another collection)."""
    engine = engine_of(source)
    P = _P(engine, "ids", "collection", "q")
    params = {"ids": list(run_ids), "collection": collection, "q": topic_qrels}
    lacking = [r[0] for r in engine.rows(
        sql.statement("checks.sql", "runs_sharing_no_topic", P, dialect=engine.dialect), params)]
    if not lacking:
        return

    def topics(name: str, bound: dict) -> str:
        values = [r[0] for r in engine.rows(sql.statement("checks.sql", name, P, 6, dialect=engine.dialect),
                                            bound)]
        return ", ".join(printable(repr(v)) for v in values[:5]) + (", ..." if len(values) > 5 else "")

    theirs = topics("topics_of_runs", {**params, "ids": lacking}) or "none"
    ours = topics("topics_of_qrels", params) or "none"
    if len(lacking) == len(set(run_ids)):
        note(f"no evaluated run shares a topic with qrels {topic_qrels}: every score is 0 (the "
             f"runs' topics: {theirs}; the qrels's: {ours})")
    else:
        listed = ", ".join(lacking[:10]) + (f", ... ({len(lacking) - 10} more)" if len(lacking) > 10 else "")
        note(f"run{'s' if len(lacking) > 1 else ''} {listed} share{'' if len(lacking) > 1 else 's'} "
             f"no topic with qrels {topic_qrels}: every score is 0 (their topics: {theirs}; "
             f"the qrels's: {ours})")


def note_default_threshold(source, qrels: str, measures: list[Measure]) -> bool:
    """Say so (errors.note) when ``qrels`` is graded beyond 1 (TREC DL, MS MARCO's graded
    sets: 0 to 3) and measures whose threshold ``--rel-level`` sets were given neither
    ``rel=`` nor ``--rel-level``: they count grade >= 1 as relevant, where such collections
    often mean >= 2. A threshold given, 1 included, is the user's choice: no note. Whether
    it noted."""
    at_default = [str(m) for m in measures if m.definition.takes_rel_level and not m.has("rel")]
    if not at_default:
        return False
    engine = engine_of(source)
    name, _ = catalogue.qrels_info(engine, qrels)
    top = engine.rows(sql.statement("checks.sql", "top_grade", _P(engine, "q"), dialect=engine.dialect),
                      {"q": name})[0][0]
    if top is None or top < 2:
        return False
    shown = ", ".join(at_default[:3]) + (", ..." if len(at_default) > 3 else "")
    note(f"qrels {name} grades up to {top} and {shown} count{'s' if len(at_default) == 1 else ''} "
         "grade >= 1 as relevant (TREC DL passages: --rel-level 2)")
    return True


def scores_query(source, qrels: str, measures: list[Measure], run_ids: list[str],
                 topics: str = "qrels", max_docs: int | None = None, rel_level: int | None = None,
                 collection: str | None = None, ties=None,
                 record_ties: bool = False) -> tuple[str, dict, str, str]:
    """The query computing the per-topic scores (run_id, topic, measure, value) of
    ``measures`` for the runs ``run_ids`` of ``collection`` (default: the qrels's) under
    ``qrels``, each tie ranked by the tie policy ``ties`` (a name or
    irwarehouse.options.TiePolicy; default trec_eval: the stored ranking), for the engine of
    ``source``: (query, its parameters, qrels name, collection).
    Checks the runs and notes those that share no topic with the qrels. Under a tie policy
    that reads the ties the base records, ``record_ties`` records them first if they are not
    (an evaluation that stores scores; the others read the runs meanwhile). A DuckDB engine
    takes the base rows from the materialized base where it is current (engine.base); other
    engines compute them from the tables."""
    engine = engine_of(source)
    ties = tie_policy(ties)
    name, topic_qrels = catalogue.qrels_info(engine, qrels)
    catalogue.check_serves(engine, name, measures)
    collection = catalogue.collection_of(engine, name, collection)
    check_runs_in(engine, collection, run_ids)
    if KINDS[catalogue.judgments_of(engine, name)].graded:  # the topics of its graded rows
        note_unshared_topics(engine, topic_qrels, collection, run_ids)
    source_kind, extra = (base.base_source(engine.con, name, collection) if engine.caches_base
                          else ("fresh", {}))
    ties_cached = ((ties.expected or ties.by_gain) and source_kind == "cache"
                   and base.ensure_ties(engine.con, name, record_ties))
    query = rendering.render_sql(measures, topics=topics, max_docs=max_docs, rel_level=rel_level,
                                 base_source=source_kind, dialect=engine.dialect, ties=ties,
                                 ties_cached=ties_cached)
    params = {"qrels": name, "topic_qrels": topic_qrels, "collection": collection,
              "runs": list(run_ids), **extra}
    return query, params, name, collection


@without_order
def evaluate(con, qrels: str, measures: list[Measure], run_ids: list[str], topics: str = "qrels",
             max_docs: int | None = None, rel_level: int | None = None,
             store: bool = True, collection: str | None = None, ties=None) -> Result:
    """Per-topic scores (run_id, topic, measure, value, ordered so) of the runs ``run_ids`` of
    ``collection`` (default: the qrels's collection) in DuckDB, each tie ranked by the tie
    policy ``ties`` (default trec_eval); stored in ``scores`` (with their tie policy) if
    ``store`` and the connection may write."""
    ties = tie_policy(ties)
    store = store and not base.con_is_read_only(con)
    name, collection = compute(con, qrels, measures, run_ids, topics, max_docs, rel_level, collection,
                               ties, record_ties=store)
    try:
        if store:
            store_scores(con, name, collection, measures, run_ids, topics, max_docs, rel_level,
                         "irw_eval_result", ties=ties.name)
        return Result(list(RESULT_COLUMNS),
                      con.execute(sql.statement("scores.sql", "ordered", "irw_eval_result")).fetchall())
    finally:
        engine_of(con).drop("irw_eval_result")


def compute(con, qrels, measures, run_ids, topics, max_docs, rel_level, collection,
            ties=None, record_ties: bool = False) -> tuple[str, str]:
    """The scores of one qrels into the temporary table irw_eval_result; (qrels, collection).
    ``record_ties``: an evaluation that stores its scores records the base's ties first."""
    engine = engine_of(con)
    query, params, name, collection = scores_query(engine, qrels, measures, run_ids, topics,
                                                   max_docs, rel_level, collection, ties, record_ties)
    engine.keep("irw_eval_result", f"SELECT * FROM ({query})", params)
    return name, collection


def store_scores(con, name, collection, measures, run_ids, topics, max_docs, rel_level, table,
                 where: str = "TRUE", params: dict | None = None, ties: str = DEFAULT_TIES) -> None:
    """Keep the scores (run_id, topic, measure, value) of the temporary table ``table`` (its
    rows where ``where`` holds, binding ``params``) in ``scores`` for qrels ``name`` and tie
    policy ``ties``, replacing those of the same runs, measures and tie policy, and record the
    evaluation (sql/scores.sql). An evaluation that would store what is stored -- the same
    scores, bit for bit, each measure's latest logged evaluation of the same settings --
    writes nothing: the warehouse file is left as it is (:func:`already_stored`)."""
    labels = [str(m) for m in measures]
    bound = {"qrels": name, "collection": collection, "runs": list(run_ids), "labels": labels,
             "ties": ties}
    log = evaluation_log(con, name, collection, measures, list(run_ids), topics, max_docs, rel_level, ties)
    if already_stored(con, bound, log, table, where, params):
        return
    with transaction(con):
        con.execute(sql.statement("scores.sql", "delete"), bound)
        insert = sql.statement("scores.sql", "insert", table, where)
        con.execute(insert, sql.used({**bound, **(params or {})}, insert))
        con.executemany(sql.statement("scores.sql", "log"), log)


def already_stored(con, bound: dict, log: list[tuple], table: str, where: str = "TRUE",
                   params: dict | None = None) -> bool:
    """Do the stored scores of ``bound``'s qrels, collection, runs, measures and tie policy
    equal the rows of ``table`` where ``where`` holds, and is each measure's latest logged
    evaluation one of the rows ``log`` (the settings the scores would be logged with)?"""
    same = sql.statement("scores.sql", "same_scores", table, where)
    if not con.execute(same, sql.used({**bound, **(params or {})}, same)).fetchone()[0]:
        return False
    latest = sql.statement("scores.sql", "latest_log")
    logged = {tuple(row) for row in con.execute(latest, sql.used(bound, latest)).fetchall()}
    return logged == {tuple(row) for row in log}


def run_orders(source, collection: str, run_ids: list[str]) -> dict[str, str]:
    """The ranking order (run_loads.ranking_policy) of each of the runs ``run_ids`` of
    ``collection``: the order that produced their scores (SPEC section 1)."""
    engine = engine_of(source)
    query = sql.statement("scores.sql", "orders", dialect=engine.dialect)
    return dict(engine.rows(query, {"collection": collection, "runs": list(run_ids)}))


def ranking_orders(source, collection: str, run_ids: list[str]) -> str:
    """The ranking orders of the runs ``run_ids`` of ``collection`` (:func:`run_orders`),
    comma-separated."""
    return ", ".join(sorted(set(run_orders(source, collection, run_ids).values())))


def evaluation_log(source, qrels: str, collection: str, measures, run_ids: list[str], topics: str,
                   max_docs: int | None, rel_level: int | None, ties: str = DEFAULT_TIES) -> list[tuple]:
    """The rows of the table evaluations for one evaluation (without its time): how the
    stored scores were computed, so that they are recomputed alike when runs or qrels change,
    and the ranking orders of the runs scored (read from ``source``'s run_loads)."""
    orders = ranking_orders(source, collection, run_ids)
    return [(qrels, collection, str(m), len(run_ids), topics, max_docs, rel_level, orders, ties)
            for m in measures]


def refresh_scores(con, qrels: str | None = None,
                   runs: tuple[str, list[str]] | None = None) -> int:
    """Recompute the stored scores of ``qrels`` and/or ``runs`` (a collection and run ids) as
    they were last computed (measures, topic policy, -M and -l from the evaluations log), so
    that the stored scores stay current. Returns the number of (qrels, collection, run set,
    settings) evaluations made."""
    params = {}
    if qrels is not None:
        params["q"] = qrels
    if runs is not None:
        params["c"], params["ids"] = runs[0], list(runs[1])
    query = sql.statement("scores.sql", "stale", qrels is not None, runs is not None)
    groups: dict[tuple, list] = {}
    for q, c, label, run_ids, topics, max_docs, rel_level, ties in con.execute(query, params).fetchall():
        key = (q, c, tuple(run_ids), topics or "qrels", max_docs, rel_level, ties or DEFAULT_TIES)
        groups.setdefault(key, []).append(parse(label))
    for (q, c, run_ids, topics, max_docs, rel_level, ties), measures in groups.items():
        evaluate(con, q, measures, list(run_ids), topics=topics, max_docs=max_docs,
                 rel_level=rel_level, store=True, collection=c, ties=ties)
    return len(groups)


def relstrings(con, qrels: str, run_ids: list[str], length: int = 10, max_docs: int | None = None,
               judged_only: bool = False, collection: str | None = None) -> dict[tuple[str, str], str]:
    """trec_eval's relstring of every ranking of the runs ``run_ids`` (of ``collection``,
    default the qrels's) under ``qrels``: {(run_id, topic): the grades of its first
    ``length`` documents as characters (trec_names.relstring_char)}, after ``max_docs``
    (trec_eval -M) and, with ``judged_only`` (-J), without the unjudged documents."""
    name, _ = catalogue.qrels_info(con, qrels)
    collection = catalogue.collection_of(con, name, collection)
    params = {"qrels": name, "collection": collection, "runs": list(run_ids), "length": max(int(length), 0),
              "max_docs": max_docs, "judged_only": bool(judged_only)}
    return {(r, t): s for r, t, s in sql.rows(con, "relstring.sql", "relstrings", params)}


def no_rows_reason(source, qrels: str, run_ids: list[str], topics: str = "qrels",
                   rel_level: int | None = None) -> str:
    """Why an evaluation gave no rows, in words for the user (noted as ``no rows: ...``)."""
    engine = engine_of(source)
    name, topic_qrels = catalogue.qrels_info(engine, qrels)
    if not run_ids:
        return "no run is selected"
    if topics == "qrels":
        threshold = rel_level if rel_level is not None else 1
        if engine.rows("SELECT count(*) FROM qrels WHERE qrels = ? AND rel >= ?",
                       [topic_qrels, threshold])[0][0] == 0:
            source_text = name if topic_qrels == name else f"{topic_qrels} (which defines the topics of {name})"
            return (f"qrels {source_text} has no relevant document (grade >= {threshold}), "
                    "so the default topic set, the topics with a relevant document, is empty; "
                    "--topics all evaluates every judged topic")
    if topics == "run":
        return (f"the selected runs share no topic with qrels {topic_qrels} "
                "(--topics run); --topics all evaluates every judged topic")
    return "the topic set is empty"
