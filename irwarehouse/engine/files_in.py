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
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Iterable

from .. import connection, runsets, sql
from ..catalogue import DEFAULT_COLLECTION
from ..errors import IrwError, note
from ..measures import Measure
from ..result import Result
from . import evaluation, loading

# What evaluate() takes of Warehouse.eval's options.
OPTIONS = ("per_topic", "topics", "max_docs", "rel_level", "aggregate")


@contextmanager
def staged(qrels_file: str, runs: Iterable[str], *, name: str, policy: str = "trec_eval",
           extra_fields: bool = False, encoding: str = "utf-8", memory: str | None = None):
    """An in-memory DuckDB connection holding the qrels file ``qrels_file`` (named ``name``)
    and the runs of the files ``runs`` (of the collection DEFAULT_COLLECTION) as views named
    as the warehouse's tables (``qrels``, ``qrels_info``, ``runs``, ``run_topics``,
    ``run_loads``, ``run_info``), marked a throw-away warehouse (the engine computes the base
    relation within its query); closed, with its staging file, when the block ends.
    ``memory``: DuckDB's memory limit (connection.memory_limit)."""
    con = connection.connect(":memory:", memory=memory)
    try:
        with connection.unordered(con):
            loading.stage_files(con, qrels_file, runs, name, policy=policy,
                                extra_fields=extra_fields, encoding=encoding)
            sql.run_script(con, "files_in.sql", name=name, collection=DEFAULT_COLLECTION,
                           policy=policy)
            connection.mark_throwaway(con)
            yield con
    finally:
        loading.release_staging(con)
        con.close()


def evaluate(con, name: str, measures: list[Measure], *, run_spec: str | None = "all",
             per_topic: bool = True, topics: str = "qrels", max_docs: int | None = None,
             rel_level: int | None = None, aggregate: str = "mean") -> Result:
    """The scores of the runs of ``run_spec`` staged in ``con`` (:func:`staged`) under the
    qrels ``name``: per topic (run_id, topic, measure, value), or the means over the topics
    with ``per_topic=False`` -- what loading the files into a warehouse and
    ``Warehouse.eval(measures, name, run_spec, store=False, ...)`` there give."""
    run_ids = runsets.resolve(con, run_spec, qrels=name)
    per = evaluation.evaluate(con, name, measures, run_ids, topics=topics, max_docs=max_docs,
                              rel_level=rel_level, store=False, collection=DEFAULT_COLLECTION)
    if not len(per):
        note(evaluation.no_rows_reason(con, name, run_ids, topics, rel_level), "no rows")
    return per if per_topic else per.aggregate(aggregate)


def runs_of_each(runs: list[dict], files: list) -> list[list[str]]:
    """The run ids of each of the run files ``files`` among the loaded runs ``runs`` (rows
    of view run_info), in file order."""
    return [sorted(r["run_id"] for r in runs
                   if os.path.abspath(str(r["source"])) == os.path.abspath(str(f))) for f in files]
