"""Loading qrels: staged, checked, and inserted in the load's final transaction; dropping
qrels."""

from __future__ import annotations

from typing import Iterable

from ... import catalogue, names, sql, state
from ...catalogue import DEFAULT_COLLECTION
from ...connection import transaction, without_order
from ...errors import IrwError
from ...judgment_kinds import DETAIL_TABLES, GRADED, KINDS, JudgmentKind
from ..base import invalidate_bases
from ..evaluation import refresh_scores
from .checks import _locate_qrels_problem
from .frames import _names
from .paths import expand_paths
from .reading import encoding_name
from .staging import _stage, stage_and_write

QRELS_COLUMNS = KINDS[GRADED].staged  # trec_eval's qrels: topic, docno, rel


@without_order
def load_qrels(con, patterns: Iterable[str], name: str, replace: bool = False,
               description: str | None = None, final=None, encoding: str = "utf-8",
               collection: str = DEFAULT_COLLECTION, implicit: bool = False,
               kind: JudgmentKind = KINDS[GRADED]) -> dict:
    """Load qrels files of judgment kind ``kind`` (irwarehouse.judgment_kinds) under ``name``
    into ``collection``; ``con``, ``final`` and ``implicit`` as for :func:`load_runs`."""
    files = expand_paths(patterns)
    return stage_and_write(
        con, lambda bar: _stage_qrels(con, files, name, encoding, kind),
        lambda comments: (_insert_qrels(con, files, name, replace, description, collection, kind),
                          comments)[1],
        final=final, implicit=implicit, collection=collection,
        after=lambda comments: {**_qrels_summary(con, name, collection, kind), "comments": comments})


def _qrels_summary(con, name: str, collection: str, kind: JudgmentKind = KINDS[GRADED]) -> dict:
    """What a load wrote: topics, graded judgments, relevant ones, and for a kind that keeps
    its lines in a detail table, the format, the table and its lines."""
    stats = sql.rows(con, "load.sql", "qrels_summary", {"name": name}, kind.sql_context)[0]
    detail = {"format": kind.name, "table": kind.detail, "lines": stats[3]} if kind.detail else {}
    return {"qrels": name, "collection": collection, "topics": stats[0], "judgments": stats[1],
            "relevant": stats[2], **detail}


def _stage_qrels(con, files: list[str], name: str, encoding: str,
                 kind: JudgmentKind = KINDS[GRADED]) -> int:
    """Read and check qrels files of judgment kind ``kind`` into the temporary table
    irw_staged_qrels of ``con``; returns the number of comment lines skipped."""
    if name is None or not str(name).strip():
        raise IrwError("a qrels needs a name (--name)")
    names.check(names.qrels_problem(name))
    sql.run(con, "load.sql", "staged_qrels", {}, kind.staged)
    comments = _stage(con, "irw_staged_qrels", files, len(kind.fields), kind.staged, None, encoding)
    bad, twice, lines = sql.rows(con, "load.sql", "check_qrels", {}, kind.sql_context)[0]
    if bad is not None or twice is not None:
        raise IrwError(_locate_qrels_problem(files, encoding_name(encoding), kind)
                       or f"{_names(files)[bad if bad is not None else twice]}: malformed qrels")
    if lines == 0:
        raise IrwError(f"{', '.join(_names(files))}: no qrels lines found")
    return comments


def _insert_qrels(con, files: list[str], name: str, replace: bool, description: str | None,
                  collection: str, kind: JudgmentKind = KINDS[GRADED]) -> None:
    info = next(iter(sql.rows(con, "load.sql", "qrels_entry", {"name": name})), None)
    if info and not replace:
        where = "" if info[1] == collection else f" (in collection {info[1]}; qrels names are unique in a warehouse)"
        raise IrwError(f"qrels {name!r} already exists{where}; use --replace to replace it")
    if info and info[1] != collection:
        raise IrwError(f"qrels {name!r} is in collection {info[1]}, not {collection}: a replaced "
                       "qrels stays in its collection (drop it first to move it: irw qrels drop NAME)")
    if info:  # replaced: the judgments go, the scores stored with them are recomputed
        catalogue.check_no_dependents(con, name)
        sql.run(con, "load.sql", "delete_qrels", {"name": name}, False, list(DETAIL_TABLES))
        invalidate_bases(con, name)
    sql.run(con, "load.sql", "insert_qrels", {"name": name}, kind.sql_context)
    catalogue.register_qrels(con, name, source=" ".join(_names(files)), kind="file", description=description,
                   collection=collection)
    sql.run(con, "load.sql", "set_judgments", {"name": name, "kind": kind.name})
    state.record_qrels(con, name)
    if info:
        refresh_scores(con, qrels=name)


def drop_qrels(con, name: str) -> None:
    """Remove a qrels, its cached base and its scores (refused while qrels or factor sets
    derived from it exist)."""
    with transaction(con):
        if not sql.rows(con, "load.sql", "qrels_entry", {"name": name}):
            known = catalogue.qrels_names(con)
            raise IrwError(f"qrels {name!r} does not exist; known: {', '.join(known) or 'none'}")
        catalogue.check_no_dependents(con, name)
        sql.run(con, "load.sql", "delete_qrels", {"name": name}, True, list(DETAIL_TABLES))
        invalidate_bases(con, name)
        state.record_qrels(con, name)
