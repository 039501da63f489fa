"""trec_eval 10.0's -m arguments read as trec_eval reads them (irwarehouse.trec_names), and
the one table of trec_eval families they and ``irw eval``'s aliases come from."""

from __future__ import annotations

import re

import pytest

from irwarehouse import measures
from irwarehouse.errors import IrwError
from irwarehouse.trec_names import atof, atol, relstring_char, trec_eval_measures, trec_eval_order


def labels(spec):
    return [(m.label, str(m.measure) if m.measure else None) for m in trec_eval_measures(spec)]


@pytest.mark.parametrize("spec, expected", [
    ("P.5,7,3", [("P_3", "P@3"), ("P_5", "P@5"), ("P_7", "P@7")]),
    ("P", [(f"P_{k}", f"P@{k}") for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]),
    ("ndcg.1=3,2=9,4=4.5", [("ndcg_1=3,2=9,4=4.5", "nDCG(gains={1:3,2:9,4:4.5},unlisted=grade)")]),
    ("utility.2,-1,0,0", [("utility_2,-1,0,0", "Utility(a=2.0)")]),
    ("utility", [("utility", "Utility")]),
    ("iprec_at_recall..10,.20", [("iprec_at_recall_0.10", "IPrec@0.1"), ("iprec_at_recall_0.20", "IPrec@0.2")]),
    ("iprec_at_recall.0.125", [("iprec_at_recall_0.12", "IPrec@0.125")]),  # %3.2f, as printf rounds
    ("relstring.20", [("relstring_20", None)]),
    ("relstring", [("relstring", None)]),
    ("Rprec_mult.1.5,0.5", [("Rprec_mult_0.50", "RPrec(mult=0.5)"), ("Rprec_mult_1.50", "RPrec(mult=1.5)")]),
    ("set_F.0.5", [("set_F_0.5", "SetF(beta=0.5)")]),
    ("11pt_avg.0.2,0.5,0.8", [("11pt_avg_0.2,0.5,0.8", "IPrecAvg(recalls={0.2,0.5,0.8})")]),
    ("rbp.p=0.8", [("rbp_p=0.8", "RBP(p=0.8)")]),
    ("rbp_resid", [("rbp_resid", "RBPres(p=0.9,zero_if_judged=True)")]),
    ("rbp_resid.p=0.5,2=3", [("rbp_resid_p=0.5,2=3", "RBPres(p=0.5,zero_if_judged=True)")]),
    ("ndcg_cut.10", [("ndcg_cut_10", "nDCG@10")]),
    ("map.5", [("map", "AP")]),  # a family without parameters ignores them
    ("gm_map", [("gm_map", "AP")]),
    ("set_P", [("set_P", "P")]),
    ("unj", [("unj_5", "Unjudged@5"), ("unj_10", "Unjudged@10"), ("unj_20", "Unjudged@20")]),
    ("P.7abc,+3", [("P_3", "P@3"), ("P_7", "P@7")]),  # atol: the leading integer
])
def test_arguments_as_trec_eval_reads_them(spec, expected):
    assert labels(spec) == expected


def test_families_declare_print_and_aggregate():
    by_label = {m.label: m for s in ("official", "all_trec") for m in trec_eval_measures(s)}
    assert (by_label["num_ret"].aggregate, by_label["num_ret"].value_kind) == ("sum", "long")
    assert (by_label["gm_map"].aggregate, by_label["gm_map"].per_query) == ("gm", False)
    assert (by_label["gm_bpref"].measure, by_label["gm_bpref"].aggregate) == (measures.parse("Bpref"), "gm")
    assert (by_label["num_q"].measure, by_label["num_q"].aggregate, by_label["num_q"].per_query) == (None, "count", False)
    assert (by_label["runid"].value_kind, by_label["runid"].summary, by_label["runid"].per_query) == ("string", True, False)
    assert (by_label["relstring"].summary, by_label["relstring"].length) == (False, 10)
    assert by_label["map"].aggregate == "mean" and by_label["map"].value_kind == "float"


