"""Factor sets: computed from reference runs, stored, listed, shown and dropped."""

from __future__ import annotations

import pandas as pd

from .. import catalogue, connection, runsets, sql
from .. import measures as ms
from ..errors import IrwError
from .scores import ensure_scores, parsed_measures
from .shared import listed, named_statement

def check_reference(run_ids: list[str], spec: str) -> None:
    if len(run_ids) < 2:
        raise IrwError(f"standardization needs at least two reference runs; the reference "
                       f"{spec!r} selects {len(run_ids)} ({listed(run_ids)})")


def compute_factors(con, qrels: str, measures, reference_runs: list[str],
                    spec: str | None = None) -> pd.DataFrame:
    """Factors (measure, topic, mu, sigma, n_ref) of the reference runs, from the stored
    scores (evaluated first where missing). Nothing is stored."""
    parsed = parsed_measures(measures)
    labels = [str(m) for m in parsed]
    qrels, _ = catalogue.qrels_info(con, qrels)
    check_reference(reference_runs, spec or ",".join(reference_runs))
    ensure_scores(con, qrels, parsed, reference_runs)
    frame = con.execute(sql.render("standardize_factors.sql"),
                        {"qrels": qrels, "measures": labels, "runs": list(reference_runs)}).df()
    if frame.empty:
        raise IrwError(f"qrels {qrels!r} has no topic with a relevant document: nothing to standardize")
    thin = frame[frame["n_ref"] < 2]
    if not thin.empty:
        raise IrwError("fewer than two reference scores for topic(s) "
                       f"{listed(thin['topic'].unique())}: the factors need at least two")
    return frame


def factor_sets(con) -> list[str]:
    return [r[0] for r in con.execute("SELECT factors FROM std_factor_sets ORDER BY factors").fetchall()]


def factor_set_info(con, name: str) -> dict:
    """The catalogue row of a factor set, or an error listing the known sets."""
    row = con.execute(named_statement("info"), [name]).fetchone()
    if row is None:
        known = factor_sets(con)
        hint = (f"known: {listed(known)}" if known else
                "none exists yet: create one with `irw standardize factors` or `irw standardize import`")
        raise IrwError(f"unknown factor set {name!r}; {hint}")
    keys = ["factors", "qrels", "measures", "reference", "n_ref", "description", "source"]
    return dict(zip(keys, row))


def check_new_name(con, name: str, replace: bool) -> None:
    if not name or not name.strip():
        raise IrwError("a factor set needs a non-empty name (--name)")
    if name in factor_sets(con) and not replace:
        raise IrwError(f"factor set {name!r} exists; use --replace to overwrite it")


def delete_set(con, name: str) -> None:
    sql.run(con, "standardize_queries.sql", "delete_set", {"f": name})


def create_factor_set(con, name: str, measures, qrels: str | None = None,
                      reference: str = "all", description: str | None = None,
                      replace: bool = False) -> dict:
    """Compute and store a factor set; ``reference`` is a run spec (default: all runs, i.e.
    self-standardization of everything loaded)."""
    parsed = parsed_measures(measures)
    labels = [str(m) for m in parsed]
    check_new_name(con, name, replace)
    qrels = qrels or catalogue.default_qrels(con)
    qrels, _ = catalogue.qrels_info(con, qrels)
    ref_runs = runsets.resolve(con, reference, qrels=qrels)
    check_reference(ref_runs, reference)
    frame = compute_factors(con, qrels, parsed, ref_runs, spec=reference)
    described = f"{reference} ({len(ref_runs)} runs)"
    with connection.transaction(con):
        delete_set(con, name)
        con.execute(named_statement("insert_set", True),
                    [name, qrels, ", ".join(labels), described, len(ref_runs), description])
        insert_factors(con, name, qrels, frame)
        con.executemany(named_statement("insert_reference_run"), [(name, r) for r in ref_runs])
    return {"factors": name, "qrels": qrels, "measures": labels, "reference": described,
            "n_ref": len(ref_runs), "topics": int(frame["topic"].nunique()), "rows": len(frame)}


def insert_factors(con, name: str, qrels: str, frame: pd.DataFrame) -> None:
    connection.register(con, "irw_std_new", frame[["measure", "topic", "mu", "sigma", "n_ref"]])
    try:
        con.execute(named_statement("insert_factors"), [name, qrels])
    finally:
        connection.unregister(con, "irw_std_new")


def drop_factor_set(con, name: str) -> None:
    factor_set_info(con, name)
    with connection.transaction(con):
        delete_set(con, name)


def factor_summary(con, name: str) -> pd.DataFrame:
    """Per measure of a factor set: topics, n_ref, mean mu and sigma, topics with sigma 0."""
    return con.execute(named_statement("summary"), [name]).df()


def list_factor_sets(con) -> pd.DataFrame:
    return con.execute(named_statement("factor_sets")).df()


def factors_frame(con, name: str, measure: str | None = None) -> pd.DataFrame:
    factor_set_info(con, name)
    label = str(ms.parse(measure)) if measure else None
    frame = con.execute(named_statement("factors"), {"f": name, "m": label}).df()
    if frame.empty and label:
        raise IrwError(f"factor set {name!r} has no factors for measure {label}")
    return frame
