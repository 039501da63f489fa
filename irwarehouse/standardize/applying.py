"""Applying a factor set: per-topic scores standardized, and the warehouse's standardized
scores (the views ``std_scores`` / ``std_score_means``)."""

from __future__ import annotations

import pandas as pd

from .. import catalogue, connection, sql
from .. import measures as ms
from ..errors import IrwError
from .factors import factor_set_info
from .scores import ensure_scores
from .shared import listed, named_statement

def _check_coverage(have: pd.DataFrame, per: pd.DataFrame, name: str) -> None:
    """Every (measure, topic) of ``per`` must have factors in ``have``: else an error naming
    the missing measure(s) or topic(s)."""
    measures_have = set(have["measure"])
    missing_m = [m for m in dict.fromkeys(per["measure"]) if m not in measures_have]
    if missing_m:
        raise IrwError(f"factor set {name} has no factors for measure(s) {listed(missing_m)}; "
                       f"it has: {listed(sorted(measures_have))}")
    keys = set(zip(have["measure"], have["topic"]))
    for measure, topics in per.groupby("measure", sort=False)["topic"]:
        lacking = sorted({t for t in topics if (measure, t) not in keys})
        if lacking:
            raise IrwError(f"factor set {name} lacks topic(s) {listed(lacking)} for measure {measure}")


def standardize_frame(con, per: pd.DataFrame, factors: str | pd.DataFrame,
                      name: str | None = None) -> pd.DataFrame:
    """Standardize per-topic scores (run_id, topic, measure, value) in SQL, with a stored
    factor set (its name) or a frame of factors (measure, topic, mu, sigma). Returns
    run_id, topic, measure, value, mu, sigma, z, phi."""
    stored = isinstance(factors, str)
    if stored:
        factor_set_info(con, factors)
        have = con.execute("SELECT measure, topic FROM std_factors WHERE factors = ?", [factors]).df()
        name = factors
    else:
        have = factors
    _check_coverage(have, per, name or "(computed)")
    connection.register(con, "irw_std_scores_in", per[["run_id", "topic", "measure", "value"]])
    if not stored:
        connection.register(con, "irw_std_factors_in", factors[["measure", "topic", "mu", "sigma"]])
    try:
        return con.execute(sql.render("standardize_apply.sql", stored=stored),
                           {"factors": factors} if stored else {}).df()
    finally:
        connection.unregister(con, "irw_std_scores_in")
        if not stored:
            connection.unregister(con, "irw_std_factors_in")


def apply_factors(con, per: pd.DataFrame, factors: str) -> pd.DataFrame:
    """``irw eval --standardize``: the same frame with each value replaced by Phi(z)."""
    out = standardize_frame(con, per, factors)
    out = out[["run_id", "topic", "measure", "phi"]].rename(columns={"phi": "value"})
    return out.sort_values(["run_id", "topic", "measure"], kind="stable").reset_index(drop=True)


def standardized_scores(con, factors: str, measures=None, run_ids: list[str] | None = None,
                        per_topic: bool = False) -> pd.DataFrame:
    """Standardized scores from the views ``std_scores`` / ``std_score_means`` for the runs
    (default: all loaded), evaluating runs whose scores are not stored yet."""
    info = factor_set_info(con, factors)
    set_labels = [r[0] for r in con.execute(
        "SELECT DISTINCT measure FROM std_factors WHERE factors = ? ORDER BY measure", [factors]).fetchall()]
    labels = [str(m) for m in ms.parse_all(measures)] if measures else set_labels
    missing = [m for m in labels if m not in set_labels]
    if missing:
        raise IrwError(f"factor set {factors} has no factors for measure(s) {listed(missing)}; "
                       f"it has: {listed(set_labels)}")
    if info["qrels"] not in catalogue.qrels_names(con):
        raise IrwError(f"factor set {factors} standardizes qrels {info['qrels']!r}, "
                       "which is not loaded in this warehouse")
    run_ids = run_ids or catalogue.loaded_runs(con, catalogue.collection_of(con, info["qrels"]))
    ensure_scores(con, info["qrels"], ms.parse_all(labels), run_ids)
    params = {"f": factors, "q": info["qrels"], "labels": labels, "runs": list(run_ids)}
    rows = con.execute(named_statement("scores"), params).df()
    order = {m: i for i, m in enumerate(labels)}
    rows = rows.sort_values(["run_id", "measure", "topic"], kind="stable",
                            key=lambda col: col.map(order) if col.name == "measure" else col)
    lacking = rows[rows["phi"].isna()]
    if not lacking.empty:
        measure = lacking["measure"].iloc[0]
        topics = sorted(lacking[lacking["measure"] == measure]["topic"].unique())
        raise IrwError(f"factor set {factors} lacks topic(s) {listed(topics)} for measure {measure}")
    rows = rows.reset_index(drop=True)
    if per_topic:
        return rows
    means = (rows.groupby(["run_id", "measure"], sort=False)
             .agg(mean_phi=("phi", "mean"), mean_z=("z", "mean"), mean_value=("value", "mean"),
                  n_topics=("phi", "count"), in_reference=("in_reference", "first"))
             .reset_index())
    return means.reset_index(drop=True)
