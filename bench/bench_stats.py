"""Benchmark: discriminative power over every run pair of a large score matrix.

    python bench/bench_stats.py [--runs 1290] [-B 1000] [--tests t,bootstrap]
                                [--data ../shared/data/trec8] [--db existing.duckdb]

The matrix is AP per topic of the runs of a warehouse (TREC-8 loaded into a temporary one,
or ``--db``, a warehouse holding qrels ``trec8``): its 129 runs x 50 topics, tiled to
``--runs`` rows -- copy c >= 1 is the original plus Gaussian noise (sd 0.02, seed c),
clipped to [0, 1]. With ``--db`` on a warehouse holding the synthetic 10x archive
(bench/make_synthetic.py) the matrix is its own 1,290 runs and nothing is tiled.

Each test runs in a fresh process that loads the matrix, runs the test over all pairs and
computes discriminative power (and, for the bootstrap, the estimated differences) as
``irw discpower`` does; it reports wall time, CPU time and peak resident memory (of the
whole process, so the imports and the matrix are included).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import add_data_options, machine, trec8_warehouse

NOISE_SD = 0.02


def ap_matrix(args):
    """AP per topic of all runs of the warehouse, as a runs x topics matrix."""
    from irwarehouse import measures, runsets, schema, significance

    path, keep = trec8_warehouse(args)
    con = schema.connect(path)
    try:
        run_ids = runsets.resolve(con, "all")
        m = significance.score_matrix(con, "trec8", measures.parse("AP"), run_ids, store=False)
    finally:
        con.close()
    del keep
    return m.X


def tiled(X, n_runs: int):
    import numpy as np

    if n_runs <= len(X):
        return X[:n_runs]
    parts = [X]
    for c in range(1, -(-n_runs // len(X))):
        noise = np.random.default_rng(c).normal(0.0, NOISE_SD, X.shape)
        parts.append(np.clip(X + noise, 0.0, 1.0))
    return np.vstack(parts)[:n_runs]


def peak_mb() -> float:
    """Peak resident memory of this process: VmHWM (Linux; unlike ru_maxrss it does not
    carry over the parent's peak into a child process), else ru_maxrss."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def worker(matrix: str, test: str, B: int, seed: int, alpha: float) -> None:
    import numpy as np

    from irwarehouse import significance, stats

    X = np.load(matrix)
    start_rss = peak_mb()
    wall, cpu = time.perf_counter(), time.process_time()
    result = significance.run_test(X, test, B, seed, alpha)
    out = stats.discriminative_power(result, alpha)
    if test == "bootstrap":
        out["estimated_difference_max"] = stats.estimated_difference_summary(result)["max"]
    out.update(wall=time.perf_counter() - wall, cpu=time.process_time() - cpu,
               rss_before_mb=start_rss, peak_mb=peak_mb())
    print(json.dumps(out))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_data_options(parser)
    parser.add_argument("--runs", type=int, default=1290, help="rows of the matrix (tiled when needed)")
    parser.add_argument("-B", type=int, default=1000, help="bootstrap replicates")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--tests", default="t,bootstrap", help="comma-separated: t, bootstrap, ...")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--matrix", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.matrix, args.worker, args.B, args.seed, args.alpha)
        return

    import numpy as np

    print(f"machine: {machine()}; load average {os.getloadavg()[0]:.1f}")
    X = ap_matrix(args)
    n0 = len(X)
    source = f"{n0} runs of {'the warehouse ' + args.db if args.db else 'TREC-8'}"
    X = tiled(X, args.runs)
    n_pairs = len(X) * (len(X) - 1) // 2
    print(f"matrix: {X.shape[0]} runs x {X.shape[1]} topics ({n_pairs:,} pairs), AP of {source}"
          + (f", tiled with noise sd {NOISE_SD}" if args.runs > n0 else ""))
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "X.npy")
        np.save(path, X)
        for test in args.tests.split(","):
            cmd = [sys.executable, __file__, "--worker", test, "--matrix", path, "-B", str(args.B),
                   "--seed", str(args.seed), "--alpha", str(args.alpha)]
            res = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
            label = f"{test} (B = {args.B})" if test in ("bootstrap", "randomization", "tukey") else test
            print(f"{label}: {res['wall']:.1f} s ({res['cpu']:.1f} s CPU), peak {res['peak_mb']:,.0f} MB "
                  f"(before the test {res['rss_before_mb']:,.0f} MB); discriminative power "
                  f"{res['discriminative_power']:.4f} ({res['significant']:,} of {res['pairs']:,} pairs"
                  f", {res['undefined']} undefined)")


if __name__ == "__main__":
    main()
