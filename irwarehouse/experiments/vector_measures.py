"""Vectorized measures: the two places where the SQL measure engine is not the right tool.

Every score the warehouse reports comes from the SQL measures of ``sql/measures/``. Two
analyses of SPEC §6 need scores the engine cannot give efficiently, and compute them here,
in numpy, with tests that they equal the SQL measures (``tests/test_experiment_agreement.py``
and ``tests/test_experiment_uncertainty.py`` load the same rankings into a warehouse and
compare with :func:`irwarehouse.engine.evaluation.evaluate`):

1. **Synthetic relevance vectors** (metric agreement, Shokouhi et al. 2009): all 2^N binary
   relevance vectors of length N, or millions of random ones, have no runs or qrels to run
   SQL on. :func:`binary_scores` scores a matrix of vectors (one per row) with a measure of
   the catalogue; R (the number of relevant documents of the "topic") is N by default, so
   that every vector is a possible ranking, or one number per vector (e.g. the number of
   relevant documents in the vector).

2. **RBP over a grid of persistences** (the per-topic best fit of Moffat, Scholer, Yang
   2018: 500 values of φ). One SQL pass with 500 ``RBP(p=φ)`` measures evaluates the
   polynomial 500 times per judged row; here the judged rows are pulled from SQL **once**
   (:func:`gain_data`, from the warehouse's judged base relation) and the polynomial is
   evaluated for all φ at once as a sparse (run·topic × rank) matrix of gains times a dense
   (rank × φ) matrix of weights φ^(i−1) (:func:`rbp_grid`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .. import catalogue
from ..engine.base import base_query
from ..errors import IrwError
from ..measures import Measure

# ---------------------------------------------------------------------------------------
# 1. Binary relevance vectors
# ---------------------------------------------------------------------------------------

def _discount(measure: Measure, ranks: np.ndarray) -> np.ndarray:
    """1/log_b(i + 1) (log2p1, trec_eval) or 1/log_b(max(b, i)) (jk), as in the SQL engine."""
    base = float(measure.get("base"))
    if measure.get("discount") == "jk":
        return np.log(base) / np.log(np.maximum(base, ranks))
    return np.log(base) / np.log(ranks + 1.0)


def _ideal_dcg(measure: Measure, R: np.ndarray) -> np.ndarray:
    """The DCG of the ideal ranking of R relevant documents truncated at k, per vector."""
    k = measure.cutoff
    ideal_len = R if k is None else np.minimum(k, R)
    longest = int(ideal_len.max(initial=0))
    idcg = np.concatenate([[0.0], np.cumsum(_discount(measure, np.arange(1, longest + 1, dtype=np.float64)))])
    return idcg[ideal_len]


def _sum_of_precisions(measure, V, K, ranks, cumulative):
    return (V[:, :K] * cumulative()[:, :K]) @ (1.0 / ranks)  # SP = sum_i r_i C(i) / i


def _reciprocal_rank(measure, V, K, ranks, cumulative):
    Vk = V[:, :K]
    return np.where(Vk.any(axis=1), 1.0 / (np.argmax(Vk > 0, axis=1) + 1.0), 0.0)


def _success(measure, V, K, ranks, cumulative):
    return V[:, :K].any(axis=1).astype(np.float64)


@dataclass(frozen=True)
class VectorMeasure:
    """How :func:`binary_scores` computes a catalogue measure on binary relevance vectors:
    ``params`` it may carry; ``weights(measure, ranks, k, N)`` the weights of ranks 1..K when
    the score is linear in the vector (score = V @ w: one matrix product for all of them),
    else ``score(measure, V, K, ranks, cumulative)`` (``cumulative()``: C(i), computed once);
    ``normalizer(measure, R)`` the per-vector divisor (None: none)."""

    params: tuple[str, ...] = ()
    weights: Callable | None = None
    score: Callable | None = None
    normalizer: Callable | None = None


#: The measures :func:`binary_scores` computes (a registry: a new one is an entry here).
VECTOR_MEASURES: dict[str, VectorMeasure] = {
    "P": VectorMeasure(weights=lambda m, ranks, k, N: np.full(len(ranks), 1.0 / (k if k is not None else N))),
    "R": VectorMeasure(weights=lambda m, ranks, k, N: np.ones(len(ranks)),
                       normalizer=lambda m, R: R.astype(np.float64)),
    "SP": VectorMeasure(score=_sum_of_precisions),
    "AP": VectorMeasure(score=_sum_of_precisions, normalizer=lambda m, R: R.astype(np.float64)),
    "RR": VectorMeasure(score=_reciprocal_rank),
    "Success": VectorMeasure(score=_success),
    "DCG": VectorMeasure(("discount", "base"), weights=lambda m, ranks, k, N: _discount(m, ranks)),
    "nDCG": VectorMeasure(("discount", "base"), weights=lambda m, ranks, k, N: _discount(m, ranks),
                          normalizer=_ideal_dcg),
    "RBP": VectorMeasure(("p", "depth", "residual"),
                         weights=lambda m, ranks, k, N: (1.0 - float(m.get("p"))) * float(m.get("p")) ** (ranks - 1.0)),
}


def check_vector_measure(measure: Measure) -> None:
    """Refuse a measure :func:`binary_scores` cannot compute (with the list of those it can)."""
    spec = VECTOR_MEASURES.get(measure.name)
    if spec is None:
        raise IrwError(f"measure {measure} cannot be computed on synthetic relevance vectors; "
                       f"supported: {', '.join(VECTOR_MEASURES)} (binary relevance)")
    extra = [k for k, _ in measure.params if k not in spec.params]
    if extra:
        raise IrwError(f"measure {measure}: parameter(s) {', '.join(extra)} have no meaning on "
                       "binary relevance vectors" + (f"; allowed: {', '.join(spec.params)}" if spec.params else ""))


def binary_scores(V: np.ndarray, measures, R=None) -> np.ndarray:
    """Score every row of ``V`` (vectors x N, entries 0/1: r_i of ranks 1..N) with each of
    ``measures`` (one :class:`Measure` or a list); returns (vectors,) or (measures x vectors).

    The vectors are fully judged rankings of length N of a topic with ``R`` relevant
    documents: one number for all vectors, or one per vector (an array), default R = N.
    Definitions as in SPEC §2 and the SQL measures: P@k divides by k (no k: by N, the
    documents retrieved); R@k and AP@k by R; RR and Success look within k; DCG/nDCG use the
    measure's discount (nDCG: the ideal ranking of R relevant documents truncated at k);
    RBP = (1 − p) Σ r_i p^(i−1) (binary gains, g_max = 1). With R = 0, R@k, AP and nDCG are
    0. The measures linear in the vector (P, R, DCG, nDCG, RBP) cost one matrix product
    together.
    """
    single = isinstance(measures, Measure)
    measures = [measures] if single else list(measures)
    for m in measures:
        check_vector_measure(m)
    V = np.asarray(V)
    if V.ndim != 2:
        raise ValueError(f"expected a (vectors x N) matrix, got shape {V.shape}")
    n_vec, N = V.shape
    R = np.broadcast_to(np.asarray(N if R is None else R, dtype=np.int64), (n_vec,))
    if (R < 0).any():
        raise ValueError("R must be >= 0")
    Vf = V.astype(np.float64, copy=False)
    out = np.empty((len(measures), n_vec))
    specs = [VECTOR_MEASURES[m.name] for m in measures]

    def depth(m: Measure) -> tuple[int, np.ndarray]:
        K = N if m.cutoff is None else min(m.cutoff, N)
        return K, np.arange(1, K + 1, dtype=np.float64)

    weights = []
    for m, spec in zip(measures, specs):
        if spec.weights is None:
            weights.append(None)
            continue
        K, ranks = depth(m)
        w = np.zeros(N)
        w[:K] = spec.weights(m, ranks, m.cutoff, N)
        weights.append(w)
    linear = [i for i, w in enumerate(weights) if w is not None]
    if linear:
        out[linear] = (Vf @ np.column_stack([weights[i] for i in linear])).T
    cache: dict = {}

    def cumulative() -> np.ndarray:
        if "cum" not in cache:
            cache["cum"] = np.cumsum(Vf, axis=1)  # C(i), exact in float64
        return cache["cum"]

    for i, (measure, spec) in enumerate(zip(measures, specs)):
        if weights[i] is None:
            K, ranks = depth(measure)
            out[i] = spec.score(measure, Vf, K, ranks, cumulative)
        if spec.normalizer is not None:
            norm = spec.normalizer(measure, R)
            out[i] = np.divide(out[i], norm, out=np.zeros(n_vec), where=norm > 0)
    return out[0] if single else out


def all_vectors(N: int) -> np.ndarray:
    """The 2^N binary relevance vectors of length N (row v has r_i = bit i−1 of v), uint8."""
    if N > 24:
        raise IrwError(f"cannot enumerate 2^{N} relevance vectors; use Monte Carlo (--samples)")
    codes = np.arange(2**N, dtype=np.int64)
    return ((codes[:, None] >> np.arange(N)) & 1).astype(np.uint8)


# ---------------------------------------------------------------------------------------
# 2. RBP for a grid of persistences
# ---------------------------------------------------------------------------------------


@dataclass
class GainData:
    """The judged retrieved documents of some runs under a qrels, as sparse matrices over
    (run·topic, rank): row = run index · len(topics) + topic index, column = rank − 1.

    ``gain`` holds g_i / g_max (the default gain map of the SQL engine: gain = grade for
    grades >= 1, g_max = the topic's largest grade in its topic qrels); ``judged`` is 1 on
    every judged rank (grade >= 0). Runs that did not answer a topic have empty rows.
    """

    qrels: str
    run_ids: list[str]
    topics: list[str]
    gain: "object"  # scipy.sparse.csr_matrix
    judged: "object"  # scipy.sparse.csr_matrix
    max_rank: int

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.run_ids), len(self.topics)


def gain_data(con, qrels: str, run_ids: list[str], topics: list[str] | None = None) -> GainData:
    """Pull, in one query over the judged base relation, every judged retrieved document of
    ``run_ids`` under ``qrels`` with its normalized gain. ``topics`` defaults to the qrels's
    topic set (its topic qrels's topics with at least one relevant document)."""
    from scipy import sparse

    name, topic_qrels = catalogue.qrels_info(con, qrels)
    if topics is None:
        topics = [r[0] for r in con.execute(
            "SELECT topic FROM topic_sets WHERE qrels = ? ORDER BY topic", [name]).fetchall()]
    # The engine's base relation (see engine.base.base_query); g_max as evaluate.sql's gstats.
    # Rows come back as integer (run·topic, rank) coordinates.
    base, params = base_query(con, name, run_ids)
    cols = con.execute(f"""
        SELECT (r.i - 1) * $n_topics + (t.i - 1) AS row, b.rank - 1 AS col,
               CASE WHEN b.grade >= 1 AND g.gmax > 0 THEN b.grade / g.gmax ELSE 0.0 END AS gain
        FROM ({base}) AS b
        JOIN (SELECT unnest($runs) AS run_id, generate_subscripts($runs, 1) AS i) AS r
          ON r.run_id = b.run_id
        JOIN (SELECT unnest($topics) AS topic, generate_subscripts($topics, 1) AS i) AS t
          ON t.topic = b.topic
        LEFT JOIN (SELECT topic, greatest(max(rel), 0) AS gmax FROM qrels
                   WHERE qrels = $topic_qrels AND rel >= 0 GROUP BY topic) AS g ON g.topic = b.topic
    """, {**params, "topic_qrels": topic_qrels, "topics": list(topics),
          "n_topics": len(topics)}).fetchnumpy()
    row = np.asarray(cols["row"], dtype=np.int64)
    col = np.asarray(cols["col"], dtype=np.int64)
    gain = np.asarray(cols["gain"], dtype=np.float64)
    max_rank = int(col.max()) + 1 if len(col) else 1
    shape = (len(run_ids) * len(topics), max_rank)
    keep = gain > 0
    G = sparse.csr_matrix((gain[keep], (row[keep], col[keep])), shape=shape)
    J = sparse.csr_matrix((np.ones(len(col)), (row, col)), shape=shape)
    return GainData(name, list(run_ids), list(topics), G, J, max_rank)


def rbp_grid(data: GainData, phis, residual: bool = False):
    """RBP(p=φ) — and with ``residual`` also RBPres(p=φ) — of every run and topic of
    ``data`` for every φ of ``phis``, without a cut-off; arrays of shape (φ, runs, topics).

    Base: (1 − φ) Σ_i g_i φ^(i−1) over the relevant ranks. Residual: (1 − φ) Σ over the
    unjudged ranks of the ranking plus the tail φ^n, which equals 1 − (1 − φ) Σ over the
    judged ranks of φ^(i−1) (a run without the topic: 1). The powers φ^(i−1) form one dense
    (rank × φ) matrix, so all φ cost one sparse matrix product. Equal to the SQL measures
    ``RBP(p=φ)`` / ``RBPres(p=φ)`` up to floating-point rounding (tested).
    """
    phis = np.asarray(phis, dtype=np.float64).ravel()
    if phis.size == 0 or np.any((phis <= 0) | (phis >= 1)):
        raise IrwError("every persistence must lie strictly between 0 and 1")
    exponents = np.arange(data.max_rank, dtype=np.float64)[:, None]
    W = np.exp(exponents * np.log(phis)[None, :])  # (rank, φ): φ^(i−1)
    n_runs, n_topics = data.shape
    scale = 1.0 - phis

    def shaped(M):  # (run·topic, φ) -> (φ, runs, topics)
        return np.ascontiguousarray(np.asarray(M).T.reshape(len(phis), n_runs, n_topics))

    base = shaped((data.gain @ W) * scale[None, :])
    if not residual:
        return base
    res = shaped(1.0 - (data.judged @ W) * scale[None, :])
    return base, res
