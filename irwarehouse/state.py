"""Caches that cannot lie: what the warehouse's derived data was built from, and bringing it
back in line after changes made outside irw.

irw derives data from the tables ``runs`` and ``qrels``: the ranks and ranking lengths of a
run (``runs.rank``, ``run_topics``), the materialized base relation (``irw_base``) and the
stored scores (``scores``). Anyone may change the tables with plain SQL. So irw records a
fingerprint -- a hash of the rows -- of what it last wrote (``irw_run_state``, ``irw_state``,
``irw_base_built``; the macros in ``sql/state.sql``) and compares it with the tables:

- A command that writes first brings everything in line (:func:`reconcile`): runs changed
  outside irw are ranked again under their policy, with their ranking lengths, base rows and
  stored scores; a changed qrels's base is rebuilt on demand and its stored scores recomputed.
- A command that only reads (it cannot write) computes from the tables instead of the caches
  where they are out of date (:func:`source`), and says so.
- The measure macros (schema ``measure``) make the same choice in SQL (``sql/_state.sql``).

Within one connection the check is made once (:func:`session_runs_fp`): while irw holds the
file, nobody else can write it, and irw records its own writes.
"""

from __future__ import annotations

from . import db, names
from .errors import IrwError


def _one(con, sql: str, params=None):
    """The first row of a query, the result read to its end (so that the connection is free
    for DuckDB's relational API afterwards)."""
    rows = con.execute(sql, params or []).fetchall()
    return rows[0] if rows else None


def runs_fp(con) -> int:
    """The fingerprint of runs, run_topics and run_loads as they are now."""
    return _one(con, "SELECT irw_runs_fp()")[0]


def _set_session(con, fp: int) -> None:
    con.execute("CREATE OR REPLACE TEMP TABLE irw_session AS SELECT ?::UBIGINT AS runs_fp", [fp])


def session_runs_fp(con) -> int:
    """The fingerprint of the runs tables as checked when this connection was opened (or as
    irw left them since); computed if it was not."""
    if db.has_table(con, "irw_session", temporary=True):
        return _one(con, "SELECT runs_fp FROM temp.irw_session")[0]
    fp = runs_fp(con)
    _set_session(con, fp)
    return fp


def recorded_runs_fp(con) -> int:
    """The fingerprint of runs, run_topics and run_loads as irw last wrote them."""
    return _one(con, "SELECT irw_recorded_runs_fp()")[0]


def runs_current(con) -> bool:
    """Are the stored ranks and ranking lengths those irw computed (runs unchanged since)?"""
    return recorded_runs_fp(con) == session_runs_fp(con)


# --------------------------------------------------------------------------- recording

def record_runs(con, collection: str | None = None, run_ids: list[str] | None = None,
                parts: str | None = None) -> None:
    """After irw wrote runs (``run_ids`` of ``collection``; None: all runs): record what it
    wrote of them (from runs and run_topics, or from ``parts``, a table a load computed them
    in beforehand: sql/run_parts_staged.sql), and that every materialized base -- kept in
    line by irw -- stands for the tables as they now are."""
    if collection is None:
        con.execute("DELETE FROM irw_run_state")
        groups = con.execute("SELECT collection, list(run_id) FROM run_loads GROUP BY collection").fetchall()
    else:
        groups = [(collection, list(run_ids or []))]
    con.execute("DELETE FROM irw_run_state WHERE NOT EXISTS (SELECT 1 FROM run_loads l "
                "WHERE l.collection = irw_run_state.collection AND l.run_id = irw_run_state.run_id)")
    for c, ids in groups:
        if ids:
            db.run_script(con, "record_runs.sql", {"ids": list(ids), "collection": c}, parts=parts)
    fp = recorded_runs_fp(con)
    con.execute("UPDATE irw_base_built SET runs_fp = ?", [fp])
    _set_session(con, fp)


def record_qrels(con, qrels: str) -> None:
    """After irw wrote the judgments of ``qrels`` (or removed them)."""
    if _one(con, "SELECT 1 FROM qrels_info WHERE qrels = ?", [qrels]) is None:
        con.execute("DELETE FROM irw_state WHERE name = ?", ["qrels:" + qrels])
        return
    con.execute("INSERT OR REPLACE INTO irw_state VALUES (?, irw_qrels_fp(?))", ["qrels:" + qrels, qrels])


# --------------------------------------------------------------------------- checking

