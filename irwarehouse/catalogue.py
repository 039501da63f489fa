"""The catalogue: which test collections, qrels and runs a warehouse holds.

Runs and qrels belong to a test collection, and a run is identified by (collection, run
id), so one warehouse holds many collections side by side (TREC-7, TREC-8, a lab's own) and
the same run id may exist in several. A warehouse loaded without ``--collection`` has one
collection, ``default``; every command then works as if collections did not exist. A command
over a qrels uses the runs of the qrels's collection unless it names another.

The look-ups are written against the engine protocol (irwarehouse.connection.Engine), so the
Spark engine answers them from the same tables: every function takes an engine or a DuckDB
connection (``source``).
"""

from __future__ import annotations

import fnmatch
from contextlib import closing
from pathlib import Path
from typing import Iterable

from . import names as rules
from . import sql
from .connection import SCHEMA_VERSION, connect, engine_of, stored_meta
from .errors import IrwError, shown
from .judgment_kinds import GRADED, refusal, serves
from .systems import Systems

DEFAULT_COLLECTION = "default"


def _rows(source, sql: str, params=None) -> list[tuple]:
    return engine_of(source).rows(sql, params)


def _list(values, limit: int = 30) -> str:
    values = list(values)
    if len(values) > limit:
        return ", ".join(values[:limit]) + f", ... ({len(values) - limit} more)"
    return ", ".join(values) or "none"


# ------------------------------------------------------------------------ collections

def collection_names(source, with_runs: bool = False) -> list[str]:
    """The collections of the warehouse (those with runs only, with ``with_runs``)."""
    sql = ("SELECT DISTINCT collection FROM run_loads" if with_runs else
           "SELECT collection FROM qrels_info UNION SELECT collection FROM run_loads")
    return sorted(r[0] for r in _rows(source, sql))


def single_collection(source) -> bool:
    """Does the warehouse hold at most one collection (so that messages need not name it)?"""
    return len(collection_names(source)) <= 1


def check_collection_name(name: str) -> str:
    problem = rules.collection_problem(name)
    if problem:
        raise IrwError(f"bad collection name: {problem}")
    return str(name)


def only_collection(source, collection: str | None = None, new_ok: bool = False) -> str:
    """``collection`` when named (it must exist, unless ``new_ok``); else the warehouse's only
    collection, or ``default`` in an empty warehouse; an error when there are several."""
    known = collection_names(source)
    if collection is not None:
        check_collection_name(collection)
        if collection not in known and not new_ok:
            raise IrwError(f"no collection {collection!r}; collections: {', '.join(known) or 'none'}")
        return collection
    if not known:
        return DEFAULT_COLLECTION
    if len(known) > 1:
        raise IrwError(f"this warehouse holds several collections ({', '.join(known)}): name one "
                       "with --collection")
    return known[0]


def check_still_only(source, collection: str) -> None:
    """In a load's final transaction: the collection chosen, unnamed, before the files were
    read is still the warehouse's only one."""
    now = only_collection(source)
    if now != collection:  # pragma: no cover - another process loaded meanwhile
        raise IrwError(f"the warehouse's collection changed while loading ({now}, not {collection}): "
                       "name the collection with --collection")


def collection_for_load(path: str, con, collection: str | None, wait: float | None = None) -> tuple[str, bool]:
    """The collection a load writes to, and whether it was chosen rather than named: the named
    one; else the warehouse's only collection (``con`` when the warehouse is in memory, else
    the file ``path`` read read-only before the files are staged), or ``default`` for a new
    warehouse."""
    if collection is not None:
        return check_collection_name(collection), False
    if con is not None:
        return only_collection(con), True
    if not Path(path).exists():
        return DEFAULT_COLLECTION, True
    with closing(connect(path, read_only=True, wait=wait)) as reader:
        if stored_meta(reader).get("schema_version") != SCHEMA_VERSION:
            # an empty database (no version: a new warehouse), or one upgraded by the load:
            # one collection, 'default'
            return DEFAULT_COLLECTION, True
        return only_collection(reader), True


def collections_frame(source):
    """The view collections (its qrels a comma-separated list)."""
    return engine_of(source).relation("SELECT * FROM collections ORDER BY collection")


# ------------------------------------------------------------------------ qrels

def qrels_names(source) -> list[str]:
    return [r[0] for r in _rows(source, "SELECT qrels FROM qrels_info ORDER BY qrels")]


