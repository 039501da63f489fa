"""Benchmark: files in, scores out -- `irw eval QRELS RUN...` against trec_eval 10.0,
pytrec_eval, ir_measures and ranx, each tool a whole process, as people call them; and
against ``duckdb``, the floor of any evaluation done with DuckDB (DUCKDB_FLOOR: one plain
run, no check of the input; dl and msmarco only).

    python bench/bench_files.py [--workloads dl,msmarco,trec8] [--repeat 5]
                                [--tools irw,trec_eval,pytrec_eval,ir_measures,ranx,duckdb]
                                [--work DIR] [--trec-eval PATH] [--data ../shared/data/trec8]

Workloads:

- ``dl``: one run shaped like TREC Deep Learning 2019 passage ranking (43 topics x 1,000
  documents, graded qrels), RR, nDCG@10, AP and R@1000;
- ``msmarco``: one run shaped like MS MARCO passage dev (6,980 queries x 1,000 documents =
  6.98 M lines, sparse qrels), the same measures;
- ``trec8``: TREC-8's qrels and its 129 gzipped run files (``--data``), seven measures (AP,
  P@10, nDCG, nDCG@10, RR, Bpref, RBP(p=0.8); the peers lack RBP and compute six);
  trec_eval takes one plain run file per process, so it is left out here;
- ``trec8x30``: TREC-8's runs 30 times (3,870 plain run files, 188 M lines, each copy's run
  ids suffixed with its number, written once into ``--work`` by DuckDB), the same seven
  measures, irw only: how memory stays bounded by the batch, not by the runs;
- ``msmarco3``: three copies of the ``msmarco`` run (run ids suffixed), the same measures as
  ``msmarco``, trec_eval left out: compare its time with ``msmarco``'s (linear in the runs).

``dl`` and ``msmarco`` are written by ``bench/make_synthetic.py --shape dl|msmarco`` into
``--work`` (default: ``irw-bench-files`` in the temporary directory), the first time only.
trec_eval is ``--trec-eval PATH``, else built once into ``--work`` from
``../shared/tools/trec_eval-10.0.tar.gz``.

``--before DIR``: also time ``irw`` as a checkout of another version of irwarehouse in DIR
runs (e.g. ``git worktree add /tmp/irw-before COMMIT``), as the tool ``irw-before``.

Each tool runs ``--repeat`` times after one untimed warm-up, the tools alternating round by
round (their order rotated each round); the table shows each tool's median wall time, its
quartiles, its CPU time (user + system, median), its peak resident memory (the largest, by
GNU time where there is one), and irw's median over its median (``irw / it``: 0.5x means irw
takes half its time). The means each tool printed are compared with irw's (``same means``:
every mean of every run within 5e-5 of irw's for trec_eval, which prints four decimals, and
within 1e-6 for the others; else the largest difference). The load average before and after
is printed: on a busy Linux machine the scheduler shares the processors between sessions
(autogroups), so a tool on two threads gets no more than one on a single thread, and the
wall times compare as the CPU times do; a quiet machine gives irw its two cores.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import DEFAULT_DATA, ROOT, irw_executable, machine

SHARED_TOOLS = ROOT.parent / "shared" / "tools"
SINGLE = ["RR", "nDCG@10", "AP", "R@1000"]
TREC8 = ["AP", "P@10", "nDCG", "nDCG@10", "RR", "Bpref", "RBP(p=0.8)"]
TREC_EVAL_NAMES = {"RR": "recip_rank", "nDCG@10": "ndcg_cut.10", "AP": "map", "R@1000": "recall.1000",
                   "P@10": "P.10", "nDCG": "ndcg", "Bpref": "bpref"}
PYTREC_NAMES = {k: v.replace(".", "_") for k, v in TREC_EVAL_NAMES.items()}
RANX_NAMES = {"RR": "mrr", "nDCG@10": "ndcg@10", "AP": "map", "R@1000": "recall@1000",
              "P@10": "precision@10", "nDCG": "ndcg", "Bpref": "bpref", "RBP(p=0.8)": "rbp.8"}
TOOLS = ("irw", "trec_eval", "pytrec_eval", "ir_measures", "ranx", "duckdb")

# The peers' programs, as a user writes them: read the files with the tool's own reader,
# evaluate, print the means ({run: {irw measure name: mean}} as JSON, the last line).
PYTREC_EVAL = r"""
import gzip, json, sys, pytrec_eval
qrels_path, names, runs = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3:]
def lines(path):
    return gzip.open(path, "rt") if path.endswith(".gz") else open(path)