def base_current(con, qrels: str) -> bool:
    """Is the materialized base of the loaded qrels ``qrels`` built from the tables as they are?"""
    return bool(_one(con, "SELECT irw_base_current(?, ?)", [qrels, session_runs_fp(con)])[0])


def root_qrels(con, qrels: str) -> str:
    """The loaded qrels a derived qrels descends from (itself for a loaded one)."""
    return _one(con, "SELECT irw_root_qrels(?)", [qrels])[0]


def source(con, qrels: str, collection: str) -> str:
    """Where the engine takes the base rows of ``qrels`` for the runs of ``collection`` from
    (sql/state.sql, irw_base_source: the decision the measure macros take too)."""
    return _one(con, "SELECT irw_base_source(?, ?, ?)", [qrels, collection, session_runs_fp(con)])[0]


def changed(con) -> list[str]:
    """What was changed outside irw since irw last wrote (empty: nothing)."""
    out = ["runs"] if not runs_current(con) else []
    return out + [f"qrels {name}" for (name,) in con.execute(
        "SELECT qrels FROM irw_qrels_changes() WHERE recorded IS NOT NULL ORDER BY qrels").fetchall()]


# --------------------------------------------------------------------------- reconciling

def reconcile(con, edited: bool = False) -> list[str]:
    """Bring ranks, ranking lengths, caches and stored scores in line with the tables after
    changes made outside irw. Returns what was done (one line each; empty: nothing to do).
    Raises IrwError, changing nothing, when the tables hold what no load would accept.
    ``edited``: the changes are those of a statement run just now (``irw sql --write``),
    which the error says is undone (the caller rolls its transaction back)."""
    done: list[str] = []
    if edited:
        _check_tables(con)
    # one query says whether anything is to be done (the usual case: nothing)
    fp, runs_ok, qrels_ok = _one(con, """
        SELECT fp, fp = irw_recorded_runs_fp(),
               NOT EXISTS (SELECT 1 FROM qrels WHERE qrels NOT IN (SELECT qrels FROM qrels_info))
               AND NOT EXISTS (SELECT 1 FROM irw_qrels_changes())
        FROM (SELECT irw_runs_fp() AS fp)""")
    _set_session(con, fp)
    if runs_ok and qrels_ok:
        return done
    with db.transaction(con):
        _check_qrels(con, edited)
        if not runs_ok:
            done += _reconcile_runs(con, edited)
        for name in _unregistered_qrels(con):
            from .collection import names
            from .loader import register_qrels  # loader imports state

            known = names(con)
            target = known[0] if len(known) == 1 else db.DEFAULT_COLLECTION
            register_qrels(con, name, source="(inserted with SQL)", kind="file", collection=target)
            done.append(f"registered qrels {name}, inserted with SQL"
                        + ("" if len(known) == 1 else f", in collection {target}"))
        for name, rec in con.execute(
                "SELECT qrels, recorded FROM irw_qrels_changes() ORDER BY qrels").fetchall():
            if rec is None:
                record_qrels(con, name)
            else:
                db.invalidate_bases(con, name)
                dependents = [r[0] for r in con.execute(
                    "SELECT qrels FROM qrels_info WHERE topic_qrels = ? OR qrels = ? ORDER BY qrels",
                    [name, name]).fetchall()]
                n = 0
                for q in dependents:
                    n += refresh_scores(con, qrels=q)
                record_qrels(con, name)
                done.append(f"qrels {name} changed: its base will be rebuilt"
                            + (f"; {n} stored evaluation(s) recomputed" if n else ""))
    return done


def _check_tables(con) -> None:
    """A statement may change the rows of the warehouse's tables, not remove the tables,
    views and macros of its schema."""
    gone = db.missing_objects(con)
    if gone:
        raise IrwError(f"not done: the statement would remove the {gone[0]}, which the "
                       "warehouse needs; nothing was changed")


def _refuse(problem: str, outside: str, edited: bool):
    """The error for tables that hold what no load would accept: undone when a statement of
    this call made them so (``edited``: the statement would leave ``problem``), else left by
    another client (``outside``: what happened and how to correct it)."""
    if edited:
        raise IrwError(f"not done: the statement would leave {problem}, which no load accepts; "
                       "nothing was changed")
    raise IrwError(outside)


