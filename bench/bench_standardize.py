"""Benchmark: score standardization on TREC-8 (129 runs, 50 topics, official qrels).

1. Self-standardized AP for all runs, with the AP scores already stored: compute and store
   the factor set (SQL), then read every run's mean Phi(z) from the view std_score_means.
2. 2,000 random topic-set splits (25 + 25 topics): dRMSE and t-test false positives for SP,
   AP and standardized AP (per-topic scores already stored).
3. For reference: the reference-size experiment (1,000 samples for each of 4 sizes).

    python bench/bench_standardize.py [--data ../shared/data/trec8] [--splits 2000] [--db FILE]

With --db an existing warehouse holding the TREC-8 runs and qrels (named trec8) is reused;
otherwise one is loaded into a temporary directory first (not timed as part of the figures).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from common import add_data_options, machine, trec8_warehouse


def timed(fn, repeat: int):
    times, result = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return result, times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_options(parser)
    parser.add_argument("--splits", type=int, default=2000)
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    from irwarehouse import measures, schema
    from irwarehouse.engine import evaluation
    from irwarehouse import standardize as st

    print(f"machine: {machine()}")
    path, _keep = trec8_warehouse(args)

    con = schema.connect(path)
    runs = [r[0] for r in con.execute("SELECT run_id FROM run_loads ORDER BY run_id").fetchall()]
    t0 = time.perf_counter()
    evaluation.evaluate(con, "trec8", measures.parse_all(["AP", "SP"]), runs)
    print(f"setup: AP and SP for {len(runs)} runs evaluated and stored in {time.perf_counter() - t0:.2f} s")

    def self_standardize():
        st.create_factor_set(con, "bench-self-ap", ["AP"], qrels="trec8", reference="all", replace=True)
        return con.execute("SELECT run_id, mean_phi FROM std_score_means "
                           "WHERE factors = 'bench-self-ap' ORDER BY mean_phi DESC").fetchall()

    rows, times = timed(self_standardize, args.repeat)
    print(f"1. self-standardized AP, {len(rows)} runs x 50 topics (factors computed and stored, "
          f"means read from std_score_means): best {min(times):.3f} s, median {statistics.median(times):.3f} s "
          f"over {args.repeat}; top run {rows[0][0]} mean Phi(z) = {rows[0][1]:.4f}")

    def per_topic_view():
        return con.execute("SELECT count(*), avg(phi) FROM std_scores WHERE factors = 'bench-self-ap'").fetchone()

    (n, _), times = timed(per_topic_view, args.repeat)
    print(f"   per-topic view std_scores ({n} rows): best {min(times):.3f} s")

    def splits():
        return st.random_splits_experiment(con, "trec8", "AP", splits=args.splits, seed=1)

    frame, times = timed(splits, max(1, args.repeat // 2))
    print(f"2. {args.splits} random topic splits (25 + 25 topics), SP / AP / standardized AP, "
          f"{len(runs)} runs: best {min(times):.2f} s")
    cols = ["form", "measure", "drmse_mean", "drmse_p95", "drmse_p99", "fp_rate_mean", "fp_rate_p95", "fp_rate_p99"]
    print(frame[cols].to_string(index=False, float_format=lambda v: f"{v:.4f}"))

    def reference_size():
        return st.reference_size_experiment(con, "trec8", "AP", sizes=[5, 10, 20, 40],
                                            samples=args.samples, seed=1)

    frame, times = timed(reference_size, 1)
    print(f"3. reference-size experiment, {args.samples} samples x 4 sizes: {min(times):.2f} s")
    print(frame[["n", "tau_median", "tau_95", "tau_99"]].to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    st.drop_factor_set(con, "bench-self-ap")
    con.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
