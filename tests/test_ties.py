"""Tie policies (SPEC section 2, "Ties"; irwarehouse.options.TIE_POLICIES): the documents a
ranking's order does not tell apart (equal scores) ranked otherwise at evaluation time.

- ``optimistic`` and ``pessimistic`` are the largest and the smallest value of each measure
  over every ordering of the ties, found by enumerating the orderings: each ordering is a run
  whose rank field orders its ties, evaluated with ``--ties run`` (the file's order);
- ``trec_eval`` is the stored ranking (today's numbers), ``run`` the file's order, which
  loading the run under the order ``given`` gives too;
- on generated runs with heavy ties and on TREC-8's uwmt8a0: optimistic >= trec_eval, run >=
  pessimistic for every run, topic and measure monotone in the gains;
- ``expected`` is the mean over every ordering of the ties: equal to the mean over the
  enumerated orderings (each evaluated as a run under ``--ties run``) to 1e-9, within a Monte
  Carlo estimate's error on heavy ties, between the bounds everywhere, and equal to
  hand-computed values on a small tie;
- stored scores record their tie policy, so one policy's scores never replace another's.
"""

from __future__ import annotations

import itertools
import random
import re

import pandas as pd
import pytest

from irwarehouse import Warehouse
from irwarehouse.errors import IrwError

# Measures whose value cannot fall when a more relevant document moves up.
MONOTONE = ["AP", "P@3", "P@5", "R@5", "RR", "nDCG", "nDCG@5", "DCG@4", "RBP(p=0.8)", "Bpref", "RPrec",
            "Success@2", "AP@4"]

# One topic's ranking: (docno, score, grade or None when unjudged); three ties, the last
# holding no relevant document, then a relevant one alone.
RANKING = [("d1", 3.0, 1), ("a1", 2.0, 2), ("a2", 2.0, 0), ("a3", 2.0, None), ("a4", 2.0, 1),
           ("d5", 1.5, 0), ("b1", 1.0, 1), ("b2", 1.0, None), ("b3", 1.0, 2),
           ("c1", 0.5, 0), ("c2", 0.5, None), ("e1", 0.2, 1)]
ORDERINGS = 4 * 3 * 2 * 3 * 2 * 2
QRELS = [(d, g) for d, _, g in RANKING if g is not None] + [("missed", 1)]


def _qrels_frame() -> pd.DataFrame:
    return pd.DataFrame([("1", "0", d, g) for d, g in QRELS], columns=["topic", "iteration", "docno", "rel"])


def _run_rows(run_id: str, ranking) -> list[tuple]:
    return [("1", "Q0", d, rank, s, run_id) for rank, (d, s, _) in enumerate(ranking, 1)]


def _frame(rows) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["topic", "q0", "docno", "rank", "score", "run_id"])


def _orderings():
    """Every ordering of RANKING's ties (4! x 3! x 2! = ORDERINGS), as rankings."""
    ties = [RANKING[1:5], RANKING[6:9], RANKING[9:11]]
    for first in itertools.permutations(ties[0]):
        for second in itertools.permutations(ties[1]):
            for third in itertools.permutations(ties[2]):
                yield [RANKING[0], *first, RANKING[5], *second, *third, RANKING[11]]


def _values(w, ties: str, runs="all") -> dict[tuple[str, str], float]:
    return {(r["run_id"], r["measure"]): r["value"]
            for r in w.eval(MONOTONE, "q", runs, ties=ties, store=False).records()}


