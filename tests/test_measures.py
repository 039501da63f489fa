"""Measures on hand-computed cases (what trec_eval lacks) and identities on the fixtures.

The hand case, one topic "T1" (R = 3 relevant at threshold 1, N = 1 judged non-relevant):

    rank  doc  grade        qrels also: T2 (one relevant, the run has nothing for it)
       1  d1   1                        T3 (judged, nothing relevant)
       2  dX   unjudged
       3  d2   0
       4  d3   2
       5  d9   unjudged (rel = -1 in the qrels: pooled, not assessed)
       6  d4   1
"""

from __future__ import annotations

import math
import re

import pytest

from irwarehouse import measure_rows, measures, schema
from irwarehouse.measures import MeasureDef
from irwarehouse.engine import evaluation, loading
from irwarehouse.errors import IrwError

LOG2 = math.log2


@pytest.fixture(scope="module")
def hand(tmp_path_factory):
    """The hand case in a warehouse the tests only read (store=False)."""
    tmp_path = tmp_path_factory.mktemp("hand")
    qrels = tmp_path / "qrels"
    qrels.write_text("T1 0 d1 1\nT1 0 d2 0\nT1 0 d3 2\nT1 0 d4 1\nT1 0 d9 -1\n"
                     "T2 0 e1 1\nT3 0 f1 0\n")
    run = tmp_path / "run"
    # scores out of order in the file on purpose: the ranking comes from the scores
    run.write_text("T1 Q0 d3 4 3.0 r\nT1 Q0 d1 1 6.0 r\nT1 Q0 dX 2 5.0 r\n"
                   "T1 Q0 d2 3 4.0 r\nT1 Q0 d9 5 2.0 r\nT1 Q0 d4 6 1.0 r\n")
    con = schema.connect(":memory:")
    loading.load_qrels(con, [str(qrels)], "h")
    loading.load_runs(con, [str(run)])
    yield con
    con.close()


def scores(con, names, topics="qrels", **kw):
    parsed = measures.parse_all(names)
    per = evaluation.evaluate(con, "h", parsed, ["r"], topics=topics, store=False, **kw)
    return {(r.measure, r.topic): r.value for r in per.itertuples()}


IDCG = 2 + 1 / LOG2(3) + 1 / LOG2(4)           # ideal gains 2, 1, 1
DCG = 1 + 2 / LOG2(5) + 1 / LOG2(7)            # gains at ranks 1, 4, 6

