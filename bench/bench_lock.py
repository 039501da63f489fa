"""Readers beside a writer: how long a TREC-8 load locks readers out of the warehouse.

A fresh warehouse gets the TREC-8 qrels; then `irw load runs` loads all 129 runs in a
subprocess while this process polls the file read-only every few milliseconds (open,
count the runs, close), as a dashboard or a second `irw` would. Reported: the load's wall
time, the time readers were locked out (the spans between a failed poll and the next
successful one), its share of the load, and whether any reader saw part of the batch
(the runs are all there or none are).

    python bench/bench_lock.py [--data DIR] [--interval 0.02]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import DEFAULT_DATA, machine  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="TREC-8 data directory")
    parser.add_argument("--interval", type=float, default=0.02, help="seconds between polls")
    args = parser.parse_args()
    data = Path(args.data)
    print(machine())
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "lock.duckdb")
        irw = [str(Path(sys.executable).with_name("irw"))]
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
    print(f"load of 129 runs: {wall:.2f} s wall; {polls} read-only polls")
    print(f"readers locked out: {locked:.2f} s = {locked / wall:.0%} of the load")
    print(f"states readers saw (runs, lines): {sorted(seen)}; partial batches seen: {partial}")


if __name__ == "__main__":
    main()
