"""The statistics of reproducibility (Breuer et al., SIGIR 2020), over arrays: how far a
reproduced ranking keeps the original's order of documents (Kendall's tau Union, rank-biased
overlap), how close its per-topic scores are (RMSE), whether the effect of an advanced run
over its baseline is kept (effect ratio, delta relative improvement), and the p-values of
the original against the reproduction.

The order statistics follow the ``repro_eval`` package, so that numbers compare with the
published ones; where its computation departs from the paper's definition, both are here:

- ``ktu_positions``: repro_eval's KTU. The two rankings (each cut at k) are paired position
  by position: the document at rank i of the original with the document at rank i of the
  reproduction, each replaced by its index in the sorted (by docno) union of both lists, and
  Kendall's tau-b is taken of the two index sequences. It measures how alike the two lists'
  docnos are in sort order rank by rank, not how the documents' ranks agree.
- ``ktu_ranks``: Kendall's tau-b of the documents' ranks over the union of both lists (the
  paper's definition): each document of the union has its rank in each list, a document
  missing from a list tied below that list's last (rank = its length + 1).
- ``rbo``: repro_eval's truncated rank-biased overlap: sum over depths d = 1..depth of
  p^(d-1) * |overlap at d| / d, divided by the sum of the weights p^(d-1) -- with p = 0.95 and
  depth 1,000 at every cut-off (a ranking cut at k < 1,000 keeps its overlap at k to depth
  1,000).
"""

from __future__ import annotations

import numpy as np

RBO_P = 0.95
RBO_DEPTH = 1000


def _tau_b(x: np.ndarray, y: np.ndarray) -> float:
    from scipy import stats

    if len(x) < 2:
        return float("nan")
    return float(stats.kendalltau(x, y).statistic)


def ktu_positions(a: list[str], b: list[str]) -> float:
    """repro_eval's Kendall's tau Union of two rankings (docnos in rank order, each cut at the
    cut-off): tau-b of the union indices paired position by position (over the first
    min(len(a), len(b)) positions)."""
    n = min(len(a), len(b))
    union, index = np.unique(np.array(list(a) + list(b), dtype=object), return_inverse=True)
    return _tau_b(index[:n], index[len(a):len(a) + n])


def ktu_ranks(a: list[str], b: list[str]) -> float:
    """Kendall's tau-b of the documents' ranks in ``a`` and in ``b`` over their union (a
    document missing from a list ranked after that list's last, all such tied)."""
    rank_a = {doc: i for i, doc in enumerate(a, 1)}
    rank_b = {doc: i for i, doc in enumerate(b, 1)}
    union = list(rank_a.keys() | rank_b.keys())
    x = np.array([rank_a.get(d, len(a) + 1) for d in union])
    y = np.array([rank_b.get(d, len(b) + 1) for d in union])
    return _tau_b(x, y)


def rbo(topic: np.ndarray, first_shared: np.ndarray, n_topics: int, p: float = RBO_P,
        depth: int = RBO_DEPTH) -> np.ndarray:
    """repro_eval's truncated RBO of each of ``n_topics`` topics, vectorized: ``topic`` (its
    index) and ``first_shared`` (the depth from which the document is in both lists: the
    larger of its two ranks) for every document both lists hold. Documents shared only
    beyond ``depth`` do not count."""
    keep = first_shared <= depth
    counts = np.zeros((n_topics, depth))
    np.add.at(counts, (topic[keep], first_shared[keep] - 1), 1.0)
    overlap = np.cumsum(counts, axis=1)  # |overlap at depth d|, d = 1..depth
    weights = p ** np.arange(depth)
    return overlap @ (weights / np.arange(1, depth + 1)) / weights.sum()


def rmse(original: np.ndarray, reproduced: np.ndarray) -> np.ndarray:
    """Root mean square error of the per-topic scores: ``original`` (topics,) against each
    row of ``reproduced`` (reproductions, topics), over the same topics."""
    diff = np.atleast_2d(reproduced) - original
    return np.sqrt(np.mean(diff ** 2, axis=1))


def effect_ratio(orig_adv: np.ndarray, orig_base: np.ndarray, rep_adv: np.ndarray,
                 rep_base: np.ndarray) -> np.ndarray:
    """ER: the reproduction's mean per-topic improvement over its baseline divided by the
    original's (each side over its own topics); one per row of ``rep_adv``/``rep_base``."""
    orig = np.mean(orig_adv - orig_base)
    rep = np.mean(np.atleast_2d(rep_adv) - np.atleast_2d(rep_base), axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return rep / orig


def delta_ri(orig_adv: np.ndarray, orig_base: np.ndarray, rep_adv: np.ndarray,
             rep_base: np.ndarray) -> np.ndarray:
    """ΔRI = RI of the original − RI of the reproduction, RI = (mean advanced − mean
    baseline) / mean baseline."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ri_orig = (np.mean(orig_adv) - np.mean(orig_base)) / np.mean(orig_base)
        base = np.atleast_2d(rep_base).mean(axis=1)
        ri_rep = (np.atleast_2d(rep_adv).mean(axis=1) - base) / base
    return ri_orig - ri_rep


def p_values(original: np.ndarray, reproduced: np.ndarray, paired: bool) -> np.ndarray:
    """Two-sided p-values of ``original`` (topics,) against each row of ``reproduced``: the
    paired t-test (a reproduction, same topics) or Student's unpaired t-test with equal
    variances (a replication), as repro_eval. Scores equal on every topic give 1.0 (the
    test's 0/0), as repro_eval gives when the runs score alike on all its measures."""
    from scipy import stats

    rep = np.atleast_2d(reproduced)
    with np.errstate(divide="ignore", invalid="ignore"):
        if paired:
            p = stats.ttest_rel(np.broadcast_to(original, rep.shape), rep, axis=1).pvalue
        else:
            p = stats.ttest_ind(np.broadcast_to(original, (rep.shape[0], len(original))), rep,
                                axis=1).pvalue
    p = np.asarray(p, dtype=float)
    if paired:
        same = np.all(rep == original, axis=1)
    else:
        same = np.array([len(row) == len(original) and np.array_equal(row, original) for row in rep])
    p[same] = 1.0
    return p
