"""Derived qrels -- depth-d pools, leave-one-team-out, take-teams, shallow pools -- and pool
statistics (SPEC §3).

The sets are the table macros of ``sql/pools.sql`` and the judgments a derived qrels keeps
are ``sql/derived_qrels.sql``. :func:`plan` and :func:`stats` are written against the engine
protocol (irwarehouse.connection.Engine) and run on DuckDB and on Spark alike; storing the
derived qrels in a warehouse (:func:`store`, one transaction) is DuckDB's, writing them as
files is Spark's (irwarehouse.spark).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

from .. import catalogue, runsets, sql, state
from ..connection import engine_of, transaction
from ..errors import IrwError
from ..measures import parse_all
from ..result import Result
from . import evaluation
from .loading import drop_qrels

KINDS = ("depth", "shallow", "leave-out", "take")
STATS = ("topics", "multiplicity", "teams", "unique", "judged", "collection", "qrels")
INPUTS = ("parent", "runs", "depth", "teams")  # the bound inputs of sql/derived_qrels.sql
MAX_DEPTH = 2**31 - 1


def check_depth(depth: int) -> None:
    if depth is None or not 1 <= depth <= MAX_DEPTH:
        raise IrwError(f"the pool depth must be at least 1 and at most {MAX_DEPTH} (got {depth})")


def check_parent(source, parent: str) -> None:
    if not engine_of(source).rows("SELECT 1 FROM qrels_info WHERE qrels = ?", [parent]):
        known = catalogue.qrels_names(source)
        raise IrwError(f"qrels {parent!r} does not exist; known: {', '.join(known) or 'none'}")


def _check_teams(source, teams: list[str], run_ids: list[str], collection: str) -> None:
    known = catalogue.teams_of(source, run_ids, collection)
    unknown = [t for t in teams if t not in known]
    if unknown:
        raise IrwError(f"unknown team(s) {', '.join(unknown)} in the run set; teams: {', '.join(known)}")
    if not teams:
        raise IrwError("no team given")


def check_targets(source, kind: str, parent: str, targets: list[tuple[str, list[str]]],
                  run_ids: list[str], replace: bool | None = None) -> list[str]:
    """The derived qrels ``targets`` = [(name, teams)] of ``parent`` can be built: named,
    distinctly, not after their parent, their teams are teams of the run set, and (unless
    ``replace`` is None) no qrels has their name, or ``replace``. Returns the names that
    exist."""
    for name, teams in targets:
        if not name or not name.strip():
            raise IrwError("a derived qrels needs a name (--name)")
        if kind in ("leave-out", "take"):
            _check_teams(source, teams, run_ids, catalogue.collection_of(source, parent))
    names = [n for n, _ in targets]
    if len(set(names)) != len(names):
        raise IrwError("the derived qrels names are not distinct")
    existing = []
    if replace is not None:
        known = set(catalogue.qrels_names(source))
        existing = [n for n in names if n in known]
        if existing and not replace:
            raise IrwError(f"qrels {', '.join(existing)} already exist(s); use --replace to replace")
    if parent in names:
        raise IrwError(f"a derived qrels cannot replace its parent {parent!r}")
    return existing


def select_sql(kind: str, dialect: str = "duckdb") -> str:
    """The SQL choosing the judgments of a derived qrels of ``kind`` (sql/derived_qrels.sql),
    over the bound parameters INPUTS (in the dialect's form)."""
    P = {name: sql.param(name, dialect) for name in INPUTS}
    return sql.statement("derived_qrels.sql", "select", kind, P, dialect=dialect)


@dataclass
class Derived:
    """A derived qrels to build: its name, how it is made, and the query of its judgments
    (``query`` over ``bind``, in the engine's dialect; columns topic, docno, rel)."""

    name: str
    kind: str
    parent: str
    params: dict
    query: str
    bind: dict = field(default_factory=dict)
    description: str | None = None


def plan(source, kind: str, parent: str, targets: list[tuple[str, list[str]]], run_ids: list[str],
         depth: int = 100, runs_spec: str = "all", replace: bool | None = None,
         description: str | None = None) -> list[Derived]:
    """Derived qrels of ``kind`` of ``parent`` for the run set ``run_ids``, one per target
    (name, teams), checked; for leave-out, the unique contributions of every team are kept
    (``irw_unique``) once for all of them. The engine computes each one's judgments from its
    ``query``."""
    engine = engine_of(source)
    if kind not in KINDS:
        raise IrwError(f"unknown kind of derived qrels {kind!r}")
    check_depth(depth)
    check_parent(engine, parent)
    check_targets(engine, kind, parent, targets, run_ids, replace)
    bind = {"parent": parent, "runs": list(run_ids), "depth": depth}
    if kind == "leave-out":  # U_t of every team, computed once for all the targets
        P = {name: sql.param(name, engine.dialect) for name in INPUTS}
        engine.keep("irw_unique", sql.statement("pool_build.sql", "unique", P, dialect=engine.dialect), bind)
    select = select_sql(kind, engine.dialect)
    out = []
    for name, teams in targets:
        params = {"runs": runs_spec, "n_runs": len(run_ids), "depth": depth}
        extra = {}
        if kind in ("leave-out", "take"):
            params["teams"] = list(teams)
            extra["teams"] = list(teams)
        out.append(Derived(name, kind, parent, params, select, sql.used({**bind, **extra}, select),
                           description))
    return out


@dataclass(frozen=True)
class Targets:
    """What a command asks to derive: the run spec the pool is made of (``shallow``: every
    run), its run ids, and the qrels to build, [(name, teams)]."""

    spec: str
    run_ids: list[str]
    targets: list[tuple[str, list[str]]]


def targets(con, kind: str, parent: str, runs="all", name: str | list[str] | None = None,
            teams: list[str] | str | None = None, prefix: str | None = None) -> Targets:
    """The derived qrels ``irw pool KIND`` (the warehouse's and Spark's) builds from
    ``parent``: ``leave-out``, one per team of ``teams`` (``"all"``: every team of the run
    set), named as :func:`leave_out_targets` names them; ``take``, one over ``teams``;
    ``depth`` and ``shallow`` (over every run), one; ``name`` required but for leave-out.
    ``con``: a connection or an engine (runsets, catalogue)."""
    if kind not in KINDS:
        raise IrwError(f"unknown kind of derived qrels {kind!r}; valid: {', '.join(KINDS)}")
    check_parent(con, parent)
    spec = "all" if kind == "shallow" else (runsets.spec_of(runs) or "all")
    run_ids = runsets.resolve(con, spec, qrels=parent)
    if kind == "leave-out":
        chosen = (list(catalogue.teams_of(con, run_ids, catalogue.collection_of(con, parent)))
                  if teams == "all" else list(teams or []))
        return Targets(spec, run_ids, leave_out_targets(parent, chosen, name, prefix))
    if not name:
        raise IrwError("a derived qrels needs a name (--name)")
    return Targets(spec, run_ids, [(name, list(teams or []) if kind == "take" else [])])


def leave_out_targets(parent: str, teams: list[str], name: str | list[str] | None = None,
                      prefix: str | None = None) -> list[tuple[str, list[str]]]:
    """The leave-out qrels to build, one per team: [(name, [team])]. ``name``: a list of
    names, one per team, or a string prefixed to each team (as ``prefix``; default prefix:
    PARENT-lo-)."""
    if not teams:
        raise IrwError("name a team with --team, or use --all-teams")
    if isinstance(name, (list, tuple)):
        if len(name) != len(teams):
            raise IrwError(f"leave-out of {len(teams)} teams needs {len(teams)} names, got {len(name)} "
                           "(one name names the qrels of one team; a prefix names several)")
        names = list(name)
    else:
        stem = name if name is not None else prefix if prefix is not None else f"{parent}-lo-"
        names = [stem + t for t in teams]
    return [(n, [t]) for n, t in zip(names, teams)]


def store(con, derived: list[Derived], replace: bool = False) -> list[dict]:
    """Store derived qrels in the warehouse (replacing qrels of the same names with
    ``replace``), in one transaction: their judgments, their catalogue rows and their
    fingerprints. Returns one summary per qrels."""
    out = []
    existing = set(catalogue.qrels_names(con))
    try:
        with transaction(con):
            for d in derived:
                if d.name in existing:
                    if not replace:
                        raise IrwError(f"qrels {d.name} already exists; use --replace to replace it")
                    drop_qrels(con, d.name)
            for d in derived:
                insert = sql.statement("pool_build.sql", "insert", d.query)
                con.execute(insert, sql.used({**d.bind, "name": d.name}, insert))
                catalogue.register_qrels(con, d.name, source=None, kind=d.kind, parent=d.parent,
                                         params=json.dumps(d.params), description=d.description)
                judged, relevant = con.execute(sql.statement("pool_build.sql", "counts"),
                                               [d.name]).fetchall()[0]
                out.append({"qrels": d.name, "kind": d.kind, "parent": d.parent, "judged": judged,
                            "relevant": relevant, **d.params})
            state.record_qrels(con, [d.name for d in derived])
    finally:
        engine_of(con).drop("irw_unique")
    return out


def build_many(con, kind: str, parent: str, targets: list[tuple[str, list[str]]], runs: str = "all",
               depth: int = 100, replace: bool = False, description: str | None = None) -> list[dict]:
    """Create several derived qrels of one kind at once in the warehouse: ``targets`` =
    [(name, teams)]."""
    if kind not in KINDS:
        raise IrwError(f"unknown kind of derived qrels {kind!r}")
    check_depth(depth)
    check_parent(con, parent)
    run_ids = runsets.resolve(con, runs, qrels=parent)
    return store(con, plan(con, kind, parent, targets, run_ids, depth, runs, replace, description), replace)


def build(con, kind: str, parent: str, name: str, runs: str = "all", depth: int = 100,
          teams: list[str] | None = None, replace: bool = False,
          description: str | None = None) -> dict:
    """Create one derived qrels ``name`` of ``kind`` (depth | shallow | leave-out | take)."""
    return build_many(con, kind, parent, [(name, teams or [])], runs, depth, replace, description)[0]


# ------------------------------------------------------------------------ statistics

def stats_sql(what: str, dialect: str = "duckdb") -> str:
    """The query of the pool statistics ``what`` (topics, multiplicity, teams, unique), over
    the bound parameters q, runs and depth (sql/pool_stats.sql)."""
    if what not in ("topics", "multiplicity", "teams", "unique"):
        raise IrwError(f"unknown statistics {what!r}; valid: {', '.join(STATS)}")
    P = {name: sql.param(name, dialect) for name in ("q", "runs", "depth")}
    return sql.statement("pool_stats.sql", what.replace("-", "_"), P, dialect=dialect)


def stats(source, what: str, qrels: str, run_ids: list[str], depth: int = 100):
    """Pool statistics ``what`` (STATS) of ``qrels`` for the runs ``run_ids``: the engine's
    relation (a DuckDB relation, a Spark DataFrame). ``judged`` evaluates FirstUnjudged and
    Judged@depth per run and topic; ``qrels`` (the mean FirstUnjudged with qrels_stats) is
    :func:`qrels_stats`."""
    engine = engine_of(source)
    if what not in STATS:
        raise IrwError(f"unknown statistics {what!r}; valid: {', '.join(STATS)}")
    check_parent(engine, qrels)
    P = {name: sql.param(name, engine.dialect) for name in ("q", "a", "b")}
    if what == "collection":
        return engine.relation(sql.statement("pool_stats.sql", "collection", P, dialect=engine.dialect),
                               {"q": qrels})
    check_depth(depth)
    if what == "judged":  # per run and topic: the measures FirstUnjudged and Judged@depth
        first, judged = parse_all(["FirstUnjudged", f"Judged@{depth}"])
        query, params, _, _ = evaluation.scores_query(engine, qrels, [first, judged], run_ids)
        engine.keep("irw_judged", f"SELECT * FROM ({query}) AS measured", params)
        return engine.relation(sql.statement("pool_stats.sql", "judged", P, dialect=engine.dialect),
                               {"a": str(first), "b": str(judged)})
    if what == "qrels":
        raise IrwError("pool stats qrels is computed in the warehouse (irw pool stats qrels)")
    return engine.relation(stats_sql(what, engine.dialect), {"q": qrels, "runs": list(run_ids), "depth": depth})


def stats_of(con, what: str, qrels: list[str], runs="all", depth: int = 100) -> Result:
    """``irw pool stats WHAT`` over the qrels ``qrels`` (several for ``qrels`` only, their
    rows one after another), the runs of the run spec ``runs`` in each qrels's collection."""
    if what not in STATS:
        raise IrwError(f"unknown statistics {what!r}; valid: {', '.join(STATS)}")
    if len(qrels) > 1 and what != "qrels":
        raise IrwError(f"pool stats {what} takes one --qrels (several: pool stats qrels)")
    out = None
    for q in qrels:
        check_parent(con, q)
        run_ids = runsets.resolve(con, runs, qrels=q)
        if what == "qrels":
            part = qrels_stats(con, q, run_ids)
        else:
            rel = stats(con, what, q, run_ids, depth)
            part = Result(rel.columns, rel.fetchall())
        out = part if out is None else Result(out.columns, out.rows() + part.rows())
    return out


def qrels_stats(con, qrels: str, run_ids: list[str]) -> Result:
    """qrels_stats of ``qrels`` with the number of runs and their mean FirstUnjudged over
    the topics (``irw pool stats qrels``)."""
    check_parent(con, qrels)
    values = [row[3] for row in evaluation.evaluate(con, qrels, parse_all(["FirstUnjudged"]), run_ids,
                                                    store=False).rows()]
    row = con.execute(sql.statement("pool_stats.sql", "qrels_row"), [qrels]).fetchall()
    mean = math.fsum(values) / len(values) if values else math.nan
    columns = ["qrels", "topics", "mean_judged", "mean_relevant", "judged", "relevant", "runs",
               "mean_first_unjudged"]
    return Result(columns, [(*r, len(run_ids), mean) for r in row])


def deeply_judged(source, qrels: str, depth: int = 50) -> list[str]:
    """Runs with at least ``depth`` documents for every topic of ``qrels``, all judged."""
    check_parent(source, qrels)
    check_depth(depth)
    return [r[0] for r in engine_of(source).rows(
        "SELECT run_id FROM deeply_judged_runs(?, ?) ORDER BY run_id", [qrels, depth])]
