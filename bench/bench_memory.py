"""Memory at scale: wall time and peak resident memory of a load and the first evaluation.

A fresh warehouse (in a temporary directory, or --dir) gets the archive's qrels, then
`irw load runs DIR/runs --meta DIR/runs.tsv`, then `irw eval -m AP -m P@10` (which
materializes the base relation): each an `irw` command in a subprocess of its own, whose
wall time, CPU time (user and system, all threads), peak resident set size (the kernel's
ru_maxrss of that child) and the peak size of what DuckDB spilled to disk are reported, with
the warehouse's size on disk. On a machine shared with other work the CPU time is the
steadier measure of how much work a step is; the wall time is what a user waits. The archive
is TREC-8 (the default) or one written by bench/make_synthetic.py, laid out the same way.

    python bench/bench_memory.py [--data DIR] [--memory-limit 2GB] [--dir TMPDIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import DEFAULT_DATA, machine  # noqa: E402


def _spilled(pid: int) -> int:
    """Bytes in the spill directories of process ``pid`` (db.configure names them
    irw-spill-<pid>-*, under the system's temporary directory)."""
    total = 0
    for directory in Path(tempfile.gettempdir()).glob(f"irw-spill-{pid}-*"):
        for root, _, files in os.walk(directory):
            for name in files:
                try:
                    total += os.path.getsize(os.path.join(root, name))
                except OSError:
                    pass
    return total


def run(cmd: list[str], env: dict) -> tuple[float, float, float, float]:
    """(wall seconds, CPU seconds, peak RSS in GiB, peak spilled GiB) of one command; its
    failure stops the benchmark."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        peak = [0]
        done = threading.Event()

        def watch() -> None:  # the spill directory's size, twice a second
            while not done.wait(0.5):
                peak[0] = max(peak[0], _spilled(proc.pid))

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        _, status, usage = os.wait4(proc.pid, 0)
        done.set()
        watcher.join()
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
        if proc.returncode != 0:
            err.seek(0)
            raise SystemExit(f"{' '.join(cmd)} failed (exit {proc.returncode}): "
                             f"{err.read().decode(errors='replace').strip()}")
    cpu = usage.ru_utime + usage.ru_stime
    return wall, cpu, usage.ru_maxrss / 2**20, peak[0] / 2**30  # ru_maxrss is in KiB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA),
                        help="archive directory: qrels.trec8.gz, runs/, runs.tsv")
    parser.add_argument("--memory-limit", help="passed to irw as IRW_MEMORY_LIMIT")
    parser.add_argument("--dir", help="where the warehouse is written (default: a temporary "
                                      "directory); it is removed afterwards")
    args = parser.parse_args()
    data = Path(args.data)
    if not (data / "qrels.trec8.gz").is_file() or not (data / "runs").is_dir():
        raise SystemExit(f"no archive at {data} (qrels.trec8.gz and runs/ expected; use --data)")
    print(machine())
    runs = sorted((data / "runs").iterdir())
    print(f"archive: {data} ({len(runs):,} run files, "
          f"{sum(p.stat().st_size for p in runs) / 2**30:.2f} GiB compressed)")
    irw = str(Path(sys.executable).with_name("irw"))
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        path = Path(tmp) / "bench.duckdb"
        env = {**os.environ, "IRW_DB": str(path)}
        if args.memory_limit:
            env["IRW_MEMORY_LIMIT"] = args.memory_limit
        steps = [
            ("load qrels", [irw, "load", "qrels", str(data / "qrels.trec8.gz"), "--name", "trec8"]),
            ("load runs", [irw, "load", "runs", str(data / "runs"), "--meta", str(data / "runs.tsv")]),
            ("first eval (AP, P@10)", [irw, "eval", "-m", "AP", "-m", "P@10", "--qrels", "trec8"]),
            ("warm eval (AP, P@10)", [irw, "eval", "-m", "AP", "-m", "P@10", "--qrels", "trec8"]),
        ]
        print(f"{'step':<24}{'wall s':>9}{'CPU s':>9}{'peak RSS GiB':>14}{'spilled GiB':>13}")
        for label, cmd in steps:
            wall, cpu, rss, spilled = run(cmd, env)
            print(f"{label:<24}{wall:>9.1f}{cpu:>9.1f}{rss:>14.2f}{spilled:>13.2f}", flush=True)
        print(f"warehouse file: {path.stat().st_size / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
