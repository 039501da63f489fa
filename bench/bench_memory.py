"""Memory and disk at scale: wall time, peak resident memory and peak extra disk of a load
and the first evaluation.

A fresh warehouse (in a temporary directory, or --dir) gets the archive's qrels, then
`irw load runs DIR/runs --meta DIR/runs.tsv`, then `irw eval -m AP -m P@10` (which
materializes the base relation): each an `irw` command in a subprocess of its own, whose
wall time, CPU time (user and system, all threads), peak resident set size (the kernel's
ru_maxrss of that child), the peak size of what DuckDB spilled to disk, and the peak of the
extra disk it used are reported, with the warehouse's size on disk after each step.

Extra disk: the commands get a temporary directory (TMPDIR) beside the warehouse's, and
the disk allocated to the warehouse's directory (the file and its WAL) and to what irw
writes in TMPDIR (irw-*: DuckDB's spill directory, the decompressed run files, a load's
staging database) is summed twice a second. The extra disk a command needed is the peak
of all that but the warehouse file, or the peak of it all less what the warehouse takes
when the command is done, whichever is larger. On a machine shared with other work the
CPU time is the steadier measure of how much work a step is; the wall time is what a user
waits. The archive is TREC-8 (the default) or one written by bench/make_synthetic.py, laid
out the same way.

    python bench/bench_memory.py [--data DIR] [--memory-limit 2GB] [--dir TMPDIR]
                                 [--load-only] [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import DEFAULT_DATA, machine  # noqa: E402


def _allocated(path: Path, prefix: str | None = None) -> int:
    """Bytes of disk allocated to the files under ``path`` (those of its entries named
    ``prefix``... only, when given)."""
    total = 0
    try:
        entries = list(os.scandir(path))
    except OSError:
        return 0
    for entry in entries:
        if prefix is not None and not entry.name.startswith(prefix):
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                total += _allocated(Path(entry.path))
            else:
                total += entry.stat(follow_symlinks=False).st_blocks * 512
        except OSError:
            pass  # removed meanwhile
    return total


def run(cmd: list[str], env: dict, tmp: Path, warehouse: Path) -> dict:
    """Wall and CPU seconds, peak RSS, peak spilled and peak extra disk (bytes) of one
    command; its failure stops the benchmark. ``tmp``: the command's TMPDIR, in which irw
    names what it writes irw-*; the warehouse's directory holds nothing else."""
    env = {**env, "TMPDIR": str(tmp)}

    def used() -> tuple[int, int]:  # (the warehouse file, everything else)
        total = _allocated(warehouse.parent) + _allocated(tmp, "irw-")
        try:
            file = warehouse.stat().st_blocks * 512
        except OSError:
            file = 0
        return file, total - file

    start = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        peak = {"spill": 0, "disk": 0, "other": 0}
        done = threading.Event()

        def watch() -> None:  # the disk used, twice a second
            while not done.wait(0.5):
                peak["spill"] = max(peak["spill"], _allocated(tmp, "irw-spill-"))
                file, other = used()
                peak["disk"] = max(peak["disk"], file + other)
                peak["other"] = max(peak["other"], other)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        _, status, usage = os.wait4(proc.pid, 0)
        done.set()
        watcher.join()
        returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
        if returncode != 0:
            err.seek(0)
            raise SystemExit(f"{' '.join(cmd)} failed (exit {returncode}): "
                             f"{err.read().decode(errors='replace').strip()}")
    left = _allocated(tmp, "irw-")
    if left:
        raise SystemExit(f"{' '.join(cmd)} left {left:,} bytes in {tmp}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "rss": usage.ru_maxrss * 1024,  # ru_maxrss is in KiB on Linux
            "spill": peak["spill"], "extra": max(peak["other"], peak["disk"] - sum(used())),
            "file": warehouse.stat().st_size}


GIB = 2**30


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA),
                        help="archive directory: qrels.trec8.gz, runs/, runs.tsv")
    parser.add_argument("--memory-limit", help="passed to irw as IRW_MEMORY_LIMIT")
    parser.add_argument("--dir", help="where the warehouse is written (default: a temporary "
                                      "directory); it is removed afterwards")
    parser.add_argument("--load-only", action="store_true",
                        help="load the qrels and the runs, evaluate nothing")
    parser.add_argument("--repeat", type=int, default=1,
                        help="do it all N times, each in a new warehouse; the median and the "
                             "range of each figure of the runs' load are shown")
    args = parser.parse_args()
    data = Path(args.data)
    if not (data / "qrels.trec8.gz").is_file() or not (data / "runs").is_dir():
        raise SystemExit(f"no archive at {data} (qrels.trec8.gz and runs/ expected; use --data)")
    print(machine())
    runs = sorted((data / "runs").iterdir())
    print(f"archive: {data} ({len(runs):,} run files, "
          f"{sum(p.stat().st_size for p in runs) / GIB:.2f} GiB compressed)", flush=True)
    irw = str(Path(sys.executable).with_name("irw"))
    steps = [
        ("load qrels", ["load", "qrels", str(data / "qrels.trec8.gz"), "--name", "trec8"]),
        ("load runs", ["load", "runs", str(data / "runs"), "--meta", str(data / "runs.tsv")]),
        ("first eval (AP, P@10)", ["eval", "-m", "AP", "-m", "P@10", "--qrels", "trec8"]),
        ("warm eval (AP, P@10)", ["eval", "-m", "AP", "-m", "P@10", "--qrels", "trec8"]),
    ][:2 if args.load_only else 4]
    loads = []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory(dir=args.dir) as root:
            (Path(root) / "db").mkdir()
            (Path(root) / "tmp").mkdir()
            path = Path(root) / "db" / "bench.duckdb"
            env = {**os.environ, "IRW_DB": str(path)}
            if args.memory_limit:
                env["IRW_MEMORY_LIMIT"] = args.memory_limit
            print(f"{'step':<24}{'wall s':>9}{'CPU s':>9}{'peak RSS GB':>13}{'spilled GiB':>13}"
                  f"{'extra disk GiB':>16}{'warehouse GiB':>15}")
            for label, cmd in steps:
                m = run([irw, *cmd], env, Path(root) / "tmp", path)
                print(f"{label:<24}{m['wall']:>9.1f}{m['cpu']:>9.1f}{m['rss'] / 1e9:>13.2f}"
                      f"{m['spill'] / GIB:>13.2f}{m['extra'] / GIB:>16.2f}{m['file'] / GIB:>15.2f}",
                      flush=True)
                if label == "load runs":
                    loads.append(m)
    if args.repeat > 1:
        print(f"load runs, {args.repeat} times: median [min-max]")
        for key, label, unit, scale in [("wall", "wall", "s", 1), ("cpu", "CPU", "s", 1),
                                        ("rss", "peak RSS", "GB", 1e9),
                                        ("extra", "extra disk", "GiB", GIB),
                                        ("file", "warehouse", "GiB", GIB)]:
            values = [m[key] / scale for m in loads]
            print(f"  {label:<11}{statistics.median(values):>8.2f} {unit:<3} "
                  f"[{min(values):.2f}-{max(values):.2f}]")


if __name__ == "__main__":
    main()
