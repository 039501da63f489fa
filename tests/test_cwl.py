"""The C/W/L family (INST, INSQ, BPM, NERR8-11, SDCG, cwlP, cwlRBP) against cwl_eval itself:
per topic within 1e-9, its API fed the gains irw reads from the grades (a gain file of the
qrels, the rankings in irw's order as its result file), on the fixtures, on generated data
with ties, unjudged documents, documents in the pool but not assessed and topics without
relevant documents, and on TREC-8; and against ir_measures' cwl_eval provider, whose measure
names irw takes (its P and RBP are irw's cwlP and cwlRBP). cwl-eval is in the `test` extra;
without it these tests are skipped."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from irwarehouse import measures, schema
from irwarehouse.engine import evaluation, loading

from conftest import FIXTURES, unavailable


def _require(module: str, package: str):
    """Import a reference package, or skip saying so (fail in CI: conftest.unavailable)."""
    try:
        return __import__(module)
    except ImportError:
        unavailable(f"the reference package {package} is not installed (pip install {package})")


def _reference(measure):
    """The cwl_eval metric object computing ``measure`` (a parsed irw measure)."""
    _require("cwl", "cwl-eval")
    from cwl.ruler.cwl_ruler import (BPMCWLMetric, INSQCWLMetric, INSTCWLMetric, NDCGCWLMetric,
                                     NERReq8CWLMetric, NERReq9CWLMetric, NERReq10CWLMetric,
                                     NERReq11CWLMetric, PrecisionCWLMetric, RBPCWLMetric)
    make = {"INST": lambda m: INSTCWLMetric(m.get("T")), "INSQ": lambda m: INSQCWLMetric(m.get("T")),
            "BPM": lambda m: BPMCWLMetric(m.get("T"), m.cutoff),
            "NERR8": lambda m: NERReq8CWLMetric(m.cutoff), "NERR9": lambda m: NERReq9CWLMetric(m.cutoff),
            "NERR10": lambda m: NERReq10CWLMetric(m.get("p")), "NERR11": lambda m: NERReq11CWLMetric(m.get("T")),
            "SDCG": lambda m: NDCGCWLMetric(m.cutoff), "cwlP": lambda m: PrecisionCWLMetric(m.cutoff),
            "cwlRBP": lambda m: RBPCWLMetric(m.get("p"))}
    return make[measure.name](measure)


def gain(grade: int, min_rel: int, max_rel: int) -> float:
    """ir_measures' mapping of a grade onto cwl_eval's gains in [0, 1]."""
    if max_rel <= min_rel:
        return 0.0
    return (min(max(max(grade, 0), min_rel), max_rel) - min_rel) / (max_rel - min_rel)


def cwl_eval_scores(con, qrels: str, measure, run_id: str, tmp: Path) -> dict[str, float]:
    """cwl_eval's EU per topic for ``measure``: its qrels handler reads a gain file written
    from the qrels, its ranking maker the run in irw's ranking order (as cwl_eval's
    command line reads a result file: in the order of its lines), max_depth its max_n."""
    _require("cwl", "cwl-eval")
    from cwl.ruler.ranking import RankingMaker
    from cwl.seeker.trec_qrel_handler import TrecQrelHandler

    top = con.execute("SELECT max(rel) FROM qrels WHERE qrels = ?", [qrels]).fetchone()[0]
    max_rel = measure.get("max_rel") if measure.get("max_rel") is not None else top
    gains = tmp / f"gains-{qrels}-{measure.get('min_rel')}-{max_rel}.txt"
    with open(gains, "w") as out:
        for topic, docno, rel in con.execute("SELECT topic, docno, rel FROM qrels WHERE qrels = ?", [qrels]).fetchall():
            out.write(f"{topic} 0 {docno} {gain(rel, measure.get('min_rel'), max_rel)!r}\n")
    handler = TrecQrelHandler(str(gains))
    rows = con.execute("SELECT topic, docno FROM runs WHERE run_id = ? ORDER BY topic, rank", [run_id]).fetchall()
    out: dict[str, float] = {}
    makers: dict[str, RankingMaker] = {}
    for topic, docno in rows:
        makers.setdefault(topic, RankingMaker(topic, handler, None, max_n=measure.get("max_depth"))).add(docno, "_")
    for topic, maker in makers.items():
        out[topic] = _reference(measure).measure(maker.get_ranking())
    return out


def check(con, qrels: str, names: list[str], run_ids: list[str], tmp: Path) -> int:
    parsed = measures.parse_all(names)
    per = evaluation.evaluate(con, qrels, parsed, run_ids, topics="run", store=False)
    ours = {(r.run_id, r.topic, r.measure): r.value for r in per.itertuples()}
    checked = 0
    for m in parsed:
        for run_id in run_ids:
            for topic, value in cwl_eval_scores(con, qrels, m, run_id, tmp).items():
                if (run_id, topic, str(m)) in ours:
                    assert ours[(run_id, topic, str(m))] == pytest.approx(value, abs=1e-9, rel=1e-9), (run_id, topic, str(m))
                    checked += 1
    return checked


NAMES = ["INST", "INST(T=3)", "INST(T=0.75,max_depth=30)", "INSQ", "INSQ(T=2.5)", "INSQ(max_depth=7)",
         "BPM@10", "BPM(T=2)@20", "BPM(T=0.5)@3", "NERR8@10", "NERR8@1", "NERR9@10", "NERR9@3",
         "NERR10", "NERR10(p=0.5)", "NERR10(p=0.99,max_depth=40)", "NERR11", "NERR11(T=3)",
         "SDCG@10", "SDCG@5", "SDCG(max_depth=4)@10", "cwlP@10", "cwlP@1", "cwlP@3", "cwlP(max_depth=9)@10",
         "cwlRBP", "cwlRBP(p=0.5)", "cwlRBP(p=0.99,max_depth=40)", "cwlRBP(p=0.2,max_depth=3)"]


def test_on_the_fixtures(tmp_path):
    con = schema.connect(":memory:")
    loading.load_qrels(con, [str(FIXTURES / "qrels.txt")], "q")
    loading.load_runs(con, [str(p) for p in sorted((FIXTURES / "runs").iterdir())])
    runs = [r[0] for r in con.execute("SELECT run_id FROM run_loads ORDER BY 1").fetchall()]
    graded = NAMES + ["INST(max_rel=1)", "NERR8(min_rel=1)@10", "SDCG(min_rel=1,max_rel=2)@10",
                      "NERR11(min_rel=2)", "cwlP(max_rel=1)@5", "cwlRBP(min_rel=1,max_rel=2)"]
    assert check(con, "q", graded, runs, tmp_path) > len(graded) * len(runs) * 3
    con.close()


def _generated(tmp: Path, seed: int) -> tuple[Path, Path]:
    """Qrels with grades -1..3 (some topics with no relevant document) and a run with tied
    scores, unjudged documents and short and long rankings."""
    rng = random.Random(seed)
    qrels, run = tmp / f"q{seed}.txt", tmp / f"r{seed}.txt"
    with open(qrels, "w") as q, open(run, "w") as r:
        for t in range(1, 13):
            no_relevant = t % 5 == 0
            for d in range(60):
                if rng.random() < 0.6:
                    grade = 0 if no_relevant else rng.choice([-1, 0, 0, 0, 1, 1, 2, 3])
                    q.write(f"{t} 0 d{d} {grade}\n")
            n = rng.choice([1, 3, 8, 25, 60, 120])
            for i in range(n):
                r.write(f"{t} Q0 d{rng.randrange(150) if i else i} {i + 1} {round(rng.random() * 4)} gen{seed}\n")
    return qrels, run


@pytest.mark.parametrize("seed", [1, 2])
def test_on_generated_data(tmp_path, seed):
    qrels, run = _generated(tmp_path, seed)
    lines = run.read_text().splitlines()
    seen, kept = set(), []
    for line in lines:  # one line a document
        t, _, d, *rest = line.split()
        if (t, d) not in seen:
            seen.add((t, d))
            kept.append(line)
    run.write_text("\n".join(kept) + "\n")
    con = schema.connect(":memory:")
    loading.load_qrels(con, [str(qrels)], "g")
    loading.load_runs(con, [str(run)])
    names = NAMES + ["INST(max_rel=1)", "INST(min_rel=1,max_rel=2)", "NERR10(max_rel=2)", "BPM(min_rel=1)@30",
                     "NERR9(max_rel=1)@50", "INSQ(min_rel=3)", "SDCG(max_rel=2)@200", "NERR8(max_depth=5)@10",
                     "cwlP(min_rel=1)@30", "cwlP(max_rel=2)@200", "cwlRBP(max_rel=1)", "cwlRBP(p=0.95,min_rel=2)"]
    assert check(con, "g", names, [f"gen{seed}"], tmp_path) >= len(names) * 10
    con.close()


def test_on_trec8(trec8_db, tmp_path):
    con = schema.connect(trec8_db, read_only=True)
    runs = [r[0] for r in con.execute("SELECT run_id FROM run_loads ORDER BY 1").fetchall()][::40]
    names = ["INST", "INST(T=3)", "INSQ", "BPM@10", "NERR8@10", "NERR9@20", "NERR10", "NERR11", "SDCG@10",
             "cwlP@10", "cwlRBP"]
    assert check(con, "trec8", names, runs, tmp_path) == len(names) * len(runs) * 50
    con.close()


def test_equals_ir_measures(tmp_path):
    """ir_measures' names (INST(T=1,max_rel=1), NERR8@10, ...) give irw's measures, and its
    cwl_eval provider the same values (max_rel given: ir_measures requires it); its P and RBP
    computed by that provider, binary at rel = r, are cwlP and cwlRBP with min_rel = r - 1,
    max_rel = r."""
    ir_measures = _require("ir_measures", "ir-measures")
    _require("cwl", "cwl-eval")
    con = schema.connect(":memory:")
    loading.load_qrels(con, [str(FIXTURES / "qrels.txt")], "q")
    loading.load_runs(con, [str(FIXTURES / "runs" / "alpha.txt")])
    run_id = con.execute("SELECT run_id FROM run_loads").fetchone()[0]
    written = ["INST(T=2.0,max_rel=3)", "INSQ(max_rel=3)", "BPM(T=1.0,max_rel=3)@10", "NERR8(max_rel=2)@10",
               "NERR9(max_rel=3)@5", "NERR10(p=0.8,max_rel=3)", "NERR11(T=2.0,max_rel=3)", "SDCG(max_rel=3)@10"]
    pairs = [(name, name, ir_measures) for name in written] + [
        (theirs, ours, ir_measures.cwl_eval) for theirs, ours in
        [("P(rel=1)@10", "cwlP(max_rel=1)@10"), ("P(rel=2)@5", "cwlP(min_rel=1,max_rel=2)@5"),
         ("RBP(rel=1,p=0.8)", "cwlRBP(p=0.8,max_rel=1)"), ("RBP(rel=3,p=0.5)", "cwlRBP(p=0.5,min_rel=2,max_rel=3)")]]
    per = evaluation.evaluate(con, "q", measures.parse_all([ours for _, ours, _ in pairs]), [run_id], topics="run",
                              store=False)
    ours = {(r.topic, r.measure): r.value for r in per.itertuples()}
    qrels = list(ir_measures.read_trec_qrels(str(FIXTURES / "qrels.txt")))
    run = [ir_measures.ScoredDoc(t, d, -rank) for t, d, rank in
           con.execute("SELECT topic, docno, rank FROM runs WHERE run_id = ?", [run_id]).fetchall()]
    con.close()
    checked = 0
    for theirs, name, provider in pairs:
        for metric in provider.iter_calc([ir_measures.parse_measure(theirs)], qrels, run):
            assert ours[(metric.query_id, str(measures.parse(name)))] == pytest.approx(metric.value, abs=1e-9), (name, metric)
            checked += 1
    assert checked >= len(pairs) * 5


def test_the_sums_in_closed_form():
    """The trigamma and harmonic series of sql/_cwl.sql against their sums."""
    import duckdb
    from scipy import special

    from irwarehouse import sql

    module = sql.module("_cwl.sql")
    con = duckdb.connect()
    for x in (0.5, 1.0, 1.7, 2.0, 7.25, 33.0, 1002.0):
        exact = float(special.polygamma(1, x))
        assert con.execute(f"SELECT {module.trigamma(repr(x))}").fetchone()[0] == pytest.approx(exact, rel=1e-13)
    for i in (0, 1, 2, 9, 10, 57, 1000):
        assert con.execute(f"SELECT {module.harmonic(str(i))}").fetchone()[0] == pytest.approx(
            math.fsum(1 / j for j in range(1, i + 1)), abs=1e-13)
