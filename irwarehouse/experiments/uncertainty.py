"""``irw experiment uncertainty``: measurement uncertainty of effectiveness metrics
(Moffat, Scholer, Yang 2018; SPEC §6 "Measurement uncertainty").

Four parts, each can be run alone (``--parts``):

(a) **RBP base and residual** over φ ∈ {0.5, 0.8, …, 0.995}: quantiles of the per-(run, topic)
    ``RBP(p=φ)`` and ``RBPres(p=φ)``, box plots against the expected depth 1/(1 − φ).
(b) **τ against residual**: Kendall's τ between the run ordering by mean RBP(φ) and by each
    reference measure (P@10, RR, RPrec, R@1000, AP@1000, nDCG@1000), beside the mean residual.
(c) **Per-topic best fit**: for each topic, the φ ∈ {0.500, 0.501, …, 0.999} whose RBP(φ)
    orders the runs most like AP (and nDCG) does — by Kendall's τ and by RBO(0.9); ties go
    to the smallest φ. The best φ against R (the topic's number of relevant documents).
    RBP for all 500 φ comes from :func:`irwarehouse.experiments.vector_measures.rbp_grid`
    (one pull of the judged rows from SQL, all φ in one sparse product; equal to the SQL
    ``RBP(p=φ)``), in resumable cells of 100 φ.
(d) **Deeply-judged runs and reduced judgments**: runs with at least m (50) documents for
    every topic, all of the top m judged; reduced qrels J ∩ pool(deep runs, d') for
    d' ∈ {5, 10, 15, 20, 25, 50} (``pools.build``, kept in the warehouse as
    ``<qrels>-mu<m>-d<d'>``); pool sizes and multiplicity, per system-topic score
    differences against the deepest d' for AP, nDCG and RBP(0.98), discrimination ratios
    (paired t) with TP/FP/FN/TN against the deepest d', and τ between the RBP(0.98) residual
    and the score change. One resumable cell per d'.

Every score except the φ grid of (c) is computed by the SQL measures, many measures per pass.
"""

from __future__ import annotations


import numpy as np
import pandas as pd

from .. import catalogue
from ..engine import evaluation
from .. import measures as ms
from .. import runsets, significance, stats
from ..engine import pools
from ..errors import IrwError
from .base import Experiment, ExperimentContext, Outcome, execute, split_values
from .vector_measures import gain_data, rbp_grid

DEFAULT_PHIS = [0.5, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995]
REFERENCES = ["P@10", "RR", "RPrec", "R@1000", "AP@1000", "nDCG@1000"]
FIT_REFERENCES = ["AP", "nDCG"]
FIT_LOW, FIT_HIGH = 0.5, 0.999
FIT_BLOCK = 100  # φ values per resumable cell of part (c)
DEEP_M = 50
DEEP_DEPTHS = [5, 10, 15, 20, 25, 50]
DEEP_MEASURES = ["AP", "nDCG", "RBP(p=0.98)"]
DEEP_RESIDUAL = "RBPres(p=0.98)"
PARTS = ("a", "b", "c", "d")
_TIE = 1e-12  # best-fit values within this of the maximum tie (-> smallest φ)


