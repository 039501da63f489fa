"""`irw sql` on a large result: peak resident memory and time to the first line, per format.

`irw sql` prints a query's rows as DuckDB produces them, a batch at a time (output.stream
over Warehouse.sql(..., batches=True)), so its memory is bounded by a batch whatever the
result's size. This script runs, in a subprocess of its own for each output format (table,
csv, json), `irw sql` on a query of N rows (default 5 million: an integer, a double and a
string per row) over a small warehouse, reads its standard output as it comes (counting
bytes and lines, keeping none), and reports the time to the first line, the total wall
time, the lines and bytes printed, and the child's peak resident set size (the kernel's
ru_maxrss of that child, as `/usr/bin/time -v` reports it), with the machine and the load
average before and after. A first row, the same command on a one-row result, shows how much
of the time to the first line is irw's start (Python, the imports, opening the warehouse).

    python bench/bench_sql_stream.py [--rows N] [--formats table,csv,json] [--memory-limit 1GB]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, irw_executable, machine  # noqa: E402

QUERY = "SELECT range AS i, range * 0.5 AS x, 'doc-' || range AS docno FROM range({rows})"


def measure(irw: str, db: str, rows: int, fmt: str, memory: str | None) -> dict:
    """One `irw sql` run: time to the first line, wall time, output, peak RSS of the child."""
    command = [irw, "--db", db] + (["--memory-limit", memory] if memory else []) + \
        ["sql", QUERY.format(rows=rows), "--format", fmt]
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = None
    lines = size = 0
    for line in child.stdout:
        if first is None:
            first = time.perf_counter() - start
        lines += 1
        size += len(line)
    err = child.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"irw sql --format {fmt} failed: {err.strip()}")
    return {"format": fmt, "first_line_s": first, "wall_s": wall, "lines": lines,
            "bytes": size, "peak_rss_mb": usage.ru_maxrss / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--formats", default="table,csv,json")
    parser.add_argument("--memory-limit", help="irw's --memory-limit (default: irw's own)")
    args = parser.parse_args()
    irw = irw_executable()
    print(f"machine: {machine()}")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"query: {QUERY.format(rows=args.rows)}")
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "w.duckdb")
        subprocess.run([irw, "--db", db, "load", "qrels", str(ROOT / "fixtures" / "qrels.txt"),
                        "--name", "fixture"], check=True, capture_output=True)
        print(f"{'format':6}  {'first line':>10}  {'wall':>8}  {'lines':>10}  {'MB out':>8}  {'peak RSS':>9}")
        base = measure(irw, db, 1, "csv", args.memory_limit)  # irw's start, for comparison
        print(f"{'1 row':6}  {base['first_line_s']:9.2f}s  {base['wall_s']:7.1f}s  {base['lines']:>10,}  "
              f"{base['bytes'] / 1e6:8.1f}  {base['peak_rss_mb']:6.0f} MB  (csv: irw's start alone)", flush=True)
        for fmt in args.formats.split(","):
            r = measure(irw, db, args.rows, fmt, args.memory_limit)
            print(f"{r['format']:6}  {r['first_line_s']:9.2f}s  {r['wall_s']:7.1f}s  {r['lines']:>10,}  "
                  f"{r['bytes'] / 1e6:8.1f}  {r['peak_rss_mb']:6.0f} MB", flush=True)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
