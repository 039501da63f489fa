"""Compat(p) (Clarke, Vtyurina & Smucker) against ir_measures' implementation, per topic within
1e-9: on the fixtures, on generated data with tied scores, unjudged documents, documents in
the pool but not assessed, rankings shorter and longer than the relevant documents and topics
without relevant documents, and on TREC-8; the closed form of the RBO's partial sums
against the sums. ir-measures is in the `test` extra; without it these tests are skipped.

ir_measures orders the ranking by score and breaks ties by docno ascending, and orders the
relevant documents of one grade in the ideal by the run's score, giving those the run does
not retrieve the score 0. irw reads the ranking in its own order (trec_eval's by default) and
puts the retrieved documents of a grade first, in that order: the tests give ir_measures the
ranking irw read, as positive scores, so both see the same ranking and the same ideal (a
retrieved document with a negative score is placed after the unretrieved ones by
ir_measures; see docs/cwl-and-compat.md)."""

from __future__ import annotations

import math
import random

import pytest

from irwarehouse import measures, schema, sql
from irwarehouse.engine import evaluation, loading

from conftest import FIXTURES, unavailable


def reference(con, qrels_file: str, run_id: str, names: list[str]) -> dict:
    """ir_measures' Compat per (topic, measure) for the run irw holds, in irw's order."""
    try:
        import ir_measures
    except ImportError:
        unavailable("the reference package ir-measures is not installed (pip install ir-measures)")
    rows = con.execute("SELECT topic, docno, rank FROM runs WHERE run_id = ?", [run_id]).fetchall()
    run = [ir_measures.ScoredDoc(t, d, 100000.0 - rank) for t, d, rank in rows]
    qrels = list(ir_measures.read_trec_qrels(qrels_file))
    out = {}
    for name in names:
        parsed = measures.parse(name)
        theirs = ir_measures.Compat(p=parsed.get("p"), normalize=parsed.get("normalize"))
        for metric in ir_measures.iter_calc([theirs], qrels, run):
            out[(metric.query_id, str(parsed))] = metric.value
    return out


def check(con, qrels: str, qrels_file: str, names: list[str], run_ids: list[str]) -> int:
    per = evaluation.evaluate(con, qrels, measures.parse_all(names), run_ids, topics="all", store=False)
    ours = {(r.run_id, r.topic, r.measure): r.value for r in per.itertuples()}
    checked = 0
    for run_id in run_ids:  # ir_measures scores the topics of the qrels, 0 where the run has none
        for (topic, measure), value in reference(con, qrels_file, run_id, names).items():
            assert ours[(run_id, topic, measure)] == pytest.approx(value, abs=1e-9), (run_id, topic, measure)
            checked += 1
    return checked


NAMES = ["Compat", "Compat(p=0.8)", "Compat(p=0.5)", "Compat(p=0.99)", "Compat(normalize=False)",
         "Compat(p=0.9,normalize=False)"]


def test_on_the_fixtures():
    con = schema.connect(":memory:")
    loading.load_qrels(con, [str(FIXTURES / "qrels.txt")], "q")
    loading.load_runs(con, [str(p) for p in sorted((FIXTURES / "runs").iterdir())])
    runs = [r[0] for r in con.execute("SELECT run_id FROM run_loads ORDER BY 1").fetchall()]
    assert check(con, "q", str(FIXTURES / "qrels.txt"), NAMES, runs) > len(NAMES) * len(runs) * 3
    con.close()


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_on_generated_data(tmp_path, seed):
    rng = random.Random(seed)
    qrels, run = tmp_path / "q.txt", tmp_path / "r.txt"
    with open(qrels, "w") as q, open(run, "w") as r:
        for t in range(1, 15):
            for d in range(80):
                if rng.random() < 0.5:
                    grade = 0 if t % 6 == 0 else rng.choice([-1, 0, 0, 1, 1, 2, 3, 4])
                    q.write(f"{t} 0 d{d} {grade}\n")
            for i, d in enumerate(rng.sample(range(160), rng.choice([1, 2, 5, 30, 90, 160]))):
                r.write(f"{t} Q0 d{d} {i + 1} {round(rng.random() * 3)} gen\n")  # ties
    con = schema.connect(":memory:")
    loading.load_qrels(con, [str(qrels)], "g")
    loading.load_runs(con, [str(run)])
    assert check(con, "g", str(qrels), NAMES, ["gen"]) >= len(NAMES) * 12
    con.close()


def test_on_trec8(trec8, trec8_db):
    con = schema.connect(trec8_db, read_only=True)
    runs = [r[0] for r in con.execute("SELECT run_id FROM run_loads ORDER BY 1").fetchall()][::32]
    assert check(con, "trec8", str(trec8 / "qrels.trec8.gz"), ["Compat", "Compat(p=0.8,normalize=False)"],
                 runs) == 2 * 50 * len(runs)
    con.close()


def test_the_partial_sums_in_closed_form():
    """F(x) = sum_{i<=x} p^(i-1)/i as Compat.sql computes it, within 1e-12 of the sum for p up
    to 0.999, and 1e-9 at 0.9999."""
    import duckdb

    module = sql.module("measures/Compat.sql")
    con = duckdb.connect()

    class M:
        p = None
    for p in (0.1, 0.5, 0.8, 0.95, 0.99, 0.999, 0.9999):
        M.p = repr(p)
        for x in (0, 1, 2, 3, 10, 47, 100, 1000, 20000):
            got = con.execute(f"SELECT {module.partial(M, str(x))}").fetchone()[0]
            assert got == pytest.approx(math.fsum(p ** (i - 1) / i for i in range(1, x + 1)), abs=1e-12 if p < 0.9999 else 1e-9), (p, x)


def test_without_relevant_documents_or_retrieved_ones(tmp_path):
    """A topic without relevant documents scores 0, and so does a ranking that retrieves none
    of them; one that retrieves exactly the ideal ranking scores 1."""
    q, r = tmp_path / "q.txt", tmp_path / "r.txt"
    q.write_text("1 0 a 2\n1 0 b 1\n1 0 c 0\n2 0 a 0\n3 0 x 1\n")
    r.write_text("1 Q0 a 1 3 run\n1 Q0 b 2 2 run\n2 Q0 a 1 1 run\n3 Q0 y 1 1 run\n")
    con = schema.connect(":memory:")
    loading.load_qrels(con, [str(q)], "q")
    loading.load_runs(con, [str(r)])
    per = evaluation.evaluate(con, "q", measures.parse_all(["Compat", "Compat(normalize=False)"]), ["run"],
                              topics="all", store=False)
    got = {(r.topic, r.measure): r.value for r in per.itertuples()}
    assert got[("1", "Compat")] == pytest.approx(1.0, abs=1e-12)
    assert got[("2", "Compat")] == 0 and got[("3", "Compat")] == 0 and got[("2", "Compat(normalize=False)")] == 0
    # unnormalized: (1 + 0.95 * 2/2) / (1 + 0.95), the weights' sum over D = 2
    assert got[("1", "Compat(normalize=False)")] == pytest.approx(1.0, abs=1e-12)
    con.close()
