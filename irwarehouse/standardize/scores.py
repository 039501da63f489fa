"""The scores standardization reads: evaluated (and stored) where missing, as matrices."""

from __future__ import annotations

import numpy as np

from .. import catalogue, significance, sql
from .. import measures as ms
from ..engine import evaluation

def parsed_measures(measures) -> list[ms.Measure]:
    """Measures given as names or as parsed objects."""
    out: list[ms.Measure] = []
    for m in measures:
        for p in (ms.parse_all([m]) if isinstance(m, str) else [m]):
            if p not in out:
                out.append(p)
    return out


def ensure_scores(con, qrels: str, measures: list[ms.Measure], run_ids: list[str]) -> list[str]:
    """Evaluate (and store) the runs whose stored scores for ``measures`` do not cover the
    qrels's topic set exactly; return the run ids that were evaluated."""
    labels = [str(m) for m in measures]
    missing = con.execute(sql.render("standardize_coverage.sql"),
                          {"qrels": qrels, "measures": labels, "runs": list(run_ids),
                           "collection": catalogue.collection_of(con, qrels)}).fetchall()
    if not missing:
        return []
    runs = sorted({r for r, _ in missing})
    wanted = {m for _, m in missing}
    todo = [m for m in measures if str(m) in wanted]
    evaluation.evaluate(con, qrels, todo, runs, store=True)
    return runs


def score_matrix(con, qrels: str, measure: ms.Measure, run_ids: list[str]) -> tuple[np.ndarray, list[str]]:
    """Per-topic scores (runs in the order given x topics of the qrels's topic set)."""
    m = significance.score_matrix(con, qrels, measure, list(run_ids))
    return m.X, m.topics