EXPECTED_T1 = {
    "P@5": 2 / 5, "P@10": 3 / 10, "P": 3 / 6, "P(rel=2)@5": 1 / 5,
    "R@5": 2 / 3, "R": 1.0,
    "SP": 1 + 2 / 4 + 3 / 6, "SP@5": 1.5,
    "AP": 2 / 3, "AP@5": 1.5 / 3, "AP@2": 1 / 3,
    "aAP@5": 1.5 / 3, "aAP@2": 1 / 2, "aAP": 2 / 3,
    "RPrec": 1 / 3, "RR": 1.0, "RR(rel=2)": 1 / 4, "RR(rel=2)@3": 0.0,
    "Success@1": 1.0, "Success(rel=2)@3": 0.0,
    "DCG": DCG, "nDCG": DCG / IDCG,
    "nDCG@3": 1 / IDCG, "nDCG@2": 1 / (2 + 1 / LOG2(3)), "enDCG@2": 1 / IDCG,
    # jk: 1/log2(max(2, i)) -- ranks 1 and 2 undiscounted
    "DCG(discount=jk)": 1 + 2 / LOG2(4) + 1 / LOG2(6),
    "nDCG(discount=jk)": (1 + 2 / LOG2(4) + 1 / LOG2(6)) / (2 + 1 + 1 / LOG2(3)),
    "DCG(discount=jk,base=3)": 1 + 2 / math.log(4, 3) + 1 / math.log(6, 3),
    "nDCG(gains={1:1,2:3})": (1 + 3 / LOG2(5) + 1 / LOG2(7)) / (3 + 1 / LOG2(3) + 1 / LOG2(4)),
    "nDCG(rel=2)": (1 / LOG2(5)) / 1.0,
    "RBP(p=0.5)": 0.5 * (0.5 * 1 + 1.0 * 0.5 ** 3 + 0.5 * 0.5 ** 5),
    "RBP(p=0.5,rel=1)": 0.5 * (1 + 0.5 ** 3 + 0.5 ** 5),
    "RBP(p=0.5)@3": 0.5 * 0.5,
    # p from the residual at a depth: residual 0.25 at depth 2 is p = 0.5
    "RBP(depth=2,residual=0.25)": 0.5 * (0.5 * 1 + 1.0 * 0.5 ** 3 + 0.5 * 0.5 ** 5),
    "RBPres(depth=1,residual=0.5)@3": 0.5 * 0.5 + 0.5 ** 3,
    "RBPres(p=0.5)": 0.5 * (0.5 + 0.5 ** 4) + 0.5 ** 6,
    "RBPres(p=0.5)@3": 0.5 * 0.5 + 0.5 ** 3,
    "RBPres(p=0.5)@10": 0.5 * (0.5 + 0.5 ** 4) + 0.5 ** 6,
    "nRBP(p=0.5)": (1 + 2 * 0.5 ** 3 + 0.5 ** 5) / (2 + 0.5 + 0.25),
    "Q": ((1 + 1) / (1 + 2) + (2 + 3) / (4 + 4) + (3 + 4) / (6 + 4)) / 3,
    "Q(beta=0)": 2 / 3,
    "Q(beta=2)@4": ((1 + 2) / (1 + 4) + (2 + 6) / (4 + 8)) / 3,
    "Bpref": (1 + 0 + 0) / 3,
    "Judged@5": 3 / 5, "Judged": 4 / 6, "Judged@10": 4 / 6,
    "FirstUnjudged": 2, "NumRet": 6, "NumRet@4": 4, "NumRel": 3, "NumRelRet": 3, "NumRelRet@3": 1,
    # condensed list: d1(1) d2(0) d3(2) d4(1)
    "AP'": (1 + 2 / 3 + 3 / 4) / 3, "P'@2": 1 / 2,
    "nDCG'": (1 + 2 / LOG2(4) + 1 / LOG2(5)) / IDCG,
    "RBP'(p=0.5)": 0.5 * (0.5 + 1.0 * 0.25 + 0.5 * 0.125),
    "RBPres'(p=0.5)": 0.5 ** 4,
    "Q'(beta=0)": (1 + 2 / 3 + 3 / 4) / 3,
    "Bpref'": 1 / 3, "Judged'@5": 1.0, "NumRet'": 4,
    # trec_eval's set measures (set_P is P, set_recall R): 3 relevant of 6 retrieved, R = 3
    "SetAP": 3 * 3 / (6 * 3), "SetAP(rel=2)": 1 * 1 / (6 * 1),
    "SetF": 2 * 0.5 * 1 / (0.5 + 1), "SetF(beta=0.25)": 1.25 * 0.5 * 1 / (0.25 * 0.5 + 1),
    "RelP@5": 2 / 3, "RelP@2": 1 / 2, "RelP": 3 / 3, "RelP(rel=2)@2": 0.0,
    "NumNonRelJudgedRet": 1, "NumNonRelJudgedRet(rel=2)": 3, "NumNonRelJudgedRet@2": 0,
    # unjudged: dX (rank 2) and d9 (rank 5, grade -1); a run shorter than k counts as judged
    "Unjudged@5": 2 / 5, "Unjudged@20": 2 / 20, "Unjudged": 2 / 6, "Unjudged@1": 0.0,
    "binG": (1 / LOG2(2) + 1 / LOG2(2 + 4 - 2) + 1 / LOG2(2 + 6 - 3)) / 3,
    "Utility": 3 - 3, "Utility(a=2,b=-1,c=-0.5,d=0.01,docs=1000)": 2 * 3 - 3 - 0 + 0.01 * (1000 + 3 - 6 - 3),
    # R-precision at floor(mult R + 0.9): mult 0.6 -> P@2, 1.8 -> P@6, 0.2 -> P@1, 0 -> none
    "RPrec(mult=0.6)": 1 / 2, "RPrec(mult=1.8)": 3 / 6, "RPrec(mult=0.2)": 1.0, "RPrec(mult=0)": 0.0,
    # interpolated precision: relevant at ranks 1, 4, 6 -> best precision at or below the
    # c-th of them, c = round(r R) half up (trec_eval 10.0): 1, 0.5, 0.5
    "IPrec@0.0": 1.0, "IPrec@0.4": 1.0, "IPrec@0.5": 0.5, "IPrec@1.0": 0.5, "IPrec@1.5": 0.0,
    "IPrec(rel=2)@0.5": 1 / 4, "IPrec'@1.0": 3 / 4,
    # 11 levels need 0,0,1,1,1,2,2,2,2,3,3 relevant documents
    "IPrecAvg": (5 * 1.0 + 4 * 0.5 + 2 * 0.5) / 11, "IPrecAvg(recalls={0.2,0.5,0.8})": (1 + 0.5 + 0.5) / 3,
    # infAP: rank 4 has d2 (judged non-relevant) above, rank 6 also d9 (pooled, unassessed)
    "infAP": (1 + (1 / 4 + (3 / 4) * (2 / 3) * ((1 + 1e-5) / (2 + 2e-5)))
              + (1 / 6 + (5 / 6) * ((2 + 1 + 1) / 5) * ((2 + 1e-5) / (3 + 2e-5)))) / 3,
    "infAP'": (1 + (1 / 3 + (2 / 3) * (2 / 2) * ((1 + 1e-5) / (2 + 2e-5)))
               + (1 / 4 + (3 / 4) * (3 / 3) * ((2 + 1e-5) / (3 + 2e-5)))) / 3,
    # ERR: top grade 2, R_i = (2^g - 1)/4 = 1/4, 0, 3/4, 1/4 at ranks 1, 3, 4, 6
    "ERR": 1 / 4 + (1 / 4) * (3 / 4) * (3 / 4) + (1 / 6) * (1 / 4) * (3 / 4) * (1 / 4),
    "ERR@3": 1 / 4, "ERR(gmax=4)": 1 / 16 + (1 / 4) * (3 / 16) * (15 / 16) + (1 / 6) * (1 / 16) * (15 / 16) * (13 / 16),
    "ERR'@10": 1 / 4 + (1 / 3) * (3 / 4) * (3 / 4) + (1 / 4) * (1 / 4) * (3 / 4) * (1 / 4),
    # G: ideal gains 2, 1, 1 (total 4); cost(i) = 2, 3, 4, then +1 per rank; cg 1, 3, 4
    "G": (1 / LOG2(2 + 2 - 1) + 2 / LOG2(2 + 5 - 3) + 1 / LOG2(2 + 7 - 4)) / 4,
    # RnDCG: the ideal gain changes after position 1 and ends at 3; n = 6 > 3 + 1 adds nDCG@6
    "RnDCG": (1 / 2 + 1 / IDCG + DCG / IDCG) / 3,
    # nDCGRel: the relevant at ranks 1, 4, 6: DCG@1/IDCG@1, DCG@4/IDCG@3, DCG@6/IDCG@3
    "nDCGRel": (1 / 2 + (1 + 2 / LOG2(5)) / IDCG + DCG / IDCG) / 3,
    "nDCG(gains={2:5},unlisted=grade)": (1 + 5 / LOG2(5) + 1 / LOG2(7)) / (5 + 1 / LOG2(3) + 1 / LOG2(4)),
    # trec_eval's rbp_resid: 0 only when every retrieved document is judged
    "RBPres(p=0.5,zero_if_judged=True)": 0.5 * (0.5 + 0.5 ** 4) + 0.5 ** 6,
    "RBPres'(p=0.5,zero_if_judged=True)": 0.0,
}


