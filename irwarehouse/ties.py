"""How much the runs' scores depend on their ties (``irw ties``): per run, its tie groups
(SPEC section 2, "Ties"; sql/ties.sql), and per measure its mean under the stored ranking
(tie policy ``trec_eval``), its exact mean over every way of breaking its ties (``expected``;
empty for a measure without an exact computation) and the difference, and the bounds over
every way (``optimistic``, ``pessimistic``), with the run's place on the leaderboard under the stored ranking and the
best and worst places any tie-breaking of every run gives it.

A run's best place counts the runs whose pessimistic mean is above its optimistic mean; its
worst place the runs whose optimistic mean is above its pessimistic mean: each run's ties
are broken independently of the others', so every place between the two is reached by some
tie-breaking (for measures that reward relevant documents ranked higher, which the bounds
assume).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import catalogue, sql
from .engine import evaluation
from .engine.rendering import has_expectation
from .errors import note
from .measures import Measure

# The columns of the table, in order.
COLUMNS = ("run_id", "tie_groups", "tied_docs", "topics_with_ties", "measure", "trec_eval",
           "expected", "trec_eval_minus_expected", "optimistic", "pessimistic", "spread", "place",
           "best_place", "worst_place")
POLICIES = ("trec_eval", "optimistic", "pessimistic")


def _means(con, qrels: str, measures: list[Measure], run_ids: list[str], topics: str, policy: str) -> pd.Series:
    """Each run's mean of each measure under tie policy ``policy``, by (measure, run_id)."""
    frame = evaluation.evaluate(con, qrels, measures, run_ids, topics=topics, store=False,
                                ties=policy).aggregate().df()
    return frame.set_index(["measure", "run_id"])["value"]


def tie_counts(con, qrels: str, run_ids: list[str]) -> pd.DataFrame:
    """Per run of ``run_ids`` (of the collection of ``qrels``): its tie groups, the documents
    in them and the topics with one (run_id, tie_groups, tied_docs, topics_with_ties)."""
    collection = catalogue.collection_of(con, catalogue.qrels_info(con, qrels)[0])
    return pd.DataFrame(sql.rows(con, "ties.sql", "counts", {"collection": collection, "runs": list(run_ids)}),
                        columns=["run_id", "tie_groups", "tied_docs", "topics_with_ties"])


def tie_table_empty() -> pd.DataFrame:
    """The table of :func:`tie_table` with no rows."""
    return pd.DataFrame(columns=list(COLUMNS))


def tie_table(con, qrels: str, measures: list[Measure], run_ids: list[str],
              topics: str = "qrels", counts: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per run and measure (:data:`COLUMNS`), the runs in order of their place under
    the stored ranking, per measure in the order given; ``counts``: the runs' tie_counts, if
    the caller has them."""
    name, _ = catalogue.qrels_info(con, qrels)
    counts = tie_counts(con, name, run_ids) if counts is None else counts
    means = {}
    for policy in POLICIES:
        means[policy] = _means(con, name, measures, run_ids, topics, policy)
    exact = [m for m in measures if has_expectation(m)]
    means["expected"] = _means(con, name, exact, run_ids, topics, "expected") if exact else None
    missing = [str(m) for m in measures if not has_expectation(m)]
    if missing:
        note(f"no exact expectation over the ties is built for {', '.join(missing)}: "
             "its expected column is empty")
    frames = []
    for measure in (str(m) for m in measures):
        te, best, worst = (means[p].xs(measure) for p in POLICIES)
        runs = te.index
        expected = (means["expected"].xs(measure).reindex(runs) if measure not in missing
                    else pd.Series(float("nan"), index=runs))
        t, b, w = te.to_numpy(), best.reindex(runs).to_numpy(), worst.reindex(runs).to_numpy()
        others = ~np.eye(len(runs), dtype=bool)

        def above(of, than):  # per run i, the other runs j with of[j] > than[i]
            return ((of[None, :] > than[:, None]) & others).sum(axis=1)

        frames.append(pd.DataFrame({
            "run_id": runs, "measure": measure, "trec_eval": t, "expected": expected.to_numpy(),
            "trec_eval_minus_expected": t - expected.to_numpy(), "optimistic": b, "pessimistic": w,
            "spread": b - w, "place": 1 + above(t, t), "best_place": 1 + above(w, b),
            "worst_place": 1 + above(b, w)}))
    table = pd.concat(frames, ignore_index=True)
    table = counts.merge(table, on="run_id", how="right")
    order = {m: i for i, m in enumerate(str(m) for m in measures)}
    table = table.sort_values(["measure", "place", "run_id"], key=lambda c: c.map(order) if c.name == "measure" else c)
    return table[list(COLUMNS)].reset_index(drop=True)
