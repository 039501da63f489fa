"""Evaluation depth x pooling depth (Webber, Moffat and Zobel, EVIA 2010; SPEC §6).

For every pool depth d (a depth-d pool of the pool runs -- all runs by default, the
paper's setting -- as a derived qrels; plus the full qrels) and evaluation depth k, the
discriminative power (paired t-test) of each measure in three forms -- raw, R-normalized
and standardized -- over all pairs of the evaluated runs; Kendall's tau and tau_AP between
the system rankings of chosen cells, and between their p-value orderings of the run pairs:
a measure family against itself in two cells, and against every other family at full
assessment and the deepest evaluation depth (cross-metric).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import catalogue, measures, runsets, significance, standardize, stats
from ..engine import evaluation, pools
from .base import Experiment, ExperimentContext, Outcome, execute, require, split_values

FULL = 0  # pool depth label of the full qrels
# (family, form, measure template); standardized rows standardize the raw measure
FORMS = [
    ("P", "raw", "P@{k}"), ("P", "normalized", "R@{k}"),
    ("DCG", "raw", "DCG(discount=jk)@{k}"), ("DCG", "normalized", "nDCG(discount=jk)@{k}"),
    ("DCG", "normalized-expanded", "enDCG(discount=jk)@{k}"),
    ("AP", "raw", "SP@{k}"), ("AP", "normalized", "AP@{k}"), ("AP", "normalized-abbreviated", "aAP@{k}"),
    ("RBP", "raw", "RBP(depth={k})@{k}"),  # φ = 0.1^(1/k): a residual of 10% beyond rank k
]
FAMILIES = ["P", "DCG", "AP", "RBP"]
CELLS = {"shallow": (10, 10), "extended": (10, 100), "deep": (100, 100)}
REFERENCE = "full"  # the cell of full assessment at the deepest evaluation depth


def measure_name(template: str, k: int) -> str:
    return str(measures.parse(template.format(k=k)))


def run(ectx: ExperimentContext, qrels: str, run_ids: list[str], pool_runs: str,
        pool_depths: list[int], eval_depths: list[int], alpha: float) -> str:
    con = ectx.con
    rows_by_depth = {}
    labels = {(f, form, k): measure_name(t, k) for f, form, t in FORMS for k in eval_depths}
    parsed = measures.parse_all(sorted(set(labels.values())))

    names = {d: f"{qrels}-grid-d{d}" for d in pool_depths}

    def build(d: int) -> None:
        pools.build(con, "depth", qrels, names[d], runs=pool_runs, depth=d, replace=True,
                    description="depth-grid experiment")

    # the pools of one root, evaluated in one pass
    ready = ectx.scores_together({f"scores-d{d}": (names[d], lambda d=d: build(d)) for d in pool_depths},
                                 parsed, run_ids)
    for d in ectx.progress([FULL, *pool_depths], "pool depths"):
        def compute(d=d):
            if d == FULL:
                return evaluation.evaluate(con, qrels, parsed, run_ids, store=False).df()
            return ready[f"scores-d{d}"]

        rows_by_depth[d] = ectx.cell(f"scores-d{d}", compute)

    def matrix(d, label):
        return significance.matrix(rows_by_depth[d], label, run_ids)[0]

    power, results, means, measure_of = [], {}, {}, {}
    for d in [FULL, *pool_depths]:
        for k in eval_depths:
            for family in FAMILIES:
                forms = [(form, labels[(f, form, k)]) for f, form, _ in FORMS if f == family]
                raw_label = next(label for form, label in forms if form == "raw")
                forms.append(("standardized", raw_label))
                for form, label in forms:
                    X = matrix(d, label)
                    if form == "standardized":
                        X = standardize.self_standardize(X)
                    result = significance.run_test(X, "t", alpha=alpha)
                    results[(d, k, family, form)] = result
                    means[(d, k, family, form)] = stats.row_means(X)  # equal sums tie
                    measure_of[(d, k, family, form)] = label
                    power.append({"pool_depth": "full" if d == FULL else d, "eval_depth": k,
                                  "family": family, "form": form, "measure": label,
                                  **stats.discriminative_power(result, alpha)})
    power = pd.DataFrame(power)
    ectx.text(
        f"Discriminative power — the fraction of the {len(run_ids) * (len(run_ids) - 1) // 2} "
        f"pairs of {len(run_ids)} runs that a paired two-tailed t-test separates at α = {alpha} — "
        f"for each pool depth (a depth-d pool of the `{pool_runs}` runs over `{qrels}`, and the "
        "full qrels), evaluation depth k and measure. Raw forms are P@k, DCG@k "
        "(Järvelin–Kekäläinen discount), SP@k and RBP with φ = 0.1^(1/k); R-normalized forms "
        "are R@k, nDCG@k (abbreviated: ideal truncated at k), enDCG@k (expanded), AP@k "
        "(expanded) and aAP@k (abbreviated); standardized forms are Φ(z) of the raw scores, "
        "self-standardized per topic over the evaluated runs.")
    ectx.table("discpower", power, "Discriminative power per pool depth, evaluation depth and measure")

    # tau and tau_AP between cells: system rankings, and p-value orderings of the run pairs
    present = {n: c for n, c in CELLS.items() if c[0] in pool_depths and c[1] in eval_depths}
    present[REFERENCE] = (FULL, max(eval_depths))
    forms = {family: [form for f, form, _ in FORMS if f == family] + ["standardized"] for family in FAMILIES}
    tau_rows = []

    def tau_row(a, family_a, b, family_b, form):
        key_a, key_b = (*present[a], family_a, form), (*present[b], family_b, form)
        if key_a not in results or key_b not in results:
            return
        ordered, _ = stats.pvalue_correlation_matrix(np.vstack([results[key_b].p, results[key_a].p]),
                                                     ["kendall_tau", "tau_ap"])
        tau_rows.append({
            "cell_a": a, "family_a": family_a, "measure_a": measure_of[key_a],
            "cell_b": b, "family_b": family_b, "measure_b": measure_of[key_b], "form": form,
            "kendall_tau": stats.kendall_tau(means[key_a], means[key_b]),
            "tau_ap": stats.tau_ap(means[key_b], means[key_a]),
            "pvalue_tau": float(ordered["kendall_tau"][0, 1]),
            "pvalue_tau_ap": float(ordered["tau_ap"][0, 1])})

    names = list(present)
    for a_i, a in enumerate(names):  # each family against itself in two cells
        for b in names[a_i + 1:]:
            for family in FAMILIES:
                for form in forms[family]:
                    tau_row(a, family, b, family, form)
    for a in names:  # cross-metric: each family against every other at the reference
        for family_a in FAMILIES:
            for family_b in FAMILIES:
                if family_b != family_a:
                    for form in forms[family_a]:
                        tau_row(a, family_a, REFERENCE, family_b, form)
    taus = pd.DataFrame(tau_rows)
    if len(taus):
        ectx.text("Correlations between cells — "
                  + ", ".join(f"{n}: pool {'full' if c[0] == FULL else c[0]} / evaluation {c[1]}"
                              for n, c in present.items())
                  + " — of the system rankings (by mean score: Kendall's τ and τ_AP) and of the "
                  "orderings of all run pairs by their t-test p-values (pvalue_tau, pvalue_tau_ap; "
                  "the smallest p-value on top): each measure family in each form against itself "
                  "in two cells, and (cross-metric) against every other family in the same form "
                  f"in the {REFERENCE} cell. τ_AP takes cell_b's ordering as the reference.")
        ectx.table("tau", taus, "Kendall's τ and τ_AP between cells (system rankings; p-value orderings)")
    _figures(ectx, power, pool_depths, means, present)
    return "discpower"


def _figures(ectx, power, pool_depths, means, present) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = power[["family", "form"]].drop_duplicates().values.tolist()
    cols = 4
    rows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3 * rows), sharey=True, squeeze=False)
    for ax, (family, form) in zip(axes.flat, panels):
        sub = power[(power.family == family) & (power.form == form)]
        for d in [*pool_depths, "full"]:
            line = sub[sub.pool_depth == d].sort_values("eval_depth")
            style = dict(color="black", linestyle="--", linewidth=2) if d == "full" else {}
            ax.plot(line.eval_depth, line.discriminative_power, marker="o", markersize=3,
                    label="full" if d == "full" else f"pool {d}", **style)
        ax.set_xscale("log")
        depths = sorted(sub.eval_depth.unique())
        ax.set_xticks(depths)
        ax.set_xticklabels([str(k) for k in depths], fontsize=7)
        ax.minorticks_off()
        ax.set_title(f"{family} {form}", fontsize=9)
        ax.set_xlabel("evaluation depth", fontsize=8)
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    fig.tight_layout()
    axes[0][0].set_ylabel("discriminative power")
    axes[0][0].legend(fontsize=7)
    ectx.figure("discpower", fig, "Discriminative power against evaluation depth, one line per "
                "pool depth; dashed: full assessment")

    if len(present) >= 2:
        first, last = list(present)[0], list(present)[-1]
        (da, ka), (db_, kb) = present[first], present[last]
        a, b = means[(da, ka, "AP", "normalized")], means[(db_, kb, "AP", "normalized")]
        fig, ax = plt.subplots(figsize=(4.5, 4.5))
        ax.scatter(a, b, s=12)
        ax.set_xlabel(f"AP, pool {da} / evaluation {ka} ({first})")
        ax.set_ylabel(f"AP, pool {db_} / evaluation {kb} ({last})")
        ax.set_title(f"Kendall's τ = {stats.kendall_tau(a, b):.3f}")
        ectx.figure("scatter", fig, f"System mean AP in the {first} and the {last} cell")


def main(con, out: str, replace: bool, *, qrels, runs, pool_runs, pool_depths, eval_depths,
         alpha) -> Outcome:
    """Evaluation depth x pooling depth: discriminative power and tau (Webber et al. 2010)."""
    pds = split_values(pool_depths, int, "--pool-depths", minimum=1)
    eds = split_values(eval_depths, int, "--eval-depths", minimum=1)

    def body(ectx: ExperimentContext) -> str:
        q = qrels or catalogue.default_qrels(con)
        run_ids = runsets.resolve(con, runs, qrels=q)
        require(len(run_ids) >= 2, "the depth grid needs at least two runs")
        ectx.experiment.params.update(qrels=q, pool_runs=pool_runs)
        return run(ectx, q, run_ids, pool_runs, pds, eds, alpha)

    params = {"runs": runs, "pool_depths": pds, "eval_depths": eds, "alpha": alpha}
    return execute(con, Experiment("depth-grid", "Evaluation depth × pooling depth", params),
                   out, body, replace)