def fit_grid(step: float, low: float = FIT_LOW, high: float = FIT_HIGH) -> np.ndarray:
    """φ = low, low + step, … up to high (0.500 … 0.999 for step 0.001)."""
    if not 0 < step < 1:
        raise IrwError(f"--fit-step must lie in (0, 1), got {step}")
    count = int(np.floor((high - low) / step + 1e-9)) + 1
    return np.round(low + step * np.arange(count), 10)


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _line_figure(table: pd.DataFrame, by: str, x: str, y: str, xlabel: str, ylabel: str,
                 figsize: tuple[float, float]):
    """A line per value of ``by`` (``y`` against ``x``), labelled and in the legend; the caller
    may add to the axes before ``fig.tight_layout()``."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=figsize)
    for key, frame in table.groupby(by, sort=False):
        ax.plot(frame[x], frame[y], marker="o", label=key)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig, ax


def _quantiles(values: np.ndarray) -> dict:
    q = np.quantile(values, [0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0]) if len(values) else [np.nan] * 7
    return {"n": len(values), "mean": float(np.mean(values)) if len(values) else np.nan,
            "min": q[0], "p10": q[1], "p25": q[2], "median": q[3], "p75": q[4], "p90": q[5],
            "max": q[6]}


def _matrix(per: pd.DataFrame, label: str, run_ids: list[str], topics: list[str]) -> np.ndarray:
    return significance.matrix(per, label, run_ids, topics)[0]


def _tau(x, y) -> float:
    try:
        return stats.kendall_tau(x, y)
    except ValueError:
        return float("nan")


# ---------------------------------------------------------------------------------------
# (a) and (b)
# ---------------------------------------------------------------------------------------


def part_a(ectx: ExperimentContext, scores: pd.DataFrame, phis, labels) -> None:
    rows = []
    for phi in phis:
        base, res = labels[phi]
        for component, label in (("base", base), ("residual", res)):
            values = scores.loc[scores["measure"] == label, "value"].to_numpy(dtype=float)
            rows.append({"phi": phi, "expected_depth": 1.0 / (1.0 - phi), "component": component,
                         **_quantiles(values)})
    table = pd.DataFrame(rows)
    ectx.text("**(a) RBP base and residual.** For each φ, the distribution over all (run, topic) "
              "pairs of the RBP base score and of its residual (the weight of the unjudged ranks "
              "plus the tail beyond the ranking); 1/(1 − φ) is the expected depth a user "
              "persisting with probability φ reaches.")
    ectx.table("rbp_distribution", table, "Quantiles of RBP base and residual per φ")
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    ticks = [f"{1 / (1 - p):g}\n(φ={p:g})" for p in phis]
    for ax, component in zip(axes, ("base", "residual")):
        data = [scores.loc[scores["measure"] == labels[p][0 if component == "base" else 1],
                           "value"].to_numpy(dtype=float) for p in phis]
        ax.boxplot(data, showfliers=False)
        ax.set_xticks(range(1, len(phis) + 1), ticks, fontsize=7)
        ax.set_xlabel("expected depth 1/(1−φ)")
        ax.set_title(f"RBP {component}")
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("score per run and topic")
    fig.tight_layout()
    ectx.figure("rbp_boxplots", fig, "RBP base and residual per (run, topic) against the expected depth")
    wide = table.pivot(index="phi", columns="component", values="mean")
    parts = [f"φ = {p:g}: base {wide.loc[p, 'base']:.3f}, residual {wide.loc[p, 'residual']:.3f}"
             for p in phis]
    ectx.text("Mean base and residual: " + "; ".join(parts) + ".")


def part_b(ectx: ExperimentContext, scores: pd.DataFrame, phis, labels, references,
           run_ids, topics) -> None:
    ectx.text("**(b) Rank correlation against the residual.** Kendall's τ (τ-b) between the "
              "ordering of the runs by mean RBP(φ) and by each reference measure, beside the "
              "mean RBP residual over runs and topics.")
    if len(run_ids) < 2:
        ectx.text(f"Part (b) is empty: it needs at least two runs, the run set has {len(run_ids)}.")
        return
    means = {label: np.nanmean(_matrix(scores, label, run_ids, topics), axis=1)
             for label in set(scores["measure"])}
    rows = []
    for phi in phis:
        base, res = labels[phi]
        residual = float(scores.loc[scores["measure"] == res, "value"].mean())
        for ref in references:
            rows.append({"phi": phi, "expected_depth": 1.0 / (1.0 - phi), "mean_residual": residual,
                         "reference": ref, "tau": _tau(means[ref], means[base])})
    table = pd.DataFrame(rows)
    ectx.table("residual_tau", table, "τ between the run orderings by RBP(φ) and by a reference measure")
    fig, ax = _line_figure(table, "reference", "mean_residual", "tau", "mean RBP residual",
                           "Kendall's τ with the reference ordering", (7, 4.5))
    first = table.drop_duplicates("phi")
    for r in first.itertuples():
        ax.annotate(f"φ={r.phi:g}", (r.mean_residual, table.loc[table["phi"] == r.phi, "tau"].max()),
                    textcoords="offset points", xytext=(0, 6), fontsize=7, ha="center")
    fig.tight_layout()
    ectx.figure("residual_tau", fig, "τ of RBP(φ) with each reference measure against the mean residual")
    defined = table.dropna(subset=["tau"])
    if defined.empty:
        return
    best = defined.loc[defined.groupby("reference", sort=False)["tau"].idxmax()]
    ectx.text("Highest τ per reference: " + "; ".join(
        f"{r.reference} at φ = {r.phi:g} (τ = {r.tau:.3f}, mean residual {r.mean_residual:.3f})"
        for r in best.itertuples()) + ".")


# ---------------------------------------------------------------------------------------
# (c) per-topic best fit
# ---------------------------------------------------------------------------------------


def fit_block(base: np.ndarray, phis: np.ndarray, refs: dict[str, np.ndarray], topics: list[str],
              rbo_p: float) -> pd.DataFrame:
    """τ and RBO between the run ordering of each topic by each reference measure
    (``refs[label]``: runs x topics) and by RBP(φ) (``base``: φ x runs x topics).

    RBP(φ) orders the runs identically for many neighbouring φ: each distinct ordering of a
    topic (ties included) is correlated once. Topics where a reference ties every run get
    NaN."""
    from scipy.stats import rankdata

    rows = []
    for t, topic in enumerate(topics):
        orders, inverse = np.unique(rankdata(base[:, :, t], method="min", axis=1), axis=0,
                                    return_inverse=True)
        inverse = np.asarray(inverse).ravel()
        for label, X in refs.items():
            x = X[:, t]
            if np.all(x == x[0]):
                tau = rbo = np.full(len(phis), np.nan)
            else:
                tau_u = stats.kendall_tau_many(orders, x)
                rbo_u = stats.rbo_many(x, orders, rbo_p)
                tau, rbo = tau_u[inverse], rbo_u[inverse]
            rows.append(pd.DataFrame({"topic": topic, "reference": label, "phi": phis,
                                      "tau": tau, "rbo": rbo}))
    return pd.concat(rows, ignore_index=True)


def best_phi(fit: pd.DataFrame) -> pd.DataFrame:
    """Per topic, reference and criterion (tau, rbo): the φ with the highest value; values
    within 1e-12 of the maximum tie and the smallest such φ wins."""
    rows = []
    for (topic, ref), frame in fit.groupby(["topic", "reference"], sort=False):
        frame = frame.sort_values("phi")
        for criterion in ("tau", "rbo"):
            v = frame[criterion].to_numpy(dtype=float)
            if np.all(np.isnan(v)):
                continue
            top = np.nanmax(v)
            k = int(np.flatnonzero(v >= top - _TIE)[0])
            rows.append({"topic": topic, "reference": ref, "criterion": criterion,
                         "best_phi": float(frame["phi"].iloc[k]), "value": float(v[k])})
    return pd.DataFrame(rows, columns=["topic", "reference", "criterion", "best_phi", "value"])


def part_c(ectx: ExperimentContext, qrels: str, scores: pd.DataFrame, fit_refs, run_ids, topics,
           R: dict, step: float, rbo_p: float) -> str | None:
    con = ectx.con
    grid = fit_grid(step)
    ectx.text(f"**(c) Per-topic best fit.** For each topic, the runs are ordered by each reference "
              f"measure and by RBP(φ) for φ = {grid[0]:.3f}, {grid[1] if len(grid) > 1 else grid[0]:.3f}, "
              f"…, {grid[-1]:.3f} ({len(grid)} values); the best φ gives the highest Kendall's τ "
              f"(criterion tau) or RBO({rbo_p:g}) (criterion rbo), ties going to the smallest φ. "
              "Topics where the reference ties every run are left out. RBP for the whole grid "
              "is computed in numpy from the judged rows pulled once from SQL "
              "(`vector_measures.rbp_grid`, equal to the SQL RBP(p=φ)).")
    if len(run_ids) < 3:
        ectx.text(f"Part (c) is empty: ranking runs per topic needs at least three runs, the run "
                  f"set has {len(run_ids)}.")
        return None
    refs = {label: _matrix(scores, label, run_ids, topics) for label in fit_refs}
    state: dict = {}

    def block(phis):
        if "data" not in state:
            state["data"] = gain_data(con, qrels, run_ids, topics)
        return fit_block(rbp_grid(state["data"], phis), phis, refs, topics, rbo_p)

    blocks = [grid[s:s + FIT_BLOCK] for s in range(0, len(grid), FIT_BLOCK)]
    fit = pd.concat([ectx.cell(f"fit-{b[0]:.4f}-{b[-1]:.4f}", lambda b=b: block(b))
                     for b in ectx.progress(blocks, "best fit")], ignore_index=True)
    best = best_phi(fit)
    best.insert(1, "R", best["topic"].map(R).astype("int64"))
    ectx.table("best_fit", best, "Best-fitting φ per topic")
    summary = []
    for (ref, criterion), frame in best.groupby(["reference", "criterion"], sort=False):
        phi = frame["best_phi"].to_numpy(dtype=float)
        summary.append({
            "reference": ref, "criterion": criterion, "topics": len(frame),
            "skipped": len(topics) - len(frame),
            "n_lt_0_8": int(np.sum(phi < 0.8)), "n_0_8_to_0_9": int(np.sum((phi >= 0.8) & (phi < 0.9))),
            "n_ge_0_9": int(np.sum(phi >= 0.9)), "mean_phi": float(phi.mean()),
            "median_phi": float(np.median(phi)),
            "tau_phi_R": _tau(phi, frame["R"].to_numpy(dtype=float)),
            "mean_value": float(frame["value"].mean())})
    summary = pd.DataFrame(summary)
    ectx.table("best_fit_summary", summary,
               "Best-fitting φ: counts below 0.8, in [0.8, 0.9) and from 0.9, mean and median, "
               "and Kendall's τ between best φ and R over the topics")
    plt = _plt()
    fig, axes = plt.subplots(1, len(fit_refs), figsize=(5.5 * len(fit_refs), 4.2), squeeze=False)
    for ax, ref in zip(axes[0], fit_refs):
        for criterion, marker in (("tau", "o"), ("rbo", "x")):
            frame = best[(best["reference"] == ref) & (best["criterion"] == criterion)]
            ax.scatter(frame["R"], frame["best_phi"], marker=marker, alpha=0.7,
                       label="Kendall's τ" if criterion == "tau" else f"RBO({rbo_p:g})")
        if best["R"].min() > 0 and best["R"].max() / max(best["R"].min(), 1) > 20:
            ax.set_xscale("log")
        ax.set_xlabel("R (relevant documents of the topic)")
        ax.set_ylabel("best-fitting φ")
        ax.set_title(f"RBP(φ) against {ref}")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    ectx.figure("best_fit", fig, "Per-topic best-fitting φ against the number of relevant documents")
    if len(summary):
        ectx.text("Best fit: " + "; ".join(
            f"{r.reference}/{r.criterion}: mean φ {r.mean_phi:.3f}, {r.n_lt_0_8} topics below 0.8, "
            f"{r.n_0_8_to_0_9} in [0.8, 0.9), {r.n_ge_0_9} from 0.9, τ(φ, R) = {r.tau_phi_R:.3f}"
            for r in summary.itertuples()) + ".")
    return "best_fit_summary"


# ---------------------------------------------------------------------------------------
# (d) deeply-judged runs and reduced judgments
# ---------------------------------------------------------------------------------------


def part_d(ectx: ExperimentContext, qrels: str, run_ids: list[str], m: int,
           depths: list[int], alpha: float) -> None:
    ectx.text(f"**(d) Deeply-judged runs and reduced judgments.** The deeply-judged runs have at "
              f"least m = {m} documents for every topic of {qrels}, all of the top m judged. For "
              f"each d' in {', '.join(map(str, depths))} the reduced qrels J ∩ pool(deep runs, d') "
              f"(derived qrels `{qrels}-mu{m}-d<d'>`) is evaluated against d' = {max(depths)}.")
    deep = [r for r in pools.deeply_judged(ectx.con, qrels, m) if r in set(run_ids)]
    if len(deep) < 2:
        ectx.text(f"Part (d) is empty: {len(deep)} run(s) of the run set are judged to depth {m} "
                  f"on every topic of {qrels} ({', '.join(deep) or 'none'}); it needs at least two "
                  "(choose a smaller m with --deep-m).")
        return
    labels = [str(x) for x in ms.parse_all(DEEP_MEASURES + [DEEP_RESIDUAL])]
    all_scores = _reduced_qrels(ectx, qrels, deep, m, depths)
    ref_depth = max(depths)
    topics = sorted(all_scores["topic"].unique())
    mats = {(d, label): _matrix(all_scores[all_scores["depth"] == d], label, deep, topics)
            for d in depths for label in labels}
    _score_differences(ectx, mats, labels[:-1], depths, ref_depth)
    if len(topics) < 2:
        ectx.text(f"No significance tests: the topic set has {len(topics)} topic(s).")
    else:
        _discrimination(ectx, mats, labels[:-1], depths, ref_depth, len(deep), len(topics), alpha)
    _residual_change(ectx, mats, labels[:-1], labels[-1], depths, ref_depth)


def _reduced_qrels(ectx: ExperimentContext, qrels: str, deep: list[str], m: int,
                   depths: list[int]) -> pd.DataFrame:
    """Build and evaluate the pool of the deeply-judged runs at each depth d'; report the pools'
    sizes and multiplicity bands; return the scores of every d' (with a column ``depth``)."""
    con = ectx.con
    # the pool's run set, as a run spec (stored with the derived qrels)
    spec = f"deeply-judged:{m}" if set(deep) == set(pools.deeply_judged(con, qrels, m)) else ",".join(deep)
    measures = ms.parse_all(DEEP_MEASURES + [DEEP_RESIDUAL])
    pool_rows, mult_rows, frames = [], [], []

    def name(d: int) -> str:
        return f"{qrels}-mu{m}-d{d}"

    def build(d: int) -> None:
        pools.build(con, "depth", qrels, name(d), runs=spec, depth=d, replace=True,
                    description=f"uncertainty experiment: pool of the runs judged to depth {m}, depth {d}")

    # the pools of one root, evaluated in one pass
    ready = ectx.scores_together({f"scores-d{d}": (name(d), lambda d=d: build(d)) for d in depths},
                                 measures, deep)
    for d in ectx.progress(depths, "reduced qrels"):
        bind = {"q": qrels, "runs": deep, "d": d}
        pool_rows.append(ectx.cell(f"pool-d{d}", lambda bind=bind: con.execute(
            "SELECT $d AS depth, * FROM pool_topic_stats($q, $runs, $d) ORDER BY topic", bind).df()))
        mult_rows.append(ectx.cell(f"multiplicity-d{d}", lambda bind=bind: con.execute(
            "SELECT $d AS depth, band, documents, judged, relevant, fraction_relevant "
            "FROM multiplicity_bands($q, $runs, $d) ORDER BY band_order", bind).df()))

        def scores(d=d):
            frame = ready[f"scores-d{d}"]
            frame.insert(0, "depth", d)
            return frame
        frames.append(ectx.cell(f"scores-d{d}", scores))
    per_topic = pd.concat(pool_rows, ignore_index=True)
    sizes = (per_topic.groupby("depth").agg(
        topics=("topic", "count"), mean_pool_size=("pool_size", "mean"),
        min_pool_size=("pool_size", "min"), max_pool_size=("pool_size", "max"),
        mean_judged=("judged", "mean"), mean_relevant=("relevant", "mean"),
        mean_unjudged=("unjudged", "mean")).reset_index())
    sizes.insert(1, "runs", len(deep))
    ectx.text(f"{len(deep)} deeply-judged runs: {', '.join(deep[:20])}{' …' if len(deep) > 20 else ''}.")
    ectx.table("pool_sizes", sizes, "Pool of the deeply-judged runs per d' (per topic)")
    ectx.table("multiplicity", pd.concat(mult_rows, ignore_index=True),
               "Pooled documents per multiplicity band (runs with the document in their top d')")
    return pd.concat(frames, ignore_index=True)


