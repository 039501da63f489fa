"""Benchmark: how long short ``irw`` commands take, against ``python -c "import duckdb"``.

    python bench/bench_startup.py [--repeat 20] [--db fixtures.duckdb]

Each command is run ``--repeat`` times (after one warm-up run), the commands interleaved
round by round so that a change of load on the machine hits them alike; the script prints
each command's median and quartiles of wall time and its ratio to the median of
``python -c "import duckdb"`` (the floor for any command that opens a warehouse), and the
same of CPU time (user + system: on a machine shared with other work, the wall times
compare as the CPU times do). The commands run as installed, with their modules' bytecode
(PYTHONDONTWRITEBYTECODE is left out of their environment).
``irw eval`` runs on the bundled fixtures in a warehouse loaded as in the README's quick
start (a temporary one unless ``--db`` names one that holds them) and evaluated once
before timing (warm). Last, the part of opening a warehouse that compares irw's views and
macros with its templates (irwarehouse.schema.changed_objects), timed in this process: the
comparison itself (an open after a write), and the check of a file unchanged since it was
last found true; and DuckDB opening the file and closing it, with the size of the macro SQL
its catalogue holds.
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

from common import ROOT, irw_executable, machine

TARGET = 3.0  # each command within 3x the time of importing duckdb


def run(cmd: list[str], env: dict) -> tuple[float, float]:
    """(wall s, CPU s: user + system) of one whole process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{' '.join(cmd)} failed")
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=20, help="runs of each command")
    parser.add_argument("--db", help="a warehouse holding the bundled fixtures (default: a temporary one)")
    args = parser.parse_args()

    irw = irw_executable()
    tmp = tempfile.TemporaryDirectory()
    db = args.db or str(Path(tmp.name) / "fixtures.duckdb")
    # as installed: with the modules' compiled bytecode (written by the warm-up run)
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, "IRW_DB": db}
    if not args.db:
        fixtures = ROOT / "fixtures"
        for cmd in (["load", "qrels", str(fixtures / "qrels.txt"), "--name", "fixture"],
                    ["load", "runs", str(fixtures / "runs"), "--meta", str(fixtures / "runs.tsv")]):
            subprocess.run([irw, *cmd], check=True, env=env, stderr=subprocess.DEVNULL)
    commands = {
        'python -c "import duckdb"': [sys.executable, "-c", "import duckdb"],
        "irw --help": [irw, "--help"],
        "irw measures": [irw, "measures"],
        "irw eval -m AP -m P@10": [irw, "eval", "-m", "AP", "-m", "P@10"],
        "irw runs list": [irw, "runs", "list"],
    }
    print(f"machine: {machine()}; load average {os.getloadavg()[0]:.1f}")
    times: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    for name, cmd in commands.items():  # warm-up: file cache, the evaluation's base relation
        run(cmd, env)
    for _ in range(args.repeat):
        for name, cmd in commands.items():
            wall, cpu = run(cmd, env)
            times[name].append(wall)
            cpus[name].append(cpu)
    base = statistics.median(times['python -c "import duckdb"'])
    base_cpu = statistics.median(cpus['python -c "import duckdb"'])
    print(f"{args.repeat} runs each, interleaved; wall time median [quartiles]; ratio to the first; "
          "CPU time (user + system) median, its ratio")
    for name, values in times.items():
        q1, med, q3 = statistics.quantiles(values, n=4)
        ratio = med / base
        cpu = statistics.median(cpus[name])
        verdict = "" if name.startswith("python") else ("  ok" if ratio <= TARGET else f"  over {TARGET:g}x")
        print(f"{name:<28} {med * 1000:6.0f} ms [{q1 * 1000:4.0f}-{q3 * 1000:4.0f}]  {ratio:4.2f}x"
              f"  CPU {cpu * 1000:4.0f} ms {cpu / base_cpu:4.2f}x{verdict}")
    objects_check(db, args.repeat)
    open_close(db, args.repeat)
    tmp.cleanup()


def objects_check(db: str, repeat: int) -> None:
    """The check of irw's views and macros that opening a warehouse makes: median time."""
    from irwarehouse import connection, schema

    con = connection.connect(db, read_only=True)
    try:
        schema.changed_objects(con)  # warm: the digests of the templates (cached on disk)
        for label, path in (("compared", None), ("file as last found true", db)):
            times = []
            for _ in range(max(repeat, 5)):
                start = time.perf_counter()
                schema.changed_objects(con, path)
                times.append(time.perf_counter() - start)
            print(f"views and macros check, {label}: {statistics.median(times) * 1000:.1f} ms "
                  "(in process, median)")
    finally:
        con.close()


def open_close(db: str, repeat: int) -> None:
    """DuckDB opening the warehouse file read-only and closing it (reading and dropping its
    catalogue, which grows with the measure macros' SQL): median time, in process."""
    import duckdb

    opened, closed = [], []
    for _ in range(max(repeat, 5) * 2):
        start = time.perf_counter()
        con = duckdb.connect(db, read_only=True)
        opened.append(time.perf_counter() - start)
        con.execute("SELECT 1").fetchall()
        start = time.perf_counter()
        con.close()
        closed.append(time.perf_counter() - start)
    size = duckdb.connect(db, read_only=True)
    try:
        macros = size.execute("SELECT sum(length(macro_definition)) FROM duckdb_functions() "
                              "WHERE macro_definition IS NOT NULL AND NOT internal").fetchone()[0]
    finally:
        size.close()
    print(f"opening the file {statistics.median(opened) * 1000:.1f} ms, closing it "
          f"{statistics.median(closed) * 1000:.1f} ms (in process, median; "
          f"{macros / 1024:.0f} KB of macro SQL in its catalogue)")


if __name__ == "__main__":
    main()