@pytest.mark.parametrize("name", sorted(EXPECTED_T1))
def test_hand_computed(hand, name):
    label = str(measures.parse(name))
    got = scores(hand, [name])
    assert got[(label, "T1")] == pytest.approx(EXPECTED_T1[name], abs=1e-12)


def test_macros_of_the_hand_case_equal_the_engine(hand):
    """The measure macros on the hand case, with its pooled, unassessed document (infAP)."""
    from irwarehouse.engine import rendering

    for name in ["infAP", "infAP'", "ERR", "IPrecAvg(recalls={0.2,0.5,0.8})", "RnDCG", "nDCGRel",
                 "G", "RBPres(p=0.5,zero_if_judged=True)", "Utility(a=2,b=-1,c=-0.5,d=0.01,docs=1000)"]:
        measure = measures.parse(name)
        args = measures.macro_arguments(measure)
        got = hand.execute(f"SELECT value FROM measure.{measure.name}('h'{', ' + args if args else ''}) "
                           "WHERE topic = 'T1'").fetchone()[0]
        assert got == pytest.approx(EXPECTED_T1[name], abs=1e-12), name


def test_missing_topic_counts_and_empty_values(hand):
    names = ["AP", "P@5", "nDCG", "RBP(p=0.5)", "RBPres(p=0.5)", "FirstUnjudged", "NumRel", "Judged@5"]
    got = scores(hand, names)
    assert {t for (_, t) in got} == {"T1", "T2"}  # T3 has no relevant document
    assert got[("AP", "T2")] == 0 and got[("P@5", "T2")] == 0 and got[("nDCG", "T2")] == 0
    assert got[("RBPres(p=0.5)", "T2")] == 1.0  # nothing retrieved: all weight is residual
    assert got[("FirstUnjudged", "T2")] == 1 and got[("NumRel", "T2")] == 1
    assert got[("Judged@5", "T2")] == 0