def _score_differences(ectx: ExperimentContext, mats: dict, labels: list[str], depths: list[int],
                       ref_depth: int) -> None:
    """Per system-topic score at each d' minus the score at the deepest d': a table and boxes."""
    diff_rows, box = [], {}
    for label in labels:
        ref = mats[(ref_depth, label)]
        for d in depths:
            if d == ref_depth:
                continue
            diff = (mats[(d, label)] - ref).ravel()
            box[(label, d)] = diff
            q = _quantiles(diff)
            diff_rows.append({"depth": d, "measure": label, "pairs": q["n"], "mean_diff": q["mean"],
                              "mean_abs_diff": float(np.mean(np.abs(diff))),
                              **{k: q[k] for k in ("min", "p10", "p25", "median", "p75", "p90", "max")}})
    if not diff_rows:
        ectx.text("No score differences: only one depth d' was given.")
        return
    ectx.table("score_differences", pd.DataFrame(diff_rows),
               f"Per system-topic score at d' minus the score at d' = {ref_depth}")
    plt = _plt()
    shallow = [d for d in depths if d != ref_depth]
    fig, axes = plt.subplots(1, len(labels), figsize=(4.5 * len(labels), 4), sharey=True)
    for ax, label in zip(np.atleast_1d(axes), labels):
        ax.boxplot([box[(label, d)] for d in shallow], showfliers=False)
        ax.set_xticks(range(1, len(shallow) + 1), [str(d) for d in shallow])
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_xlabel("pool depth d'")
        ax.set_title(label)
        ax.grid(axis="y", alpha=0.3)
    np.atleast_1d(axes)[0].set_ylabel(f"score(d') − score(d' = {ref_depth})")
    fig.tight_layout()
    ectx.figure("score_differences", fig, f"Score differences against d' = {ref_depth} per system and topic")


