"""Derived qrels: depth-d pools, leave-one-team-out, take-teams and shallow pools (SPEC §3).

The sets are the table macros of ``sql/pools.sql``; this module validates the request and
stores the chosen subset of the parent's judgments as a new qrels, registered in the
catalogue with its parent, kind and parameters. Each build is one transaction.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from . import db, loader, runsets, state
from .errors import IrwError  # noqa: F401  (re-exported for the CLI)

if TYPE_CHECKING:
    import pandas as pd

# The kinds of derived qrels and how their judgments are chosen (SQL over $parent, $runs,
# $depth, $teams; every result is a subset of the parent's judgments).
_SELECT = {
    "depth": "SELECT topic, docno, rel FROM pooled_qrels($parent, $runs, $depth)",
    "leave-out": """
        SELECT j.topic, j.docno, j.rel FROM qrels j
        WHERE j.qrels = $parent AND NOT EXISTS (
            SELECT 1 FROM irw_unique u
            WHERE list_contains($teams, u.team) AND u.topic = j.topic AND u.docno = j.docno)""",
    "take": """
        SELECT j.topic, j.docno, j.rel FROM qrels j
        JOIN (SELECT DISTINCT topic, docno FROM team_contributions($parent, $runs, $depth)
              WHERE list_contains($teams, team)) AS c
          ON c.topic = j.topic AND c.docno = j.docno
        WHERE j.qrels = $parent""",
}


def _check_depth(depth: int) -> None:
    if depth is None or depth < 1:
        raise IrwError(f"the pool depth must be at least 1 (got {depth})")


def _check_parent(con, parent: str) -> None:
    if con.execute("SELECT 1 FROM qrels_info WHERE qrels = ?", [parent]).fetchone() is None:
        known = loader.qrels_names(con)
        raise IrwError(f"qrels {parent!r} does not exist; known: {', '.join(known) or 'none'}")


def teams_of(con, run_ids: list[str]) -> dict[str, list[str]]:
    """team -> its runs among ``run_ids`` (a run without a team is its own team)."""
    rows = con.execute("SELECT coalesce(team, run_id), run_id FROM run_info "
                       "WHERE list_contains($ids, run_id) ORDER BY 1, 2", {"ids": run_ids}).fetchall()
    teams: dict[str, list[str]] = {}
    for team, run_id in rows:
        teams.setdefault(team, []).append(run_id)
    return teams


def _check_teams(con, teams: list[str], run_ids: list[str]) -> None:
    known = teams_of(con, run_ids)
    unknown = [t for t in teams if t not in known]
    if unknown:
        raise IrwError(f"unknown team(s) {', '.join(unknown)} in the run set; teams: {', '.join(known)}")
    if not teams:
        raise IrwError("no team given")


def build(con, kind: str, parent: str, name: str, runs: str = "all", depth: int = 100,
          teams: list[str] | None = None, replace: bool = False,
          description: str | None = None) -> dict:
    """Create one derived qrels ``name`` of ``kind`` (depth | shallow | leave-out | take)."""
    return build_many(con, kind, parent, [(name, teams or [])], runs, depth, replace, description)[0]


def build_many(con, kind: str, parent: str, targets: list[tuple[str, list[str]]], runs: str = "all",
               depth: int = 100, replace: bool = False, description: str | None = None) -> list[dict]:
    """Create several derived qrels of one kind at once: ``targets`` = [(name, teams)]."""
    if kind not in ("depth", "shallow", "leave-out", "take"):
        raise IrwError(f"unknown kind of derived qrels {kind!r}")
    _check_depth(depth)
    _check_parent(con, parent)
    run_ids = runsets.resolve(con, runs, qrels=parent)
    for name, teams in targets:
        if not name or not name.strip():
            raise IrwError("a derived qrels needs a name (--name)")
        if kind in ("leave-out", "take"):
            _check_teams(con, teams, run_ids)
    names = [n for n, _ in targets]
    if len(set(names)) != len(names):
        raise IrwError("the derived qrels names are not distinct")
    existing = [n for n in names if con.execute("SELECT 1 FROM qrels_info WHERE qrels = ?", [n]).fetchone()]
    if existing and not replace:
        raise IrwError(f"qrels {', '.join(existing)} already exist(s); use --replace to replace")
    if parent in names:
        raise IrwError(f"a derived qrels cannot replace its parent {parent!r}")
    select = _SELECT["depth" if kind == "shallow" else kind]
    out = []
    with db.transaction(con):
        for n in existing:
            loader.drop_qrels(con, n, _in_transaction=True)
        if kind == "leave-out":
            con.execute("CREATE OR REPLACE TEMP TABLE irw_unique AS "
                        "SELECT * FROM unique_contributions($parent, $runs, $depth)",
                        {"parent": parent, "runs": run_ids, "depth": depth})
        try:
            for name, teams in targets:
                bind = {"parent": parent, "runs": run_ids, "depth": depth, "teams": teams,
                        "name": name}
                used = {k: v for k, v in bind.items() if f"${k}" in select or k == "name"}
                con.execute(f"INSERT INTO qrels SELECT $name, topic, docno, rel FROM ({select})", used)
                params = {"runs": runs, "n_runs": len(run_ids), "depth": depth}
                if kind in ("leave-out", "take"):
                    params["teams"] = teams
                loader.register_qrels(con, name, source=None, kind=kind, parent=parent,
                                      params=json.dumps(params), description=description)
                state.record_qrels(con, name)
                n, rel = con.execute("SELECT count(*) FILTER (WHERE rel >= 0), count(*) FILTER (WHERE rel >= 1) "
                                     "FROM qrels WHERE qrels = ?", [name]).fetchone()
                out.append({"qrels": name, "kind": kind, "parent": parent, "judged": n, "relevant": rel,
                            **params})
        finally:
            con.execute("DROP TABLE IF EXISTS irw_unique")
    return out


def stats(con, what: str, qrels: str, runs: str = "all", depth: int = 100) -> pd.DataFrame:
    """Pool statistics: topics | multiplicity | teams | unique | judged | collection | qrels."""
    _check_parent(con, qrels)
    if what == "collection":
        return con.execute("SELECT * FROM qrels_stats WHERE qrels = ?", [qrels]).df()
    if what == "qrels":  # qrels_stats with the mean FirstUnjudged over the runs and topics
        import math

        from . import evaluate, measures

        run_ids = runsets.resolve(con, runs, qrels=qrels)
        values = [row[3] for row in evaluate.evaluate_rows(
            con, qrels, measures.parse_all(["FirstUnjudged"]), run_ids, store=False)]
        frame = con.execute(
            "SELECT qrels, topics, mean_judged, mean_relevant, judged::BIGINT AS judged, "
            "relevant::BIGINT AS relevant FROM qrels_stats WHERE qrels = ?", [qrels]).df()
        frame["runs"] = len(run_ids)
        frame["mean_first_unjudged"] = math.fsum(values) / len(values) if values else math.nan
        return frame
    _check_depth(depth)
    if what == "judged":  # per run and topic: the measures FirstUnjudged and Judged@depth
        from . import evaluate, measures

        wanted = measures.parse_all(["FirstUnjudged", f"Judged@{depth}"])
        per = evaluate.evaluate(con, qrels, wanted, runsets.resolve(con, runs, qrels=qrels),
                                store=False)
        wide = per.pivot(index=["run_id", "topic"], columns="measure", values="value").reset_index()
        return wide.rename(columns={str(wanted[0]): "first_unjudged", str(wanted[1]): "judged_at_depth"})[
            ["run_id", "topic", "first_unjudged", "judged_at_depth"]]
    bind = {"q": qrels, "runs": runsets.resolve(con, runs, qrels=qrels), "depth": depth}
    queries = {
        "topics": "SELECT * FROM pool_topic_stats($q, $runs, $depth) ORDER BY topic",
        "multiplicity": "SELECT CASE WHEN grouping(band) = 1 THEN 'total' ELSE band END AS band, "
                        "sum(documents)::BIGINT AS documents, sum(judged)::BIGINT AS judged, "
                        "sum(relevant)::BIGINT AS relevant, sum(relevant) / sum(documents) AS fraction_relevant "
                        "FROM multiplicity_bands($q, $runs, $depth) "
                        "GROUP BY GROUPING SETS ((band, band_order), ()) ORDER BY band_order NULLS LAST",
        "teams": "SELECT * FROM team_unique_stats($q, $runs, $depth) ORDER BY team",
        "unique": "SELECT team, topic, docno, rel FROM unique_contributions($q, $runs, $depth) "
                  "ORDER BY team, topic, docno",
    }
    if what not in queries:
        raise IrwError(f"unknown statistics {what!r}; valid: {', '.join([*queries, 'judged', 'collection', 'qrels'])}")
    return con.execute(queries[what], bind).df()


def deeply_judged(con, qrels: str, depth: int = 50) -> list[str]:
    """Runs with at least ``depth`` documents for every topic of ``qrels``, all judged."""
    _check_parent(con, qrels)
    _check_depth(depth)
    return [r[0] for r in con.execute(
        "SELECT run_id FROM deeply_judged_runs(?, ?) ORDER BY run_id", [qrels, depth]).fetchall()]
