"""``irw experiment agreement``: are evaluation measures identical with binary judgements?
(Shokouhi, Yilmaz, Craswell, Robertson 2009; SPEC §6 "Metric agreement").

Two measures A and B **agree** on a pair of rankings l_i, l_j (binary relevance vectors of
length N) when sign(A(l_i) − A(l_j)) = sign(B(l_i) − B(l_j)) — both tying counts as
agreement. With fuzziness Δ > 0 they **disagree** only when they prefer opposite rankings
and both differences exceed the fuzziness: by default (``relative``, SPEC §6: Buckley &
Voorhees' percentage difference) |A(l_i) − A(l_j)| > Δ · max(|A(l_i)|, |A(l_j)|), or
(``absolute``) |A(l_i) − A(l_j)| > Δ. The agreement rate of A and B is the fraction of pairs
(of distinct vectors) on which they agree, over

- ``uniform``: all pairs of the 2^N possible vectors — enumerated exactly while 2^N is at
  most :data:`EXACT_LIMIT` (N = 10: 1,024 vectors, 523,776 pairs), otherwise Monte Carlo:
  pairs of random vectors with p(relevant) = 0.5 at every rank;
- ``sampled``: pairs of the rankings of real runs — every (run, topic) of the warehouse
  gives the binary relevance vector of its top N under a qrels (fetched with the
  ``ranking(q)`` table macro); a pair of distinct vectors u, v counts c_u · c_v times, c the
  number of rankings with that vector. Exact over the distinct vectors while there are at
  most :data:`EXACT_LIMIT`, Monte Carlo over pairs of rankings otherwise. Several qrels
  (e.g. TREC-7's and TREC-8's, each with the runs of its collection) pool their rankings:
  c counts the rankings under all of them, so pairs are drawn across collections too.

The measures are computed on the vectors in numpy
(:func:`irwarehouse.experiments.vector_measures.binary_scores`, tested against the SQL
measures), with R = N (SPEC §6) or, with ``ap_r="retrieved"``, R = the number of relevant
documents in the vector (AP divides by R; so do R@k and nDCG, if asked for). Two scores
closer than 1e-12 (relative) count as a tie: double precision cannot tell such lists apart
anyway (RBP(0.5) gives rank 54 a weight below 1e-16); for the same reason a difference
within that tolerance of Δ · scale does not exceed the fuzziness (a difference of exactly
Δ · max occurs: AP 1/6 vs .165 at N = 10, Δ = 0.01).
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

from .. import catalogue
from .. import measures as ms
from .. import runsets, stats
from ..errors import IrwError
from .base import Experiment, ExperimentContext, Outcome, execute, split_values
from .vector_measures import all_vectors, binary_scores, check_vector_measure

DEFAULT_MEASURES = ["AP", "DCG", "P@10", "RBP(p=0.5)", "RBP(p=0.8)"]
MODES = ("uniform", "sampled")
#: Readings of the fuzziness Δ: a fraction of the larger score (SPEC §6), or a difference.
FUZZINESS = ("relative", "absolute")
#: The R of the vectors' AP: N (SPEC §6), or the number of relevant documents in the vector.
AP_R = ("n", "retrieved")
#: Exact enumeration while there are at most this many distinct vectors (uniform: N <= 13).
EXACT_LIMIT = 8192
#: Monte Carlo pairs of a cell that cannot be enumerated (``--samples``).
DEFAULT_SAMPLES = 200_000
TIE_RTOL = 1e-12
#: Pairs of one Monte Carlo batch of the sampled mode (the uniform mode's batches hold
#: about 4 M relevance flags).
MC_BATCH = 1 << 16
#: Relevance flags of the vectors scored at a time in a Monte Carlo cell (the arrays of
#: their scoring -- a few times this many doubles -- stay in the processor's cache).
SCORE_ELEMENTS = 1 << 17
_CHUNK = 1 << 20  # elements of one working array


# ---------------------------------------------------------------------------------------
# The agreement predicate and rates (vectorized; no loop over pairs)
# ---------------------------------------------------------------------------------------


def differences(x: np.ndarray, y: np.ndarray, fuzziness: str = "relative"):
    """The differences x − y of one measure's scores, as (sign, size, scale, tol): size
    |x − y|; tol — the rounding tolerance TIE_RTOL · max(1, |x|, |y|); sign(x − y), 0 when
    size <= tol (a tie); scale — what the fuzziness Δ is a fraction of: max(|x|, |y|) under
    the relative reading, 1 under the absolute one."""
    d = x - y
    size = np.abs(d)
    larger = np.maximum(np.abs(x), np.abs(y))
    tol = TIE_RTOL * np.maximum(1.0, larger)
    sign = np.where(size <= tol, 0, np.sign(d)).astype(np.int8)
    if fuzziness == "relative":
        return sign, size, larger, tol
    if fuzziness == "absolute":
        return sign, size, 1.0, tol
    raise IrwError(f"unknown fuzziness {fuzziness!r}; valid: {', '.join(FUZZINESS)}")


def _exceeds(diff, delta: float) -> np.ndarray:
    """size > Δ · scale, where a size within the rounding tolerance of Δ · scale counts as
    equal to it (e.g. RBP(0.5) 100/1024 vs 99/1024 at Δ = 0.01: exactly Δ · max, not more)."""
    _, size, scale, tol = diff
    return size > delta * scale + tol


def agree(a, b, delta: float) -> np.ndarray:
    """Elementwise agreement of measures A and B on pairs, from the :func:`differences` of
    their scores (SPEC §6): Δ = 0 — equal signs (both ties agree); Δ > 0 — disagree only on
    opposite preferences with both differences exceeding the fuzziness, i.e.
    size > Δ · scale (relative: |A(l_i) − A(l_j)| > Δ · max(|A(l_i)|, |A(l_j)|))."""
    if delta <= 0:
        return a[0] == b[0]
    return ~((a[0] * b[0] < 0) & _exceeds(a, delta) & _exceeds(b, delta))


def exact_rates(S: np.ndarray, deltas, weights: np.ndarray | None = None,
                fuzziness: str = "relative"):
    """Agreement rates over all unordered pairs of distinct items (columns of ``S``).

    ``S``: (measures x items) scores; ``weights``: an integer multiplicity per item (pair
    u < v counts w_u · w_v), default 1. Returns (rates[delta][k] for the measure pairs
    ``combinations(range(M), 2)`` in order, total pair weight)."""
    M, n = S.shape
    w = np.ones(n, dtype=np.int64) if weights is None else np.asarray(weights, dtype=np.int64)
    pairs = list(combinations(range(M), 2))
    agreed = np.zeros((len(deltas), len(pairs)), dtype=np.int64)
    total = 0
    step = max(1, _CHUNK // max(1, n))
    cols = np.arange(n)
    for s in range(0, n, step):
        e = min(n, s + step)
        W = np.where(cols[None, :] > np.arange(s, e)[:, None], w[s:e, None] * w[None, :], 0)
        total += int(W.sum())
        diffs = [differences(S[m, s:e, None], S[m, None, :], fuzziness) for m in range(M)]
        for di, delta in enumerate(deltas):
            for k, (a, b) in enumerate(pairs):
                agreed[di, k] += int(W[agree(diffs[a], diffs[b], delta)].sum())
    rates = agreed / total if total else np.full(agreed.shape, np.nan)
    return rates, total


def pair_agreements(Si: np.ndarray, Sj: np.ndarray, deltas, fuzziness: str = "relative") -> np.ndarray:
    """On how many of the given pairs each two measures agree: ``Si``, ``Sj`` (measures x
    pairs) hold the scores of the two rankings of each pair. Returns counts[delta][k] over
    the measure pairs ``combinations(range(M), 2)`` (a Monte Carlo cell sums them over its
    batches of pairs)."""
    M = Si.shape[0]
    pairs = list(combinations(range(M), 2))
    diffs = [differences(Si[m], Sj[m], fuzziness) for m in range(M)]
    return np.array([[np.count_nonzero(agree(diffs[a], diffs[b], d)) for a, b in pairs] for d in deltas],
                    dtype=np.int64).reshape(len(deltas), len(pairs))


# ---------------------------------------------------------------------------------------
# The vectors: all of them, random ones, or those of real runs
# ---------------------------------------------------------------------------------------


def scores_of(V: np.ndarray, measures: list[ms.Measure], ap_r: str = "n") -> np.ndarray:
    """(measures x vectors) scores of the rows of V, with R (AP's divisor, also used by R@k
    and nDCG) = N (``ap_r="n"``) or the number of relevant documents in each vector
    (``"retrieved"``; a vector without any scores 0)."""
    if ap_r == "n":
        return binary_scores(V, measures)
    if ap_r == "retrieved":
        return binary_scores(V, measures, R=np.asarray(V).sum(axis=1, dtype=np.int64))
    raise IrwError(f"unknown --ap-r {ap_r!r}; valid: {', '.join(AP_R)}")


def real_vectors(con, qrels: str, run_ids: list[str], n: int) -> pd.DataFrame:
    """The distinct binary relevance vectors of the top ``n`` of the rankings of ``run_ids``
    under ``qrels`` (relevant: grade >= 1; a ranking shorter than n is padded with
    non-relevant ranks), with how many (run, topic) rankings have each. Topics: the qrels's
    topic set, for the runs that answered them. Columns: relevant_ranks (text '1,3,7'),
    rankings."""
    return con.execute("""
        WITH answered AS (
            SELECT rt.run_id, rt.topic FROM run_topics rt
            JOIN topic_sets ts ON ts.qrels = $q AND ts.topic = rt.topic
            WHERE rt.collection = collection_of($q) AND list_contains($runs, rt.run_id)
        ), rel AS (
            SELECT run_id, topic, string_agg(rank::VARCHAR, ',' ORDER BY rank) AS relevant_ranks
            FROM ranking($q)
            WHERE grade >= 1 AND rank <= $n AND list_contains($runs, run_id)
            GROUP BY run_id, topic
        )
        SELECT coalesce(rel.relevant_ranks, '') AS relevant_ranks, count(*) AS rankings
        FROM answered a LEFT JOIN rel ON rel.run_id = a.run_id AND rel.topic = a.topic
        GROUP BY 1 ORDER BY rankings DESC, relevant_ranks
    """, {"q": qrels, "runs": run_ids, "n": n}).df()


def pooled_vectors(con, qrels: list[str], run_ids: dict[str, list[str]], n: int) -> pd.DataFrame:
    """:func:`real_vectors` of the rankings under every qrels of ``qrels`` (each with its runs
    ``run_ids[q]``), pooled: each distinct vector with the number of rankings having it under
    any of them, in the same order (rankings descending, then the vector)."""
    frames = [real_vectors(con, q, run_ids[q], n) for q in qrels]
    if len(frames) == 1:
        return frames[0]
    pooled = pd.concat(frames).groupby("relevant_ranks", as_index=False)["rankings"].sum()
    return pooled.sort_values(["rankings", "relevant_ranks"], ascending=[False, True],
                              ignore_index=True)


def vectors_from_ranks(texts, n: int) -> np.ndarray:
    """Rows of 0/1 from texts '1,3,7' of relevant ranks."""
    V = np.zeros((len(texts), n), dtype=np.uint8)
    for row, text in enumerate(texts):
        if text:
            V[row, np.array(text.split(","), dtype=np.int64) - 1] = 1
    return V


def _bits(v: np.ndarray, limit: int = 40) -> str:
    text = "".join("1" if x else "0" for x in v[:limit])
    return text + ("…" if len(v) > limit else "")


# ---------------------------------------------------------------------------------------
# One (mode, N) cell
# ---------------------------------------------------------------------------------------


def _rows(measures, rates, deltas, n, mode, pairs, method, std_error, vectors, rankings,
          fuzziness, ap_r):
    labels = [str(m) for m in measures]
    out = []
    for di, delta in enumerate(deltas):
        for k, (a, b) in enumerate(combinations(range(len(labels)), 2)):
            rate = float(rates[di][k])
            se = (float(np.sqrt(rate * (1 - rate) / pairs)) if std_error and pairs else np.nan)
            out.append({"measure_a": labels[a], "measure_b": labels[b], "n": n, "delta": delta,
                        "fuzziness": fuzziness, "mode": mode, "agreement": rate, "pairs": pairs,
                        "method": method, "std_error": se, "ap_r": ap_r, "vectors": vectors,
                        "rankings": rankings})
    return pd.DataFrame(out)


def uniform_cell(measures, n: int, deltas, samples: int, seed: int,
                 fuzziness: str = "relative", ap_r: str = "n",
                 exact_limit: int = EXACT_LIMIT) -> pd.DataFrame:
    """All pairs of the 2^n vectors (exact) while there are at most ``exact_limit``,
    otherwise ``samples`` random pairs (Monte Carlo)."""
    how = {"fuzziness": fuzziness, "ap_r": ap_r}
    if 2**min(n, 63) <= exact_limit:
        S = scores_of(all_vectors(n), measures, ap_r)
        rates, total = exact_rates(S, deltas, fuzziness=fuzziness)
        return _rows(measures, rates, deltas, n, "uniform", total, "exact", False, 2**n, 2**n, **how)
    rng = stats.rng_of(seed)
    step = int(np.clip((1 << 22) // n, 1024, 1 << 16))  # pairs drawn at a time
    part = max(1, SCORE_ELEMENTS // n)  # pairs scored at a time (their arrays stay in cache)
    nbytes = -(-n // 8)
    agreed, used = 0, 0  # running sums: memory does not grow with the number of pairs
    for s in range(0, samples, step):
        size = min(step, samples - s)
        # p(relevant) = 0.5 at every rank: the bits of uniform random bytes
        bits = np.unpackbits(rng.integers(0, 256, size=(2 * size, nbytes), dtype=np.uint8),
                             axis=1, count=n)
        for t in range(0, size, part):
            A, B = bits[t:min(t + part, size)], bits[size + t:size + min(t + part, size)]
            distinct = (A != B).any(axis=1)  # pairs of identical vectors are not pairs
            agreed = agreed + pair_agreements(scores_of(A[distinct], measures, ap_r),
                                              scores_of(B[distinct], measures, ap_r), deltas, fuzziness)
            used += int(distinct.sum())
    rates = agreed / used
    return _rows(measures, rates, deltas, n, "uniform", used, "monte-carlo", True, 2 * used,
                 2 * used, **how)


def sampled_cell(measures, n: int, deltas, samples: int, seed: int, vectors: pd.DataFrame,
                 fuzziness: str = "relative", ap_r: str = "n",
                 exact_limit: int = EXACT_LIMIT) -> pd.DataFrame:
    """Pairs of real rankings with distinct vectors (``vectors``: relevant_ranks, rankings):
    all of them (exact) while there are at most ``exact_limit`` distinct vectors, otherwise
    ``samples`` random pairs of rankings (Monte Carlo)."""
    how = {"fuzziness": fuzziness, "ap_r": ap_r}
    counts = vectors["rankings"].to_numpy(np.int64)
    total_rankings = int(counts.sum())
    if len(counts) < 2:
        raise IrwError(f"the rankings have fewer than two distinct relevance vectors at N = {n}: "
                       "no pair to compare")
    S = scores_of(vectors_from_ranks(vectors["relevant_ranks"].tolist(), n), measures, ap_r)
    if len(counts) <= exact_limit:
        rates, total = exact_rates(S, deltas, counts, fuzziness)
        return _rows(measures, rates, deltas, n, "sampled", total, "exact", False, len(counts),
                     total_rankings, **how)
    # each ranking of a pair drawn by its vector's frequency, by inverse CDF (as
    # numpy's Generator.choice draws): the first rankings from the seed's stream, the second
    # ones from the same stream after the first ones' draws; in batches, with running sums
    cdf = np.cumsum(counts / total_rankings)
    cdf /= cdf[-1]
    first, second = stats.rng_of(seed), stats.rng_of(seed)
    second.bit_generator.advance(samples)  # one 64-bit step per uniform draw
    agreed, used = 0, 0
    for s in range(0, samples, MC_BATCH):
        size = min(MC_BATCH, samples - s)
        i = cdf.searchsorted(first.random(size), side="right")
        j = cdf.searchsorted(second.random(size), side="right")
        keep = i != j  # two rankings with the same vector are not a pair
        agreed = agreed + pair_agreements(S[:, i[keep]], S[:, j[keep]], deltas, fuzziness)
        used += int(keep.sum())
    return _rows(measures, agreed / used, deltas, n, "sampled", used, "monte-carlo", True,
                 len(counts), total_rankings, **how)


# ---------------------------------------------------------------------------------------
# The experiment
# ---------------------------------------------------------------------------------------

MAIN_COLUMNS = ["measure_a", "measure_b", "n", "delta", "fuzziness", "mode", "agreement", "pairs",
                "method", "std_error", "ap_r"]

FUZZINESS_TEXT = {
    "relative": "the fuzziness is relative (Buckley & Voorhees' percentage difference, SPEC "
                "§6): a difference of A exceeds it when |A(l_i) − A(l_j)| > Δ · "
                "max(|A(l_i)|, |A(l_j)|)",
    "absolute": "the fuzziness is absolute: a difference of A exceeds it when "
                "|A(l_i) − A(l_j)| > Δ (Δ in the units of each measure's scores)",
}
AP_R_TEXT = {
    "n": "AP divides by R = N (SPEC §6: every vector is a ranking of a topic with N relevant "
         "documents)",
    "retrieved": "AP divides by R = the number of relevant documents in the vector (a vector "
                 "without relevant documents has AP 0)",
}


def run(ectx: ExperimentContext, measures: list[ms.Measure], ns: list[int], deltas: list[float],
        modes: list[str], seed: int, samples: int, qrels: list[str] | None,
        run_ids: dict[str, list[str]] | None, fuzziness: str = "relative", ap_r: str = "n") -> str:
    con = ectx.con
    frames, vector_rows = [], []
    cells = [(mode, n) for mode in modes for n in ns]
    how = {"fuzziness": fuzziness, "ap_r": ap_r}
    tag = f"{fuzziness}-r{ap_r}"  # the cell key holds every parameter; the name shows these two
    for mode, n in ectx.progress(cells, "agreement"):
        if mode == "uniform":
            frame = ectx.cell(f"uniform-n{n}-{tag}",
                              lambda: uniform_cell(measures, n, deltas, samples, seed, **how))
        else:
            vectors = ectx.cell(f"vectors-n{n}", lambda: pooled_vectors(con, qrels, run_ids, n))
            frame = ectx.cell(f"sampled-n{n}-{tag}",
                              lambda: sampled_cell(measures, n, deltas, samples, seed, vectors, **how))
            top = vectors.head(10)
            V = vectors_from_ranks(top["relevant_ranks"].tolist(), n)
            total = int(vectors["rankings"].sum())
            for v, count in zip(V, top["rankings"]):
                vector_rows.append({"n": n, "vector": _bits(v), "relevant": int(v.sum()),
                                    "rankings": int(count), "fraction": count / total})
        frames.append(frame)
    result = pd.concat(frames, ignore_index=True)
    main = result[MAIN_COLUMNS]

    ectx.text(
        "Agreement of evaluation measures on binary relevance vectors of length N (Shokouhi et "
        "al. 2009). For two rankings l_i and l_j, measures A and B agree when "
        "sign(A(l_i) − A(l_j)) = sign(B(l_i) − B(l_j)) (both tying counts as agreement); with "
        "Δ > 0 they disagree only when they prefer opposite rankings and both differences "
        f"exceed the fuzziness. Here {FUZZINESS_TEXT[fuzziness]} (`--fuzziness {fuzziness}`, "
        f"column fuzziness); {AP_R_TEXT[ap_r]} (`--ap-r {ap_r}`, column ap_r); P@10 divides by "
        "10 whatever N. Pairs are pairs of distinct "
        "vectors. *uniform*: all pairs of the 2^N vectors (exact) or random pairs with "
        "p(relevant) = 0.5 (Monte Carlo, std_error = √(a(1−a)/pairs)); *sampled*: pairs of the "
        "real rankings of the warehouse's runs, each pair of distinct vectors weighted by how "
        "many rankings have them"
        + (f" (the rankings under the qrels {', '.join(qrels)} pooled)" if qrels and len(qrels) > 1 else "")
        + ". Scores within 1e-12 (relative) of each other tie, and a "
        "difference within that tolerance of the fuzziness does not exceed it.")
    ectx.table("agreement", main, "Agreement rate of each pair of measures")
    summary = (result.groupby(["mode", "n", "method"], sort=False)
               .agg(vectors=("vectors", "first"), rankings=("rankings", "first"),
                    pairs=("pairs", "first")).reset_index())
    ectx.table("vectors", summary, "Vectors and pairs behind each (mode, N): vectors — distinct "
               "relevance vectors (uniform Monte Carlo: vectors drawn); rankings — the rankings "
               "they stand for (sampled: real (run, topic) rankings; uniform: one per vector)")
    if vector_rows:
        ectx.table("frequent_vectors", pd.DataFrame(vector_rows),
                   "The most frequent relevance vectors of the real rankings (sampled mode)")
    _figure(ectx, main, [str(m) for m in measures])
    lowest = main.loc[main["agreement"].idxmin()]
    highest = main.loc[main["agreement"].idxmax()]
    ectx.text(f"Lowest agreement: {lowest.measure_a} vs {lowest.measure_b} "
              f"({lowest['mode']}, N = {lowest.n}, Δ = {lowest.delta:g}): {lowest.agreement:.4f}; "
              f"highest: {highest.measure_a} vs {highest.measure_b} ({highest['mode']}, "
              f"N = {highest.n}, Δ = {highest.delta:g}): {highest.agreement:.4f}.")
    return "agreement"


def _figure(ectx: ExperimentContext, main: pd.DataFrame, labels: list[str]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = list(main.groupby(["mode", "n", "delta"], sort=False))[:12]
    cols = min(3, len(groups))
    rows = -(-len(groups) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 4.0 * rows), squeeze=False)
    index = {label: i for i, label in enumerate(labels)}
    for ax, ((mode, n, delta), frame) in zip(axes.ravel(), groups):
        A = np.eye(len(labels))
        for r in frame.itertuples():
            A[index[r.measure_a], index[r.measure_b]] = A[index[r.measure_b], index[r.measure_a]] = r.agreement
        image = ax.imshow(A, vmin=min(0.5, float(A.min())), vmax=1.0, cmap="viridis")
        ax.set_xticks(range(len(labels)), labels, rotation=45, ha="right", fontsize=8)
        ax.set_yticks(range(len(labels)), labels, fontsize=8)
        for a in range(len(labels)):
            for b in range(len(labels)):
                ax.text(b, a, f"{A[a, b]:.3f}", ha="center", va="center", fontsize=7,
                        color="white" if A[a, b] < 0.8 else "black")
        ax.set_title(f"{mode}, N = {n}, Δ = {delta:g}" + (f" ({frame['fuzziness'].iloc[0]})" if delta else ""),
                     fontsize=9)
        fig.colorbar(image, ax=ax, fraction=0.046)
    for ax in axes.ravel()[len(groups):]:
        ax.axis("off")
    fig.tight_layout()
    fuzziness = main["fuzziness"].iloc[0]
    ectx.figure("matrix", fig, f"Agreement rate of each pair of measures ({fuzziness} fuzziness)")


def main(con, out: str, replace: bool, *, n, delta, fuzziness, ap_r, mode, measure, seed,
         samples, qrels, runs) -> Outcome:
    """Metric agreement on binary relevance vectors (Shokouhi et al. 2009)."""
    n = list(n or ["10"])
    delta = list(delta or ["0"])
    mode = list(mode or ["uniform"])
    measure = list(measure or DEFAULT_MEASURES)
    parsed = ms.parse_all(measure)
    for m in parsed:
        check_vector_measure(m)
    if len(parsed) < 2:
        raise IrwError("agreement needs at least two measures")
    modes = split_values(mode, str, "--mode")
    bad = [m for m in modes if m not in MODES]
    if bad:
        raise IrwError(f"unknown mode {bad[0]!r}; valid: {', '.join(MODES)}")
    ns = split_values(n, int, "--n")
    if any(x < 1 for x in ns):
        raise IrwError("--n must be at least 1")
    deltas = split_values(delta, float, "--delta")
    if any(not 0 <= d < float("inf") for d in deltas):
        raise IrwError("--delta must be >= 0")
    if samples < 1:
        raise IrwError("--samples must be at least 1 (the Monte Carlo pairs of a cell that "
                       f"cannot be enumerated: more than {EXACT_LIMIT:,} distinct vectors)")
    if fuzziness not in FUZZINESS:
        raise IrwError(f"unknown --fuzziness {fuzziness!r}; valid: {', '.join(FUZZINESS)}")
    if ap_r not in AP_R:
        raise IrwError(f"unknown --ap-r {ap_r!r}; valid: {', '.join(AP_R)}")
    params = {"measures": [str(m) for m in parsed], "n": ns, "delta": deltas,
              "fuzziness": fuzziness, "ap_r": ap_r, "mode": modes, "seed": seed,
              "samples": samples}

    def body(ectx: ExperimentContext) -> str:
        con = ectx.con
        names, run_ids = None, None
        if "sampled" in modes:
            names = catalogue.expand_qrels(con, split_values(qrels, str, "--qrels") if qrels else None)
            for q in names:
                catalogue.qrels_info(con, q)
            run_ids = {q: runsets.resolve(con, runs, qrels=q) for q in names}
            # the parameters (and the cells kept under them) name the qrels and runs used
            ectx.experiment.params.update(qrels=",".join(names), runs=runs,
                                          n_runs=sum(len(r) for r in run_ids.values()))
        return run(ectx, parsed, ns, deltas, modes, seed, samples, names, run_ids, fuzziness, ap_r)

    return execute(con, Experiment("agreement", "Metric agreement (Shokouhi et al. 2009)", params),
                   out, body, replace)
