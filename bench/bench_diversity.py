"""Benchmark: the diversity family on TREC Web-sized data -- 30 runs x 50 topics x 1,000
documents, 3-8 intents a topic -- with irw and with pyndeval (TREC's ndeval), each a whole
process reading the same files and computing the per-topic alpha-nDCG@5/10/20, ERR-IA@5/10/20,
NRBP, nNRBP, P-IA@5/10/20, MAP-IA and subtopic recall@5/10/20 of every run. irw runs as a
user types it, files in, scores out (`irw eval QRELS RUNS --qrels-format diversity`, CSV
per topic); irw-load loads the files into an in-memory warehouse first, then evaluates.

    python bench/bench_diversity.py [--repeat N] [--runs 30] [--topics 50] [--docs 1000]

The data is generated (a fixed seed) into a temporary directory: per topic 3-8 intents and
300 judged documents, each judged for a few intents (about a third of those judgments
relevant); each run retrieves 1,000 documents, a quarter of them judged, with tied scores.
The tools run N times, interleaved; the table shows each one's median wall-clock time and the
CPU time (user + system) of that run (the machine may be shared: CPU time says what the
work cost), and the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, machine

IRW_MEASURES = [f"{m}@{k}" for m in ("alpha_nDCG", "ERR_IA", "P_IA", "StRecall") for k in (5, 10, 20)] + [
    "NRBP", "nNRBP", "MAP_IA"]
PYNDEVAL_MEASURES = [f"{m}@{k}" for m in ("alpha-nDCG", "ERR-IA", "P-IA", "strec") for k in (5, 10, 20)] + [
    "NRBP", "nNRBP", "MAP-IA"]

# irw: files in, scores out, as a user types it (irw eval QRELS RUNS --qrels-format diversity)
IRW = f"""
import sys
from irwarehouse.cli import main
sys.argv = ["irw", "eval", sys.argv[1], sys.argv[2], "--qrels-format", "diversity", "--per-topic",
            "--format", "csv", *[a for m in {IRW_MEASURES!r} for a in ("-m", m)]]
main()
"""
# irw-load: the files loaded into an in-memory warehouse, then evaluated
IRW_LOAD = f"""
import sys
from irwarehouse import Warehouse
with Warehouse(":memory:") as w:
    w.load_qrels(sys.argv[1], "web", format="diversity")
    w.load_runs(sys.argv[2])
    rows = w.eval({IRW_MEASURES!r}, qrels="web", per_topic=True, store=False).rows()
print(len(rows))
"""

PYNDEVAL = f"""
import os, sys
import pyndeval
qrels = []
with open(sys.argv[1]) as fh:
    for line in fh:
        t, i, d, r = line.split()
        qrels.append((t, i, d, int(r)))
evaluator = pyndeval.RelevanceEvaluator(qrels, {PYNDEVAL_MEASURES!r})
n = 0
for name in sorted(os.listdir(sys.argv[2])):
    run = []
    with open(os.path.join(sys.argv[2], name)) as fh:
        for line in fh:
            t, _, d, _, score, _ = line.split()
            run.append((t, d, float(score)))
    n += sum(len(v) for v in evaluator.evaluate(run).values())
print(n)
"""


def generate(out: Path, runs: int, topics: int, docs: int, seed: int = 2014) -> None:
    rng = random.Random(seed)
    judged: dict[str, list[str]] = {}
    with open(out / "qrels.txt", "w") as fh:
        for t in range(1, topics + 1):
            intents = rng.randint(3, 8)
            pool = [f"clueweb-{t}-{i:05d}" for i in range(300)]
            judged[str(t)] = pool
            for d in pool:
                for j in rng.sample(range(1, intents + 1), rng.randint(1, min(3, intents))):
                    fh.write(f"{t} {j} {d} {1 if rng.random() < 0.35 else 0}\n")
    (out / "runs").mkdir()
    for r in range(runs):
        with open(out / "runs" / f"run{r:02d}.txt", "w") as fh:
            for t in range(1, topics + 1):
                hits = min(len(judged[str(t)]), docs // 4)
                mine = rng.sample(judged[str(t)], hits) + [f"other-{t}-{i}" for i in rng.sample(range(10**6), docs - hits)]
                rng.shuffle(mine)
                for rank, d in enumerate(mine, 1):
                    fh.write(f"{t} Q0 {d} {rank} {round(50 - rank / 25, 1)} run{r:02d}\n")


def timed(code: str, data: Path) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds, stdout) of one whole process running ``code``."""
    # as installed: irw's modules with their bytecode (PYTHONDONTWRITEBYTECODE left out)
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryFile("w+") as out_file, tempfile.TemporaryFile("w+") as err_file:
        start = time.perf_counter()  # (files, not pipes: a large output would fill a pipe)
        proc = subprocess.Popen([sys.executable, "-c", code, str(data / "qrels.txt"), str(data / "runs")],
                                stdout=out_file, stderr=err_file, text=True, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        out_file.seek(0), err_file.seek(0)
        out, err = out_file.read(), err_file.read()
    if status != 0:
        raise SystemExit(f"failed:\n{err}")
    lines = out.strip().splitlines()
    shown = str(len(lines) - 1) if lines and lines[0].startswith("run_id,") else out.strip()  # csv: its rows
    return wall, usage.ru_utime + usage.ru_stime, shown


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--docs", type=int, default=1000)
    args = parser.parse_args()
    print(machine())
    print("load average before: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        generate(data, args.runs, args.topics, args.docs)
        tools = {"irw": IRW, "irw-load": IRW_LOAD, "pyndeval": PYNDEVAL}
        times: dict[str, list[tuple[float, float, str]]] = {tool: [] for tool in tools}
        for _ in range(args.repeat):
            for tool, code in tools.items():
                times[tool].append(timed(code, data))
    print(f"{args.runs} runs x {args.topics} topics x {args.docs} documents, {len(IRW_MEASURES)} "
          f"measures per topic; median of {args.repeat} whole processes")
    print(f"{'tool':10} {'wall s':>8} {'cpu s':>8}  per-topic values")
    for tool, results in times.items():
        wall = statistics.median(w for w, _, _ in results)
        cpu = next(c for w, c, _ in results if w == wall)
        print(f"{tool:10} {wall:8.2f} {cpu:8.2f}  {results[0][2]}")
    print("load average after: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
