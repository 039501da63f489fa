"""Run specifications: which runs a command works on.

A spec names runs of one collection: the collection of the command's qrels, unless the
command names another (``--collection``). It is a comma-separated list of items, their union
in order of appearance:

    all              every loaded run of the collection (the default)
    pooled           runs whose metadata says they contributed to the pool
    team:NAME        the runs of a team
    @FILE            run ids listed in a file (whitespace separated)
    deeply-judged[:M]  runs with at least M (default 50) documents for every topic of the
                     qrels, all of the top M judged (needs a qrels)
    RUN_ID           one run
    id:RUN_ID        one run, by its id whatever it is (irwarehouse.names)

No spec (None) means ``all``; a blank spec selects nothing and is an error, so that a
command never takes an empty or mistyped argument for "every run".
"""

from __future__ import annotations

from pathlib import Path

from . import catalogue, files
from .connection import engine_of
from .errors import IrwError, shown


def _list(names: list[str], limit: int = 30) -> str:
    if len(names) > limit:
        return ", ".join(names[:limit]) + f", ... ({len(names) - limit} more)"
    return ", ".join(names) or "none"


def read_id_file(path: str, known, what: str) -> list[str]:
    """Ids listed in a file (whitespace separated), each of which must be in ``known``."""
    file = Path(path)
    problem = files.read_once_problem(file)
    if problem:
        raise IrwError(f"{file}: {problem} ({what} list)")
    ids = file.read_text().split()
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise IrwError(f"{file}: unknown {what}(s) {_list(unknown)}; known: {_list(sorted(known))}")
    return ids


DEEPLY_JUDGED_DEPTH = 50


def collection_for(source, qrels: str | None = None, collection: str | None = None) -> str:
    """The collection whose runs a command uses: ``collection`` when named, else the qrels's,
    else the warehouse's only collection."""
    if qrels is not None:
        return catalogue.collection_of(source, qrels, collection)
    return catalogue.only_collection(source, collection)


def spec_of(runs) -> str | None:
    """A run spec from a spec or a list of run ids (``id:`` each, so that any id is one)."""
    if runs is None or isinstance(runs, str):
        return runs
    return ",".join(f"id:{r}" for r in runs)


def resolve(source, spec: str | None, qrels: str | None = None,
            collection: str | None = None) -> list[str]:
    """The run ids of a spec among the runs of ``collection`` (default: the qrels's
    collection; see :func:`collection_for`), validated against what is loaded."""
    if spec is None:
        spec = "all"
    if not str(spec).strip(" ,"):
        raise IrwError(f"the run spec {shown(spec)} selects no run (name runs: all, pooled, "
                       "team:NAME, deeply-judged[:M], @FILE, run ids)")
    spec = str(spec).strip()
    engine = engine_of(source)
    collection = collection_for(engine, qrels, collection)
    loaded = catalogue.loaded_runs(engine, collection)
    if not loaded:
        where = "" if catalogue.single_collection(engine) else f" in collection {collection!r}"
        raise IrwError(f"no runs are loaded{where}: use `irw load runs FILES"
                       + ("" if not where else f" --collection {collection}") + "` first")
    known = set(loaded)
    out: list[str] = []

    def add(ids):
        for run_id in ids:
            if run_id not in out:
                out.append(run_id)

    for item in (i.strip() for i in spec.split(",")):
        if not item:
            continue
        if item == "all":
            add(loaded)
        elif item == "pooled":
            pooled = [r[0] for r in engine.rows(
                "SELECT run_id FROM run_info WHERE pooled AND collection = ? ORDER BY run_id",
                [collection])]
            if not pooled:
                raise IrwError("no run is marked as pooled: load metadata with `irw load meta TSV`")
            add(pooled)
        elif item.startswith("team:"):
            team = item[5:]
            ids = [r[0] for r in engine.rows(
                "SELECT run_id FROM run_info WHERE team = ? AND collection = ? ORDER BY run_id",
                [team, collection])]
            if not ids:
                teams = [r[0] for r in engine.rows(
                    "SELECT DISTINCT team FROM run_info WHERE team IS NOT NULL AND collection = ? "
                    "ORDER BY team", [collection])]
                raise IrwError(f"unknown team {team!r}; teams: {_list(teams)}")
            add(ids)
        elif item == "deeply-judged" or item.startswith("deeply-judged:"):
            depth = DEEPLY_JUDGED_DEPTH
            if ":" in item:
                try:
                    depth = int(item.split(":", 1)[1])
                except ValueError:
                    raise IrwError(f"bad run spec {shown(item)}: the depth must be an integer") from None
            if not 1 <= depth <= 2**31 - 1:
                raise IrwError(f"bad run spec {shown(item)}: the depth must be from 1 to 2147483647")
            if qrels is None:
                raise IrwError("the deeply-judged run set needs a qrels (--qrels)")
            ids = [r[0] for r in engine.rows(
                "SELECT run_id FROM deeply_judged_runs(?, ?) WHERE ? = collection_of(?) ORDER BY run_id",
                [qrels, depth, collection, qrels])]
            if not ids:
                raise IrwError(f"no run is judged to depth {depth} on every topic of {qrels}")
            add(ids)
        elif item.startswith("@"):
            add(read_id_file(item[1:], known, "run"))
        elif item in known or (item.startswith("id:") and item[3:] in known):
            add([item[3:] if item.startswith("id:") and item not in known else item])
        else:
            if item.startswith("id:"):
                item = item[3:]
            elsewhere = [r[0] for r in engine.rows(
                "SELECT collection FROM run_loads WHERE run_id = ? ORDER BY collection", [item])]
            if elsewhere:
                raise IrwError(f"run {shown(item)} is not in collection {collection!r} (it is in "
                               f"{', '.join(elsewhere)}): name its collection with --collection")
            raise IrwError(f"unknown run {shown(item)}; loaded runs"
                           + ("" if len(loaded) == 0 else f" of collection {collection!r}")
                           + f": {_list(loaded)} (or all, pooled, team:NAME, deeply-judged[:M], @FILE)")
    if not out:
        raise IrwError(f"the run spec {shown(spec)} selects no run")
    return out
