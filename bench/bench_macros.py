"""Measure macros against the engine: one measure over all TREC-8 runs, warm.

The `irw eval -m M --no-store` command, the engine in process (`irwarehouse.engine.evaluation.evaluate`
on a read-only connection, what that command runs) and the macro (`SELECT * FROM
measure.<Name>('trec8', ...)` on a plain read-only DuckDB connection), each after a first
call, best of five (three for the command), for a few measures.

    python bench/bench_macros.py [--data DIR | --db FILE]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import add_data_options, machine, trec8_warehouse  # noqa: E402

CASES = [("AP", "AP", ""), ("P@10", "P", "k := 10"), ("nDCG(discount=jk)@10", "nDCG", "k := 10, discount := 'jk'"),
         ("RBP(p=0.8)", "RBP", "")]


def best(fn, repeat=5):
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_options(parser)
    args = parser.parse_args()
    print(machine())
    from irwarehouse import measures, schema
    from irwarehouse.engine import base, evaluation

    path, keep = trec8_warehouse(args)
    con = schema.connect(path)
    base.ensure_base(con, "trec8")  # as after a first `irw eval`
    con.close()
    con = schema.connect(path, read_only=True)
    runs = [r[0] for r in con.execute("SELECT run_id FROM run_loads ORDER BY 1").fetchall()]
    plain = duckdb.connect(path, read_only=True)
    irw = str(Path(sys.executable).with_name("irw"))
    print(f"{'measure':24s} {'irw eval':>9s} {'engine':>8s} {'macro':>8s} {'macro/engine':>13s} {'macro/irw eval':>15s}")
    for name, mac, margs in CASES:
        parsed = measures.parse_all([name])
        e = best(lambda: evaluation.evaluate(con, "trec8", parsed, runs, store=False))
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
