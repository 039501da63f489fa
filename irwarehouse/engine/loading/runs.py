"""Loading runs: staged in batches, checked, ranked under a policy, and inserted in the
load's final transaction; dropping runs."""

from __future__ import annotations

import os
from typing import Iterable

from ... import catalogue, names, numbers, sql, state
from ...catalogue import DEFAULT_COLLECTION
from ...connection import memory_bytes, transaction, without_order
from ...errors import IrwError
from ...sql import run_script
from ..base import update_bases
from ..evaluation import refresh_scores
from .checks import _locate_run_problem
from .frames import Frame, _frames, _names
from .metadata import _load_meta
from .paths import expand_paths
from .reading import _lines, compression, encoding_name
from .staging import _attach_staging, _phase, _stage, stage_and_write

# Ranking policies (SPEC section 1), defined in sql/_ranking.sql: trec_eval is trec_eval
# 10.0's order (scores at full precision), trec_eval_9 that of trec_eval 9 and earlier and of
# pytrec_eval (scores as 32-bit floats: the 1999 official TREC results).
POLICIES = ("trec_eval", "trec_eval_9", "given", "score_then_rank")
# Other names of a policy, accepted where a policy is named and stored as the policy's own.
ORDER_ALIASES = {"trec_eval_10": "trec_eval"}
BATCH_SHARE = 1 / 8  # of the memory limit: the text of the run files staged at once
# Ranking only the judged documents (files in, scores out): counting the rows above each
# costs about what sorting the rankings does when it compares this many pairs per line.
COUNT_PAIRS = 2
FRAME_ROW_BYTES = 40  # a DataFrame row taken as a line of run text this long

# Staged columns: (name, field, SQL type of a number, its syntax).
RUN_COLUMNS = [("topic", 1, None, None), ("docno", 3, None, None), ("run_id", 6, None, None),
               ("given_rank", 4, "BIGINT", numbers.INTEGER_SYNTAX), ("score", 5, "DOUBLE", numbers.DECIMAL_SYNTAX)]


def ranking_policy(name: str) -> str:
    """The ranking policy ``name`` names (an alias taken as its policy); an unknown name is an
    error listing the valid ones."""
    policy = ORDER_ALIASES.get(name, name)
    if policy not in POLICIES:
        valid = ", ".join(POLICIES + tuple(f"{a} (= {p})" for a, p in ORDER_ALIASES.items()))
        raise IrwError(f"unknown ranking policy {name!r}; valid: {valid}")
    return policy


@without_order
def load_runs(con, patterns: Iterable[str], policy: str = "trec_eval", replace: bool = False,
              meta: str | None = None, extra_fields: bool = False, final=None,
              encoding: str = "utf-8", collection: str = DEFAULT_COLLECTION,
              implicit: bool = False) -> dict:
    """Load run files into ``collection``; returns a summary {collection, runs, lines, files,
    comments, replaced, refreshed, order: the ranking policy's own name[, meta]} (``comments``: comment lines skipped). ``implicit``: the collection was not named but chosen as the
    warehouse's only one (collection.for_load), which the final transaction checks again.

    The files are read, checked and ranked in temporary tables of ``con``, and moved into
    the warehouse in one final transaction. ``con`` is the warehouse's connection -- or,
    with ``final``, a staging connection and ``final(rows)`` a context manager that attaches the
    warehouse to it for writing about ``rows`` rows (connection.Staging.attach): the warehouse
    is then locked only for the final transaction, or not at all when the load writes into a
    copy of it (connection.swapped), and readers can use it while the files are read."""
    files = expand_paths(patterns, runs=True, encoding=encoding)

    def write(comments: int) -> dict:
        summary = _insert_runs(con, files, policy, replace, collection)
        summary["comments"] = comments
        if meta:
            summary["meta"] = _load_meta(con, meta, collection)
        return summary

    return stage_and_write(
        con, lambda bar: _stage_runs(con, files, policy, extra_fields, encoding, collection, bar),
        write, final=final, implicit=implicit, collection=collection, progress=files)


