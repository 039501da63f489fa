"""Many qrels in one command: every leave-one-team-out qrels of TREC-8 (one per pooled team),
all 129 runs, 7 measures -- `irw eval --qrels 'trec8-lo-*'` -- against evaluating one of them,
each by the command line in a process of its own, alternating, without and with storing the
scores.

    python bench/bench_many_qrels.py [--db WAREHOUSE] [--data DIR] [--repeat 3]

The leave-one-team-out qrels are built first when the warehouse lacks them (not timed).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import add_data_options, machine, trec8_warehouse

MEASURES = ["AP", "P@10", "nDCG@10", "nDCG(discount=jk)@1000", "RBP(p=0.8)", "Bpref", "RPrec"]


def _cli(path: str, qrels: str, store: bool) -> float:
    """Wall seconds of `irw eval` over the 7 measures, as a user runs it (its own process)."""
    irw = str(Path(sys.executable).parent / "irw")  # the command of this environment
    args = [irw, "--db", path, "eval", "--qrels", qrels]
    for m in MEASURES:
        args += ["-m", m]
    t = time.perf_counter()
    subprocess.run(args + ([] if store else ["--no-store"]), check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


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
        w.refresh()  # the root's base materialized (not timed)
        frame = w.eval(MEASURES, "trec8-lo-*", store=False)
    print(f"machine: {machine()}")
    print(f"{len(names)} leave-one-team-out qrels x 129 runs x {len(MEASURES)} measures "
          f"({len(frame):,} per-topic scores), by the command line, alternating; median of {args.repeat}")
    for store in (False, True):
        one, many = [], []
        for _ in range(args.repeat):
            one.append(_cli(path, names[0], store))
            many.append(_cli(path, "trec8-lo-*", store))
        a, b = statistics.median(one), statistics.median(many)
        spread = lambda xs: ", ".join(f"{x:.2f}" for x in xs)  # noqa: E731
        print(f"{'storing' if store else '--no-store'}: one qrels {a:.2f} s ({spread(one)}); all "
              f"{len(names)} in one command {b:.2f} s ({spread(many)}): {b / a:.1f}x one")


if __name__ == "__main__":
    main()
