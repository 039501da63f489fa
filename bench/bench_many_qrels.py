"""Many qrels in one command: every leave-one-team-out qrels of TREC-8 (one per pooled team),
all 129 runs, 7 measures -- `eval --qrels 'trec8-lo-*'` -- against evaluating one of them.

    python bench/bench_many_qrels.py [--db WAREHOUSE] [--data DIR] [--repeat 3]

The leave-one-team-out qrels are built first when the warehouse lacks them (not timed).
"""

from __future__ import annotations

import argparse
import statistics
import time

from common import add_data_options, machine, trec8_warehouse

MEASURES = ["AP", "P@10", "nDCG@10", "nDCG(discount=jk)@1000", "RBP(p=0.8)", "Bpref", "RPrec"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    add_data_options(parser)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    path, _keep = trec8_warehouse(args)

    from irwarehouse import Warehouse

    with Warehouse(path) as w:
        names = w.qrels_names("trec8-lo-*") if w.sql(
            "SELECT count(*) AS n FROM qrels_info WHERE qrels LIKE 'trec8-lo-%'")["n"][0] else []
        if not names:
            teams = sorted(w.teams("trec8", "pooled"))
            w.pool("leave-out", "trec8-lo-", "trec8", "pooled", depth=100, teams=teams)
            names = w.qrels_names("trec8-lo-*")
        w.eval(MEASURES, "trec8", store=False)  # the root's base materialized (not timed)
        one, many = [], []
        for _ in range(args.repeat):
            t = time.perf_counter()
            w.eval(MEASURES, names[0], store=False)
            one.append(time.perf_counter() - t)
            t = time.perf_counter()
            frame = w.eval(MEASURES, "trec8-lo-*", store=False)
            many.append(time.perf_counter() - t)
    a, b = statistics.median(one), statistics.median(many)
    print(f"machine: {machine()}")
    print(f"{len(names)} leave-one-team-out qrels x 129 runs x {len(MEASURES)} measures "
          f"({len(frame):,} per-topic scores)")
    print(f"one qrels: {a:.2f} s; all {len(names)} in one command: {b:.2f} s "
          f"({b / a:.1f}x one, {b / len(names):.2f} s per qrels); median of {args.repeat}")


if __name__ == "__main__":
    main()