def _discrimination(ectx: ExperimentContext, mats: dict, labels: list[str], depths: list[int],
                    ref_depth: int, runs: int, topics: int, alpha: float) -> None:
    """Discrimination ratio (paired t) at each d' and agreement with the deepest d'."""
    disc_rows = []
    for label in labels:
        reference = significance.run_test(mats[(ref_depth, label)], "t")
        for d in depths:
            result = significance.run_test(mats[(d, label)], "t")
            power = stats.discriminative_power(result, alpha)
            agreement = stats.compare_to_reference(result, reference, alpha)
            disc_rows.append({"depth": d, "measure": label, "runs": runs, "topics": topics,
                              "pairs": power["pairs"], "significant": power["significant"],
                              "undefined": power["undefined"],
                              "discrimination_ratio": power["discriminative_power"],
                              **{k: agreement[k] for k in ("tp", "fp", "fn", "tn")}})
    disc = pd.DataFrame(disc_rows)
    ectx.table("discrimination", disc,
               f"Discrimination ratio (paired t, α = {alpha:g}) and agreement with d' = {ref_depth}")
    fig, _ = _line_figure(disc, "measure", "depth", "discrimination_ratio", "pool depth d'",
                          "fraction of run pairs significant", (6, 4))
    fig.tight_layout()
    ectx.figure("discrimination", fig, "Discrimination ratio of the deeply-judged runs against d'")
    shallowest = disc[disc["depth"] == min(depths)]
    ectx.text(f"At d' = {min(depths)}: " + "; ".join(
        f"{r.measure} discriminates {r.discrimination_ratio:.3f} of the pairs (FP {r.fp}, FN {r.fn} "
        f"against d' = {ref_depth})" for r in shallowest.itertuples()) + ".")


