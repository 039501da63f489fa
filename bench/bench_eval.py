"""Benchmark: load TREC-8 (129 runs, official qrels) and compute per-topic AP, P@10, nDCG,
nDCG@10, RR, Bpref and RBP(p=0.8) for every run -- with irw (into a warehouse file: `irw`;
files in, scores out: `irw_files`) and with the tools people use today (pytrec_eval, ranx, ir_measures; install them with `pip install '.[bench]'`).

Each tool runs in its own process, one after another on the same machine; each reports its
wall-clock times and its peak resident memory.

    python bench/bench_eval.py [--data ../shared/data/trec8] [--tools irw,irw_files,pytrec_eval,ranx,ir_measures]
                               [--repeat N]

With --repeat N the tools run N times, interleaved (irw, pytrec_eval, ..., irw, ...), and the
table shows each tool's median run (by end-to-end time).
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import DEFAULT_DATA, machine
MEASURES = ["AP", "P@10", "nDCG", "nDCG@10", "RR", "Bpref", "RBP(p=0.8)"]


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def read_python(data: Path):
    """The plain-Python TREC reader the Python tools are typically fed with."""
    qrels = {}
    with gzip.open(data / "qrels.trec8.gz", "rt") as fh:
        for line in fh:
            topic, _, doc, rel = line.split()
            qrels.setdefault(topic, {})[doc] = int(rel)
    runs = {}
    for path in sorted((data / "runs").glob("*.gz")):
        with gzip.open(path, "rt") as fh:
            for line in fh:
                topic, _, doc, _rank, score, run_id = line.split()
                runs.setdefault(run_id, {}).setdefault(topic, {})[doc] = float(score)
    return qrels, runs


def tool_irw(data: Path) -> dict:
    from irwarehouse import measures, schema
    from irwarehouse.engine import base, evaluation, loading

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        con = schema.connect(str(Path(tmp) / "bench.duckdb"))
        loading.load_qrels(con, [str(data / "qrels.trec8.gz")], "trec8")
        tq = time.perf_counter()
        loading.load_runs(con, [str(data / "runs")])
        t1 = time.perf_counter()
        parsed = measures.parse_all(MEASURES)
        runs = [r[0] for r in con.execute("SELECT run_id FROM run_loads").fetchall()]
        base.ensure_base(con, "trec8")
        tb = time.perf_counter()
        per = evaluation.evaluate(con, "trec8", parsed, runs, topics="run")
        t2 = time.perf_counter()
        warm = []
        for _ in range(3):
            s = time.perf_counter()
            evaluation.evaluate(con, "trec8", parsed, runs, topics="run")
            warm.append(time.perf_counter() - s)
        con.close()
    phases = (f"open + qrels {tq - t0:.2f} s, runs {t1 - tq:.2f} s, base {tb - t1:.2f} s, "
              f"measures {t2 - tb:.2f} s")
    return {"load_s": t1 - t0, "first_eval_s": t2 - t1, "end_to_end_s": t2 - t0,
            "warm_eval_s": min(warm), "values": len(per), "peak_mb": peak_mb(),
            "note": f"first eval includes materializing the base; warm = base cached ({phases})"}


def tool_irw_files(data: Path) -> dict:
    """`irw eval QRELS RUN...`: the files evaluated in an in-memory warehouse, nothing kept
    (the import of irwarehouse included)."""
    t0 = time.perf_counter()
    from irwarehouse import Warehouse

    per = Warehouse.eval_files(str(data / "qrels.trec8.gz"), [str(data / "runs")], MEASURES)
    t1 = time.perf_counter()
    return {"load_s": math.nan, "first_eval_s": math.nan, "end_to_end_s": t1 - t0,
            "values": len(per), "peak_mb": peak_mb(),
            "note": "files in, scores out: load and evaluation in one call, import included"}


def tool_pytrec_eval(data: Path) -> dict:
    import pytrec_eval

    t0 = time.perf_counter()
    qrels, runs = read_python(data)
    t1 = time.perf_counter()
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, {"map", "P_10", "ndcg", "ndcg_cut_10", "recip_rank", "bpref"})
    results = {run_id: evaluator.evaluate(run) for run_id, run in runs.items()}
    t2 = time.perf_counter()
    return {"load_s": t1 - t0, "first_eval_s": t2 - t1, "end_to_end_s": t2 - t0,
            "values": sum(len(v) * len(next(iter(v.values()))) for v in results.values()),
            "peak_mb": peak_mb(), "note": "no RBP in pytrec_eval: 6 of the 7 measures"}


def tool_ranx(data: Path) -> dict:
    from ranx import Qrels, Run, evaluate

    t0 = time.perf_counter()
    qrels_dict, runs_dict = read_python(data)
    qrels = Qrels(qrels_dict)
    runs = {run_id: Run(run, name=run_id) for run_id, run in runs_dict.items()}
    t1 = time.perf_counter()
    metrics = ["map", "precision@10", "ndcg", "ndcg@10", "mrr", "bpref", "rbp.8"]
    values = 0
    for run in runs.values():
        evaluate(qrels, run, metrics, return_mean=False, make_comparable=True)
        values += len(metrics) * len(qrels_dict)
    t2 = time.perf_counter()
    return {"load_s": t1 - t0, "first_eval_s": t2 - t1, "end_to_end_s": t2 - t0,
            "values": values, "peak_mb": peak_mb(), "note": "includes numba compilation"}


def tool_ir_measures(data: Path) -> dict:
    import ir_measures
    from ir_measures import AP, RR, Bpref, P, nDCG

    t0 = time.perf_counter()
    qrels = list(ir_measures.read_trec_qrels(str(data / "qrels.trec8.gz")))
    runs = {}
    for path in sorted((data / "runs").glob("*.gz")):
        for sd in ir_measures.read_trec_run(str(path)):
            runs.setdefault(sd.run_id if hasattr(sd, "run_id") else path.name, []).append(sd)
    t1 = time.perf_counter()
    measures = [AP, P @ 10, nDCG, nDCG @ 10, RR, Bpref]  # its providers lack RBP for run files
    values = 0
    for run in runs.values():
        values += sum(1 for _ in ir_measures.iter_calc(measures, qrels, run))
    t2 = time.perf_counter()
    return {"load_s": t1 - t0, "first_eval_s": t2 - t1, "end_to_end_s": t2 - t0,
            "values": values, "peak_mb": peak_mb(), "note": "6 of the 7 measures (no RBP)"}


TOOLS = {"irw": tool_irw, "irw_files": tool_irw_files, "pytrec_eval": tool_pytrec_eval, "ranx": tool_ranx,
         "ir_measures": tool_ir_measures}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--tools", default=",".join(TOOLS))
    parser.add_argument("--repeat", type=int, default=1, help="runs of each tool, interleaved")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    data = Path(args.data)
    if args.child:
        print(json.dumps(TOOLS[args.child](data)))
        return
    if not (data / "qrels.trec8.gz").exists():
        sys.exit(f"TREC-8 data not found at {data} (use --data)")
    print(f"machine: {machine()}")
    print(f"{'tool':<12} {'load s':>8} {'eval s':>8} {'total s':>8} {'warm s':>7} {'peak MB':>8}  note")
    tools = args.tools.split(",")
    runs: dict[str, list[dict]] = {tool: [] for tool in tools}
    for _ in range(args.repeat):
        for tool in tools:
            proc = subprocess.run([sys.executable, __file__, "--data", str(data), "--child", tool],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                print(f"{tool:<12} failed: {proc.stderr.strip().splitlines()[-1] if proc.stderr else ''}")
                continue
            runs[tool].append(json.loads(proc.stdout.strip().splitlines()[-1]))
    results = {}
    for tool in tools:
        if not runs[tool]:
            continue
        ordered = sorted(runs[tool], key=lambda r: r["end_to_end_s"])
        r = results[tool] = ordered[(len(ordered) - 1) // 2]
        warm = f"{r['warm_eval_s']:7.2f}" if "warm_eval_s" in r else f"{'-':>7}"
        times = ", ".join(f"{x['end_to_end_s']:.2f}" for x in runs[tool])
        spread = f" (of {len(ordered)}: {times} s)" if len(ordered) > 1 else ""
        print(f"{tool:<12} {r['load_s']:8.2f} {r['first_eval_s']:8.2f} {r['end_to_end_s']:8.2f} "
              f"{warm} {r['peak_mb']:8.0f}  {r.get('note', '')}{spread}")
    for tool in ("irw", "irw_files"):
        if tool in results and "pytrec_eval" in results:
            ratio = results[tool]["end_to_end_s"] / results["pytrec_eval"]["end_to_end_s"]
            print(f"{tool} end-to-end / pytrec_eval end-to-end = {ratio:.2f}")


if __name__ == "__main__":
    main()