def test_condensed_measures_of_a_topic_not_answered(hand):
    """The condensed list of a topic the run did not answer is empty: length 0, first
    unjudged rank 1 (not NULL, as every other measure has a value there)."""
    got = scores(hand, ["FirstUnjudged'", "NumRet'", "NumRet'@5", "Judged'@5", "P'"])
    assert got[("FirstUnjudged'", "T2")] == 1
    assert got[("NumRet'", "T2")] == 0 and got[("NumRet'@5", "T2")] == 0
    assert got[("Judged'@5", "T2")] == 0 and got[("P'", "T2")] == 0


def test_topic_policies(hand):
    assert {t for (_, t) in scores(hand, ["AP"], topics="all")} == {"T1", "T2", "T3"}
    assert {t for (_, t) in scores(hand, ["AP"], topics="run")} == {"T1"}
    assert scores(hand, ["AP"], topics="all")[("AP", "T3")] == 0


def test_max_docs_truncates_rankings(hand):
    got = scores(hand, ["AP", "NumRet", "P@10"], max_docs=4)
    assert got[("AP", "T1")] == pytest.approx((1 + 2 / 4) / 3)
    assert got[("NumRet", "T1")] == 4
    assert got[("P@10", "T1")] == pytest.approx(2 / 10)


def test_rel_level_applies_to_binary_measures_not_gains(hand):
    parsed = measures.parse_all(["AP", "nDCG", "NumRel"], rel_level=2)
    assert [str(m) for m in parsed] == ["AP(rel=2)", "nDCG", "NumRel(rel=2)"]
    per = evaluation.evaluate(hand, "h", parsed, ["r"], rel_level=2, store=False)
    got = {(r.measure, r.topic): r.value for r in per.itertuples()}
    assert got[("AP(rel=2)", "T1")] == pytest.approx((1 / 4) / 1)
    assert got[("nDCG", "T1")] == pytest.approx(DCG / IDCG)
    assert {t for (_, t) in got} == {"T1"}  # only T1 has a grade >= 2


def test_rbp_persistence_from_residual():
    assert measures.rbp_persistence(0.1, 10) == pytest.approx(0.794, abs=5e-4)
    assert measures.rbp_persistence(0.1, 100) == pytest.approx(0.977, abs=5e-4)
    assert measures.rbp_persistence(0.1, 1000) == pytest.approx(0.9977, abs=5e-5)
    phi = measures.rbp_persistence(0.1, 10)
    assert phi ** 10 == pytest.approx(0.1)