with lines(qrels_path) as f:
    qrels = pytrec_eval.parse_qrel(f)
evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(names.values()))
out = {}
for path in runs:
    with lines(path) as f:
        for line in f:
            run_id = line.split()[5]
            break
    with lines(path) as f:
        per = evaluator.evaluate(pytrec_eval.parse_run(f))
    out[run_id] = {m: sum(t[n] for t in per.values()) / len(per) for m, n in names.items()}
print(json.dumps(out))
"""

# Not a peer but a floor: the least a program evaluating with DuckDB does -- import it, open
# an in-memory database, read both files (columns given, no sniffing), rank as trec_eval does
# and compute the measures of one plain run in one query, with no check of the input at all.
DUCKDB_FLOOR = r"""
import json, sys, duckdb
qrels_path, names, runs = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3:]
con = duckdb.connect()
def cols(n):
    return "{" + ", ".join(f"'c{i}': 'VARCHAR'" for i in range(n)) + "}"
con.execute(f"CREATE TABLE q AS SELECT c0 AS topic, c2 AS docno, c3::INTEGER AS rel FROM read_csv("
            f"$p, delim=' ', header=false, auto_detect=false, columns={cols(4)})", {"p": qrels_path})
con.execute(f"CREATE TABLE r AS SELECT c0 AS topic, c2 AS docno, c4::DOUBLE AS score, c5 AS run_id "
            f"FROM read_csv($p, delim=' ', header=false, auto_detect=false, columns={cols(6)})", {"p": runs[0]})
value = {"RR": "coalesce(1.0 / min(rank) FILTER (WHERE rel >= 1), 0)",
         "AP": "coalesce(sum(c_rel / rank) FILTER (WHERE rel >= 1), 0) / any_value(R)",
         "R@1000": "count(*) FILTER (WHERE rel >= 1 AND rank <= 1000) / any_value(R)",
         "nDCG@10": "coalesce(sum(rel / log2(rank + 1)) FILTER (WHERE rel > 0 AND rank <= 10), 0) / any_value(idcg)"}
per_topic = ", ".join(f"{value[m]} AS m{i}" for i, m in enumerate(names))
means = ", ".join(f"avg(m{i})" for i in range(len(names)))
row = con.execute(f'''
WITH ranked AS (SELECT topic, docno, row_number() OVER (PARTITION BY topic ORDER BY score DESC, docno DESC) AS rank FROM r),
t AS (SELECT topic, count(*) FILTER (WHERE rel >= 1) AS R,
             sum(rel / log2(i + 1)) FILTER (WHERE i <= 10 AND rel > 0) AS idcg
      FROM (SELECT topic, rel, row_number() OVER (PARTITION BY topic ORDER BY rel DESC) AS i FROM q) GROUP BY topic),
j AS (SELECT x.topic, x.rank, coalesce(q.rel, 0) AS rel, t.R, t.idcg,
             count(*) FILTER (WHERE q.rel >= 1) OVER (PARTITION BY x.topic ORDER BY x.rank) AS c_rel
      FROM ranked x JOIN t USING (topic) LEFT JOIN q ON q.topic = x.topic AND q.docno = x.docno)
SELECT (SELECT any_value(run_id) FROM r), {means} FROM (SELECT topic, {per_topic} FROM j GROUP BY topic)''').fetchone()
print(json.dumps({row[0]: dict(zip(names, row[1:]))}))
"""

IR_MEASURES = r"""
import gzip, json, sys, ir_measures
qrels_path, names, runs = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3:]
measures = {m: ir_measures.parse_measure(n) for m, n in names.items()}
qrels = list(ir_measures.read_trec_qrels(qrels_path))
out = {}
for path in runs:
    run = list(ir_measures.read_trec_run(path))
    means = ir_measures.calc_aggregate(list(measures.values()), qrels, run)
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        run_id = f.readline().split()[5]
    out[run_id] = {m: means[x] for m, x in measures.items()}