def _check_qrels(con, edited: bool = False) -> None:
    """The judgments changed outside irw hold what a load would accept: no document judged
    twice for a topic (loads refuse such files), and names that can be addressed."""
    dup = _one(con, """
        SELECT qrels, topic, docno FROM qrels
        WHERE qrels IN (SELECT qrels FROM irw_qrels_changes())
           OR qrels NOT IN (SELECT qrels FROM qrels_info)
        GROUP BY qrels, topic, docno HAVING count(*) > 1 LIMIT 1""")
    if dup:
        _refuse(f"qrels {dup[0]} judging document {dup[2]} twice for topic {dup[1]}",
                f"the table qrels was changed outside irw and qrels {dup[0]} now judges document "
                f"{dup[2]} twice for topic {dup[1]}; correct it (irw sql --write) or reload the "
                f"qrels (irw load qrels FILE --name {dup[0]} --replace)", edited)


def _unregistered_qrels(con) -> list[str]:
    return [r[0] for r in con.execute(
        "SELECT DISTINCT qrels FROM qrels WHERE qrels NOT IN (SELECT qrels FROM qrels_info) "
        "ORDER BY qrels").fetchall()]


def _reconcile_runs(con, edited: bool = False) -> list[str]:
    key = "SELECT collection, run_id, n_rows, rows_sum FROM "
    recorded = {(r[0], r[1]): r[2:] for r in con.execute(key + "irw_run_state").fetchall()}
    current = {(r[0], r[1]): r[2:] for r in con.execute(key + "irw_run_rows()").fetchall()}
    loaded = set(con.execute("SELECT collection, run_id FROM run_loads").fetchall())
    lengths = set(con.execute("""
        SELECT coalesce(c.collection, t.collection), coalesce(c.run_id, t.run_id) FROM
            (SELECT collection, run_id, topic, count(*) AS n FROM runs GROUP BY ALL) AS c
        FULL OUTER JOIN run_topics t
          ON t.collection = c.collection AND t.run_id = c.run_id AND t.topic = c.topic
        WHERE c.n IS DISTINCT FROM t.n_docs""").fetchall())
    changed_runs = sorted({r for r in set(current) | set(recorded) | loaded
                           if current.get(r) != recorded.get(r) or (r in current) != (r in loaded)}
                          | lengths)
    present = [r for r in changed_runs if r in current]
    gone = [r for r in changed_runs if r not in current]
    by_collection: dict[str, dict[str, list[str]]] = {}
    for kind, runs in (("present", present), ("gone", gone)):
        for c, run_id in runs:
            by_collection.setdefault(c, {"present": [], "gone": []})[kind].append(run_id)
    n = 0
    for c, ids_of in sorted(by_collection.items()):
        n += _reconcile_collection(con, c, ids_of["present"], ids_of["gone"], edited)
    show = _run_names(con)
    done = []
    if present:
        done.append(f"runs changed outside irw: ranked again {show(present)}"
                    + (f"; {n} stored evaluation(s) recomputed" if n else ""))
    if gone:
        done.append(f"runs removed outside irw: {show(gone)} (their scores are removed too)")
    return done


def _run_names(con):
    """Runs (collection, run id) in words: the run ids, with their collection when the
    warehouse holds several."""
    from .collection import single

    plain = single(con)
    return lambda runs: ", ".join(r if plain else f"{r} ({c})" for c, r in runs)


