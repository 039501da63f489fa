"""Test collections: runs and qrels belong to one, and a run is identified by (collection,
run id), so one warehouse holds many collections side by side (TREC-7, TREC-8, a lab's own)
and the same run id may exist in several.

A warehouse loaded without ``--collection`` has one collection, ``default``; every command
then works as if collections did not exist. A command over a qrels uses the runs of the
qrels's collection unless it names another (:func:`irwarehouse.runsets.collection_for`).
"""

from __future__ import annotations

from pathlib import Path

from .db import DEFAULT_COLLECTION
from . import names as names_
from .errors import IrwError


def names(con, with_runs: bool = False) -> list[str]:
    """The collections of the warehouse (those with runs only, with ``with_runs``)."""
    sql = ("SELECT DISTINCT collection FROM run_loads" if with_runs else
           "SELECT collection FROM qrels_info UNION SELECT collection FROM run_loads")
    return sorted(r[0] for r in con.execute(sql).fetchall())


def single(con) -> bool:
    """Does the warehouse hold at most one collection (so that messages need not name it)?"""
    return len(names(con)) <= 1


def check_name(name: str) -> str:
    problem = names_.collection_problem(name)
    if problem:
        raise IrwError(f"bad collection name: {problem}")
    return str(name)


def only(con, collection: str | None = None, new_ok: bool = False) -> str:
    """``collection`` when named (it must exist, unless ``new_ok``); else the warehouse's only
    collection, or ``default`` in an empty warehouse; an error when there are several."""
    known = names(con)
    if collection is not None:
        check_name(collection)
        if collection not in known and not new_ok:
            raise IrwError(f"no collection {collection!r}; collections: {', '.join(known) or 'none'}")
        return collection
    if not known:
        return DEFAULT_COLLECTION
    if len(known) > 1:
        raise IrwError(f"this warehouse holds several collections ({', '.join(known)}): name one "
                       "with --collection")
    return known[0]


def check_still_only(con, collection: str) -> None:
    """In a load's final transaction: the collection chosen, unnamed, before the files were
    read is still the warehouse's only one."""
    now = only(con)
    if now != collection:  # pragma: no cover - another process loaded meanwhile
        raise IrwError(f"the warehouse's collection changed while loading ({now}, not {collection}): "
                       "name the collection with --collection")


def for_load(stage, collection: str | None) -> tuple[str, bool]:
    """The collection a load writes to, and whether it was chosen rather than named: the named
    one; else the warehouse's only collection (read from the file, read-only, before the
    files are staged), or ``default`` for a new warehouse."""
    from contextlib import closing

    from . import db

    if collection is not None:
        return check_name(collection), False
    if stage.attach is None:  # an in-memory warehouse: the staging connection is the warehouse
        return only(stage.con), True
    if not Path(stage.path).exists():
        return DEFAULT_COLLECTION, True
    try:
        with closing(db.connect(stage.path, read_only=True, wait=stage.wait)) as con:
            return only(con), True
    except IrwError as exc:
        if "older irwarehouse" in str(exc):  # upgraded by the load: one collection, 'default'
            return DEFAULT_COLLECTION, True
        raise


def catalogue(con):
    """The collections with their loaded qrels, runs, topics and judgments (view collections)."""
    return con.execute("SELECT * FROM collections ORDER BY collection").df()
