"""The base relation: every judged retrieved document of a qrels's rankings with the running
sums the measures need (``sql/_base.sql``), materialized once per loaded qrels in
``irw_base`` and used while it is current (irwarehouse.state).

A derived qrels is evaluated from its root's base restricted to its judgments; runs of
another collection, or a base that is not current, are evaluated from the tables.
"""

from __future__ import annotations

from .. import catalogue, sql, state
from ..connection import transaction, without_order
from .rendering import _engine_inputs

def con_is_read_only(con) -> bool:
    try:
        return bool(con.execute("SELECT current_setting('access_mode') = 'read_only'").fetchone()[0])
    except Exception:  # pragma: no cover - older DuckDB
        return False


@without_order
def ensure_base(con, qrels: str) -> None:
    """Materialize the base relation of a loaded qrels, unless it is current (built from the
    runs and judgments as they are). Derived qrels are evaluated from their root's base."""
    if state.base_current(con, qrels):
        return
    with transaction(con):
        sql.run(con, "caches.sql", "rebuild_base", {"q": qrels, "fp": state.session_runs_fp(con)})


@without_order
def ensure_bases(con) -> list[str]:
    """Materialize the base relation of every loaded qrels that lacks a current one; returns
    their names (all loaded qrels)."""
    names = [r[0] for r in con.execute(
        "SELECT qrels FROM qrels_info WHERE parent IS NULL ORDER BY qrels").fetchall()]
    for name in names:
        ensure_base(con, name)
    return names


@without_order
def ensure_ties(con, qrels: str, record: bool = True) -> bool:
    """Whether the current base of the loaded qrels ``qrels`` records its documents' ties
    (irw_base.tie_a, tie_n, for the tie policies that read them), recording them first with
    ``record`` where the connection may write."""
    if sql.rows(con, "caches.sql", "ties_built", {"q": qrels})[0][0]:
        return True
    if not record or con_is_read_only(con):
        return False
    with transaction(con):
        sql.run(con, "caches.sql", "build_ties", {"q": qrels})
    return True


def base_source(con, qrels: str, collection: str) -> tuple[str, dict]:
    """Where the base rows of ``qrels`` for the runs of ``collection`` come from, and the
    parameters that source binds. A writable connection materializes the root's base first
    (when the runs are of the root's collection); a read-only one uses it only if it is
    current (else the base is computed from the tables)."""
    root = state.root_qrels(con, qrels)
    if (not con_is_read_only(con) and state.runs_current(con)
            and catalogue.collection_of(con, root) == collection):
        ensure_base(con, root)
    source = state.source(con, qrels, collection)
    return source, ({"base_qrels": root} if source == "subset" else {})


def base_query(con, qrels: str, run_ids: list[str], collection: str | None = None) -> tuple[str, dict]:
    """A query over the base rows (run_id, topic, rank, crank, grade, c_rel, cg) of ``qrels``
    for ``run_ids`` of ``collection`` (default: the qrels's), from the source the engine
    uses, with its parameters."""
    name, _ = catalogue.qrels_info(con, qrels)
    collection = catalogue.collection_of(con, name, collection)
    source, extra = base_source(con, name, collection)
    query = sql.render("base_relation.sql", source=source, P=_engine_inputs())
    params = {"qrels": name, "collection": collection, "runs": list(run_ids), **extra}
    return query, sql.used(params, query)


def update_bases(con, collection: str, run_ids: list[str]) -> None:
    """Bring every materialized base of the qrels of ``collection`` up to date after its runs
    ``run_ids`` were loaded, replaced or dropped: their rows are recomputed from what ``runs``
    now holds; the other runs' rows stay (a run's base rows depend on that run only)."""
    for (qrels,) in con.execute(sql.statement("caches.sql", "built_bases"), {"c": collection}).fetchall():
        sql.run(con, "caches.sql", "update_base", {"q": qrels, "ids": list(run_ids)})


def invalidate_bases(con, qrels: str | None = None) -> None:
    """Forget cached base relations: all of them (runs changed) or one qrels's."""
    sql.run(con, "caches.sql", "forget_bases", {"q": qrels}, qrels is not None)
