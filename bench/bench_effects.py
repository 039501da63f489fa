"""Benchmark: what intervals and effect sizes cost beside the p-values, over every run pair.

    python bench/bench_effects.py [--runs 129,1290] [--tests t,bootstrap,randomization,tukey,wilcoxon]
                                  [--tests-large t,bootstrap] [--repeat 3] [--data ../shared/data/trec8]
                                  [--db existing.duckdb]

The matrix is AP per topic of TREC-8's 129 runs (a warehouse loaded from --data, or --db),
and for 1,290 runs (831,405 pairs: ten times TREC-8) the same matrix tiled with Gaussian
noise as bench/bench_stats.py does. For each size and test, two ways of making ``irw
pvalues``' table of all pairs are timed, alternately, --repeat times (medians and ranges):

- *p-values alone*: the test (significance.run_test, no interval) and the table of its
  p-values, as irw made it before intervals and effect sizes (PairResult.to_frame, the
  adjusted p-value and the significance flag);
- *with intervals and effect sizes*: significance.pair_frame at level 0.95 -- the test with
  its own interval of each difference, Cohen's d_z with its exact noncentral-t interval,
  Sakai's effect size over V_E, and the table.

Beside them, the time of the d_z intervals alone (stats.dz_interval over all pairs) and
how many noncentral-t cdf evaluations a value took. The ratio "with / alone" is the cost of
the sizes beside the p-values (bounded by 2 at TREC-8's scale). Timings on a shared machine are noisy: the two ways are
run alternately and compared by their medians.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from bench_stats import ap_matrix, tiled
from common import add_data_options, machine


def _time(call) -> tuple[float, float]:
    """Wall and CPU seconds of ``call()`` (CPU: of every thread of this process)."""
    wall, cpu = time.perf_counter(), time.process_time()
    call()
    return time.perf_counter() - wall, time.process_time() - cpu


def p_values_alone(m, test: str):
    from irwarehouse import significance

    result = significance.run_test(m.X, test)
    frame = result.to_frame(m.run_ids)
    frame["p_adjusted"] = frame["p_value"]
    frame["significant"] = frame["p_adjusted"] < 0.05
    return frame


def with_effects(m, test: str):
    from irwarehouse import significance

    return significance.pair_frame(m, test, level=0.95)


def count_evaluations(X) -> tuple[int, int]:
    """Noncentral-t cdf evaluations for the d_z limits of every pair, and how many limits
    (two a defined pair)."""
    from scipy import special

    from irwarehouse import stats

    calls = [0]
    real = special.nctdtr

    def counting(df, lam, t):
        calls[0] += np.size(t)
        return real(df, lam, t)

    special.nctdtr = counting
    try:
        i, j = stats.pair_indices(len(X))
        mean, sd, undefined = stats.pair_moments(X, i, j)
        stats.dz_interval(mean, sd, X.shape[1], 0.95, undefined)
    finally:
        special.nctdtr = real
    return calls[0], 2 * int((~undefined).sum())


def dz_only(X) -> None:
    from irwarehouse import stats

    i, j = stats.pair_indices(len(X))
    mean, sd, undefined = stats.pair_moments(X, i, j)
    stats.dz_interval(mean, sd, X.shape[1], 0.95, undefined)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_data_options(parser)
    parser.add_argument("--runs", default="129,1290", help="matrix sizes (rows), comma-separated")
    parser.add_argument("--tests", default="t,bootstrap,randomization,tukey,wilcoxon",
                        help="tests at TREC-8's size (129 runs)")
    parser.add_argument("--tests-large", default="t,bootstrap", help="tests at the larger sizes")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from irwarehouse.significance import Matrix

    print(f"machine: {machine()}; load average {os.getloadavg()[0]:.1f} at the start")
    X0 = ap_matrix(args)
    for n_runs in (int(r) for r in args.runs.split(",")):
        X = tiled(X0, n_runs)
        m = Matrix("trec8", "AP", [f"r{k}" for k in range(len(X))], [str(t) for t in range(X.shape[1])], X)
        pairs = len(X) * (len(X) - 1) // 2
        tests = args.tests if n_runs <= len(X0) else args.tests_large
        print(f"\n{len(X)} runs x {X.shape[1]} topics = {pairs:,} pairs"
              + (" (TREC-8 AP tiled with noise)" if n_runs > len(X0) else " (TREC-8 AP)"))
        dz = [_time(lambda: dz_only(X)) for _ in range(args.repeat)]
        evaluations, limits = count_evaluations(X)
        print(f"  d_z with its exact interval, every pair: median {statistics.median(w for w, _ in dz):.3f} s "
              f"wall, {statistics.median(c for _, c in dz):.3f} s CPU; {evaluations:,} noncentral-t "
              f"cdf evaluations for {limits:,} limits")
        for test in tests.split(","):
            alone, full = [], []
            for _ in range(args.repeat):  # alternately
                alone.append(_time(lambda: p_values_alone(m, test)))
                full.append(_time(lambda: with_effects(m, test)))
            for k, what in ((0, "wall"), (1, "CPU ")):
                a = statistics.median(x[k] for x in alone)
                f = statistics.median(x[k] for x in full)
                ratios = sorted(y[k] / x[k] for x, y in zip(alone, full))
                print(f"  {test:<13} {what}  p-values alone {a:8.3f} s;  with intervals and effect "
                      f"sizes {f:8.3f} s;  ratio of medians {f / a:.2f} (per repetition "
                      f"{ratios[0]:.2f}-{ratios[-1]:.2f})")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