def qrels_info(source, qrels: str) -> tuple[str, str]:
    """(name, topic_qrels) of an existing qrels, or an error listing the known ones."""
    row = _rows(source, "SELECT qrels, topic_qrels FROM qrels_info WHERE qrels = ?", [qrels])
    if not row:
        known = qrels_names(source)
        if not known:
            raise IrwError("no qrels are loaded: use `irw load qrels FILE --name NAME` first")
        raise IrwError(f"unknown qrels {shown(qrels)}; known: {_list(known)}")
    return row[0][0], row[0][1]


def judgments_of(source, qrels: str) -> str:
    """The judgment kind a qrels was loaded as (qrels_info.judgments; a derived qrels holds
    the graded rows only: trec)."""
    row = _rows(source, "SELECT judgments FROM qrels_info WHERE qrels = ?", [qrels])
    return (row[0][0] if row else None) or GRADED


def check_serves(source, qrels: str, measures) -> None:
    """Refuse, in one line, a measure that reads a kind of judgments the qrels does not hold
    (MeasureDef.reads, judgment_kinds.KINDS[...].serves)."""
    held = judgments_of(source, qrels)
    for measure in measures:
        reads = measure.definition.reads
        if not serves(held, reads):
            raise IrwError(refusal(str(measure), reads, qrels, held))


def collection_of(source, qrels: str, collection: str | None = None) -> str:
    """The collection whose runs a command over ``qrels`` uses: ``collection`` when given (it
    must hold runs), else the qrels's own."""
    if collection is None:
        row = _rows(source, "SELECT collection FROM qrels_info WHERE qrels = ?", [qrels])
        if not row:
            qrels_info(source, qrels)  # the error naming the known qrels
        return row[0][0]
    if not _rows(source, "SELECT 1 FROM run_loads WHERE collection = ? LIMIT 1", [collection]):
        raise IrwError(f"no runs are loaded in collection {collection!r}; collections with runs: "
                       f"{', '.join(collection_names(source, with_runs=True)) or 'none'}")
    return collection


def default_qrels(source, reads: Iterable[str] = (GRADED,)) -> str:
    """The qrels to use when none is named: the only one loaded from a file that serves
    measures reading every kind in ``reads`` (default: graded judgments, which pools,
    statistics and most measures read) -- a preference file loaded beside graded qrels does
    not make ``irw eval -m AP`` ask which."""
    rows = _rows(source, "SELECT qrels, judgments FROM qrels_info WHERE parent IS NULL ORDER BY created_at")
    if not rows:
        raise IrwError("no qrels are loaded: use `irw load qrels FILE --name NAME` first")
    reads = sorted(set(reads))
    names = [name for name, held in rows if all(serves(held, r) for r in reads)]
    if not names and len(rows) == 1:  # the only qrels: what it cannot serve is said by the command
        return rows[0][0]
    if not names:
        raise IrwError(f"no qrels loaded holds {' and '.join(reads)} judgments (loaded: "
                       f"{', '.join(f'{n} ({h or GRADED})' for n, h in rows)}): load them with "
                       "irw load qrels FILE --name NAME --format KIND, or choose one with --qrels")
    if len(names) > 1:
        raise IrwError(f"several qrels are loaded ({', '.join(names)}): choose one with --qrels")
    return names[0]


def several(qrels) -> bool:
    """Does ``qrels`` name several qrels (a list, or names and patterns with commas)?"""
    return qrels is not None and (not isinstance(qrels, str)
                                  or any(c in qrels for c in "," + rules.PATTERN_CHARS))


def expand_qrels(source, qrels: str | Iterable[str] | None) -> list[str]:
    """Several qrels: a list of names, or a string of comma-separated names and glob patterns
    (``"trec8-lo-*"``), each of which must match; None: the only loaded qrels."""
    if qrels is None:
        return [default_qrels(source)]
    items = [i.strip() for i in qrels.split(",")] if isinstance(qrels, str) else list(qrels)
    known = qrels_names(source)
    out: list[str] = []
    for item in items:
        if not item:
            continue
        matched = fnmatch.filter(known, item) if any(c in item for c in rules.PATTERN_CHARS) else [item]
        if not matched:
            raise IrwError(f"no qrels matches {shown(item)}; known: {_list(known)}")
        out += [m for m in matched if m not in out]
    if not out:
        raise IrwError(f"no qrels named in {shown(qrels)}")
    return out


