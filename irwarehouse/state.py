"""Caches that cannot lie: what the warehouse's derived data was built from, and bringing it
back in line after changes made outside irw.

irw derives data from the tables ``runs`` and ``qrels``: the ranks and ranking lengths of a
run (``runs.rank``, ``run_topics``), the materialized base relation (``irw_base``) and the
stored scores (``scores``). Anyone may change the tables with plain SQL. So irw records a
fingerprint of what it last wrote (``irw_state``, ``irw_run_state``, ``irw_base_built``; the
macros in ``sql/state.sql``) and compares it with the tables:

- The runs tables (runs, run_topics, run_loads) have a version, ``irw_runs_fp()``, taken
  without reading ``runs``: every row any client inserts or updates in ``runs`` draws a
  number from the sequence ``irw_runs_writes`` (the table's check, sql/schema.sql), so the
  number last drawn and the count of rows change with every write; run_topics and run_loads
  are small and hashed. irw records the version after each of its writes.
- A qrels's fingerprint is a hash of its judgments.
- A command that writes first brings everything in line (irwarehouse.schema.reconcile): runs
  changed outside irw (found by comparing each run's rows with ``irw_run_state``) are ranked
  again under their policy, with their ranking lengths, base rows and stored scores; a
  changed qrels's base is rebuilt on demand and its stored scores recomputed.
- A command that only reads (it cannot write) computes from the tables instead of the caches
  where they are out of date (:func:`source`), and says so.
- The measure macros (schema ``measure``) make the same choice in SQL (``sql/_state.sql``),
  on every call.

Within one connection the check is made once (:func:`session_runs_fp`): while irw holds the
file, nobody else can write it, and irw records its own writes.
"""

from __future__ import annotations

from . import sql
from .connection import has_table
from .errors import IrwError


def _one(con, sql: str, params=None):
    """The first row of a query, the result read to its end (so that the connection is free
    for DuckDB's relational API afterwards)."""
    rows = con.execute(sql, params or []).fetchall()
    return rows[0] if rows else None


def runs_fp(con) -> int | None:
    """The version of runs, run_topics and run_loads as they are now (None: runs does not
    count its writes, and equals no recorded version)."""
    return _one(con, "SELECT irw_runs_fp()")[0]


def set_session(con, fp: int) -> None:
    """Take ``fp`` as the fingerprint of the runs tables for this connection (checked by the
    caller: :func:`session_runs_fp` then returns it)."""
    sql.run(con, "caches.sql", "set_session", {"fp": fp})


def session_runs_fp(con) -> int | None:
    """The fingerprint of the runs tables as checked when this connection was opened (or as
    irw left them since); computed if it was not."""
    if has_table(con, "irw_session", temporary=True):
        return _one(con, "SELECT runs_fp FROM temp.irw_session")[0]
    fp = runs_fp(con)
    set_session(con, fp)
    return fp


def recorded_runs_fp(con) -> int | None:
    """The version of runs, run_topics and run_loads irw recorded after its last write."""
    return _one(con, "SELECT irw_recorded_runs_fp()")[0]


def runs_current(con) -> bool:
    """Are the stored ranks and ranking lengths those irw computed (runs unchanged since)?"""
    return recorded_runs_fp(con) == session_runs_fp(con)


def record_runs(con, collection: str | None = None, run_ids: list[str] | None = None,
                parts: str | None = None) -> None:
    """After irw wrote runs (``run_ids`` of ``collection``; None: all runs): record what it
    wrote of them (from runs and run_topics, or from ``parts``, a table a load computed them
    in beforehand: sql/run_parts_staged.sql), and that every materialized base -- kept in
    line by irw -- stands for the tables as they now are."""
    if collection is None:
        groups = con.execute("SELECT collection, list(run_id) FROM run_loads GROUP BY collection").fetchall()
    else:
        groups = [(collection, list(run_ids or []))]
    sql.run(con, "caches.sql", "forget_runs", {}, collection is None)
    for c, ids in groups:
        if ids:
            sql.run_script(con, "record_runs.sql", {"ids": list(ids), "collection": c}, parts=parts)
    record_runs_version(con)