print(json.dumps(out))
"""

RANX = r"""
import gzip, json, sys
from ranx import Qrels, Run, evaluate
qrels_path, names, runs = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3:]
def trec(path, kind):
    if not path.endswith(".gz"):  # ranx reads plain TREC files itself
        return (Qrels if kind == "qrels" else Run).from_file(path, kind="trec")
    found = {}
    with gzip.open(path, "rt") as f:
        for line in f:
            fields = line.split()
            if kind == "qrels":
                found.setdefault(fields[0], {})[fields[2]] = int(fields[3])
            else:
                found.setdefault(fields[0], {})[fields[2]] = float(fields[4])
    return Qrels(found) if kind == "qrels" else Run(found)
qrels = trec(qrels_path, "qrels")
out = {}
for path in runs:
    run = trec(path, "run")
    means = evaluate(qrels, run, list(names.values()), make_comparable=True)
    means = means if isinstance(means, dict) else {list(names.values())[0]: means}
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        run_id = f.readline().split()[5]
    out[run_id] = {m: float(means[n]) for m, n in names.items()}
print(json.dumps(out))
"""

IR_MEASURES_NAMES = {"RR": "RR", "nDCG@10": "nDCG@10", "AP": "AP", "R@1000": "R@1000",
                     "P@10": "P@10", "nDCG": "nDCG", "Bpref": "Bpref"}


def trec_eval_binary(args) -> str:
    """trec_eval 10.0: ``--trec-eval``, or built once into the work directory."""
    if args.trec_eval:
        return args.trec_eval
    binary = Path(args.work) / "trec_eval" / "trec_eval"
    if not binary.exists():
        source = SHARED_TOOLS / "trec_eval-10.0.tar.gz"
        if not source.exists():
            raise SystemExit(f"no trec_eval: {source} is absent; name a binary with --trec-eval")
        shutil.rmtree(binary.parent, ignore_errors=True)
        subprocess.run(["tar", "xzf", str(source), "-C", str(args.work)], check=True)
        subprocess.run(["make", "-C", str(binary.parent)], check=True, capture_output=True)
        print(f"built {binary}")
    return str(binary)


def workload_files(name: str, args) -> tuple[str, list[str], list[str]]:
    """(qrels, run files, measures) of a workload, writing the synthetic ones if missing."""
    if name == "trec8":
        data = Path(args.data)
        if not (data / "qrels.trec8.gz").exists():
            raise SystemExit(f"no TREC-8 data at {data} (use --data)")
        return (str(data / "qrels.trec8.gz"), sorted(str(p) for p in (data / "runs").glob("*.gz")),
                TREC8)
    if name == "trec8x30":
        return str(Path(args.data) / "qrels.trec8.gz"), copies(args, 30), TREC8
    if name == "msmarco3":
        qrels, runs, measures = workload_files("msmarco", args)
        return qrels, copies(args, 3, runs[0]), measures
    out = Path(args.work) / name
    qrels, run = out / f"qrels.{name}.txt", out / f"run.{name}.txt"
    if not (qrels.exists() and run.exists()):
        subprocess.run([sys.executable, str(ROOT / "bench" / "make_synthetic.py"), "--shape", name,
                        "--out", str(out)], check=True)
    return str(qrels), [str(run)], SINGLE


def copies(args, n: int, run: str | None = None) -> list[str]:
    """``n`` copies of the run file ``run`` (default: TREC-8's runs), each copy's run ids
    suffixed with ``_`` and its number, one plain file per run and copy; written the first
    time only into ``--work``."""
    import duckdb

    out = Path(args.work) / (f"copies{n}" if run is None else f"{Path(run).stem}x{n}")
    if not (out / "done").exists():
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        files = [run] if run else sorted(str(p) for p in (Path(args.data) / "runs").glob("*.gz"))
        con = duckdb.connect()
        con.execute("SET preserve_insertion_order = false")
        columns = "{'t': 'VARCHAR', 'q': 'VARCHAR', 'd': 'VARCHAR', 'r': 'VARCHAR', 's': 'VARCHAR', 'id': 'VARCHAR'}"
        con.execute(f"CREATE TABLE lines AS SELECT * FROM read_csv({files!r}, delim=' ', header=false, "
                    f"columns={columns}, auto_detect=false, quote='', escape='')" if run else
                    f"CREATE TABLE lines AS SELECT * FROM read_csv({files!r}, delim='\\t', header=false, "
                    f"columns={columns}, auto_detect=false, quote='', escape='')")
        for k in range(n):
            con.execute(f"COPY (SELECT t, q, d, r, s, id || '_{k}', id AS part FROM lines) TO "
                        f"'{out}/c{k}' (FORMAT csv, DELIMITER ' ', HEADER false, QUOTE '', "
                        "PARTITION_BY (part), WRITE_PARTITION_COLUMNS false)")
        (out / "done").write_text("")
    return sorted(str(p) for p in out.rglob("*.csv"))


# irw as the checkout in sys.argv[1] runs it (--before)
BEFORE = ("import sys; sys.path.insert(0, sys.argv.pop(1)); from irwarehouse.cli import main; "
          "sys.argv[0] = 'irw'; main()")


def commands(tool: str, workload: str, qrels: str, runs: list[str], measures: list[str], args):
    """(the timed command, a function reading the means from its output), or None when the
    tool does not take the workload."""
    if tool in ("irw", "irw-before"):
        runs_arg = [str(Path(args.data) / "runs")] if workload == "trec8" else \
            [str(Path(runs[0]).parents[2])] if workload == "trec8x30" else runs
        irw = [irw_executable()] if tool == "irw" else [sys.executable, "-c", BEFORE, args.before]
        cmd = irw + ["eval", qrels, *runs_arg] + [a for m in measures for a in ("-m", m)]
        return cmd, None if tool == "irw" else lambda out: None  # irw's means: irw_means
    if workload == "trec8x30":
        return None
    if tool == "trec_eval":
        if workload in ("trec8", "msmarco3"):
            return None
        names = {m: TREC_EVAL_NAMES[m] for m in measures}
        cmd = [trec_eval_binary(args)] + [a for n in names.values() for a in ("-m", n)] + [qrels, *runs]
        return cmd, lambda out: _trec_eval_means(out, names, runs)
    if tool == "duckdb":  # the floor: one plain run, the measures it computes
        if len(runs) > 1 or set(measures) - {"RR", "AP", "R@1000", "nDCG@10"}:
            return None
        return ([sys.executable, "-c", DUCKDB_FLOOR, qrels, json.dumps(measures), *runs],
                lambda out: json.loads(out.strip().splitlines()[-1]))
    program, table = {"pytrec_eval": (PYTREC_EVAL, PYTREC_NAMES),
                      "ir_measures": (IR_MEASURES, IR_MEASURES_NAMES),
                      "ranx": (RANX, RANX_NAMES)}[tool]
    names = {m: table[m] for m in measures if m in table}
    cmd = [sys.executable, "-c", program, qrels, json.dumps(names), *runs]
    return cmd, lambda out: json.loads(out.strip().splitlines()[-1])


def _trec_eval_means(out: str, names: dict, runs: list[str]) -> dict:
    by_name = {n.replace(".", "_"): m for m, n in names.items()}
    means = {}
    for line in out.splitlines():
        measure, topic, value = line.split()
        if topic == "all" and measure in by_name:
            means[by_name[measure]] = float(value)
    return {"run": means}


def irw_means(qrels: str, runs: list[str], measures: list[str], workload: str, args) -> dict:
    runs_arg = [str(Path(args.data) / "runs")] if workload == "trec8" else \
        [str(Path(runs[0]).parents[2])] if workload == "trec8x30" else runs
    cmd = [irw_executable(), "eval", qrels, *runs_arg, "-f", "json"] + [a for m in measures for a in ("-m", m)]
    rows = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True, env=ENV).stdout)
    means: dict[str, dict[str, float]] = {}
    for row in rows:
        means.setdefault(row["run_id"], {})[row["measure"]] = row["value"]
    return means


# The tools run as installed: with their modules' compiled bytecode (written by the warm-up
# run where the environment would forbid it).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


# GNU time reports a child's own peak memory (a child of this process would count this
# process's size until it starts its program); without it, the peak shown is at least that.
GNU_TIME = "/usr/bin/time" if os.path.exists("/usr/bin/time") else None


def timed(cmd: list[str]) -> tuple[float, float, float, str]:
    """(wall s, CPU s, peak resident MB, stdout) of one whole process."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err, \
            tempfile.NamedTemporaryFile("r") as peak:
        wrapped = [GNU_TIME, "-f", "%M", "-o", peak.name, *cmd] if GNU_TIME else cmd
        start = time.perf_counter()
        proc = subprocess.Popen(wrapped, stdout=out, stderr=err, env=ENV)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode:
            raise RuntimeError(f"{cmd[0]} failed ({proc.returncode}): {err.read().strip()[-400:]}")
        rss_kb = int(peak.read().strip().splitlines()[-1]) if GNU_TIME else usage.ru_maxrss
        return wall, usage.ru_utime + usage.ru_stime, rss_kb / 1024, out.read()


def compare(reference: dict, other: dict, tolerance: float) -> str:
    """'yes' if every mean of ``other`` is within ``tolerance`` of irw's (runs matched by
    their run id, or by position when each has one run), else the largest difference."""
    worst = 0.0
    for run, means in other.items():
        ref = reference.get(run) or (next(iter(reference.values())) if len(reference) == len(other) == 1 else None)
        if ref is None:
            return f"no (run {run} missing)"
        for m, v in means.items():
            worst = max(worst, abs(ref[m] - v))
    if len(other) != len(reference):
        return f"no ({len(other)} runs, irw {len(reference)})"
    return "yes" if worst <= tolerance else f"no (max |diff| {worst:.2g})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workloads", default="dl,msmarco,trec8")
    parser.add_argument("--tools", default=",".join(TOOLS))
    parser.add_argument("--repeat", type=int, default=5, help="timed runs of each tool, alternating")
    parser.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "irw-bench-files"),
                        help="where the synthetic files and trec_eval are kept between runs")
    parser.add_argument("--trec-eval", help="trec_eval 10.0's binary (default: built into --work)")
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="TREC-8 data directory")
    parser.add_argument("--before", metavar="DIR",
                        help="also time irw as the checkout in DIR runs it (tool irw-before)")
    args = parser.parse_args()
    Path(args.work).mkdir(parents=True, exist_ok=True)
    tools = args.tools.split(",")
    if args.before:
        tools.insert(1, "irw-before")
    print(f"machine: {machine()}")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for workload in args.workloads.split(","):
        qrels, runs, measures = workload_files(workload, args)
        plan = {t: c for t in tools if (c := commands(t, workload, qrels, runs, measures, args))}
        means = {"irw": irw_means(qrels, runs, measures, workload, args)} if "irw" in plan else {}
        for tool, (cmd, reader) in list(plan.items()):  # warm-up, and each tool's means
            try:
                out = timed(cmd)[3]
            except RuntimeError as exc:
                print(f"{workload}: {tool} left out: {str(exc).splitlines()[-1]}")
                del plan[tool]
                continue
            if reader is not None and reader(out) is not None:
                means[tool] = reader(out)
        times: dict[str, list[tuple[float, float, float]]] = {t: [] for t in plan}
        order = list(plan)
        for r in range(args.repeat):
            for tool in order[r % len(order):] + order[:r % len(order)]:
                times[tool].append(timed(plan[tool][0])[:3])
        print(f"\n{workload}: {len(runs)} run file(s), measures {', '.join(measures)}; "
              f"median of {args.repeat} alternating runs; load average now "
              f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print(f"{'tool':<12} {'wall s':>7} {'[quartiles]':>15} {'CPU s':>7} {'peak MB':>8} "
              f"{'irw / it':>8}  same means as irw")
        irw_med = statistics.median(t[0] for t in times["irw"]) if "irw" in times else None
        for tool, values in times.items():
            walls = sorted(v[0] for v in values)
            med = statistics.median(walls)
            q = statistics.quantiles(walls, n=4) if len(walls) > 1 else [med, med, med]
            cpu = statistics.median(v[1] for v in values)
            rss = max(v[2] for v in values)
            ratio = f"{irw_med / med:7.2f}x" if irw_med else "       -"
            same = "-"
            if tool != "irw" and "irw" in means and tool in means:
                same = compare(means["irw"], means[tool], 5e-5 if tool == "trec_eval" else 1e-6)
            print(f"{tool:<12} {med:7.2f} [{q[0]:6.2f}-{q[2]:6.2f}] {cpu:7.2f} {rss:8.0f} {ratio}  {same}")
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
