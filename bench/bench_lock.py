"""Readers beside a writer: how long a TREC-8 load locks readers out of the warehouse.

A fresh warehouse gets the TREC-8 qrels; then `irw load runs` loads all 129 runs in a
subprocess while this process polls the file read-only every few milliseconds (open,
count the runs, close), as a dashboard or a second `irw` would. Reported: the load's wall
time, the time readers were locked out (the spans between a failed poll and the next
successful one), its share of the load, and whether any reader saw part of the batch
(the runs are all there or none are).

    python bench/bench_lock.py [--data DIR] [--interval 0.02] [--repeat N] [--in-place]

Such a load writes into a copy of the warehouse and renames it onto the warehouse
(irwarehouse.connection.swapped), so readers are not refused at all; ``--in-place`` makes it
write the warehouse itself, as a load into a large warehouse does, and readers are refused
for its final transaction. ``--repeat N``: N loads, each into a fresh warehouse, and the
median share.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import DEFAULT_DATA, machine  # noqa: E402


# `irw` with every load written in place (no copy swapped in)
IN_PLACE = ("import sys; from irwarehouse import connection; connection.swap.SWAP_BYTES_PER_ROW = 0; "
            "from irwarehouse.cli import main; sys.argv[0] = 'irw'; main()")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="TREC-8 data directory")
    parser.add_argument("--interval", type=float, default=0.02, help="seconds between polls")
    parser.add_argument("--repeat", type=int, default=1, help="loads, each into a new warehouse")
    parser.add_argument("--in-place", action="store_true",
                        help="write the warehouse in place instead of into a copy swapped in")
    args = parser.parse_args()
    print(machine())
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    shares = [one_load(Path(args.data), args) for _ in range(args.repeat)]
    if len(shares) > 1:
        print(f"median share locked out of {len(shares)} loads: {statistics.median(shares):.0%} "
              f"({', '.join(f'{x:.0%}' for x in shares)})")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def one_load(data: Path, args) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "lock.duckdb")
        irw = ([sys.executable, "-c", IN_PLACE] if args.in_place
               else [str(Path(sys.executable).with_name("irw"))])
        env = {**os.environ, "IRW_DB": path}
        subprocess.run(irw + ["load", "qrels", str(data / "qrels.trec8.gz"), "--name", "trec8"],
                       env=env, check=True)
        start = time.perf_counter()
        load = subprocess.Popen(irw + ["load", "runs", str(data / "runs"), "--meta",
                                       str(data / "runs.tsv")], env=env)
        polls, locked_since, locked, partial, seen = 0, None, 0.0, 0, set()
        while load.poll() is None:
            t = time.perf_counter()
            try:
                con = duckdb.connect(path, read_only=True)
                try:
                    n_runs, n_lines = con.execute(
                        "SELECT (SELECT count(*) FROM run_loads), (SELECT count(*) FROM runs)").fetchone()
                finally:
                    con.close()
                seen.add((n_runs, n_lines))
                if (n_runs, n_lines) not in ((0, 0), (129, 6284293)):
                    partial += 1
                if locked_since is not None:
                    locked += t - locked_since
                    locked_since = None
            except duckdb.Error:
                if locked_since is None:
                    locked_since = t
            polls += 1
            time.sleep(args.interval)
        end = time.perf_counter()
        if locked_since is not None:
            locked += end - locked_since
        wall = end - start
        if load.returncode:
            raise SystemExit(f"the load failed ({load.returncode})")
    print(f"load of 129 runs{' (in place)' if args.in_place else ''}: {wall:.2f} s wall; "
          f"{polls} read-only polls")
    print(f"readers locked out: {locked:.2f} s = {locked / wall:.0%} of the load")
    print(f"states readers saw (runs, lines): {sorted(seen)}; partial batches seen: {partial}")
    return locked / wall


if __name__ == "__main__":
    main()