def test_a_parameter_set_by_another_is_declared_in_the_catalogue(monkeypatch):
    """How a parameter sets another (RBP's depth sets p) is a property of its declaration
    (measures.Setting), read by Measure.get and the measure macros: any measure's parameter
    can do the same, and neither knows a parameter by name."""
    import inspect

    from irwarehouse.engine import rendering

    q = measures.Param("q", "float", 0.5, "a rate; 0 < q < 1", low=0.0, high=1.0, low_open=True, high_open=True)
    half = measures.Param("half", "int", None, "set q by a half-life instead; half >= 1", low=1, excludes="q",
                          sets=measures.Setting(("half",), lambda half: 0.5 ** (1 / half), "pow(0.5, 1.0 / {half})"))
    entry = MeasureDef("Xq", "a made-up measure", (q, half), examples=("Xq",))
    monkeypatch.setitem(measures.CATALOGUE, "Xq", entry)
    assert measures.Measure("Xq", (("half", 2),)).get("q") == pytest.approx(0.5 ** 0.5)
    assert measures.Measure("Xq").get("q") == 0.5
    assert rendering._macro_value(entry, "q") == (
        "(CASE WHEN half IS NOT NULL THEN pow(0.5, 1.0 / half) ELSE coalesce(q, 0.5) END)::DOUBLE")
    for source in (inspect.getsource(measures.Measure.get), inspect.getsource(rendering._macro_value)):
        assert not re.search(r"['\"](p|depth|residual)['\"]", source)


def test_rbp_set_by_its_residual_at_a_depth(hand):
    """RBP(depth=k) is RBP at p = 0.1^(1/k), whose weight beyond rank k is 10%; the name
    keeps the user's spelling with the residual shown, and the value is RBP's at that p."""
    rbp10 = measures.parse("RBP(depth=10)")
    assert str(rbp10) == "RBP(depth=10,residual=0.1)"
    assert measures.parse(str(rbp10)) == rbp10
    assert rbp10.get("p") == 0.1 ** (1 / 10) and round(rbp10.get("p"), 4) == 0.7943
    p = rbp10.get("p")
    assert p ** 10 == pytest.approx(0.1, abs=1e-15)  # the tail beyond rank 10
    assert measures.parse("RBP(depth=100)").get("p") == pytest.approx(0.977, abs=5e-4)
    assert str(measures.parse("RBP'(depth=20,residual=0.05)@100")) == "RBP'(depth=20,residual=0.05)@100"
    assert measures.parse("RBPres(depth=1000)").get("p") == pytest.approx(0.9977, abs=5e-5)
    names = ["RBP(depth=10)", f"RBP(p={p!r})", "RBPres(depth=10)@5", "nRBP(depth=10)"]
    got = scores(hand, names)
    assert got[("RBP(depth=10,residual=0.1)", "T1")] == got[(f"RBP(p={p!r})", "T1")]
    # by hand: grades 1, -, 0, 2, -, 1 with g_max = 2
    assert got[("RBP(depth=10,residual=0.1)", "T1")] == pytest.approx(
        (1 - p) * (0.5 + 1.0 * p ** 3 + 0.5 * p ** 5), abs=1e-15)
    assert got[("RBPres(depth=10,residual=0.1)@5", "T1")] == pytest.approx(
        (1 - p) * (p + p ** 4) + p ** 5, abs=1e-15)


