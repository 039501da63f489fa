"""Where an `irw` command spends its time, statement by statement.

Runs one `irw` command in this process with every SQL statement it executes timed (wall and
CPU seconds of the process), and prints the statements grouped by their first words, the
costliest first, with the time of the Python read of the input files (irwarehouse.engine.loading.staging._sources).

    IRW_DB=FILE python bench/profile_statements.py load runs DIR/runs [--top N]
    IRW_DB=FILE python bench/profile_statements.py eval -m AP --qrels trec8

Arguments are the `irw` command's own; `--top N` (default 15) is taken out before them.
Timing wraps DuckDB's execute calls, so time spent between statements (Python) shows only
in the total.
"""

from __future__ import annotations

import resource
import sys
import time

import duckdb


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    args = sys.argv[1:]
    top = 15
    if "--top" in args:
        i = args.index("--top")
        top = int(args[i + 1])
        del args[i:i + 2]
    log: list[tuple[float, float, str]] = []

    def timed(fn, label=None):
        def wrapper(*a, **k):
            start, cpu = time.perf_counter(), _cpu()
            try:
                return fn(*a, **k)
            finally:
                text = label or " ".join(str(a[1]).split())
                log.append((time.perf_counter() - start, _cpu() - cpu, text))
        return wrapper

    duckdb.DuckDBPyConnection.execute = timed(duckdb.DuckDBPyConnection.execute)
    from irwarehouse.engine.loading import staging as loading
    from irwarehouse.cli import app

    loading._sources = timed(loading._sources, "python: read and decompress the files")
    start = time.perf_counter()
    try:
        app(args=args, prog_name="irw")
    except SystemExit as exc:
        if exc.code:
            raise
    total = time.perf_counter() - start
    groups: dict[str, list[float]] = {}
    for wall, cpu, text in log:
        group = groups.setdefault(text[:60], [0.0, 0.0, 0])
        group[0] += wall
        group[1] += cpu
        group[2] += 1
    print(f"\n{'wall s':>8}{'CPU s':>8}{'calls':>7}  statement", file=sys.stderr)
    for text, (wall, cpu, calls) in sorted(groups.items(), key=lambda g: -g[1][0])[:top]:
        print(f"{wall:>8.2f}{cpu:>8.2f}{calls:>7}  {text}", file=sys.stderr)
    print(f"total {total:.2f} s, of which {sum(w for w, _, _ in log):.2f} s in SQL statements "
          f"and the Python read of the files", file=sys.stderr)


if __name__ == "__main__":
    main()