def test_optimistic_and_pessimistic_are_the_bounds_over_every_ordering_of_the_ties():
    with Warehouse(":memory:") as w:
        w.load_qrels(_qrels_frame(), "q")
        rows = [r for i, ranking in enumerate(_orderings()) for r in _run_rows(f"p{i:03d}", ranking)]
        w.load_runs(_frame(rows + _run_rows("stored", RANKING)))
        every = _values(w, "run")  # each ordering as its file gives it
        for measure in MONOTONE:
            values = [v for (run, m), v in every.items() if m == measure and run != "stored"]
            assert len(values) == ORDERINGS
            best = _values(w, "optimistic", "stored")[("stored", measure)]
            worst = _values(w, "pessimistic", "stored")[("stored", measure)]
            assert best == pytest.approx(max(values), abs=1e-12), measure
            assert worst == pytest.approx(min(values), abs=1e-12), measure
        assert _values(w, "optimistic", "stored")[("stored", "AP")] > _values(w, "pessimistic", "stored")[("stored", "AP")]


# Measures with an exact expectation over the ties, at several thresholds and cut-offs.
EXPECTED = MONOTONE + ["SP@5", "Judged@5", "Unjudged@4", "Judged@11", "NumRelRet@3", "R", "P(rel=2)@5",
                       "AP(rel=2)", "RR(rel=2)", "Bpref(rel=2)", "nRBP(p=0.5)", "DCG", "NumRet", "SetF",
                       "RelP@4", "P@11", "DCG@10", "ERR", "ERR@5", "ERR(gmax=3)@10"]
# Those that read the judged fraction at every place of a tie (see _expected.sql's rows).
EVERY_PLACE = {"Judged@5", "Unjudged@4", "Judged@11"}


def test_expected_is_the_mean_over_every_ordering_of_the_ties():
    with Warehouse(":memory:") as w:
        w.load_qrels(_qrels_frame(), "q")
        rows = [r for i, ranking in enumerate(_orderings()) for r in _run_rows(f"p{i:03d}", ranking)]
        w.load_runs(_frame(rows + _run_rows("stored", RANKING)))
        every = {(r["run_id"], r["measure"]): r["value"]
                 for r in w.eval(EXPECTED, "q", ties="run", store=False).records()}
        expected = {r["measure"]: r["value"] for r in w.eval(EXPECTED, "q", "stored", ties="expected", store=False).records()}
        # without a measure of the judged fraction, a tie holding no relevant document is one row
        rest = [m for m in EXPECTED if m not in EVERY_PLACE]
        without = {r["measure"]: r["value"] for r in w.eval(rest, "q", "stored", ties="expected", store=False).records()}
    assert set(without) == set(rest)
    for measure in EXPECTED:
        values = [v for (run, m), v in every.items() if m == measure and run != "stored"]
        assert len(values) == ORDERINGS
        assert expected[measure] == pytest.approx(sum(values) / len(values), abs=1e-9), measure
        if measure in without:
            assert without[measure] == pytest.approx(expected[measure], abs=1e-12), measure
    assert len({round(expected[m], 9) for m in MONOTONE}) > 5


def test_expected_on_a_hand_computed_tie():
    """Four documents tie at ranks 1-4, two of them relevant (a, c), R = 2: the first relevant
    document is at rank 1 with probability C(3,1)/C(4,2) = 1/2, at 2 with 1/3, at 3 with 1/6, so
    E[RR] = 1/2 + 1/6 + 1/18 = 13/18; E[P@1] = 1/2; E[P@2] = 1/2; E[AP] = (1/2) sum over ranks i
    of E[rel_i C_i] / i, E[rel_i C_i] = (1/2)(1 + (i - 1)/3): (1/2)(1/2 + 2/3 / 2 + 5/6 / 3 +
    1 / 4) = 0.65278; Success@1 = 1/2; R@3 = 3/4."""
    with Warehouse(":memory:") as w:
        w.load_qrels(pd.DataFrame([("1", "0", "a", 1), ("1", "0", "b", 0), ("1", "0", "c", 1)],
                                  columns=["topic", "iteration", "docno", "rel"]), "q")
        w.load_runs(_frame([("1", "Q0", d, i, 1.0, "r") for i, d in enumerate("abcd", 1)]))
        got = {r["measure"]: r["value"] for r in
               w.eval(["RR", "P@1", "P@2", "AP", "Success@1", "R@3"], "q", ties="expected", store=False).records()}
    assert got["RR"] == pytest.approx(13 / 18, abs=1e-12)
    assert got["P@1"] == pytest.approx(0.5, abs=1e-12)
    assert got["P@2"] == pytest.approx(0.5, abs=1e-12)
    assert got["AP"] == pytest.approx(0.5 * (1 / 2 + (2 / 3) / 2 + (5 / 6) / 3 + 1 / 4), abs=1e-12)
    assert got["Success@1"] == pytest.approx(0.5, abs=1e-12)
    assert got["R@3"] == pytest.approx(0.75, abs=1e-12)