@pytest.mark.parametrize("text, fragment", [
    ("RBP(p=0.9,depth=10)", "give p or depth in 'RBP(p=0.9,depth=10)', not both (depth sets p)"),
    ("RBP(residual=0.2)", "parameter residual of 'RBP(residual=0.2)' means nothing without depth"),
    ("RBP(depth=0)", "depth of 'RBP(depth=0)' must be >= 1, got 0"),
    ("RBP(depth=2.5)", "must be an integer, got '2.5'"),
    ("RBP(depth=10,residual=1)", "residual of 'RBP(depth=10,residual=1)' must be in (0, 1), got 1"),
    ("nRBP(depth=10,residual=0)", "must be in (0, 1), got 0"),
    ("Foo@10", "unknown measure 'Foo'"),
    ("hits@10", "could mean Success@10 or NumRelRet@10: name one"),
    ("nDCG(discountt=jk)", "parameters: gains"),
    ("nDCG(discount=xx)", "log2p1, jk"),
    ("RBP(p=1.5)", "must be in (0, 1), got 1.5"),
    ("RBP(p=0)", "must be in (0, 1), got 0"),
    ("RBP(p=1)", "must be in (0, 1), got 1"),
    ("RBP(p=nan)", "must be a finite decimal number"),
    ("RBP(p=inf)", "must be a finite decimal number"),
    ("P@0", "must be an integer from 1 to 2147483647"),
    ("P@1_0", "must be an integer from 1 to 2147483647"),
    ("P@99999999999", "must be an integer from 1 to 2147483647"),
    ("RPrec@10", "takes no cut-off"),
    ("P(rel=x)@5", "must be an integer"),
    ("P(rel=1.5)@5", "must be an integer, got '1.5'"),
    ("AP(rel=-1)", "rel of 'AP(rel=-1)' must be >= 0 (grades below 0 mark documents in the pool"),
    ("AP(rel=99999999999)", "must be at most 2147483647"),
    ("nDCG(base=1)", "base of 'nDCG(base=1)' must be > 1, got 1"),
    ("nDCG(base=0.5)", "must be > 1, got 0.5"),
    ("nDCG(base=0x10)", "must be a finite decimal number"),
    ("Q(beta=-0.5)", "beta of 'Q(beta=-0.5)' must be >= 0, got -0.5"),
    ("nDCG(gains={1:a})", "grade:gain"),
    ("nDCG(gains={1:inf})", "grade:gain"),
    ("nDCG(gains={1:nan,2:1})", "grade:gain"),
    ("nDCG(gains={1:-1,2:3})", "the gain of grade 1 must be >= 0, got -1"),
    ("nDCG(gains={-1:1,2:3})", "grade -1 must be >= 0"),
    ("nDCG(gains={1:1,1:2})", "grade 1 is given twice"),
    ("nDCG(gains={0:0})", "needs at least one positive gain"),
])
def test_bad_names_list_what_is_valid(text, fragment):
    with pytest.raises(IrwError, match=None) as info:
        measures.parse(text)
    assert fragment in str(info.value)


def test_edge_values_in_range_are_accepted():
    assert str(measures.parse("P(rel=0)@5")) == "P(rel=0)@5"  # every judged document relevant
    assert str(measures.parse("Q(beta=0)")) == "Q(beta=0.0)"
    assert str(measures.parse("RBP(p=.95)@2147483647")) == "RBP(p=0.95)@2147483647"
    assert str(measures.parse("nDCG(base=1.5,gains={0:0,1:0.5,3:1e1})")) == "nDCG(base=1.5,gains={0:0,1:0.5,3:10})"
    with pytest.raises(IrwError, match=r"--rel-level must be >= 0 \(grades below 0"):
        measures.parse_all(["AP"], rel_level=-1)


def test_names_round_trip_and_aliases():
    for text, canonical in [("AP(judged_only=True)@1000", "AP'@1000"), ("map", "AP"),
                            ("P_10", "P@10"), ("ndcg_cut_10", "nDCG@10"), ("rbp", "RBP(p=0.9)"),
                            ("nDCG(gains={2:3,1:1})", "nDCG(gains={1:1,2:3})"), ("RBP", "RBP(p=0.8)")]:
        assert str(measures.parse(text)) == canonical
        assert measures.parse(canonical) == measures.parse(text)
    assert [str(m) for m in measures.parse_all(["AP,P@10", "nDCG(discount=jk,base=2)@5"])] == \
        ["AP", "P@10", "nDCG(discount=jk)@5"]


def test_the_measures_page_names_every_measure_with_its_other_names_and_paper():
    """docs/measures.md has a row for every catalogue measure, naming its trec_eval families
    and ir_measures names; `irw measures` prints them with the paper."""
    from pathlib import Path

    from irwarehouse import output

    page = (Path(__file__).resolve().parents[1] / "docs" / "measures.md").read_text()
    rows = {line.split("|")[1].strip(): line for line in page.splitlines() if line.startswith("| `")}
    listing = output.measure_listing(measures.CATALOGUE.values(), measures.format_value)
    for m in measures.CATALOGUE.values():
        row = next((line for cell, line in rows.items() if re.search(rf"`{re.escape(m.name)}[@(`'`]", cell)), None)
        assert row is not None, f"docs/measures.md has no row for {m.name}"
        for family in measures.TREC_FAMILIES:
            if family.measure == m.name:
                assert f"`{family.name}" in row, (m.name, family.name)
        for alias in m.aliases:
            assert f"`{alias}" in row, (m.name, alias)
        assert m.paper and m.paper in listing
        if m.trec_eval:
            assert f"trec_eval: {m.trec_eval}" in listing


