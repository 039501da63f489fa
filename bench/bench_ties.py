"""Benchmark: evaluating TREC-8 (129 runs; AP, P@10, nDCG, nDCG@10, RR, Bpref, RBP(p=0.8))
under each tie policy, against the default (trec_eval: the stored ranking).

    python bench/bench_ties.py [--data ../shared/data/trec8 | --db W] [--repeat 5]
                               [--policies trec_eval,expected,optimistic]

Two figures per policy, each the median of --repeat runs after one warm-up that stores its
scores (the first such evaluation records the ties in the materialized base):
- command: `irw eval -m ... --ties POLICY --no-store` end to end, wall and CPU (user +
  system) time of the process, the policies interleaved round by round;
- query: the evaluation's query alone, in this process (irwarehouse.engine.evaluation).
Each is also given as a ratio to trec_eval's.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import time

from common import add_data_options, irw_executable, machine, trec8_warehouse

MEASURES = ["AP", "P@10", "nDCG", "nDCG@10", "RR", "Bpref", "RBP(p=0.8)"]


def command_times(irw: str, db: str, policy: str, store: bool = False) -> tuple[float, float]:
    """Wall and CPU seconds of one `irw eval` under ``policy`` (storing its scores: ``store``)."""
    args = [irw, "--db", db, "eval", *[a for m in MEASURES for a in ("-m", m)], "--ties", policy,
            *([] if store else ["--no-store"]), "--format", "csv"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def query_time(db: str, policy: str) -> float:
    from irwarehouse import measures, schema
    from irwarehouse.engine import evaluation

    con = schema.connect(db)
    try:
        parsed = [measures.parse(m) for m in MEASURES]
        runs = [r for (r,) in con.execute("SELECT DISTINCT run_id FROM runs ORDER BY 1").fetchall()]
        query, params, _, _ = evaluation.scores_query(con, "trec8", parsed, runs, ties=policy)
        t = time.perf_counter()
        con.execute(query, params).fetchall()
        return time.perf_counter() - t
    finally:
        con.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_data_options(parser)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--policies", default="trec_eval,expected,optimistic")
    args = parser.parse_args()
    policies = args.policies.split(",")
    db, keep = trec8_warehouse(args)
    irw = irw_executable()
    for policy in policies:  # warm-up, storing: the base, and the ties it records
        command_times(irw, db, policy, store=True)
    walls = {p: [] for p in policies}
    cpus = {p: [] for p in policies}
    queries = {p: [] for p in policies}
    for _ in range(args.repeat):
        for policy in policies:
            wall, cpu = command_times(irw, db, policy)
            walls[policy].append(wall)
            cpus[policy].append(cpu)
            queries[policy].append(query_time(db, policy))
    print(f"machine: {machine()}; load average {os.getloadavg()[0]:.2f}")
    print(f"TREC-8, 129 runs, {', '.join(MEASURES)}; median of {args.repeat}")
    base = {k: statistics.median(v[policies[0]]) for k, v in (("wall", walls), ("cpu", cpus), ("query", queries))}
    print(f"{'policy':<12} {'command wall':>13} {'ratio':>6} {'command CPU':>12} {'ratio':>6} {'query':>8} {'ratio':>6}")
    for policy in policies:
        w, c, q = (statistics.median(walls[policy]), statistics.median(cpus[policy]),
                   statistics.median(queries[policy]))
        print(f"{policy:<12} {w:>12.2f}s {w / base['wall']:>6.2f} {c:>11.2f}s {c / base['cpu']:>6.2f} "
              f"{q:>7.3f}s {q / base['query']:>6.2f}")
    del keep


if __name__ == "__main__":
    main()