def test_expected_within_a_monte_carlo_estimate_on_heavy_ties():
    """One run of the heavy ties, 400 random orderings of its ties, each evaluated as a run
    (--ties run): the expected value lies within 4.5 standard errors of their mean, and
    between the bounds."""
    qrels, runs = _heavy_ties(5, runs=1, topics=6)
    rng = random.Random(11)
    rows = []
    for i in range(400):
        for topic, group in runs.groupby("topic", sort=False):
            ranked = sorted(group.itertuples(index=False), key=lambda r: (-r.score, rng.random()))
            rows += [(topic, "Q0", r.docno, rank, r.score, f"mc{i:03d}") for rank, r in enumerate(ranked, 1)]
    measures = ["AP", "P@5", "nDCG@10", "RR", "Bpref", "RBP(p=0.8)", "Success@1", "RPrec", "ERR@10"]
    with Warehouse(":memory:") as w:
        w.load_qrels(qrels, "q")
        w.load_runs(pd.concat([runs, _frame(rows)]))
        sampled = pd.DataFrame(w.eval(measures, "q", [f"mc{i:03d}" for i in range(400)], ties="run",
                                      store=False).records())
        exact = {t: {(r["topic"], r["measure"]): r["value"]
                     for r in w.eval(measures, "q", "run0", ties=t, store=False).records()}
                 for t in ("expected", "optimistic", "pessimistic")}
    stats = sampled.groupby(["topic", "measure"])["value"].agg(["mean", "std", "count"])
    assert len(stats) == 6 * len(measures) and (stats["count"] == 400).all()
    moved = 0
    for (topic, measure), row in stats.iterrows():
        value = exact["expected"][(topic, measure)]
        assert abs(value - row["mean"]) <= 4.5 * row["std"] / 20 + 1e-12, (topic, measure, value, row["mean"])
        assert exact["optimistic"][(topic, measure)] + 1e-12 >= value >= exact["pessimistic"][(topic, measure)] - 1e-12
        moved += row["std"] > 0
    assert moved > 20


