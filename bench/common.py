"""What the benchmark scripts share: the machine description, the `irw` command and a TREC-8
warehouse."""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "trec8"


def machine() -> str:
    """CPU model, cores, memory and the versions that matter."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    import duckdb

    return (f"{cpu}, {os.cpu_count()} cores, {mem:.0f} GiB; Python {platform.python_version()}, "
            f"DuckDB {duckdb.__version__}")


def irw_executable() -> str:
    """The `irw` command of this Python's environment (else the first on PATH)."""
    here = Path(sys.executable).parent / "irw"
    found = str(here) if here.exists() else shutil.which("irw")
    if not found:
        raise SystemExit("no `irw` command found: install the package (pip install -e .)")
    return found


def add_data_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="TREC-8 data directory")
    parser.add_argument("--db", help="a warehouse that already holds TREC-8 as qrels 'trec8'")


def trec8_warehouse(args) -> tuple[str, object]:
    """(path, keep-alive) of a warehouse holding TREC-8: ``--db``, or a fresh temporary one."""
    from irwarehouse import schema
    from irwarehouse.engine import loading

    if args.db:
        return args.db, None
    data = Path(args.data)
    if not (data / "qrels.trec8.gz").is_file():
        raise SystemExit(f"no TREC-8 data at {data} (use --data)")
    tmp = tempfile.TemporaryDirectory()
    path = str(Path(tmp.name) / "bench.duckdb")
    t = time.perf_counter()
    con = schema.connect(path)
    loading.load_qrels(con, [str(data / "qrels.trec8.gz")], "trec8")
    loading.load_runs(con, [str(data / "runs")], meta=str(data / "runs.tsv"))
    con.close()
    print(f"setup: loaded TREC-8 in {time.perf_counter() - t:.2f} s")
    return path, tmp
