"""Judging the judges: a judgment set B (an automatic judge, a second assessor, a pool)
against a reference set A of the same collection, as assessors and as rankings of the runs,
with the tables and figures of a paper. Every number is computed by :mod:`irwarehouse.judges`
(``irw qrels compare`` and ``irw qrels rankings``): this module lays them out."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import catalogue, judges, measures, runsets, significance, stats
from .base import Experiment, ExperimentContext, Outcome, execute, require

DEFAULT_MEASURES = ["AP", "nDCG@10", "P@10"]


def run(ectx: ExperimentContext, a: str, b: str, run_ids: list[str], labels: list[str], by: str,
        rel_level: int, samples: int, permutations: int, test: str, alpha: float,
        bias_correction: str, top_k: int, rbo_p: float, seed: int) -> str:
    con = ectx.con
    counts = judges.pair_counts(con, a, b)
    agreement = judges.agreement_frame(counts, rel_level)
    overall = agreement.iloc[-1]
    ectx.text(
        f"Judgment set `{b}` against the reference `{a}`. As assessors, over the documents both "
        f"judged ({int(overall['both'])}; {int(overall['only_a'])} judged by `{a}` only, "
        f"{int(overall['only_b'])} by `{b}` only): Cohen's κ on the binary labels (relevant at "
        f"grade ≥ {rel_level}), weighted κ on the grades (linear and quadratic disagreement "
        "weights |i − j| and (i − j)² of the grades), Krippendorff's α (nominal on the binary "
        "labels, ordinal on the grades; two coders, the coincidence matrix of the 2n pairable "
        f"values), per topic and over all documents (`all`). Overall κ = {overall['kappa']:.4f}, "
        f"ordinal α = {overall['alpha_ordinal']:.4f}.")
    ectx.table("agreement", agreement, "Agreement per topic and overall (`all`)", show=60)
    intervals = judges.intervals_frame(counts, rel_level, samples, seed, 0.95)
    ectx.text(f"Intervals: 95% bootstrap percentile intervals of the overall values, {samples} samples "
              f"of the topics with replacement (seed {seed}).")
    ectx.table("intervals", intervals, "Overall agreement with bootstrap intervals over topics")
    confusion = judges.confusion_frame(counts, per_topic=True).df()
    ectx.table("confusion", confusion, "Confusion matrix of grades (rows: A; columns: B; "
               "`unjudged`: judged by one set only), per topic and overall", show=12)

    r = judges.rankings(con, a, b, measures.parse_all(labels), run_ids, by=by, store=False)
    runs = judges.runs_frame(r)
    groups = judges.groups_frame(r, permutations, seed, bias_correction, alpha)
    correlation = judges.correlation_frame(r, top_k, rbo_p)
    decisions = judges.decisions_frame(r, test, "none", alpha, None, seed)
    ectx.text(
        f"As rankings: the {len(run_ids)} runs ranked by mean score under each set (rank 1 = best; "
        "ties share the better rank), over the topics both evaluate; a run's shift is its rank "
        "under A minus its rank under B (positive: B ranks it higher). Per "
        f"{by}: the mean shift of its runs, tested against the mean shifts of random groups of "
        f"the same size drawn from all runs ({permutations} draws, seed {seed}, two-sided), the "
        f"p-values adjusted over the {by}s of a measure ({bias_correction}); flagged `favoured` "
        f"or `disfavoured` at α = {alpha}. Rank correlations with A as τ_AP's reference, τ over "
        f"A's top {top_k} runs, RBO({rbo_p}). Significance decisions: the {test} test over every "
        f"run pair under each set at α = {alpha}; misses are pairs significant under A only, false "
        "alarms under B only or in opposite directions.")
    ectx.table("runs", runs, "Scores, ranks and rank shifts of the runs under both sets", show=40)
    ectx.table("groups", groups, f"Mean rank shift per {by} and its permutation test", show=40)
    ectx.table("correlation", correlation, "Rank correlation of the two orderings")
    ectx.table("decisions", decisions, "Significance decisions under B against A")
    summary = _summary(overall, correlation, decisions, groups, by)
    ectx.table("summary", summary, "Per measure: agreement, rank correlation, decisions and flagged "
               f"{by}s")
    flagged = groups[groups["flag"].notna()]
    if len(flagged):
        ectx.text("Flagged: " + "; ".join(
            f"`{row[by]}` {row['flag']} under {row['measure']} (mean shift {row['mean_shift']:+.2f}, "
            f"adjusted p = {row['p_adjusted']:.4f})" for _, row in flagged.iterrows()) + ".")
    else:
        ectx.text(f"No {by} is flagged at α = {alpha}.")
    _figures(ectx, r, runs, groups, agreement, by, labels)
    return "summary"


def _summary(overall, correlation: pd.DataFrame, decisions: pd.DataFrame, groups: pd.DataFrame,
             by: str) -> pd.DataFrame:
    rows = []
    for c, d in zip(correlation.to_dict("records"), decisions.to_dict("records")):
        part = groups[groups["measure"] == c["measure"]]
        rows.append({"measure": c["measure"], "kappa": overall["kappa"], "alpha_ordinal": overall["alpha_ordinal"],
                     "kendall_tau": c["kendall_tau"], "tau_ap": c["tau_ap"],
                     "kendall_tau_top": c["kendall_tau_top"], "rbo": c["rbo"],
                     "decision_agreement": d["agreement"], "misses": d["misses"],
                     "false_alarms": d["false_alarms"],
                     "favoured": ", ".join(part.loc[part["flag"] == "favoured", by]) or None,
                     "disfavoured": ", ".join(part.loc[part["flag"] == "disfavoured", by]) or None})
    return pd.DataFrame(rows)


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _figures(ectx: ExperimentContext, r: judges.Rankings, runs: pd.DataFrame, groups: pd.DataFrame,
             agreement: pd.DataFrame, by: str, labels: list[str]) -> None:
    plt = _plt()
    flagged = set(groups.loc[groups["flag"].notna(), by])
    names = sorted(set(r.groups))
    # in colour: the flagged groups, or every group when none is flagged and they are few
    shown = sorted(flagged) if flagged or len(names) > 10 else names
    colours = {g: plt.get_cmap("tab10")(i % 10) for i, g in enumerate(shown)}
    fig, axes = plt.subplots(1, len(labels), figsize=(4.2 * len(labels), 4), squeeze=False)
    for ax, label in zip(axes[0], labels):
        part = runs[runs["measure"] == label]
        other = ~part[by].isin(shown)
        if other.any():
            ax.scatter(part.loc[other, "score_a"], part.loc[other, "score_b"], s=14, color="0.6", label="other")
        for g in shown:
            mine = part[by] == g
            ax.scatter(part.loc[mine, "score_a"], part.loc[mine, "score_b"], s=22, color=colours[g], label=g)
        low = min(part["score_a"].min(), part["score_b"].min())
        high = max(part["score_a"].max(), part["score_b"].max())
        ax.plot([low, high], [low, high], color="0.3", linewidth=0.8)
        tau = stats.kendall_tau(part["score_a"], part["score_b"])
        ax.set_title(f"{label} (τ = {tau:.3f})", fontsize=9)
        ax.set_xlabel(f"mean score under {r.a}")
        ax.set_ylabel(f"mean score under {r.b}")
        if shown:
            ax.legend(fontsize=7)
    fig.tight_layout()
    ectx.figure("scatter", fig, f"Mean scores of the runs under both sets; flagged {by}s in colour "
                "(every one when none is flagged and there are at most ten)")

    fig, ax = plt.subplots(figsize=(max(6, 0.35 * len(names) * len(labels)), 4))
    width = 0.8 / len(labels)
    for m, label in enumerate(labels):
        part = groups[groups["measure"] == label].set_index(by).reindex(names)
        x = np.arange(len(names)) + (m - (len(labels) - 1) / 2) * width
        bars = ax.bar(x, part["mean_shift"], width=width, label=label)
        for bar, flag in zip(bars, part["flag"]):
            if isinstance(flag, str):
                bar.set_edgecolor("black")
                bar.set_linewidth(1.5)
    ax.axhline(0, color="0.3", linewidth=0.8)
    ax.set_xticks(np.arange(len(names)))
    ax.set_xticklabels(names, rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("mean rank shift (positive: B ranks higher)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    ectx.figure("shifts", fig, f"Mean rank shift per {by} and measure (flagged: outlined)")

    per = agreement[agreement["topic"] != judges.ALL]
    fig, ax = plt.subplots(figsize=(max(6, 0.18 * len(per)), 3.5))
    x = np.arange(len(per))
    ax.bar(x - 0.2, per["kappa"], width=0.4, label="Cohen's κ (binary)")
    ax.bar(x + 0.2, per["alpha_ordinal"], width=0.4, label="Krippendorff's α (ordinal)")
    ax.set_xticks(x)
    ax.set_xticklabels(per["topic"], rotation=90, fontsize=6)
    ax.set_ylabel("agreement")
    ax.legend(fontsize=7)
    fig.tight_layout()
    ectx.figure("topics", fig, "Agreement per topic")


def main(con, out: str, replace: bool, *, qrels, against, runs, measure, by, rel_level, samples,
         permutations, test, alpha, bias_correction, top_k, rbo_p, seed) -> Outcome:
    """Judging the judges: a judgment set against a reference, as assessors and as rankings."""
    require(bool(against), "name the judgment set to judge with --against (the reference is --qrels)")
    labels = [str(m) for m in measures.parse_all(list(measure) if measure else DEFAULT_MEASURES)]
    significance.check_test(test, alpha, None)
    require(samples >= 100 and permutations >= 100, "--samples and --permutations must be at least 100")

    def body(ectx: ExperimentContext) -> str:
        a = qrels or catalogue.default_qrels(ectx.con)
        judges.check_pair(ectx.con, a, against)
        run_ids = runsets.resolve(ectx.con, runs, qrels=a)
        ectx.experiment.params.update(qrels=a)
        return run(ectx, a, against, run_ids, labels, by, rel_level, samples, permutations, test, alpha,
                   bias_correction, top_k, rbo_p, seed)

    params = {"qrels": qrels, "against": against, "runs": runs, "measures": labels, "by": by,
              "rel_level": rel_level, "samples": samples, "permutations": permutations, "test": test,
              "alpha": alpha, "bias_correction": bias_correction, "top_k": top_k, "rbo_p": rbo_p,
              "seed": seed}
    return execute(con, Experiment("judges", "Judging the judges", params), out, body, replace)