def _stage_runs(con, files: list[str], policy: str, extra_fields: bool, encoding: str,
                collection: str, bar=None, judged: str | None = None, lines_required: bool = True) -> int:
    """Read, check and rank run files in tables of ``con`` (irw_staging.irw_ranked, and the
    temporary irw_staged_topics, irw_staged_files, irw_staged_parts), ready for
    :func:`_insert_runs`. Returns the number of comment lines skipped. ``judged`` (files in,
    scores out, :func:`stage_files`): a relation of judgments (topic, docno); irw_ranked then
    keeps only the ranked rows of judged documents, as a view ranking them within the query
    that reads it (when the files are one batch; every row, stored, otherwise), and no
    fingerprints are taken (irw_staged_parts): nothing is written to a warehouse.

    The files are taken in batches of about a memory budget's worth of text
    (:func:`_batches`): each is read, checked and ranked on its own, and its ranked rows are
    appended to irw_staging.irw_ranked -- in memory when the files are one batch, else in
    a staging database file (:func:`_attach_staging`), where they take about 27 bytes a
    line on disk and, once written, no memory. So the memory a load needs is bounded by
    the batch, not the archive, and a batch's checking and sorting do not spill. A run
    whose lines are in files of several batches is checked for duplicates and ranked again
    over all its lines at the end. ``lines_required``: files without a run line are an
    error (files in, scores out in batches checks that over all of its batches)."""
    policy = ranking_policy(policy)
    batches = _batches(con, files)
    fingerprints = judged is None
    if len(batches) > 1:  # a run's lines may be in several batches, ranked again over all of them
        judged = None
    # In memory only when the one batch fits its share of the memory limit: DuckDB (1.5 and
    # 2.0) can corrupt the rows of an attached in-memory database whose blocks it evicted
    # under memory pressure when they are read back into the warehouse, where the rows of a
    # staging file are read back intact (tests/test_loading.py, the load larger than the
    # memory limit). Files in, scores out with one batch stores no rows there (irw_ranked is
    # a view over the batch's lines) and writes no warehouse.
    _attach_staging(con, len(batches) > 1 or (judged is None and _text_size_of(batches[0]) > _budget(con)))
    run_script(con, "stage_runs.sql")
    comments = 0
    for number, batch in enumerate(batches):
        if bar is not None and number:
            bar.label = "reading runs"
        sql.run(con, "load.sql", "staged_runs")
        comments += _stage(con, "irw_staged", batch, 6, RUN_COLUMNS, bar.update if bar else None,
                           encoding)
        _phase(bar, "checking", advance=False)
        _check_runs(con, batch, extra_fields, encoding)
        if bar is not None:
            bar.label = "ranking"
        start = sql.rows(con, "load.sql", "count", {}, "irw_staging.irw_ranked")[0][0] if fingerprints else 0
        by_count = False
        if judged:  # few judged documents per ranking: their ranks counted, not sorted
            pairs, lines = sql.rows(con, "load.sql", "pairs_to_count", {}, judged)[0]
            by_count = pairs <= COUNT_PAIRS * max(lines, 1)
        run_script(con, "rank_runs.sql", {"batch": number, "files": _names(batch), "start": start,
                                             "collection": collection}, policy=policy,
                   judged=judged, sums=fingerprints, by_count=by_count)
    if lines_required and sql.rows(con, "load.sql", "count", {}, "irw_staged_files")[0][0] == 0:
        raise no_run_lines(files)
    across = [r[0] for r in sql.rows(con, "load.sql", "runs_across_batches")] if len(batches) > 1 else []
    if across:
        if sql.rows(con, "load.sql", "docno_twice_across", {"ids": across}):
            _run_problem(files, extra_fields, encoding, "a docno twice in a run's topic")
        run_script(con, "rank_runs_across.sql", {"ids": across, "collection": collection},
                      policy=policy)
    _check_run_ids(con, files, encoding)
    _phase(bar, "ranking")
    if fingerprints:
        run_script(con, "run_parts_staged.sql", {"policy": policy, "ids": _staged_run_ids(con),
                                                    "collection": collection})
    return comments


def no_run_lines(files: list[str]) -> IrwError:
    """The error for run files that hold no run line."""
    return IrwError(f"{', '.join(_names(files))}: no run lines found")


def _batches(con, files: list[str], share: float | None = None) -> list[list[str]]:
    """``files`` in consecutive groups of about ``share`` (default BATCH_SHARE) of DuckDB's
    memory limit in text (:func:`_text_size`); a file is never split, and all of them are
    one group when they fit."""
    budget = memory_bytes(con) * (BATCH_SHARE if share is None else share)
    batches: list[list[str]] = [[]]
    size = 0
    for path in files:
        text = _text_size(path)
        if batches[-1] and size + text > budget:
            batches.append([])
            size = 0
        batches[-1].append(path)
        size += text
    return batches


def _budget(con) -> float:
    """The text of run files staged at once: BATCH_SHARE of DuckDB's memory limit."""
    return memory_bytes(con) * BATCH_SHARE


def _text_size_of(paths) -> int:
    return sum(_text_size(path) for path in paths)


