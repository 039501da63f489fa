"""Files in, scores out: a qrels file and run files evaluated without a warehouse, as
``trec_eval QRELS RUN`` does (``irw eval QRELS RUN...``, ``Warehouse.eval_files``, and
``irw trec-eval``: ``Warehouse.trec_eval``).

The files are read with every check of a load (engine.loading: malformed lines, a document
twice in a ranking or judged twice, damaged compressed files -- each named with its file and
line) and ranked under the load's policy, in one in-memory DuckDB database (:func:`staged`);
what reads them then reads them through views that take the names of the warehouse's tables
(``sql/files_in.sql``), with the engine and measure templates of every other evaluation
(engine.evaluation). Nothing else is set up: no schema, no views or macros for users' SQL,
no catalogue tables, no fingerprints, no base relation materialized. Of the ranked lines
only those of judged documents are kept when the runs are read in one batch (the measures
read nothing else: unjudged documents enter them through ranks and ranking lengths).

Evaluating files (``staged(..., batched=True)``, then :func:`evaluate`), the run files are
read, checked, ranked and evaluated in batches of about BATCH_SHARE of the memory limit in
text (loading.staged_batches), the per-topic scores of each batch kept in a temporary table
and ordered at the end as one batch orders them: the memory needed is bounded by the batch,
not by the number of runs, and the scores are those of one batch.
"""

from __future__ import annotations

import os
import weakref
from contextlib import contextmanager
from typing import Iterable

from .. import connection, runsets, sql
from ..catalogue import DEFAULT_COLLECTION
from ..errors import IrwError, note
from ..judgment_kinds import GRADED, KINDS, JudgmentKind
from ..measures import Measure
from ..result import Result
from . import evaluation, loading

# What evaluate() takes of Warehouse.eval's options.
OPTIONS = ("per_topic", "topics", "max_docs", "rel_level", "aggregate")
# Of the memory limit: the text of the run files read and evaluated at once.
BATCH_SHARE = 1 / 32
# The connections staged(batched=True) made: their runs, staged batch by batch by evaluate().
_BATCHED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# Files of less text than this are read, checked, ranked and evaluated on one thread: DuckDB
# divides its work by row groups of 122,880 rows (about 6 MB of run lines), so a smaller
# input gives a second thread nothing to do but to wait for the first (one DL-sized run:
# CPU time measured in docs/performance.md). A compressed file counts COMPRESSION times its
# size.
ONE_THREAD_TEXT = 6 * 2**20
COMPRESSION = 10


def _text_size(paths: list) -> float:
    """The text in the files ``paths`` (an estimate for compressed ones); infinite when one
    is not a plain file (a directory, a pattern, a data frame)."""
    total = 0.0
    for path in paths:
        if not isinstance(path, (str, os.PathLike)) or not os.path.isfile(path):
            return float("inf")
        size = os.path.getsize(path)
        total += size * COMPRESSION if str(path).endswith((".gz", ".bz2", ".xz", ".zst", ".zip")) else size
    return total


@contextmanager
def staged(qrels_file: str, runs: Iterable[str], *, name: str, policy: str = "trec_eval",
           extra_fields: bool = False, encoding: str = "utf-8", memory: str | None = None,
           batched: bool = False, kind: JudgmentKind = KINDS[GRADED]):
    """An in-memory DuckDB connection holding the qrels file ``qrels_file`` (named ``name``)
    and the runs of the files ``runs`` (of the collection DEFAULT_COLLECTION) as views named
    as the warehouse's tables (``qrels``, ``qrels_info``, ``runs``, ``run_topics``,
    ``run_loads``, ``run_info``), marked a throw-away warehouse (the engine computes the base
    relation within its query); closed, with its staging file, when the block ends.
    ``memory``: DuckDB's memory limit (connection.memory_limit). ``batched``: the files are
    read when :func:`evaluate` evaluates them, in batches; ``con`` is for it alone.
    ``kind``: the qrels file's judgment kind (irwarehouse.judgment_kinds), read as a load
    reads it; its graded rows are the view ``qrels``, its lines the view of its detail table."""
    runs = list(runs)
    con = connection.connect(":memory:", memory=memory)
    try:
        if _text_size([qrels_file, *runs]) < ONE_THREAD_TEXT:
            sql.run(con, "files_in.sql", "one_thread")
        with connection.unordered(con):
            policy = loading.ranking_policy(policy)
            views = dict(name=name, collection=DEFAULT_COLLECTION, policy=policy, kind=kind.sql_context)
            if batched:
                _BATCHED[con] = (loading.staged_batches(
                    con, qrels_file, runs, name, BATCH_SHARE, policy=policy,
                    extra_fields=extra_fields, encoding=encoding, kind=kind), views)
            else:
                loading.stage_files(con, qrels_file, runs, name, policy=policy,
                                    extra_fields=extra_fields, encoding=encoding, kind=kind)
                _views(con, views)
            connection.mark_throwaway(con)
            yield con
    finally:
        _BATCHED.pop(con, None)
        loading.release_staging(con)
        con.close()


