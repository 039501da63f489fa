"""Derived qrels: depth-d pools, leave-one-team-out, take-teams and shallow pools (SPEC §3).

The sets are the table macros of ``sql/pools.sql``; this module validates the request and
stores the chosen subset of the parent's judgments as a new qrels, registered in the
catalogue with its parent, kind and parameters. Each build is one transaction.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from . import db, evaluate, loader, runsets, state
from .errors import IrwError  # noqa: F401  (re-exported for the CLI)

if TYPE_CHECKING:
    import pandas as pd

KINDS = ("depth", "shallow", "leave-out", "take")
INPUTS = ("parent", "runs", "depth", "teams")  # the bound inputs of sql/derived_qrels.sql


def select_sql(kind: str, dialect: str = "duckdb") -> str:
    """The SQL choosing the judgments of a derived qrels of ``kind`` (sql/derived_qrels.sql),
    over the bound parameters INPUTS (in the dialect's form)."""
    P = {name: db.param(name, dialect) for name in INPUTS}
    return str(db.module("derived_qrels.sql", dialect).select(kind, P))


def _check_depth(depth: int) -> None:
    if depth is None or not 1 <= depth <= 2**31 - 1:
        raise IrwError(f"the pool depth must be at least 1 and at most 2147483647 (got {depth})")


def _check_parent(con, parent: str) -> None:
    if con.execute("SELECT 1 FROM qrels_info WHERE qrels = ?", [parent]).fetchone() is None:
        known = loader.qrels_names(con)
        raise IrwError(f"qrels {parent!r} does not exist; known: {', '.join(known) or 'none'}")


def teams_of(con, run_ids: list[str], collection: str) -> dict[str, list[str]]:
    """team -> its runs among ``run_ids`` of ``collection`` (a run without a team is its own
    team)."""
    wanted = set(run_ids)
    rows = con.execute("SELECT coalesce(team, run_id), run_id FROM run_info WHERE collection = ? "
                       "ORDER BY 1, 2", [collection]).fetchall()
    teams: dict[str, list[str]] = {}
    for team, run_id in rows:
        if run_id in wanted:
            teams.setdefault(team, []).append(run_id)
    return teams


def _check_teams(con, teams: list[str], run_ids: list[str], collection: str) -> None:
    known = teams_of(con, run_ids, collection)
    unknown = [t for t in teams if t not in known]
    if unknown:
        raise IrwError(f"unknown team(s) {', '.join(unknown)} in the run set; teams: {', '.join(known)}")
    if not teams:
        raise IrwError("no team given")


def check_targets(con, kind: str, parent: str, targets: list[tuple[str, list[str]]],
                  run_ids: list[str], replace: bool | None = None) -> list[str]:
    """The derived qrels ``targets`` = [(name, teams)] of ``parent`` can be built: named,
    distinctly, not after their parent, their teams are teams of the run set, and (unless
    ``replace`` is None) no qrels has their name, or ``replace``. Returns the names that
    exist."""
    for name, teams in targets:
        if not name or not name.strip():
            raise IrwError("a derived qrels needs a name (--name)")
        if kind in ("leave-out", "take"):
            _check_teams(con, teams, run_ids, evaluate.collection_of(con, parent))
    names = [n for n, _ in targets]
    if len(set(names)) != len(names):
        raise IrwError("the derived qrels names are not distinct")
    existing = []
    if replace is not None:
        existing = [n for n in names if con.execute("SELECT 1 FROM qrels_info WHERE qrels = ?", [n]).fetchone()]
        if existing and not replace:
            raise IrwError(f"qrels {', '.join(existing)} already exist(s); use --replace to replace")
    if parent in names:
        raise IrwError(f"a derived qrels cannot replace its parent {parent!r}")
    return existing


def build(con, kind: str, parent: str, name: str, runs: str = "all", depth: int = 100,
          teams: list[str] | None = None, replace: bool = False,
          description: str | None = None) -> dict:
    """Create one derived qrels ``name`` of ``kind`` (depth | shallow | leave-out | take)."""
    return build_many(con, kind, parent, [(name, teams or [])], runs, depth, replace, description)[0]


def build_many(con, kind: str, parent: str, targets: list[tuple[str, list[str]]], runs: str = "all",
               depth: int = 100, replace: bool = False, description: str | None = None) -> list[dict]:
    """Create several derived qrels of one kind at once: ``targets`` = [(name, teams)]."""
    if kind not in KINDS:
        raise IrwError(f"unknown kind of derived qrels {kind!r}")
    _check_depth(depth)
    _check_parent(con, parent)
    run_ids = runsets.resolve(con, runs, qrels=parent)
    existing = check_targets(con, kind, parent, targets, run_ids, replace)
    select = select_sql(kind)
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

        from . import measures

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
        from . import measures

        wanted = measures.parse_all(["FirstUnjudged", f"Judged@{depth}"])
        per = evaluate.evaluate(con, qrels, wanted, runsets.resolve(con, runs, qrels=qrels),
                                store=False)
        wide = per.pivot(index=["run_id", "topic"], columns="measure", values="value").reset_index()
        return wide.rename(columns={str(wanted[0]): "first_unjudged", str(wanted[1]): "judged_at_depth"})[
            ["run_id", "topic", "first_unjudged", "judged_at_depth"]]
    bind = {"q": qrels, "runs": runsets.resolve(con, runs, qrels=qrels), "depth": depth}
    return con.execute(stats_sql(what), bind).df()


STATS = ("topics", "multiplicity", "teams", "unique", "judged", "collection", "qrels")


def stats_sql(what: str, dialect: str = "duckdb") -> str:
    """The query of the pool statistics ``what`` (all but judged and collection), over the
    bound parameters q, runs and depth."""
    q, runs, depth = (db.param(name, dialect) for name in ("q", "runs", "depth"))
    args = f"{q}, {runs}, {depth}"
    queries = {
        "topics": f"SELECT * FROM pool_topic_stats({args}) ORDER BY topic",
        "multiplicity": "SELECT CASE WHEN grouping(band) = 1 THEN 'total' ELSE band END AS band, "
                        "CAST(sum(documents) AS BIGINT) AS documents, CAST(sum(judged) AS BIGINT) AS judged, "
                        "CAST(sum(relevant) AS BIGINT) AS relevant, sum(relevant) / sum(documents) AS fraction_relevant "
                        f"FROM multiplicity_bands({args}) "
                        "GROUP BY GROUPING SETS ((band, band_order), ()) ORDER BY band_order NULLS LAST",
        "teams": f"SELECT * FROM team_unique_stats({args}) ORDER BY team",
        "unique": f"SELECT team, topic, docno, rel FROM unique_contributions({args}) "
                  "ORDER BY team, topic, docno",
    }
    if what not in queries:
        raise IrwError(f"unknown statistics {what!r}; valid: {', '.join(STATS)}")
    return queries[what]


def deeply_judged(con, qrels: str, depth: int = 50) -> list[str]:
    """Runs with at least ``depth`` documents for every topic of ``qrels``, all judged."""
    _check_parent(con, qrels)
    _check_depth(depth)
    return [r[0] for r in con.execute(
        "SELECT run_id FROM deeply_judged_runs(?, ?) ORDER BY run_id", [qrels, depth]).fetchall()]