def _residual_change(ectx: ExperimentContext, mats: dict, labels: list[str], residual: str,
                     depths: list[int], ref_depth: int) -> None:
    """Kendall's τ between the residual at d' and the score change to the deepest d'."""
    change_rows = []
    for d in depths:
        if d == ref_depth:
            continue
        res = mats[(d, residual)].ravel()
        for label in labels:
            low, high = mats[(d, label)].ravel(), mats[(ref_depth, label)].ravel()
            positive = high > 0
            change_rows.append({
                "depth": d, "measure": label, "residual": residual, "points": len(res),
                "mean_residual": float(res.mean()),
                "tau_difference": _tau(res, high - low),
                "ratio_points": int(positive.sum()),
                "tau_ratio": _tau(res[positive], low[positive] / high[positive]) if positive.sum() >= 2 else np.nan})
    if change_rows:
        ectx.table("residual_change", pd.DataFrame(change_rows),
                   f"Kendall's τ between the residual at d' and the score change to d' = {ref_depth} "
                   "(difference: score(ref) − score(d'); ratio: score(d') / score(ref), where score(ref) > 0)")


# ---------------------------------------------------------------------------------------
# The experiment
# ---------------------------------------------------------------------------------------


def run(ectx: ExperimentContext, qrels: str, run_ids: list[str], phis, references,
        fit_refs, fit_step: float, rbo_p: float, deep_m: int, deep_depths, parts, alpha: float) -> str:
    con = ectx.con
    topics = [r[0] for r in con.execute(
        "SELECT topic FROM topic_sets WHERE qrels = ? ORDER BY topic", [qrels]).fetchall()]
    if not topics:
        raise IrwError(f"qrels {qrels} has no topic with a relevant document")
    R = dict(con.execute("SELECT topic, relevant FROM topics WHERE qrels = ?", [qrels]).fetchall())
    main = None
    if set(parts) & {"a", "b", "c"}:
        labels = {p: (str(ms.parse(f"RBP(p={p!r})")), str(ms.parse(f"RBPres(p={p!r})"))) for p in phis}
        # one SQL pass for all of (a), (b) and (c), whichever of them runs (so the cell is
        # shared by every choice of parts)
        wanted = [x for p in phis for x in labels[p]] + list(references) + list(fit_refs)
        measures = ms.parse_all(list(dict.fromkeys(wanted)))
        scores = ectx.cell("scores", lambda: evaluation.evaluate(con, qrels, measures, run_ids, store=False).df())
        if "a" in parts:
            part_a(ectx, scores, phis, labels)
            main = "rbp_distribution"
        if "b" in parts:
            part_b(ectx, scores, phis, labels, references, run_ids, topics)
            main = "residual_tau" if "residual_tau" in ectx.tables else main
        if "c" in parts:
            main = part_c(ectx, qrels, scores, fit_refs, run_ids, topics, R, fit_step, rbo_p) or main
    if "d" in parts:
        part_d(ectx, qrels, run_ids, deep_m, deep_depths, alpha)
        if main is None:
            main = next((t for t in ("discrimination", "pool_sizes") if t in ectx.tables), None)
    return main