def _text_size(path) -> int:
    """About how many bytes of text a file holds: a gzip file's last four bytes give its size
    uncompressed (modulo 4 GiB); bzip2 and xz files are taken as 6 times their size; a
    DataFrame as FRAME_ROW_BYTES a row."""
    if isinstance(path, Frame):
        return len(path.frame) * FRAME_ROW_BYTES
    size = os.path.getsize(path)
    kind = compression(path)
    if kind == "gzip" and size >= 18:
        with open(path, "rb") as fh:
            fh.seek(-4, os.SEEK_END)
            return max(int.from_bytes(fh.read(4), "little"), size)
    return size * (6 if kind else 1)


def _check_runs(con, files: list[str], extra_fields: bool, encoding: str = "utf-8") -> None:
    """Check a batch's staged lines (irw_staged, read from ``files``): the fields, and a
    docno twice in a (run, topic); leaves the batch's ranking lengths in irw_batch_topics."""
    bad = sql.rows(con, "load.sql", "bad_run_line", {}, extra_fields)
    if not bad:
        # ranking lengths, and duplicates: a docno twice in a (run, topic)
        sql.run(con, "load.sql", "batch_topics")
        bad = sql.rows(con, "load.sql", "docno_twice_in_batch")
    if bad:
        _run_problem(files, extra_fields, encoding, _names(files)[bad[0][0]])


def _run_problem(files: list[str], extra_fields: bool, encoding: str, where: str):
    """Raise the error for what the checks found wrong (``where``: the file, or what): the
    file, line and problem, found by reading the files again in Python."""
    found = _locate_run_problem(files, extra_fields, encoding_name(encoding))
    raise IrwError(found or f"{where}: malformed run data")


def _check_run_ids(con, files: list[str], encoding: str) -> None:
    """Every run id loaded can be addressed by a run spec (irwarehouse.names); else an
    error naming the first line that gives a run such an id."""
    for run_id in _staged_run_ids(con):
        problem = names.run_id_problem(run_id)
        if problem:
            where = next((f"{frame}, row {row}" for frame in _frames(files)
                          for row in [frame.run_row(run_id)] if row is not None), None)
            where = where or next((f"{path}, line {number}" for path in files
                                   if not isinstance(path, Frame)
                                   for number, fields in _lines(path, encoding_name(encoding))
                                   if len(fields) > 5 and fields[5] == run_id), ", ".join(_names(files)))
            raise IrwError(f"{where}: {problem}")


def _staged_run_ids(con) -> list[str]:
    return [r[0] for r in sql.rows(con, "load.sql", "staged_run_ids")]


def _insert_runs(con, files: list[str], policy: str, replace: bool, collection: str) -> dict:
    policy = ranking_policy(policy)
    run_ids = _staged_run_ids(con)
    existing = [r[0] for r in sql.rows(con, "load.sql", "loaded_among", {"ids": run_ids, "c": collection})]
    if existing and not replace:
        raise IrwError(_already_loaded(con, existing, collection))
    _delete_runs(con, collection, existing, scores=False)
    run_script(con, "load_runs.sql", {"policy": policy, "collection": collection})
    update_bases(con, collection, run_ids)
    state.record_runs(con, collection, run_ids, parts="irw_staged_parts")
    # the scores stored for replaced runs are recomputed, not dropped: they stay current
    refreshed = refresh_scores(con, runs=(collection, existing)) if existing else 0
    lines = sql.rows(con, "load.sql", "staged_lines")[0][0]
    return {"collection": collection, "runs": run_ids, "lines": lines, "files": len(files),
            "replaced": existing, "refreshed": refreshed, "order": policy}


def _already_loaded(con, run_ids: list[str], collection: str, shown: int = 10) -> str:
    """The error for runs loaded before: each run id with the file(s) of this load it is in."""
    rows = sql.rows(con, "load.sql", "files_of_runs", {"ids": run_ids})
    listed = "; ".join(f"{run_id} (in {files})" for run_id, files in rows[:shown])
    more = f"; and {len(rows) - shown} more" if len(rows) > shown else ""
    where = "" if catalogue.single_collection(con) else f" in collection {collection}"
    return f"run(s) already loaded{where}: {listed}{more}; use --replace to replace them"


def _delete_runs(con, collection: str, run_ids: list[str], scores: bool = True) -> None:
    """Remove runs' rankings, loading records and (with ``scores``) scores; their metadata
    stays."""
    if run_ids:
        sql.run(con, "load.sql", "delete_runs", {"ids": run_ids, "c": collection}, scores)


def drop_runs(con, run_ids: list[str], collection: str) -> None:
    """Remove runs of ``collection`` with their scores and their rows of the materialized
    bases. Their metadata (run_meta) stays, for a later load of the same run ids."""
    with transaction(con):
        _delete_runs(con, collection, list(run_ids))
        update_bases(con, collection, list(run_ids))
        state.record_runs(con, collection, list(run_ids))
