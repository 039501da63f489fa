"""Benchmark: pools and leave-one-team-out on TREC-8.

- all unique-contribution sets of the 41 teams at depth 100 (pooled runs);
- one derived qrels (the depth-100 pool of the pooled runs; a depth-10 shallow pool);
- all 41 leave-one-team-out qrels built, then each evaluated with AP for all 129 runs.

    python bench/bench_pools.py [--data ../shared/data/trec8] [--db existing.duckdb]
"""

from __future__ import annotations

import argparse
import time

from common import add_data_options, machine, trec8_warehouse
from irwarehouse import catalogue, measures, runsets, schema
from irwarehouse.engine import evaluation, pools


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_data_options(parser)
    args = parser.parse_args()
    print(f"machine: {machine()}")
    path, _keep = trec8_warehouse(args)
    con = schema.connect(path)
    pooled = runsets.resolve(con, "pooled")

    t = time.perf_counter()
    n = con.execute("SELECT count(*), count(DISTINCT team) FROM unique_contributions('trec8', $r, 100)",
                    {"r": pooled}).fetchone()
    print(f"unique contributions, {n[1]} teams, depth 100: {n[0]:,} documents in {time.perf_counter() - t:.2f} s")

    for kind, name, runs, depth in [("depth", "b-pool100", "pooled", 100), ("shallow", "b-shallow10", "all", 10)]:
        t = time.perf_counter()
        pools.build(con, kind, "trec8", name, runs=runs, depth=depth, replace=True)
        print(f"one derived qrels ({kind}, depth {depth}): {time.perf_counter() - t:.2f} s")

    teams = list(catalogue.teams_of(con, pooled, catalogue.collection_of(con, "trec8")))
    t = time.perf_counter()
    targets = [(f"b-lo-{team}", [team]) for team in teams]
    pools.build_many(con, "leave-out", "trec8", targets, runs="pooled", depth=100, replace=True)
    built = time.perf_counter() - t
    all_runs = runsets.resolve(con, "all")
    ap = measures.parse_all(["AP"])
    evaluation.evaluate(con, "trec8", ap, all_runs, store=False)  # materialize the root base
    t2 = time.perf_counter()
    for name, _ in targets:
        evaluation.evaluate(con, name, ap, all_runs)
    evaluated = time.perf_counter() - t2
    print(f"{len(targets)} leave-one-team-out qrels: built in {built:.2f} s, evaluated (AP, "
          f"{len(all_runs)} runs each) in {evaluated:.2f} s; total {built + evaluated:.2f} s")
    con.close()


if __name__ == "__main__":
    main()