def test_expected_reads_the_ties_the_base_records_as_it_would_find_them_in_the_runs(tmp_path):
    """A writable warehouse records each judged document's tie in the materialized base the
    first time it stores scores under expected, optimistic or pessimistic (irw_base.tie_a,
    tie_n); an evaluation that stores nothing, a read-only one, or one whose base is not
    current, finds the ties in the runs.
    Both give the same values, and replacing a run makes the base forget its ties, recorded
    anew when next needed."""
    qrels, runs = _heavy_ties(4, runs=3, topics=5)
    path = str(tmp_path / "w.duckdb")
    measures = ["AP", "P@5", "nDCG@10", "RR", "Bpref", "RBP(p=0.8)", "AP(rel=2)", "ERR@20"]

    def values(read_only):
        with Warehouse(path, read_only=read_only) as w:
            got = {(t, r["run_id"], r["topic"], r["measure"]): r["value"]
                   for t in ("expected", "optimistic", "pessimistic")
                   for r in w.eval(measures, "q", ties=t, store=not read_only).records()}
            recorded = w.sql("SELECT count(*) FROM irw_base_ties_built").rows()[0][0]
            return got, recorded

    with Warehouse(path) as w:
        w.load_qrels(qrels, "q")
        w.load_runs(runs)
    found, recorded = values(read_only=True)
    assert recorded == 0
    cached, recorded = values(read_only=False)
    assert recorded == 1 and len(cached) == 3 * 3 * 5 * len(measures)
    assert cached == pytest.approx(found, abs=1e-12)
    with Warehouse(path) as w:
        assert w.sql("SELECT count(*) FROM irw_base WHERE tie_n > 1").rows()[0][0] > 50
        changed = runs[runs["run_id"] == "run0"].assign(score=1.0)  # one tie per ranking
        w.load_runs(changed, replace=True)  # its stored scores are computed anew, ties recorded anew
        assert w.sql("SELECT DISTINCT tie_a FROM irw_base WHERE run_id = 'run0'").rows() == [(1,)]
    again_found, _ = values(read_only=True)
    again, recorded = values(read_only=False)
    assert recorded == 1 and again == pytest.approx(again_found, abs=1e-12)
    assert any(abs(again[k] - cached[k]) > 1e-9 for k in cached if k[1] == "run0")


def test_expected_refuses_what_it_cannot_compute_exactly():
    with Warehouse(":memory:") as w:
        w.load_qrels(_qrels_frame(), "q")
        w.load_runs(_frame(_run_rows("r", RANKING)))
        for measure in ("Compat", "INST(T=3.0)", "Bpref@5", "AP'", "ERR'@10"):
            with pytest.raises(IrwError, match=f"no exact expectation over the ties is built for {re.escape(measure)} "):
                w.eval([measure], "q", ties="expected", store=False)
        with pytest.raises(IrwError, match="--max-docs does not apply"):
            w.eval(["AP"], "q", ties="expected", max_docs=3, store=False)
    from irwarehouse.engine import rendering
    from irwarehouse.measures import parse
    from irwarehouse.options import tie_policy

    with pytest.raises(IrwError, match="tie policy expected is computed by DuckDB only"):
        rendering.render_sql([parse("AP")], dialect="spark", ties=tie_policy("expected"))


def test_trec_eval_ties_are_the_stored_ranking_and_run_ties_the_files_order():
    ascending = sorted(RANKING, key=lambda r: (-r[1], r[0]))  # each tie by docno ascending
    descending = sorted(RANKING, key=lambda r: (-r[1], [-ord(c) for c in r[0]]))  # trec_eval's
    assert ascending != descending
    with Warehouse(":memory:") as w:
        w.load_qrels(_qrels_frame(), "q")
        w.load_runs(_frame(_run_rows("asc", ascending) + _run_rows("desc", descending)))
        stored = _values(w, "trec_eval")
        by_file = _values(w, "run")
    with Warehouse(":memory:") as w:  # the file's order, as the order `given` stores it
        w.load_qrels(_qrels_frame(), "q")
        w.load_runs(_frame(_run_rows("asc", ascending)), order="given")
        given = _values(w, "trec_eval")
    for measure in MONOTONE:
        # both files are one ranking under trec_eval's order; `run` keeps each file's
        assert stored[("asc", measure)] == stored[("desc", measure)] == by_file[("desc", measure)]
        assert by_file[("asc", measure)] == given[("asc", measure)]
    assert stored[("asc", "nDCG")] != by_file[("asc", "nDCG")]