def test_the_catalogue_checks_its_entries():
    """An entry breaking an invariant is refused when the catalogue is built; every entry
    has its SQL file, with value, and aggs unless it reads only the hooks it needs."""
    from irwarehouse import sql

    measures.check_catalogue()
    from irwarehouse.engine.rendering import KIND_ENGINES

    for definition in measures.CATALOGUE.values():
        module = sql.module(f"measures/{definition.name}.sql")
        own_engine = definition.reads in KIND_ENGINES  # its hooks are its engine's (jg_aggs, ...)
        assert hasattr(module, "value") and (hasattr(module, "aggs") or definition.needs or own_engine), definition.name
    good = measures.CATALOGUE["P"]
    bad = [
        (MeasureDef("X", "graded without gains", (measures.REL,), graded=True, examples=("X",)), "need a gains parameter"),
        (MeasureDef("X", "unknown need", (), needs=("nothing",), examples=("X",)), "needs {'nothing'}"),
        (MeasureDef("X", "reserved name", (measures.Param("pos", "int", 1, "?"),), examples=("X",)), "reserved"),
        (MeasureDef("X", "no example", ()), "example"),
        (MeasureDef("X", "cut-off kind", (), cutoff_kind="depth", examples=("X",)), "cutoff_kind"),
        (MeasureDef("X", "default out of range", (measures.Param("q", "float", 2.0, "?", low=0.0, high=1.0),),
                    examples=("X",)), "out of its range"),
        (MeasureDef("X", "raw form", (), raw_form="Nope", examples=("X",)), "unknown form"),
    ]
    for entry, fragment in bad:
        with pytest.raises(AssertionError, match=re.escape(fragment)):
            measures.check_catalogue({"P": good, "X": entry}, ())
    with pytest.raises(AssertionError, match="unknown measure"):
        measures.check_catalogue({"P": good}, (measures.TrecFamily("x", "Nope"),))


def test_ndcg_and_endcg_share_one_body():
    """nDCG and enDCG differ only in how much of the ideal ranking counts: their DCG, ideal
    DCG and ratio are written once (sql/_dcg.sql), which both templates import; the two
    render the same SQL but for the ideal ranking's cut."""
    from irwarehouse import sql
    from irwarehouse.engine import rendering

    for name in ("nDCG", "enDCG"):
        text = (sql.sql_dir() / "measures" / f"{name}.sql").read_text()
        assert "{% import '_dcg.sql' as dcg %}" in text, name
        assert "fsum" not in text and "CASE" not in text, f"{name}.sql writes the shared body again"
    n, e = (re.sub(r"\s+", " ", rendering.render_sql(measures.parse_all([m]))) for m in ("nDCG@5", "enDCG@5"))
    assert re.search(r"\(gain \* \(1\.0 / log2\(irank \+ 1\)\)\) AS m0_idcg", e)
    assert re.search(r"\(gain \* \(1\.0 / log2\(irank \+ 1\)\)\) FILTER \(WHERE [^)]*\) AS m0_idcg", n)


