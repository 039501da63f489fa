"""Measure macros against the engine: one measure over all TREC-8 runs, warm; at scale too.

The query ``SELECT run_id, avg(value) FROM measure.AP('trec8') GROUP BY ALL`` on a plain
read-only DuckDB connection against the same work in process (``Warehouse.eval("AP",
per_topic=False, store=False)`` on a read-only Warehouse: the engine, its check of the tables
made once when the warehouse was opened), and the version check a macro makes on every call
(``SELECT irw_runs_fp()``): each warm (after a first call), ``--repeat`` times interleaved,
the median and the range; the ratio is of the medians. Then, for a few measures, the `irw
eval -m M --no-store` command, the engine (``irwarehouse.engine.evaluation.evaluate``) and
the macro (``SELECT * FROM measure.<Name>('trec8', ...)``), best of five (three for the
command).

    python bench/bench_macros.py [--data DIR | --db FILE] [--repeat N] [--query-only]
    python bench/bench_macros.py --scale 10 --work DIR [--repeat N] [--query-only]

``--scale K`` evaluates K times TREC-8 (K x 129 runs): the archive is written by
bench/make_synthetic.py into ``DIR/trec8x<K>`` and loaded into ``DIR/trec8x<K>.duckdb``, with
its base relation materialized (as ``irw refresh`` does; at 10x about ten minutes and 4 GB
of disk); a later run with the same ``--work`` reuses both.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import add_data_options, machine, trec8_warehouse  # noqa: E402

CASES = [("AP", "AP", ""), ("P@10", "P", "k := 10"), ("nDCG(discount=jk)@10", "nDCG", "k := 10, discount := 'jk'"),
         ("RBP(p=0.8)", "RBP", "")]
QUERY = "SELECT run_id, avg(value) FROM measure.AP('trec8') GROUP BY ALL"


def best(fn, repeat=5):
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def interleaved(cases: dict, repeat: int) -> dict[str, list[float]]:
    """Seconds of each of ``cases`` (name: function), warm, ``repeat`` rounds taking each in
    turn (so that a busy spell of the machine hits all alike)."""
    for fn in cases.values():
        fn()
    times = {name: [] for name in cases}
    for _ in range(repeat):
        for name, fn in cases.items():
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    return times


def scaled_warehouse(scale: int, work: Path) -> str:
    """The warehouse of ``scale`` times TREC-8 in ``work``, written and loaded if absent."""
    db = work / f"trec8x{scale}.duckdb"
    if db.exists():
        print(f"setup: reusing {db}")
        return str(db)
    archive = work / f"trec8x{scale}"
    bench = Path(__file__).resolve().parent
    irw = str(Path(sys.executable).with_name("irw"))
    t = time.perf_counter()
    if not (archive / "runs.tsv").exists():
        subprocess.run([sys.executable, str(bench / "make_synthetic.py"), "--scale", str(scale),
                        "--out", str(archive)], check=True)
    partial = work / f"trec8x{scale}.loading.duckdb"
    for leftover in (partial, Path(str(partial) + ".wal")):
        leftover.unlink(missing_ok=True)
    for args in (["load", "qrels", str(archive / "qrels.trec8.gz"), "--name", "trec8"],
                 ["load", "runs", str(archive / "runs"), "--meta", str(archive / "runs.tsv")],
                 ["refresh"]):
        subprocess.run([irw, "--db", str(partial), *args], check=True)
    partial.rename(db)
    print(f"setup: wrote and loaded {scale}x TREC-8 into {db} in {time.perf_counter() - t:.0f} s")
    return str(db)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_options(parser)
    parser.add_argument("--scale", type=int, help="K: evaluate K x TREC-8 (bench/make_synthetic.py)")
    parser.add_argument("--work", help="with --scale: where the archive and its warehouse are kept")
    parser.add_argument("--repeat", type=int, default=5, help="rounds of the query (default 5)")
    parser.add_argument("--query-only", action="store_true", help="only the query against the engine")
    args = parser.parse_args()
    if args.scale is not None and (args.scale < 1 or not args.work or args.db):
        parser.error("--scale needs --work DIR (and no --db), and K >= 1")
    print(machine())
    from irwarehouse import Warehouse, measures, schema
    from irwarehouse.engine import base, evaluation

    if args.scale is not None:
        Path(args.work).mkdir(parents=True, exist_ok=True)
        path, keep = scaled_warehouse(args.scale, Path(args.work)), None
    else:
        path, keep = trec8_warehouse(args)
    con = schema.connect(path)
    base.ensure_base(con, "trec8")  # as after a first `irw eval`
    con.close()

    plain = duckdb.connect(path, read_only=True)
    w = Warehouse(path, read_only=True)
    lines, runs = plain.execute("SELECT count(*), count(DISTINCT run_id) FROM runs").fetchone()
    print(f"{runs:,} runs, {lines:,} lines; {args.repeat} rounds, interleaved, warm; median [min-max]")
    times = interleaved({"engine (Warehouse.eval)": lambda: w.eval("AP", per_topic=False, store=False),
                         "macro": lambda: plain.execute(QUERY).fetchall(),
                         "its version check": lambda: plain.execute("SELECT irw_runs_fp()").fetchall()},
                        args.repeat)
    engine = statistics.median(times["engine (Warehouse.eval)"])
    print(QUERY)
    for name, xs in times.items():
        m = statistics.median(xs)
        print(f"  {name:24s} {m:8.3f} s [{min(xs):.3f}-{max(xs):.3f}]  {m / engine:5.2f}x the engine")
    w.close()
    if args.query_only:
        plain.close()
        return

    con = schema.connect(path, read_only=True)
    run_ids = [r[0] for r in con.execute("SELECT run_id FROM run_loads ORDER BY 1").fetchall()]
    irw = str(Path(sys.executable).with_name("irw"))
    print(f"\n{'measure':24s} {'irw eval':>9s} {'engine':>8s} {'macro':>8s} {'macro/engine':>13s} {'macro/irw eval':>15s}")
    for name, mac, margs in CASES:
        parsed = measures.parse_all([name])
        e = best(lambda: evaluation.evaluate(con, "trec8", parsed, run_ids, store=False))
        sql = f"SELECT run_id, topic, value FROM measure.{mac}('trec8'{', ' + margs if margs else ''})"
        m = best(lambda: plain.execute(sql).fetchall())
        c = best(lambda: subprocess.run([irw, "--db", path, "eval", "-m", name, "--no-store"],
                                        check=True, capture_output=True), repeat=3)
        print(f"{name:24s} {c:8.3f}s {e:7.3f}s {m:7.3f}s {m / e:13.2f} {m / c:15.2f}")
    con.close()
    plain.close()
    del keep


if __name__ == "__main__":
    main()