def _heavy_ties(seed: int, runs: int = 6, topics: int = 8) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Runs whose scores take 3 values, so that most documents tie; graded judgments, some
    documents unjudged."""
    rng = random.Random(seed)
    qrels, rows = [], []
    for t in range(1, topics + 1):
        docs = [f"t{t}d{i}" for i in range(40)]
        for d in docs:
            if rng.random() < 0.7:
                qrels.append((str(t), "0", d, rng.choice([0, 0, 1, 2])))
        qrels.append((str(t), "0", f"t{t}missed", 1))
        for r in range(runs):
            chosen = rng.sample(docs, rng.randint(5, 30))
            for rank, d in enumerate(chosen, 1):
                rows.append((str(t), "Q0", d, rank, rng.choice([1.0, 0.5, 0.25]), f"run{r}"))
    return (pd.DataFrame(qrels, columns=["topic", "iteration", "docno", "rel"]), _frame(rows))


@pytest.mark.parametrize("seed", [1, 2])
def test_bounds_hold_on_heavy_ties(seed):
    qrels, runs = _heavy_ties(seed)
    with Warehouse(":memory:") as w:
        w.load_qrels(qrels, "q")
        w.load_runs(runs)
        per = {}
        for ties in ("optimistic", "trec_eval", "run", "expected", "pessimistic"):
            res = w.eval(MONOTONE, "q", ties=ties, store=False)
            per[ties] = {(r["run_id"], r["topic"], r["measure"]): r["value"] for r in res.records()}
    assert len(per["trec_eval"]) == 6 * 8 * len(MONOTONE)
    for key, value in per["trec_eval"].items():
        for middle in (value, per["run"][key], per["expected"][key]):
            assert per["optimistic"][key] + 1e-12 >= middle >= per["pessimistic"][key] - 1e-12, key
    assert sum(per["optimistic"][k] > per["pessimistic"][k] + 1e-9 for k in per["trec_eval"]) > 100


def test_stored_scores_record_their_tie_policy(tmp_path):
    path = str(tmp_path / "w.duckdb")
    with Warehouse(path) as w:
        w.load_qrels(_qrels_frame(), "q")
        w.load_runs(_frame(_run_rows("r", RANKING)))
        default = w.eval(["AP"], "q").records()[0]["value"]
        best = w.eval(["AP"], "q", ties="optimistic").records()[0]["value"]
        assert best > default
        stored = w.sql("SELECT ties, value FROM scores ORDER BY ties").rows()
        assert stored == [("optimistic", best), ("trec_eval", default)]
        assert w.sql("SELECT ties FROM evaluations ORDER BY ties").rows() == [("optimistic",), ("trec_eval",)]
        means = w.sql("SELECT ties, mean FROM score_means ORDER BY ties").rows()
        assert means == [("optimistic", best), ("trec_eval", default)]
        # replacing the run recomputes the stored scores of each policy
        w.load_runs(_frame(_run_rows("r", RANKING[:5])), replace=True)
        again = dict(w.sql("SELECT ties, value FROM scores").rows())
        assert again["optimistic"] == w.eval(["AP"], "q", ties="optimistic", store=False).records()[0]["value"]
        assert again["trec_eval"] == w.eval(["AP"], "q", store=False).records()[0]["value"]


def test_an_unknown_tie_policy_is_one_line_naming_the_valid_ones():
    with Warehouse(":memory:") as w:
        w.load_qrels(_qrels_frame(), "q")
        w.load_runs(_frame(_run_rows("r", RANKING)))
        with pytest.raises(IrwError) as info:
            w.eval(["AP"], "q", ties="random")
    assert str(info.value) == "unknown tie policy 'random'; valid: trec_eval, run, optimistic, pessimistic, expected"


def test_files_in_take_ties(tmp_path):
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("".join(f"1 0 {d} {g}\n" for d, g in QRELS))
    run.write_text("".join(" ".join(map(str, r)) + "\n" for r in _run_rows("r", RANKING)))
    values = {t: Warehouse.eval_files(qrels, [run], ["AP"], per_topic=False, ties=t).records()[0]["value"]
              for t in ("optimistic", "trec_eval", "pessimistic")}
    assert values["optimistic"] > values["trec_eval"] > values["pessimistic"]


def test_uwmt8a0_bounds(trec8_db):
    """TREC-8's uwmt8a0 ties (equal scores at full precision): the bounds hold on every topic,
    the stored ranking and the expected value between them."""
    with Warehouse(trec8_db, read_only=True) as w:
        per = {t: {(r["topic"], r["measure"]): r["value"]
                   for r in w.eval(["AP", "P@10", "nDCG@10", "RR", "ERR@20"], "trec8", "uwmt8a0", ties=t).records()}
               for t in ("optimistic", "trec_eval", "expected", "pessimistic")}
    assert len(per["trec_eval"]) == 50 * 5
    for key, value in per["trec_eval"].items():
        for middle in (value, per["expected"][key]):
            assert per["optimistic"][key] + 1e-12 >= middle >= per["pessimistic"][key] - 1e-12, key
    assert any(per["optimistic"][k] > per["pessimistic"][k] for k in per["trec_eval"])


def test_statistics_and_the_report_take_ties():
    """ci, pvalues and the report evaluate under the tie policy asked for, and say which."""
    qrels, runs = _heavy_ties(3, runs=3)
    with Warehouse(":memory:") as w:
        w.load_qrels(qrels, "q")
        w.load_runs(runs)
        for ties in ("optimistic", "pessimistic"):
            means = {r["run_id"]: r["value"] for r in w.eval(["AP"], "q", per_topic=False, ties=ties).records()}
            ci = {r["run_id"]: r["mean"] for r in w.ci("AP", "q", ties=ties).records()}
            assert ci == pytest.approx(means, abs=1e-12)
            pairs = {(r["run_a"], r["run_b"]): r["diff"] for r in w.pvalues("AP", "q", ties=ties).records()}
            assert pairs[("run0", "run1")] == pytest.approx(means["run0"] - means["run1"], abs=1e-12)
            caption = w.report(["AP"], "q", format="markdown", ties=ties).caption()
            assert f"(qrels q, topic set qrels, ranking trec_eval, ties {ties})" in caption
        assert w.ci("AP", "q", ties="optimistic").records() != w.ci("AP", "q", ties="pessimistic").records()


def test_the_reports_ties_section():
    """The report's ties section: irw ties' table for its first measure; the pairs whose
    significance differs between the stored ranking and expected, as irw pvalues gives them
    under each; and, on runs without ties, a line saying none has them."""
    qrels, runs = _heavy_ties(10, runs=5, topics=8)
    with Warehouse(":memory:") as w:
        w.load_qrels(qrels, "q")
        w.load_runs(runs)
        data = w.report(["P@5", "AP"], "q", format="html")
        table = w.ties(["P@5"], "q").df()
        pd.testing.assert_frame_equal(data.tie_table.reset_index(drop=True), table, check_dtype=False)
        significant = {t: {(r["run_a"], r["run_b"]) for r in w.pvalues("P@5", "q", ties=t).records()
                           if r["significant"]} for t in ("trec_eval", "expected")}
        changed = significant["trec_eval"] ^ significant["expected"]
        assert len(changed) == 1  # this seed's runs: one pair's significance depends on the ties
        assert {(r["run_a"], r["run_b"]) for r in data.tie_pairs.to_dict("records")} == changed
        assert data.tie_other == "expected"
        page = data.to_html()
        assert "5 of the 5 runs have ties" in page
        untied = runs.assign(score=-runs["rank"].astype(float))
        w.load_runs(untied, replace=True)
        assert "No run has ties" in w.report(["P@5"], "q", format="html").to_html()


def test_irw_ties_on_a_hand_checked_example(tmp_path):
    """Qrels: a and c relevant, b not, d unjudged. Run X ranks a (2.0) above a tie of b and
    c (1.0): stored c, b (docno descending), P@2 = 1, the bounds 1 and 1/2. Run Y ties all
    three: stored c, b, a, P@2 = 1/2, bounds 1 and 1/2. Run Z has no tie: d, a, c, P@2 = 1/2.
    Places as stored: X 1, Y and Z 2 (1 + the runs above); best places: no run's pessimistic
    P@2 is above another's optimistic one, so all 1; worst: X 2 (Y's optimistic 1 is above
    X's 1/2), Y 2 (X's), Z 3 (X's and Y's)."""
    from conftest import cli_for

    qrels, run = tmp_path / "qrels", tmp_path / "runs"
    qrels.write_text("1 0 a 1\n1 0 b 0\n1 0 c 1\n")
    run.write_text("1 Q0 a 1 2.0 X\n1 Q0 b 2 1.0 X\n1 Q0 c 3 1.0 X\n"
                   "1 Q0 a 1 1.0 Y\n1 Q0 b 2 1.0 Y\n1 Q0 c 3 1.0 Y\n"
                   "1 Q0 d 1 1.0 Z\n1 Q0 a 2 0.5 Z\n1 Q0 c 3 0.4 Z\n")
    w = cli_for(str(tmp_path / "w.duckdb"))
    w("load", "qrels", qrels, "--name", "q")
    w("load", "runs", run)
    out = w("ties", "-m", "P@2", "--format", "csv").stdout.splitlines()
    assert out[0] == ("run_id,tie_groups,tied_docs,topics_with_ties,measure,trec_eval,expected,"
                      "trec_eval_minus_expected,optimistic,pessimistic,spread,place,best_place,worst_place")
    # expected P@2: X has a at 1 and c (relevant) at 2 or 3 with probability 1/2 each: 3/4;
    # Y has two relevant among three tied documents, so 2/3 of a relevant one per rank: 2/3
    rows = [line.split(",") for line in out[1:]]
    assert [r[:5] + r[8:] for r in rows] == [["X", "1", "2", "1", "P@2", "1.0", "0.5", "0.5", "1", "1", "2"],
                                             ["Y", "1", "3", "1", "P@2", "1.0", "0.5", "0.5", "2", "1", "2"],
                                             ["Z", "0", "0", "0", "P@2", "0.5", "0.5", "0.0", "2", "1", "3"]]
    assert [float(r[5]) for r in rows] == [1.0, 0.5, 0.5]
    assert [float(r[6]) for r in rows] == pytest.approx([3 / 4, 2 / 3, 1 / 2], abs=1e-12)
    assert [float(r[7]) for r in rows] == pytest.approx([1 / 4, 0.5 - 2 / 3, 0.0], abs=1e-12)


def test_eval_json_names_the_order_and_the_tie_policy(tmp_path):
    from conftest import FIXTURES, cli_for

    import json

    w = cli_for(str(tmp_path / "w.duckdb"))
    w("load", "qrels", FIXTURES / "qrels.txt", "--name", "q")
    w("load", "runs", FIXTURES / "runs" / "alpha.txt")
    w("load", "runs", FIXTURES / "runs" / "beta1.txt", "--order", "trec_eval_9")
    means = json.loads(w("eval", "-m", "AP", "--ties", "optimistic", "--format", "json").stdout)
    assert {(r["run_id"], r["ranking_policy"], r["ties"]) for r in means} == {
        ("alpha1", "trec_eval", "optimistic"), ("alpha2", "trec_eval", "optimistic"),
        ("beta1", "trec_eval_9", "optimistic")}
    per = json.loads(w("eval", "-m", "AP", "--per-topic", "--format", "json").stdout)
    assert {(r["ranking_policy"], r["ties"]) for r in per if r["run_id"] == "beta1"} == {("trec_eval_9", "trec_eval")}
    files = json.loads(w("eval", FIXTURES / "qrels.txt", FIXTURES / "runs" / "beta1.txt", "-m", "AP",
                         "--order", "trec_eval_10", "--format", "json").stdout)
    assert [(r["ranking_policy"], r["ties"]) for r in files] == [("trec_eval", "trec_eval")]