def main(con, out: str, replace: bool, *, qrels, runs, phis, reference, fit_reference, fit_step,
         rbo_p, deep_m, deep_depths, alpha, parts) -> Outcome:
    """Measurement uncertainty: RBP residuals, best-fitting φ, deeply-judged runs (Moffat et
    al. 2018)."""
    parts_given = list(parts or [",".join(PARTS)])
    phis = list(phis or [",".join(map(str, DEFAULT_PHIS))])
    reference = list(reference or REFERENCES)
    fit_reference = list(fit_reference or FIT_REFERENCES)
    deep_depths = list(deep_depths or [",".join(map(str, DEEP_DEPTHS))])
    parts = [p for p in PARTS if p in {x.strip() for v in parts_given for x in v.split(",")}]
    unknown = {x.strip() for v in parts_given for x in v.split(",")} - set(PARTS)
    if unknown or not parts:
        raise IrwError(f"unknown part {sorted(unknown)[0] if unknown else ''!r}; valid: a, b, c, d")
    phi_list = split_values(phis, float, "--phis")
    if not phi_list or any(not 0 < p < 1 for p in phi_list):
        raise IrwError("--phis: every φ must lie strictly between 0 and 1")
    depths = sorted(split_values(deep_depths, int, "--deep-depths"))
    if not depths or depths[0] < 1:
        raise IrwError("--deep-depths: depths must be at least 1")
    if deep_m < 1:
        raise IrwError("--deep-m must be at least 1")
    if not 0 < alpha < 1:
        raise IrwError("--alpha must lie strictly between 0 and 1")
    if not 0 < rbo_p < 1:
        raise IrwError("--rbo-p must lie strictly between 0 and 1")
    references = [str(m) for m in ms.parse_all(reference)]
    fit_refs = [str(m) for m in ms.parse_all(fit_reference)]
    fit_grid(fit_step)
    # every parameter, whichever parts run: the cells (kept under these parameters) are
    # then shared by runs of different parts
    params = {"runs": runs, "phis": phi_list, "references": references,
              "fit_references": fit_refs, "fit_step": fit_step, "rbo_p": rbo_p,
              "deep_m": deep_m, "deep_depths": depths, "alpha": alpha}

    def body(ectx: ExperimentContext) -> str:
        con = ectx.con
        name = qrels or catalogue.default_qrels(con)
        catalogue.qrels_info(con, name)
        run_ids = runsets.resolve(con, runs, qrels=name)
        ectx.experiment.params.update(qrels=name, n_runs=len(run_ids))
        return run(ectx, name, run_ids, phi_list, references, fit_refs, fit_step, rbo_p,
                   deep_m, depths, parts, alpha)

    return execute(con, Experiment("uncertainty", "Measurement uncertainty (Moffat, Scholer, Yang 2018)",
                                   params), out, body, replace)
