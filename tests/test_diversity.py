"""The diversity family (irwarehouse.measures_diversity) equals ndeval (the pyndeval package)
per topic within 1e-9: on pyndeval's own example, on generated judgments with ties, unjudged
documents, topics without a relevant document and intents without one, at ndeval's defaults
and other alpha and beta; through irw eval and the measure macros."""

from __future__ import annotations

import json
import math

import pytest

from conftest import FIXTURES, cli_for, generated_diversity as generated
from irwarehouse import Warehouse, measures
from irwarehouse.errors import IrwError

pyndeval = pytest.importorskip("pyndeval", reason="pyndeval (the reference) is in the test extra")

DIVERSITY = FIXTURES / "diversity"
TOLERANCE = 1e-9

# irw's measure -> pyndeval's name (pyndeval computes cut-offs up to 20)
NAMES = {f"alpha_nDCG@{k}": f"alpha-nDCG@{k}" for k in (1, 2, 5, 10, 20)}
NAMES |= {f"ERR_IA@{k}": f"ERR-IA@{k}" for k in (1, 2, 5, 10, 20)}
NAMES |= {f"P_IA@{k}": f"P-IA@{k}" for k in (1, 5, 10, 20)}
NAMES |= {f"StRecall@{k}": f"strec@{k}" for k in (1, 5, 10, 20)}
NAMES |= {"NRBP_IA": "NRBP", "nNRBP": "nNRBP", "AP_IA": "MAP-IA"}
BASES = {name.split("@")[0]: theirs.split("@")[0] for name, theirs in NAMES.items()}


def _with(name: str, alpha: float, beta: float) -> str:
    """``name`` at alpha (and beta, for the NRBP measures) as irw writes it."""
    definition = measures.definition_of(name)
    base, _, k = name.partition("@")
    params = [f"alpha={alpha}"] + ([f"beta={beta}"] if definition.param("beta") else [])
    return f"{base}({','.join(params)})" + (f"@{k}" if k else "")


def irw_scores(qrels_lines: list[str], run_lines: list[str], names: list[str], tmp_path) -> dict:
    """{(run, topic, measure): value} of irw over every topic of the qrels."""
    (tmp_path / "q.txt").write_text("\n".join(qrels_lines) + "\n")
    (tmp_path / "r.txt").write_text("\n".join(run_lines) + "\n")
    with Warehouse(":memory:") as w:
        w.load_qrels(str(tmp_path / "q.txt"), "div", format="diversity")
        w.load_runs(str(tmp_path / "r.txt"))
        result = w.eval(names, qrels="div", topics="all", per_topic=True)
        ranked = w.sql("SELECT run_id, topic, docno, rank FROM runs ORDER BY ALL").rows()
    scores = {(r, t, m): v for r, t, m, v in result.df()[["run_id", "topic", "measure", "value"]].itertuples(index=False)}
    return scores, ranked


def reference(qrels_lines, ranked, irw_names, alpha=0.5, beta=0.5) -> dict:
    """{(run, topic, irw measure): pyndeval's value}: each run given to pyndeval in irw's
    order (score = -rank), so that both rank its ties alike."""
    qrels = [(t, i, d, int(r)) for t, i, d, r in (line.split() for line in qrels_lines)]
    wanted = {pyndeval_name(n): n for n in irw_names}
    evaluator = pyndeval.RelevanceEvaluator(qrels, list(wanted), alpha=alpha, beta=beta)
    out = {}
    for run in sorted({r for r, *_ in ranked}):
        docs = [(t, d, -float(rank)) for r, t, d, rank in ranked if r == run]
        for topic, values in evaluator.evaluate(docs).items():
            out.update({(run, topic, wanted[n]): v for n, v in values.items()})
    return out


def pyndeval_name(irw_name: str) -> str:
    base = irw_name.split("(")[0].split("@")[0]
    k = irw_name.partition("@")[2]
    return BASES[base] + (f"@{k}" if k else "")


def assert_equal(mine: dict, theirs: dict, label):
    compared = 0
    for key, value in theirs.items():
        run, topic, name = key
        measure = str(measures.parse(name))
        got = mine.get((run, topic, measure))
        if math.isnan(value):  # ndeval's nNRBP of a topic without intents: 0/0
            assert got == 0.0 and name.startswith("nNRBP"), (key, got, value)
            continue
        assert got is not None and abs(got - value) <= TOLERANCE, (label, key, got, value)
        compared += 1
    assert compared > 0


def test_pyndevals_own_example(tmp_path):
    qrels = ["0 a A 1", "0 b B 1", "0 b D 1", "0 c C 1"]
    run = ["0 Q0 A 1 9.3 r", "0 Q0 D 2 8.4 r", "0 Q0 E 3 8.1 r", "0 Q0 B 4 7.6 r"]
    names = list(NAMES)
    mine, ranked = irw_scores(qrels, run, names, tmp_path)
    assert_equal(mine, reference(qrels, ranked, names), "pyndeval's example")
    assert abs(mine[("r", "0", "alpha_nDCG@5")] - 0.7868) < 1e-4  # as its README prints


@pytest.mark.parametrize("seed, alpha, beta", [(1, 0.5, 0.5), (2, 0.5, 0.5), (3, 0.3, 0.8), (4, 1.0, 0.9)])
def test_generated_judgments_equal_ndeval_per_topic(tmp_path, seed, alpha, beta):
    qrels, runs = generated(seed)
    names = list(NAMES) if (alpha, beta) == (0.5, 0.5) else [
        _with(n, alpha, beta) if measures.definition_of(n).param("alpha") else n for n in NAMES]
    mine, ranked = irw_scores(qrels, runs, names, tmp_path)
    assert_equal(mine, reference(qrels, ranked, names, alpha, beta), (seed, alpha, beta))