def _reconcile_collection(con, collection: str, present: list[str], gone: list[str],
                          edited: bool = False) -> int:
    """Rank again the runs ``present`` of ``collection`` changed outside irw, forget those
    ``gone``; returns the number of stored evaluations recomputed."""
    ids = {"ids": present, "collection": collection}
    dup = _one(con, "SELECT run_id, topic, docno FROM runs WHERE collection = $collection "
                    "AND list_contains($ids, run_id) GROUP BY run_id, topic, docno HAVING count(*) > 1 "
                    "LIMIT 1", ids)
    advice = "correct it (irw sql --write) or reload the run (irw load runs FILE --replace)"
    if dup:
        _refuse(f"run {dup[0]} holding document {dup[2]} twice for topic {dup[1]}",
                f"the table runs was changed outside irw and run {dup[0]} now holds document "
                f"{dup[2]} twice for topic {dup[1]}; {advice}", edited)
    bad = _one(con, "SELECT run_id, topic, docno, score FROM runs WHERE collection = $collection "
                    "AND list_contains($ids, run_id) AND (isnan(score) OR isinf(score)) LIMIT 1", ids)
    if bad:
        _refuse(f"run {bad[0]} giving document {bad[2]} of topic {bad[1]} the score {bad[3]}, not a "
                "finite number",
                f"the table runs was changed outside irw and run {bad[0]} now gives document "
                f"{bad[2]} of topic {bad[1]} the score {bad[3]}, which is not a finite number; {advice}",
                edited)
    new_ids = [r[0] for r in con.execute(
        "SELECT DISTINCT run_id FROM runs WHERE collection = $collection AND list_contains($ids, run_id) "
        "AND run_id NOT IN (SELECT run_id FROM run_loads WHERE collection = $collection)", ids).fetchall()]
    for run_id in new_ids:
        problem = names.run_id_problem(run_id)
        if problem:
            _refuse(f"a new run whose {problem}",
                    f"the table runs was changed outside irw: {problem}", edited)
    con.execute("CREATE OR REPLACE TEMP TABLE irw_reranked AS SELECT collection, run_id, topic, docno, "
                "rank, score, given_rank FROM " + db.render("rerank.sql").strip(), ids)
    where = "collection = $collection AND list_contains($ids, run_id)"
    for table in ("runs", "run_topics"):
        con.execute(f"DELETE FROM {table} WHERE {where}", ids)
    con.execute("INSERT INTO runs SELECT collection, run_id, topic, docno, rank, score, given_rank "
                "FROM irw_reranked")
    con.execute("INSERT INTO run_topics SELECT collection, run_id, topic, count(*)::INTEGER "
                "FROM irw_reranked GROUP BY collection, run_id, topic")
    con.execute("DROP TABLE irw_reranked")
    con.execute(f"""
        INSERT INTO run_loads
        SELECT $collection, run_id, '(inserted with SQL)', 'trec_eval', 0, 0, current_timestamp
        FROM (SELECT DISTINCT run_id FROM run_topics WHERE {where}) AS n
        WHERE run_id NOT IN (SELECT run_id FROM run_loads WHERE collection = $collection)""", ids)
    con.execute(f"""
        UPDATE run_loads SET n_topics = t.n_topics, n_docs = t.n_docs
        FROM (SELECT run_id, count(*)::INTEGER AS n_topics, sum(n_docs) AS n_docs FROM run_topics
              WHERE {where} GROUP BY run_id) AS t
        WHERE run_loads.collection = $collection AND run_loads.run_id = t.run_id""", ids)
    if gone:
        for table in ("run_topics", "run_loads", "scores"):
            con.execute(f"DELETE FROM {table} WHERE {where}", {"ids": gone, "collection": collection})
    db.update_bases(con, collection, present + gone)
    record_runs(con, collection, present + gone)
    return refresh_scores(con, runs=(collection, present)) if present else 0


def refresh_scores(con, qrels: str | None = None,
                   runs: tuple[str, list[str]] | None = None) -> int:
    """Recompute the stored scores of ``qrels`` and/or ``runs`` (a collection and run ids) as
    they were last computed (measures, topic policy, -M and -l from the evaluations log), so
    that the stored scores stay current. Returns the number of (qrels, collection, run set,
    settings) evaluations made."""
    from . import evaluate
    from .measures import parse

    where, params = ["TRUE"], {}
    if qrels is not None:
        where.append("s.qrels = $q")
        params["q"] = qrels
    if runs is not None:
        where.append("s.collection = $c AND list_contains($ids, s.run_id)")
        params["c"], params["ids"] = runs[0], list(runs[1])
    rows = con.execute(f"""
        SELECT s.qrels, s.collection, s.measure, list(DISTINCT s.run_id ORDER BY s.run_id) AS runs,
               any_value(e.topics), any_value(e.max_docs), any_value(e.rel_level)
        FROM scores s
        LEFT JOIN (SELECT * FROM evaluations
                   QUALIFY row_number() OVER (PARTITION BY qrels, collection, measure
                                              ORDER BY evaluated_at DESC) = 1) e
          ON e.qrels = s.qrels AND e.collection = s.collection AND e.measure = s.measure
        WHERE {' AND '.join(where)} AND s.qrels IN (SELECT qrels FROM qrels_info)
        GROUP BY s.qrels, s.collection, s.measure ORDER BY s.qrels, s.collection, s.measure""",
                       params).fetchall()
    groups: dict[tuple, list] = {}
    for q, c, label, run_ids, topics, max_docs, rel_level in rows:
        key = (q, c, tuple(run_ids), topics or "qrels", max_docs, rel_level)
        groups.setdefault(key, []).append(parse(label))
    for (q, c, run_ids, topics, max_docs, rel_level), measures in groups.items():
        evaluate.evaluate(con, q, measures, list(run_ids), topics=topics, max_docs=max_docs,
                          rel_level=rel_level, store=True, collection=c)
    return len(groups)
