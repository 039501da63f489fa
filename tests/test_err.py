"""ERR (Chapelle et al. 2009, SPEC §2) against a direct implementation of its definition, on
trec_eval's graded test files (grades -1 to 4) and on TREC-8; and against ir_measures' ERR
(gdeval, whose top grade is 4) where ir_measures is installed."""

from __future__ import annotations

import pytest

from irwarehouse import measures, schema
from irwarehouse.engine import evaluation, loading


def err(grades: list, gmax: int, k: int | None = None) -> float:
    """ERR@k of a ranking given as the grades of its documents (None: unjudged), read
    straight from the definition: sum_r (1/r) R_r prod_{i<r} (1 - R_i)."""
    total, still = 0.0, 1.0
    for r, g in enumerate(grades[:k] if k else grades, start=1):
        p = (2 ** min(g, gmax) - 1) / 2 ** gmax if g is not None and g > 0 else 0.0
        total += still * p / r
        still *= 1 - p
    return total


def rankings(con, qrels: str, judged_only: bool = False) -> dict[tuple[str, str], list]:
    rows = con.execute("""SELECT r.run_id, r.topic, q.rel FROM runs r
                          LEFT JOIN qrels q ON q.qrels = ? AND q.topic = r.topic AND q.docno = r.docno
                          ORDER BY r.run_id, r.topic, r.rank""", [qrels]).fetchall()
    out: dict = {}
    for run_id, topic, rel in rows:
        grade = rel if rel is not None and rel >= 0 else None
        if judged_only and grade is None:
            continue
        out.setdefault((run_id, topic), []).append(grade)
    return out


def check(con, qrels: str, names: list[str], run_ids: list[str]) -> int:
    top = con.execute("SELECT max(rel) FROM qrels WHERE qrels = ?", [qrels]).fetchone()[0]
    parsed = measures.parse_all(names)
    per = evaluation.evaluate(con, qrels, parsed, run_ids, topics="run", store=False)
    ours = {(r.run_id, r.topic, r.measure): r.value for r in per.itertuples()}
    plain, condensed = rankings(con, qrels), rankings(con, qrels, judged_only=True)
    checked = 0
    for m in parsed:
        gmax = m.get("gmax") if m.get("gmax") is not None else top
        for (run_id, topic), grades in (condensed if m.judged_only else plain).items():
            if run_id in run_ids:
                assert ours[(run_id, topic, str(m))] == pytest.approx(err(grades, gmax, m.cutoff), abs=1e-12), (run_id, topic, m)
                checked += 1
    return checked


NAMES = ["ERR@20", "ERR", "ERR(gmax=4)@10", "ERR(gmax=1)@5", "ERR'@10"]


def test_err_on_graded_judgments(trec_eval_suite):
    con = schema.connect(":memory:")
    loading.load_qrels(con, [str(trec_eval_suite / "qrels.rel_level")], "q")
    loading.load_runs(con, [str(trec_eval_suite / "results.test")], extra_fields=True)
    assert con.execute("SELECT max(rel) FROM qrels").fetchone()[0] == 4
    assert check(con, "q", NAMES, [r[0] for r in con.execute("SELECT run_id FROM run_loads").fetchall()]) > 10
    con.close()


def test_err_on_trec8(trec8_db):
    con = schema.connect(trec8_db, read_only=True)
    runs = [r[0] for r in con.execute("SELECT run_id FROM run_loads ORDER BY 1").fetchall()][::16]
    assert check(con, "trec8", NAMES, runs) == len(NAMES) * len(runs) * 50
    con.close()


def test_err_equals_ir_measures(trec_eval_suite, tmp_path):
    """ir_measures computes ERR with gdeval (a Perl script it ships), whose top grade is 4:
    ERR(gmax=4)@k. Skipped without ir_measures or Perl (neither is a dependency of irw)."""
    ir_measures = pytest.importorskip("ir_measures", reason="ir_measures is not installed (pip install ir-measures)")
    import shutil

    if shutil.which("perl") is None:
        pytest.skip("gdeval, ir_measures' ERR, needs Perl")
    con = schema.connect(":memory:")
    loading.load_qrels(con, [str(trec_eval_suite / "qrels.rel_level")], "q")
    loading.load_runs(con, [str(trec_eval_suite / "results.test")], extra_fields=True)
    run_id = con.execute("SELECT run_id FROM run_loads").fetchone()[0]
    per = evaluation.evaluate(con, "q", measures.parse_all(["ERR(gmax=4)@20"]), [run_id], topics="run", store=False)
    ours = {r.topic: r.value for r in per.itertuples()}
    con.close()
    qrels = list(ir_measures.read_trec_qrels(str(trec_eval_suite / "qrels.rel_level")))
    run = list(ir_measures.read_trec_run(str(trec_eval_suite / "results.test")))
    theirs = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.ERR @ 20], qrels, run)}
    assert set(theirs) <= set(ours) and len(theirs) > 0
    for topic, value in theirs.items():
        assert ours[topic] == pytest.approx(value, abs=1e-5), topic  # gdeval prints 5 decimals
