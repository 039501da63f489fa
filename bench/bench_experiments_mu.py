"""Benchmark: the measurement-uncertainty best fit and the metric-agreement enumeration on TREC-8.

- the per-topic best fit of ``irw experiment uncertainty`` (c): 50 topics x 500 φ
  (0.500 … 0.999) x 129 runs, against AP and nDCG, by τ and RBO(0.9) -- the judged rows pulled
  once from SQL, RBP for all φ in numpy, the correlations per distinct ordering;
- for comparison, RBP(p=φ) for a slice of the grid through the SQL engine (one pass);
- ``irw experiment agreement``: N = 10 exact (1,024 vectors, 523,776 pairs) and N = 1000
  Monte Carlo (the default number of pairs);
- with ``--whole DIR``, the whole uncertainty experiment through the CLI.

    python bench/bench_experiments_mu.py [--data ../shared/data/trec8] [--db existing.duckdb]
                                         [--sql-phis 50] [--whole OUTDIR]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from common import add_data_options, machine, trec8_warehouse
from irwarehouse import measures, runsets, schema
from irwarehouse.engine import evaluation
from irwarehouse.engine.base import ensure_base
from irwarehouse.experiments import agreement, uncertainty
from irwarehouse.experiments.vector_measures import gain_data, rbp_grid


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_data_options(parser)
    parser.add_argument("--sql-phis", type=int, default=50, help="φ values to time through SQL")
    parser.add_argument("--whole", help="also run the whole uncertainty experiment into this directory")
    args = parser.parse_args()
    print(f"machine: {machine()}")
    path, _keep = trec8_warehouse(args)
    con = schema.connect(path)
    run_ids = runsets.resolve(con, "all")
    topics = [r[0] for r in con.execute(
        "SELECT topic FROM topic_sets WHERE qrels = 'trec8' ORDER BY topic").fetchall()]
    ensure_base(con, "trec8")

    # ---- the best fit, as part (c) computes it
    start = time.perf_counter()
    refs_parsed = measures.parse_all(uncertainty.FIT_REFERENCES)
    per = evaluation.evaluate(con, "trec8", refs_parsed, run_ids, store=False).df()
    refs = {str(m): uncertainty._matrix(per, str(m), run_ids, topics) for m in refs_parsed}
    t_ref = time.perf_counter() - start
    t = time.perf_counter()
    data = gain_data(con, "trec8", run_ids, topics)
    t_pull = time.perf_counter() - t
    grid = uncertainty.fit_grid(0.001)
    t = time.perf_counter()
    base = rbp_grid(data, grid)
    t_grid = time.perf_counter() - t
    t = time.perf_counter()
    frames = [uncertainty.fit_block(base[s:s + uncertainty.FIT_BLOCK], grid[s:s + uncertainty.FIT_BLOCK],
                                    refs, topics, 0.9)
              for s in range(0, len(grid), uncertainty.FIT_BLOCK)]
    t_fit = time.perf_counter() - t
    import pandas as pd

    best = uncertainty.best_phi(pd.concat(frames, ignore_index=True))
    total = time.perf_counter() - start
    print(f"best fit, {len(topics)} topics x {len(grid)} φ x {len(run_ids)} runs: {total:.2f} s "
          f"(AP and nDCG through SQL {t_ref:.2f} s; judged rows pulled {t_pull:.2f} s, "
          f"{data.judged.nnz:,} rows; RBP for all φ {t_grid:.2f} s; τ and RBO {t_fit:.2f} s)")
    ap_tau = best[(best["reference"] == "AP") & (best["criterion"] == "tau")]["best_phi"]
    print(f"  AP/τ: mean best φ {ap_tau.mean():.3f}, {int((ap_tau >= 0.9).sum())} of {len(ap_tau)} topics >= 0.9")

    # ---- the same RBP values through the SQL engine, for a slice of the grid
    k = min(args.sql_phis, len(grid))
    sql_measures = measures.parse_all([f"RBP(p={float(p)!r})" for p in grid[:k]])
    t = time.perf_counter()
    sql = evaluation.evaluate(con, "trec8", sql_measures, run_ids, store=False).df()
    t_sql = time.perf_counter() - t
    label = str(sql_measures[-1])
    rows = sql[sql["measure"] == label]
    diff = np.abs(base[k - 1][rows["run_id"].map(run_ids.index), rows["topic"].map(topics.index)]
                  - rows["value"].to_numpy()).max()
    print(f"RBP for {k} φ through SQL (one pass): {t_sql:.2f} s (x{len(grid) / k:.0f} for the grid: "
          f"~{t_sql * len(grid) / k:.0f} s); numpy vs SQL max |difference| {diff:.1e}")

    # ---- metric agreement
    default = measures.parse_all(agreement.DEFAULT_MEASURES)
    t = time.perf_counter()
    exact = agreement.uniform_cell(default, 10, [0.0], agreement.DEFAULT_SAMPLES, 0)
    print(f"agreement, N = 10 exact ({int(exact['pairs'].iloc[0]):,} pairs, 10 measure pairs): "
          f"{time.perf_counter() - t:.2f} s")
    t = time.perf_counter()
    mc = agreement.uniform_cell(default, 1000, [0.0], agreement.DEFAULT_SAMPLES, 0)
    print(f"agreement, N = 1000 Monte Carlo ({int(mc['pairs'].iloc[0]):,} pairs): "
          f"{time.perf_counter() - t:.2f} s")
    t = time.perf_counter()
    vectors = agreement.real_vectors(con, "trec8", run_ids, 10)
    sampled = agreement.sampled_cell(default, 10, [0.0], agreement.DEFAULT_SAMPLES, 0, vectors)
    ap_p10 = sampled[(sampled["measure_a"] == "AP") & (sampled["measure_b"] == "P@10")]["agreement"].iloc[0]
    print(f"agreement, N = 10 sampled from the TREC-8 rankings ({len(vectors)} distinct vectors of "
          f"{int(vectors['rankings'].sum()):,} rankings): {time.perf_counter() - t:.2f} s "
          f"(AP vs P@10 {ap_p10:.4f})")
    con.close()

    if args.whole:
        from typer.testing import CliRunner

        from irwarehouse.cli import app

        t = time.perf_counter()
        result = CliRunner().invoke(app, ["--db", path, "experiment", "uncertainty", "--out", args.whole,
                                          "--qrels", "trec8"])
        if result.exit_code != 0:
            raise SystemExit(f"uncertainty failed: {result.output}")
        print(f"whole uncertainty experiment (cells in {args.whole} reused if present): "
              f"{time.perf_counter() - t:.2f} s")


if __name__ == "__main__":
    main()