def test_ties_ranked_as_pyndeval_with_given_ranks(tmp_path):
    """pyndeval breaks a tie of scores by docno ascending (ndeval by the given rank, or with
    -traditional as trec_eval): a run whose given ranks follow that order, loaded with
    --order given, gets pyndeval's values from its scores."""
    qrels, runs = generated(5)
    rows = [line.split() for line in runs]
    rows.sort(key=lambda f: (f[5], f[0], -float(f[4]), f[2]))
    given, rank, last = [], 0, None
    for t, q0, d, _, score, run in rows:
        rank = rank + 1 if (run, t) == last else 1
        last = (run, t)
        given.append(f"{t} {q0} {d} {rank} {score} {run}")
    (tmp_path / "q.txt").write_text("\n".join(qrels) + "\n")
    (tmp_path / "r.txt").write_text("\n".join(given) + "\n")
    names = ["alpha_nDCG@10", "ERR_IA@10", "NRBP_IA", "AP_IA"]
    with Warehouse(":memory:") as w:
        w.load_qrels(str(tmp_path / "q.txt"), "div", format="diversity")
        w.load_runs(str(tmp_path / "r.txt"), order="given")
        df = w.eval(names, qrels="div", topics="all", per_topic=True).df()
    mine = {(r, t, m): v for r, t, m, v in df[["run_id", "topic", "measure", "value"]].itertuples(index=False)}
    evaluator = pyndeval.RelevanceEvaluator([tuple(q.split()[:3]) + (int(q.split()[3]),) for q in qrels],
                                            [pyndeval_name(n) for n in names])
    theirs = {}
    for run in {f[5] for f in rows}:
        got = evaluator.evaluate([(f[0], f[2], float(f[4])) for f in rows if f[5] == run])
        theirs.update({(run, t, n): v[pyndeval_name(n)] for t, v in got.items() for n in names})
    assert_equal(mine, theirs, "given ranks")


def test_the_greedy_ideal_breaks_ties_by_the_larger_docno(tmp_path):
    """Two documents of equal gain for the first ideal position: ndeval takes the larger
    docno, which changes what the next positions gain."""
    qrels = ["1 a A 1", "1 b A 1", "1 c B 1", "1 d B 1", "1 a C 1", "1 c C 1", "1 b D 1"]
    run = ["1 Q0 A 1 3 r", "1 Q0 D 2 2 r", "1 Q0 C 3 1 r"]
    names = ["alpha_nDCG@2", "alpha_nDCG@3", "nNRBP"]
    mine, ranked = irw_scores(qrels, run, names, tmp_path)
    assert_equal(mine, reference(qrels, ranked, names), "ideal ties")


def test_every_measure_through_irw_eval_and_the_macros(tmp_path):
    db = str(tmp_path / "w.duckdb")
    invoke = cli_for(db)
    invoke("load", "qrels", DIVERSITY / "qrels.txt", "--name", "div", "--format", "diversity")
    invoke("load", "runs", DIVERSITY / "runs")
    examples = [e for m in measures.CATALOGUE.values() if m.reads == "diversity" for e in m.examples]
    args = [a for e in examples for a in ("-m", e)]
    out = json.loads(invoke("eval", *args, "--per-topic", "--format", "json").stdout)
    assert {r["measure"] for r in out} == {str(measures.parse(e)) for e in examples}
    with Warehouse(db) as w:
        for example in examples:
            measure = measures.parse(example)
            engine = {(r["run_id"], r["topic"]): r["value"] for r in out if r["measure"] == str(measure)}
            arguments = measures.macro_arguments(measure)
            macro = w.sql(f"SELECT run_id, topic, value FROM measure.{measure.name}('div'"
                          f"{', ' + arguments if arguments else ''})").rows()
            assert {(r, t): v for r, t, v in macro}.keys() == engine.keys(), example
            assert all(abs(v - engine[(r, t)]) < 1e-12 for r, t, v in macro), example


def test_a_diversity_measure_on_graded_judgments_is_refused(tmp_path):
    with Warehouse(":memory:") as w:
        w.load_qrels(str(FIXTURES / "qrels.txt"), "graded")
        w.load_runs(str(FIXTURES / "runs"))
        with pytest.raises(IrwError) as caught:
            w.eval(["alpha_nDCG@10"], qrels="graded")
    assert str(caught.value) == (
        "measure alpha_nDCG@10 reads diversity judgments, which qrels graded (loaded as trec) does "
        "not hold: load them with irw load qrels FILE --name NAME --format diversity")


def test_irw_measures_says_the_kind_the_reference_and_the_engines():
    text = Warehouse.explain_measure("NRBP")
    assert "reads diversity judgments" in text
    assert "(every engine, the SQL macro measure.NRBP_IA, Spark)" in text
    assert "equal to TREC's ndeval (pyndeval)" in text
    listing = Warehouse.measures().df().set_index("name")
    assert listing.loc["alpha_nDCG@k", "judgments"] == "diversity"
    assert listing.loc["alpha_nDCG@k", "reference"] == "TREC's ndeval (pyndeval)"


def test_ir_measures_names_parse():
    assert str(measures.parse("NRBP")) == "NRBP_IA"
    assert str(measures.parse("MAP_IA")) == "AP_IA"
    assert measures.parse("alpha_nDCG@20").get("alpha") == 0.5
    with pytest.raises(IrwError, match="needs a cut-off"):
        measures.parse("ERR_IA")
