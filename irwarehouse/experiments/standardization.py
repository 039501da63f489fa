"""Score standardization studies (Webber, Moffat and Zobel, SIGIR 2008; SPEC §4) for the
report: random topic-set splits (dRMSE and inter-collection false positives for the raw,
R-normalized and standardized forms) and how many standardizing systems are needed.
The computations are those of :mod:`irwarehouse.standardize`."""

from __future__ import annotations



from .. import catalogue, measures, runsets, standardize
from .base import Experiment, ExperimentContext, Outcome, execute, require, split_values


def run(ectx: ExperimentContext, qrels: str, runs: str, measure: str, splits: int, seed: int,
        sizes: list[int], samples: int, alpha: float) -> str:
    con = ectx.con
    splits_frame = ectx.cell("random-splits", lambda: standardize.random_splits_experiment(
        con, qrels, measure, run_spec=runs, splits=splits, seed=seed, alpha=alpha))
    ectx.text(
        f"Random topic splits: the topic set of `{qrels}` is split at random into two disjoint "
        f"halves {splits} times (seed {seed}); for each split the two halves are compared as "
        "collections — RMSE and dRMSE between the runs' mean scores, and the fraction of runs "
        f"whose per-topic scores differ significantly (two-sample t-test, α = {alpha}: an "
        "inter-collection false positive). Raw, R-normalized and standardized (Φ(z), "
        f"self-standardized) forms of {measure}.")
    ectx.table("random_splits", splits_frame, "dRMSE and false-positive rate over random splits")

    n_ref = len(runsets.resolve(con, runs, qrels=qrels))
    usable = [n for n in sizes if 2 <= n <= n_ref]
    main = "random_splits"
    if usable:
        size_frame = ectx.cell("reference-size", lambda: standardize.reference_size_experiment(
            con, qrels, measure, run_spec=runs, sizes=usable, samples=samples, seed=seed))
        ectx.text(
            f"How many standardizing systems: {samples} samples of n reference runs for each n; "
            "Kendall's τ-b between the system ranking standardized with the sample's factors and "
            "the ranking standardized with all runs (median, and the 95th / 99th-percentile-lowest "
            "τ).")
        ectx.table("reference_size", size_frame, "Kendall's τ against full standardization, by number of standardizing runs")
        _figure(ectx, splits_frame, size_frame)
    return main


def _figure(ectx, splits_frame, size_frame) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
    x = range(len(splits_frame))
    left.bar([i - 0.2 for i in x], splits_frame["drmse_mean"], width=0.4, label="mean")
    left.bar([i + 0.2 for i in x], splits_frame["drmse_p95"], width=0.4, label="95th percentile")
    left.set_xticks(list(x))
    left.set_xticklabels([f"{f}\n{m}" for f, m in zip(splits_frame["form"], splits_frame["measure"])], fontsize=8)
    left.set_ylabel("dRMSE between halves")
    left.legend(fontsize=8)
    for column, label in (("tau_median", "median"), ("tau_95", "95% lowest"), ("tau_99", "99% lowest")):
        right.plot(size_frame["n"], size_frame[column], marker="o", label=label)
    right.set_xlabel("standardizing runs n")
    right.set_ylabel("Kendall's τ vs all runs")
    right.legend(fontsize=8)
    fig.tight_layout()
    ectx.figure("summary", fig, "dRMSE per form over random splits; τ against full standardization by n")


def main(con, out: str, replace: bool, *, measure, qrels, runs, splits, sizes, samples, seed,
         alpha) -> Outcome:
    """Score standardization: random topic splits and the number of standardizing runs
    (Webber et al. 2008)."""
    size_list = sorted(split_values(sizes, int, "--sizes", minimum=2))
    label = str(measures.parse(measure))

    def body(ectx: ExperimentContext) -> str:
        q = qrels or catalogue.default_qrels(ectx.con)
        require(splits >= 1 and samples >= 1, "--splits and --samples must be at least 1")
        ectx.experiment.params.update(qrels=q)
        return run(ectx, q, runs, label, splits, seed, size_list, samples, alpha)

    params = {"measure": label, "runs": runs, "splits": splits, "sizes": size_list,
              "samples": samples, "seed": seed, "alpha": alpha}
    return execute(con, Experiment("standardization", "Score standardization", params),
                   out, body, replace)
