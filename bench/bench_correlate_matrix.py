"""Benchmark: a correlation matrix in one call against one `irw correlate` call per cell.

    python bench/bench_correlate_matrix.py [--data ../shared/data/trec8] [--db existing.duckdb]
                                           [-m AP -m P@10 -m nDCG@10] [--depths 10,20]

On TREC-8 (loaded into a temporary warehouse, or ``--db``, a warehouse holding qrels
``trec8``), with depth-d pools of all runs as further qrels (``trec8-bench-dD``): the
conditions are every measure on every qrels (3 x 3 = 9 by default). Each way runs as a
user runs it, one ``irw`` process per command, on a warehouse whose base relation is
materialized (``irw refresh`` first):

- ``irw correlate --matrix -m ... -q ...`` once (every cell, both triangles);
- ``irw correlate -m A -m B --qrels X --qrels-b Y`` once per cell of the upper triangle with
  its diagonal (9 conditions: 36 pairs + 9 = 45 calls);
- ``irw correlate --matrix ... --of pvalues`` once (no single-cell command exists).

It then checks that every cell of the matrix equals its single call.
"""

from __future__ import annotations

import argparse
import csv
import io
import itertools
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from common import add_data_options, machine, trec8_warehouse

STATISTICS = ["kendall_tau", "kendall_tau_a", "tau_ap", "rbo", "pearson"]


def irw(db_path: str, *args: str) -> tuple[float, str]:
    exe = shutil.which("irw", path=str(Path(sys.executable).parent)) or "irw"
    t = time.perf_counter()
    out = subprocess.run([exe, "--db", db_path, *args], check=True, capture_output=True, text=True).stdout
    return time.perf_counter() - t, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_data_options(parser)
    parser.add_argument("-m", "--measure", action="append", help="measures (default AP, P@10, nDCG@10)")
    parser.add_argument("--depths", default="10,20", help="pool depths of the further qrels")
    args = parser.parse_args()
    wanted = args.measure or ["AP", "P@10", "nDCG@10"]
    print(f"machine: {machine()}; load average {os.getloadavg()[0]:.1f}")
    path, _keep = trec8_warehouse(args)
    qrels = ["trec8"]
    for depth in args.depths.split(","):
        qrels.append(f"trec8-bench-d{depth}")
        irw(path, "pool", "depth", "--name", qrels[-1], "--qrels", "trec8", "--depth", depth, "--replace")
    irw(path, "refresh")
    conditions = list(itertools.product(wanted, qrels))
    spec = [a for m in wanted for a in ("-m", m)] + [a for q in qrels for a in ("-q", q)]
    stats_args = [a for s in STATISTICS for a in ("-s", s)]
    print(f"conditions: {len(wanted)} measures ({', '.join(wanted)}) x {len(qrels)} qrels "
          f"({', '.join(qrels)}) = {len(conditions)}")

    matrix_time, out = irw(path, "correlate", "--matrix", *spec, *stats_args, "--format", "csv")
    cells = {(r["measure_a"], r["qrels_a"], r["measure_b"], r["qrels_b"], r["statistic"]): float(r["value"])
             for r in csv.DictReader(io.StringIO(out))}
    print(f"one matrix call ({len(conditions) ** 2} cells x {len(STATISTICS)} statistics): {matrix_time:.1f} s")

    pairs = list(itertools.combinations_with_replacement(conditions, 2))
    single_time, worst = 0.0, 0.0
    for (ma, qa), (mb, qb) in pairs:
        seconds, out = irw(path, "correlate", "-m", ma, "-m", mb, "--qrels", qa, "--qrels-b", qb,
                           "--format", "csv")
        single_time += seconds
        row = next(csv.DictReader(io.StringIO(out)))
        for name in STATISTICS:
            key = (row["measure_a"], qa, row["measure_b"], qb, name)
            worst = max(worst, abs(cells[key] - float(row[name])))
    print(f"{len(pairs)} single calls (upper triangle and diagonal): {single_time:.1f} s "
          f"({single_time / len(pairs):.2f} s each); {single_time / matrix_time:.0f}x the matrix call")
    print(f"largest difference between a matrix cell and its single call: {worst:.1e}")

    pvalue_time, _ = irw(path, "correlate", "--matrix", *spec, "--of", "pvalues", "--format", "csv")
    n_pairs = len(conditions) * (len(conditions) + 1) // 2
    print(f"one matrix call --of pvalues ({n_pairs} distinct cells, each Kendall's tau over the "
          f"orderings of the 8,256 run pairs): {pvalue_time:.1f} s")


if __name__ == "__main__":
    main()