def test_nicknames_and_order():
    official = [m.label for m in trec_eval_measures("official")]
    assert official[:8] == ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec"]
    assert [m.label for m in trec_eval_measures("official.5")] == official  # a nickname takes no parameters
    families = {m.family for m in trec_eval_measures("all_trec")}
    assert len(families) == 37 and {"infAP", "unj", "rbp", "G", "set_F"} <= families
    # trec_eval prints in its measure table's order, whatever the order of -m
    ordered = trec_eval_order(trec_eval_measures("set_F") + trec_eval_measures("map") + trec_eval_measures("P.5"))
    assert [m.label for m in ordered] == ["map", "P_5", "set_F"]


def test_a_family_takes_the_first_parameters_given():
    """trec_eval reads a family's parameters from its first -m name.params; a family given
    twice is printed once."""
    given = lambda *specs: [m.label for m in trec_eval_order([m for s in specs for m in trec_eval_measures(s)])]
    assert given("all_trec", "P.5")[:23] == given("official")[:21] + ["P_5", "relstring"]
    assert given("P.5", "P.10") == ["P_5"]
    assert given("P", "P.10", "P.20") == ["P_10"]
    assert given("P", "P") == given("P")
    assert given("ndcg", "ndcg.1=2") == ["ndcg_1=2"]


@pytest.mark.parametrize("spec, fragment", [
    ("Q", "illegal trec_eval measure 'Q'"),
    ("P.", "nothing after the '.'"),
    ("P.0,5", "cut-offs must be positive"),
    ("P.x", "cut-offs must be positive"),
    ("P.5,5", "given twice"),
    ("iprec_at_recall.0.1,0.1", "given twice"),
    ("utility.1,2", "needs exactly 4 values"),
    ("11pt_avg.0.8,0.2", "increasing order"),
    ("ndcg.1=3,,2=4", "malformed pair parameters"),
    ("ndcg.1", "malformed pair parameters"),
    ("ndcg.-1=2", "grades below 0"),
    ("ndcg.1=-2", "must be >= 0"),
    ("rbp.1=2", "reads only p"),
    ("rbp.p=1.5", "p must be in (0, 1)"),
    ("ideal_dcg.1", "malformed pair parameters"),
])
def test_what_irw_refuses(spec, fragment):
    with pytest.raises(IrwError) as info:
        trec_eval_measures(spec)
    assert fragment in str(info.value)


def test_ideal_dcg_and_yaap_are_catalogue_measures():
    """trec_eval's measures outside its nicknames: ideal_dcg (IDCG, gains as ndcg's) and yaap
    (YAAP), by their trec_eval names in irw eval too."""
    from irwarehouse import measures

    assert [(m.label, str(m.measure)) for m in trec_eval_measures("ideal_dcg")] == [("ideal_dcg", "IDCG")]
    assert [(m.label, str(m.measure)) for m in trec_eval_measures("yaap")] == [("yaap", "YAAP")]
    assert [m.label for m in trec_eval_measures("ideal_dcg.1=2,2=5")] == ["ideal_dcg_1=2,2=5"]
    assert [str(m) for m in measures.parse_all(["ideal_dcg", "yaap"])] == ["IDCG", "YAAP"]


def test_c_numbers():
    assert [atol(t) for t in ("12", " 7x", "-3", "x", "1e3")] == [12, 7, -3, 0, 1]
    assert [atof(t) for t in (".5", "1e-1x", "x", "-2.5", " 3")] == [0.5, 0.1, 0.0, -2.5, 3.0]


def test_relstring_characters():
    assert "".join(map(relstring_char, [1, None, 0, 2, -1, 12, -2])) == "1-02.>."


def test_irw_eval_aliases_come_from_the_same_table():
    """Every trec_eval name of one value per topic parses (``irw eval -m``) to the measure
    the table declares, and the gm families are not aliases."""
    for spec in ("all_trec", "dcg"):
        for m in trec_eval_measures(spec):
            if m.measure is None or m.aggregate == "gm":
                continue
            if re.fullmatch(r"(iprec_at_recall|Rprec_mult)_\d\.\d\d", m.label) or m.label in ("utility", "set_F", "11pt_avg"):
                assert measures.parse(m.label) == m.measure, m.label
            elif "=" not in m.label:
                assert measures.parse(m.label) == m.measure, m.label
    with pytest.raises(IrwError):
        measures.parse("gm_map")
    assert str(measures.parse("Rprec_mult_0.20")) == "RPrec(mult=0.2)"
    assert str(measures.parse("SetP")) == "P" and str(measures.parse("Rprec")) == "RPrec"
