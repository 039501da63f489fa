"""Many derived qrels of one root in one pass (``sql/evaluate_many.sql``).

Several derived qrels of one root -- every leave-one-team-out qrels, depth pools -- are
evaluated together when each is a subset of the root's judgments with the same grades, the
root's base is current and the runs are of the root's collection: a derived qrels's base
rows are then the root's minus those of its removed judgments, and the per-ranking
aggregates come from the root's base, as each measure file declares (``many``; see
rendering.many_kind). The rest is evaluated per qrels. The scores are those of evaluating
each qrels on its own.

Which judgments a derived qrels lacks of its root is recorded when irw writes it
(state.record_qrels); while both qrels are as recorded (state.recorded_subsets, by their
fingerprints), the pass takes the removed judgments and each qrels's counts from the record
and the root, and never reads the derived qrels's judgments. Otherwise it finds them by
joining every judgment of the derived qrels with the root's.
"""

from __future__ import annotations

from .. import catalogue, sql, state
from ..connection import engine_of, without_order
from ..result import Result, combined_key
from .base import con_is_read_only, ensure_base
from .evaluation import RESULT_COLUMNS, check_runs_in, compute, note_unshared_topics, store_scores
from .rendering import many_kind, render_many_sql

@without_order
def evaluate_many(con, qrels_list: list[str], measures, run_ids,
                  topics: str = "qrels", max_docs: int | None = None, rel_level: int | None = None,
                  store: bool = True, collection: str | None = None) -> Result:
    """Per-topic scores for each qrels of ``qrels_list``, as one table (qrels, run_id, topic,
    measure, value) in the order of the list, then by run, topic and measure. ``run_ids``: a
    list, or {qrels: list}. Derived qrels of one root (their judgments a subset of the root's
    with the same grades, the root's base current, the runs of the root's collection) are
    evaluated together, in one pass over the root's base for the measures that allow it
    (:func:`many_kind`); the rest per qrels. The scores are the same either way."""
    return _evaluate_many(con, qrels_list, measures, run_ids, topics, max_docs, rel_level, store,
                          collection)


def _evaluate_many(con, qrels_list, measures, run_ids, topics, max_docs, rel_level, store,
                   collection) -> Result:
    info = {q: catalogue.qrels_info(con, q) for q in dict.fromkeys(qrels_list)}  # (name, topic qrels)
    names = list(dict.fromkeys(name for name, _ in info.values()))
    for q in names:
        catalogue.check_serves(con, q, measures)
    topic_qrels = {name: t for name, t in info.values()}
    collection_of = {q: catalogue.collection_of(con, q, collection) for q in names}
    runs_of = {q: list(run_ids[q] if isinstance(run_ids, dict) else run_ids) for q in names}
    checked = set()
    for q in names:
        key = (topic_qrels[q], collection_of[q], tuple(runs_of[q]))
        if key not in checked:
            checked.add(key)
            note_unshared_topics(con, key[0], key[1], runs_of[q])
    together = [m for m in measures if many_kind(m) is not None]
    queries = render_many_sql(together, topics, max_docs, rel_level) if together else None
    store = store and not con_is_read_only(con)
    sql.run(con, "many.sql", "result_table")
    position = {q: i for i, q in enumerate(names)}
    try:
        done: set[str] = set()
        for (root, c, runs), group in (_many_groups(con, names, collection_of, runs_of) if queries else {}).items():
            check_runs_in(con, c, list(runs))
            params = {"root": root, "collection": c, "runs": list(runs), "names": names}
            found = state.recorded_subsets(con, group, root)
            recorded = [q for q in group if q in found]
            if recorded:  # what each lacks of the root is recorded: their judgments are not read
                sql.run(con, "many.sql", "keep", {**params, "qrels": recorded}, "removed",
                        queries["recorded_removed"])
                sql.run(con, "many.sql", "add_pass", {**params, "qrels": recorded}, queries["recorded_scores"])
                done.update(recorded)
            rest = [q for q in group if q not in recorded]
            if rest:
                for part in ("judgments", "removed"):
                    sql.run(con, "many.sql", "keep", {**params, "qrels": rest}, part, queries[part])
                sql.run(con, "many.sql", "add_pass", {**params, "qrels": rest}, queries["scores"])
                done.update(r[0] for r in sql.rows(con, "many.sql", "complete", {"qrels": rest}))
        for q in names:
            rest = [m for m in measures if m not in together] if q in done else list(measures)
            if rest:
                compute(con, q, rest, runs_of[q], topics, max_docs, rel_level, collection)
                sql.run(con, "many.sql", "add_one", {"qi": position[q]})
                engine_of(con).drop("irw_eval_result")
            if store:
                store_scores(con, q, collection_of[q], measures, runs_of[q],
                             topics, max_docs, rel_level, "irw_many_result", "qi = $qi", {"qi": position[q]})
        arrays, codes = _sorted_columns(con, names)
        return Result(columns=["qrels", *RESULT_COLUMNS], arrays=arrays, codes=codes)
    finally:
        for table in ("irw_many_result", "irw_many_judgments", "irw_many_removed"):
            engine_of(con).drop(table)