def evaluate(con, name: str, measures: list[Measure], *, run_spec: str | None = "all",
             per_topic: bool = True, topics: str = "qrels", max_docs: int | None = None,
             rel_level: int | None = None, aggregate: str = "mean") -> Result:
    """The scores of the runs of ``run_spec`` staged in ``con`` (:func:`staged`) under the
    qrels ``name``: per topic (run_id, topic, measure, value), or the means over the topics
    with ``per_topic=False`` -- what loading the files into a warehouse and
    ``Warehouse.eval(measures, name, run_spec, store=False, ...)`` there give. Files
    staged in batches (``staged(batched=True)``) take ``run_spec`` "all" only."""
    options = dict(topics=topics, max_docs=max_docs, rel_level=rel_level)
    if con in _BATCHED:
        per, run_ids = _evaluate_batches(con, name, measures, run_spec, **options)
    else:
        run_ids = runsets.resolve(con, run_spec, qrels=name)
        per = evaluation.evaluate(con, name, measures, run_ids, store=False,
                                  collection=DEFAULT_COLLECTION, **options)
    if not len(per):
        note(evaluation.no_rows_reason(con, name, run_ids, topics, rel_level), "no rows")
    return per if per_topic else per.aggregate(aggregate)


def _views(con, views: dict) -> None:
    """The views of sql/files_in.sql, made in one round trip (they bind no parameter)."""
    con.execute(sql.statement("files_in.sql", "views", views["name"], views["collection"], views["policy"],
                              views["kind"]))


def runs_of_each(runs: list[dict], files: list) -> list[list[str]]:
    """The run ids of each of the run files ``files`` among the loaded runs ``runs`` (rows
    of view run_info), in file order."""
    return [sorted(r["run_id"] for r in runs
                   if os.path.abspath(str(r["source"])) == os.path.abspath(str(f))) for f in files]


def _evaluate_batches(con, name: str, measures: list[Measure], run_spec, **options):
    """The per-topic scores of every run of files staged in batches (:func:`staged`), ordered
    as :func:`evaluation.evaluate` orders them, and the run ids."""
    if run_spec != "all":
        raise ValueError("files evaluated in batches take run_spec 'all'")
    batches, views = _BATCHED.pop(con)
    kept = "irw_files_scores"
    run_ids: list[str] = []
    for number, (ids, again) in enumerate(batches):
        if number == 0:
            _views(con, views)
        if again:
            run_ids = []
        evaluation.compute(con, name, measures, ids, collection=DEFAULT_COLLECTION, **options)
        sql.run(con, "scores.sql", "keep", {}, kept, "irw_eval_result", again or number == 0)
        connection.engine_of(con).drop("irw_eval_result")
        run_ids += ids
    if not run_ids:
        return Result(list(evaluation.RESULT_COLUMNS), []), run_ids
    rows = con.execute(sql.statement("scores.sql", "ordered", kept)).fetchall()
    connection.engine_of(con).drop(kept)
    return Result(list(evaluation.RESULT_COLUMNS), rows), run_ids