def test_citations_are_structured_and_a_measure_explains_itself():
    """The catalogue cites its sources as structured citations (authors, title, venue, year;
    several for one measure), shown in their short form where the free text was; ``irw
    measures NAME`` explains one measure at length, as ``trec_eval -h -m NAME`` does."""
    from typer.testing import CliRunner

    from irwarehouse import Warehouse, citations
    from irwarehouse.cli import app

    ndcg, q = measures.CATALOGUE["nDCG"], measures.CATALOGUE["Q"]
    assert ndcg.citations == (citations.JK,) and citations.JK.authors == ("Järvelin", "Kekäläinen")
    assert (citations.JK.year, citations.JK.venue) == (2002, "TOIS")
    assert ndcg.paper == "Järvelin & Kekäläinen, TOIS 2002"
    assert len(q.citations) == 2 and q.paper == "; ".join(c.short for c in q.citations)
    assert all(m.citations for m in measures.CATALOGUE.values())  # none left as free text
    assert MeasureDef("X", "free text", (), paper="a note", examples=("X",)).paper == "a note"
    rows = {r[0]: r for r in measure_rows.catalogue_rows()}
    assert rows["ERR"][measure_rows.CATALOGUE_COLUMNS.index("paper")] == "Chapelle, Metzler, Zhang & Grinspan, CIKM 2009"

    text = Warehouse.explain_measure("RBP")
    for part in ("History:", "2008  Moffat, Zobel. Rank-biased precision for measurement of retrieval effectiveness. TOIS, 2008.",
                 "Definition:", "Parameters:", "p (default 0.8; in (0, 1)): persistence phi",
                 "depth (default -; >= 1)", "Reference implementation:", "sql/measures/RBP.sql",
                 "trec_eval: rbp", "ir_measures: RBP(p=...)", "RBP(p=0.95)@20"):
        assert part in text, part
    for name in ("ndcg_cut_10", "map", "Rprec", "nDCG@10", "RBP(p=0.9)", "ndcg"):
        assert Warehouse.explain_measure(name).startswith(measures.definition_of(name).written + ":")
    assert measures.definition_of("ndcg_cut_10").name == "nDCG" and measures.definition_of("map").name == "AP"
    result = CliRunner().invoke(app, ["measures", "ERR"])
    assert result.exit_code == 0 and result.output == Warehouse.explain_measure("ERR")
    bad = CliRunner().invoke(app, ["measures", "nope"])
    assert bad.exit_code != 0 and "unknown measure 'nope'" in bad.output


def _snippet_lines_found(snippet: str, text: str) -> list[str]:
    """The lines of a guide's snippet that the file ``text`` lacks, in order: each line as a
    line of the file (white space around it aside), ``...`` standing for lines or text left
    out."""
    lines = [line.strip() for line in text.splitlines()]
    missing, at = [], 0
    for line in (s.strip() for s in snippet.splitlines()):
        if not line or line == "...":
            continue
        pattern = re.compile(".*?".join(re.escape(piece.strip()) for piece in line.split("...")))
        found = next((i for i in range(at, len(lines)) if (pattern.search(lines[i]) if "..." in line
                                                            else lines[i] == line)), None)
        if found is None:
            missing.append(line)
        else:
            at = found
    return missing


def test_the_contributing_guide_shows_the_code_as_it_is():
    """docs/contributing.md's snippets (each block after ``<!-- from: FILE -->``) are in the
    files they name, in order; and its claim that a measure is named only in its entry and
    its template holds for ERR, its worked example."""
    from conftest import ROOT

    guide = (ROOT / "docs" / "contributing.md").read_text()
    blocks = re.findall(r"<!-- from: (\S+) -->\n\s*```\w*\n(.*?)\n\s*```", guide, re.S)
    assert {path for path, _ in blocks} >= {"irwarehouse/measures.py", "sql/measures/ERR.sql",
                                             "irwarehouse/api.py", "irwarehouse/cli/core.py"}
    for path, snippet in blocks:
        assert _snippet_lines_found(snippet, (ROOT / path).read_text()) == [], path
    assert "ERR is named only in\n`irwarehouse/measures.py` (the entry) and `sql/measures/ERR.sql`" in guide
    naming = {str(p.relative_to(ROOT)) for folder in ("irwarehouse", "sql") for p in (ROOT / folder).rglob("*")
              if p.suffix in (".py", ".sql", ".html") and re.search(r"\bERR\b", p.read_text())}
    assert naming == {"irwarehouse/measures.py", "sql/measures/ERR.sql"}
    assert _snippet_lines_found("{{ d.running_sum('ln(1 - ' ~ prob(m) ~ ')') }}",
                                (ROOT / "sql/measures/ERR.sql").read_text())  # the check can fail