def _sorted_columns(con, names: list[str]) -> tuple[list, dict]:
    """The columns qrels, run_id, topic, measure, value of irw_many_result ordered by qrels (in
    the order of ``names``), run_id, topic and measure, as numpy arrays; the strings are
    fetched once each (the rows carry their numbers: quicker than fetching the strings). With
    them, the numbers of the string columns (Result's codes)."""
    import numpy as np

    codes = {}
    for column in ("run_id", "topic", "measure"):
        codes[column] = [r[0] for r in con.execute(sql.statement("many.sql", "distinct", column)).fetchall()]
    coded = con.execute(sql.statement("many.sql", "coded"),
                        {"a": codes["run_id"], "b": codes["topic"], "c": codes["measure"]}).fetchnumpy()
    key = combined_key([coded[k] for k in ("qi", "ri", "ti", "mi")],  # the four numbers as one: one sort
                       [len(names), len(codes["run_id"]), len(codes["topic"]), len(codes["measure"])])
    order = np.argsort(key)  # unique keys; sorting numbers: quicker in numpy than in SQL
    coded = {k: v[order] for k, v in coded.items()}
    strings = lambda values, index: np.array(values, dtype=object)[np.asarray(index, dtype=np.int64)]  # noqa: E731
    arrays = [strings(names, coded["qi"]), strings(codes["run_id"], coded["ri"]),
              strings(codes["topic"], coded["ti"]), strings(codes["measure"], coded["mi"]),
              coded["value"]]  # a masked array where a score is NULL
    return arrays, {"qrels": coded["qi"], "run_id": coded["ri"], "topic": coded["ti"],
                    "measure": coded["mi"]}


def _many_groups(con, names: list[str], collection_of: dict, runs_of: dict) -> dict[tuple, list[str]]:
    """The derived qrels of ``names`` that :func:`evaluate_many` may evaluate together, by
    (root, collection, run ids): those whose base would be the root's restricted to their
    judgments (state.source 'subset': the runs as irw recorded them, the root's base current,
    the runs of the root's collection; whether the judgments are a subset of the root's with
    the same grades is checked as they are evaluated). Only groups of two or more."""
    if not state.runs_current(con):
        return {}
    groups: dict[tuple, list[str]] = {}
    bases: dict[str, bool] = {}
    roots = state.root_qrels_of(con, names)
    own = dict(sql.rows(con, "many.sql", "collections", {"qrels": sorted(set(roots.values()))}))
    for q in names:
        root, c = roots[q], collection_of[q]
        if root == q or own.get(root) != c:
            continue
        if root not in bases:
            if not con_is_read_only(con):
                ensure_base(con, root)
            bases[root] = state.base_current(con, root)
        if bases[root]:
            groups.setdefault((root, c, tuple(runs_of[q])), []).append(q)
    return {key: group for key, group in groups.items() if len(group) > 1}