def register_qrels(con, name: str, source: str | None, kind: str, parent: str | None = None,
                   params: str | None = None, description: str | None = None,
                   own_topics: bool = False, collection: str | None = None) -> None:
    """Add a qrels to the catalogue. A derived qrels belongs to its parent's collection and
    takes its topic set from its parent's (so that scores with parent and child are
    comparable) unless ``own_topics`` (a topic split defines its own). A loaded qrels belongs
    to ``collection`` (default: the warehouse's only collection)."""
    rules.check(rules.qrels_problem(name))
    topic_qrels = name
    if parent is not None:
        row = con.execute("SELECT topic_qrels, collection FROM qrels_info WHERE qrels = ?",
                          [parent]).fetchall()
        if not row:
            raise IrwError(f"qrels {parent!r} does not exist")
        if not own_topics:
            topic_qrels = row[0][0]
        collection = row[0][1]
    elif collection is None:
        collection = only_collection(con)
    sql.run(con, "catalogue.sql", "register_qrels",
            {"name": name, "collection": collection, "source": source, "parent": parent, "kind": kind,
             "params": params, "description": description, "topic_qrels": topic_qrels})


def check_no_dependents(source, name: str) -> None:
    """A qrels that derived qrels or factor sets were made from is neither dropped nor
    replaced: they would silently stand for judgments that are gone."""
    children = [r[0] for r in _rows(source, "SELECT qrels FROM qrels_info WHERE parent = ? ORDER BY qrels",
                                    [name])]
    if children:
        raise IrwError(f"qrels {name!r} has derived qrels ({', '.join(children)}); "
                       "drop them first (irw qrels drop NAME)")
    sets = [r[0] for r in _rows(source, "SELECT factors FROM std_factor_sets WHERE qrels = ? ORDER BY factors",
                                [name])]
    if sets:
        raise IrwError(f"qrels {name!r} has standardization factor sets ({', '.join(sets)}); "
                       "drop them first (irw standardize drop NAME)")


# ------------------------------------------------------------------------ runs

def loaded_runs(source, collection: str) -> list[str]:
    return [r[0] for r in _rows(source, "SELECT run_id FROM run_loads WHERE collection = ? ORDER BY run_id",
                                [collection])]


def default_pool_runs(source, collection: str) -> str:
    """The runs that formed the judgment pool: ``pooled`` when the metadata says, else ``all``."""
    pooled = _rows(source, "SELECT count(*) FROM run_info WHERE pooled AND collection = ?", [collection])
    return "pooled" if pooled[0][0] else "all"


def systems_of(source, run_ids: list[str], collection: str):
    """The systems of the runs ``run_ids`` of ``collection`` (irwarehouse.systems.Systems:
    run_meta.system; a run without one is its own system)."""
    rows = _rows(source, "SELECT run_id, system FROM run_info WHERE collection = ? AND system IS NOT NULL",
                 [collection])
    return Systems.of(run_ids, dict(rows))


def teams_of(source, run_ids: list[str], collection: str) -> dict[str, list[str]]:
    """team -> its runs among ``run_ids`` of ``collection`` (a run without a team is its own
    team)."""
    wanted = set(run_ids)
    rows = _rows(source, "SELECT coalesce(team, run_id), run_id FROM run_info WHERE collection = ? "
                         "ORDER BY 1, 2", [collection])
    teams: dict[str, list[str]] = {}
    for team, run_id in rows:
        if run_id in wanted:
            teams.setdefault(team, []).append(run_id)
    return teams


# The run_meta columns that identify a run, not a group of runs.
_RUN_KEYS = ("collection", "run_id")


def group_columns(source) -> list[str]:
    """The metadata columns runs can be grouped by (those of run_meta but its keys: team,
    kind, pooled, and whatever columns the warehouse's run_meta has besides)."""
    return [c for c in engine_of(source).read("SELECT * FROM run_meta LIMIT 0").columns if c not in _RUN_KEYS]


def groups_of(source, run_ids: list[str], collection: str, by: str = "team") -> dict[str, str]:
    """run id -> its group, the value of the metadata column ``by`` (team, kind, pooled, ...),
    for ``run_ids`` of ``collection``; a run without a value is a group of its own (its run
    id), as a run without a team is its own team (:func:`teams_of`)."""
    columns = group_columns(source)
    if by not in columns:
        raise IrwError(f"runs cannot be grouped by {shown(by)}: the run metadata columns are "
                       f"{', '.join(columns)}")
    engine = engine_of(source)
    value = str(sql.module("_dialect.sql", engine.dialect).cast(f"m.{sql.quote_ident(by, engine.dialect)}", "VARCHAR"))
    rows = engine.rows(f"SELECT l.run_id, {value} FROM run_loads l LEFT JOIN run_meta m "
                       "ON m.collection = l.collection AND m.run_id = l.run_id WHERE l.collection = ?",
                       [collection])
    found = {run_id: group for run_id, group in rows}
    return {r: found.get(r) if found.get(r) is not None else r for r in run_ids}