def record_runs_version(con) -> None:
    """Record the runs tables' version as they now are as irw's own, and that every
    materialized base stands for them: after irw wrote them, or found that a change the
    version shows left every run as irw recorded it (a write that changed nothing)."""
    fp = runs_fp(con)
    if fp is None:
        raise IrwError("the table runs does not count its writes (it was replaced outside irw); "
                       "open the warehouse for writing (irw refresh) to restore it")
    sql.run(con, "caches.sql", "record_runs_fp", {"fp": fp})
    sql.run(con, "caches.sql", "bases_current", {"fp": fp})
    set_session(con, fp)


def record_qrels(con, qrels: str | list[str]) -> None:
    """After irw wrote the judgments of ``qrels`` (a name or a list; or removed them): their
    fingerprints and, for a derived qrels that is a subset of its root, the root's judgments
    it lacks (:func:`recorded_subsets`) -- anew for every derived qrels of a loaded one."""
    names = [qrels] if isinstance(qrels, str) else list(qrels)
    present = []
    for name in names:
        gone = _one(con, "SELECT 1 FROM qrels_info WHERE qrels = ?", [name]) is None
        sql.run(con, "caches.sql", "record_qrels", {"q": name}, gone)
        if not gone:
            present.append(name)
    derived = _by_root(con, present)
    for root in [r for r in derived if r in derived[r]]:  # a loaded qrels: its derived ones anew
        derived[root] += [r[0] for r in sql.rows(con, "caches.sql", "descendants", {"q": root})]
    for root, group in derived.items():
        _record_derived(con, root, [q for q in dict.fromkeys(group) if q != root])


def _record_derived(con, root: str, qrels: list[str]) -> None:
    """Record what each qrels of ``qrels`` (derived from the loaded qrels ``root``) lacks of it."""
    if qrels:
        sql.run(con, "caches.sql", "record_derived", {"qs": qrels, "root": root})


def record_unrecorded_derived(con) -> None:
    """Record what each derived qrels lacks of its root where irw has no such record yet (a
    warehouse written by an older irw), for the qrels unchanged since irw recorded them."""
    names = [r[0] for r in sql.rows(con, "caches.sql", "unrecorded_derived")]
    for root, group in _by_root(con, names).items():
        _record_derived(con, root, group)


def _by_root(con, names: list[str]) -> dict[str, list[str]]:
    """``names`` grouped by their root (:func:`root_qrels_of`)."""
    groups: dict[str, list[str]] = {}
    for name, root in root_qrels_of(con, names).items():
        groups.setdefault(root, []).append(name)
    return groups


def recorded_subsets(con, qrels: list[str], root: str) -> set[str]:
    """The qrels of ``qrels`` whose judgments are those of the loaded qrels ``root`` less the
    judgments irw recorded as removed (irw_derived_removed): both as they were when it
    recorded them (their fingerprints, taken now)."""
    if not has_table(con, "irw_derived_built"):  # a warehouse from before the records, read-only
        return set()
    return {r[0] for r in sql.rows(con, "caches.sql", "recorded_subsets", {"qrels": list(qrels), "root": root})}


def base_current(con, qrels: str) -> bool:
    """Is the materialized base of the loaded qrels ``qrels`` built from the tables as they are?"""
    return bool(_one(con, "SELECT irw_base_current(?, ?)", [qrels, session_runs_fp(con)])[0])


def root_qrels(con, qrels: str) -> str:
    """The loaded qrels a derived qrels descends from (itself for a loaded one)."""
    return _one(con, "SELECT irw_root_qrels(?)", [qrels])[0]


def root_qrels_of(con, qrels: list[str]) -> dict[str, str]:
    """:func:`root_qrels` of each of ``qrels``, in one query."""
    return dict(con.execute("SELECT q, irw_root_qrels(q) FROM (SELECT unnest(?::VARCHAR[]) AS q)",
                            [list(qrels)]).fetchall())


def source(con, qrels: str, collection: str) -> str:
    """Where the engine takes the base rows of ``qrels`` for the runs of ``collection`` from
    (sql/state.sql, irw_base_source: the decision the measure macros take too)."""
    return _one(con, "SELECT irw_base_source(?, ?, ?)", [qrels, collection, session_runs_fp(con)])[0]


def changed(con) -> list[str]:
    """What was changed outside irw since irw last wrote (empty: nothing)."""
    out = ["runs"] if not runs_current(con) else []
    return out + [f"qrels {name}" for (name,) in con.execute(
        "SELECT qrels FROM irw_qrels_changes() WHERE recorded IS NOT NULL ORDER BY qrels").fetchall()]
