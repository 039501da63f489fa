"""The measure catalogue and the parser for measure names.

Each measure is a small declarative entry (:class:`MeasureDef`) -- name, description,
parameters with type, default and range, whether it takes a cut-off, what the engine must
give its SQL -- and its computation is one SQL file ``sql/measures/<Name>.sql`` of a fixed
shape (see ``sql/evaluate.sql``). The entries are checked when the catalogue is built.
Names follow the ``ir_measures`` notation::

    Name(param=value,...)@k          e.g.  nDCG(discount=jk)@10, P(rel=2)@5, RBP(p=0.95), IPrec@0.3

``Name'`` is the condensed (judged-only) form, the same as ``judged_only=True``. trec_eval
10.0's measures are declared once, in :data:`TREC_FAMILIES` (the catalogue measure each
stands for, its parameters, how trec_eval aggregates and prints it); their names (``map``,
``P_10``, ``ndcg_cut_10``, ``iprec_at_recall_0.30``, ...) are accepted as aliases, and
irwarehouse.trec_names reads trec_eval's ``-m`` arguments from the same table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import names, numbers
from .errors import IrwError, shown
from .judgment_kinds import KINDS
from .measure_def import ENGINE_PARAMS, MeasureDef, Param, Setting  # noqa: F401 (re-exported)
from .measures_diversity import DIVERSITY
from .sql import quote_literal
from .trec_families import (BY_JUDGMENT_GROUP, PREFS_MEASURES, TREC_AGGREGATES, TREC_FAMILIES,  # noqa: F401
                            TREC_NICKNAMES, TREC_UNSUPPORTED, TREC_VALUE_KINDS, TrecFamily, format_number,
                            format_value)
from .measures_cwl import CWL_ENTRIES
from .citations import (BPREF, BUCKLEY, INFAP, JK, KANTOR, MOFFAT, SAKAI, SAKAI_KANDO, SALTON,
                        TREC, TREC_EVAL_9, TREC_EVAL_10, UNCERTAINTY, VANRIJSBERGEN, WEBBER, XINFAP, Citation)

DISCOUNTS = ("log2p1", "jk")


def rbp_persistence(residual: float, depth: int) -> float:
    """The phi whose tail weight beyond ``depth`` equals ``residual``: phi = r^(1/k)."""
    if not 0 < residual < 1 or depth < 1:
        raise IrwError("residual must be in (0, 1) and depth >= 1")
    return residual ** (1.0 / depth)


MAX_INT = numbers.MAX_INT  # grades, thresholds and cut-offs are SQL INTEGERs

REL = Param("rel", "int", None, "relevance threshold: grade >= rel is relevant (default 1, or --rel-level); rel >= 0",
            low=0, why="grades below 0 mark documents in the pool but not assessed")
JUDGED = Param("judged_only", "bool", False, "condensed list: drop unjudged documents first (also Name')")
GAINS = Param("gains", "gains", None, "gain per grade, e.g. {1:1,2:3}; unlisted grades gain 0; grades >= 0, gains >= 0 (default: gain = grade for grade >= 1; binary if rel is given)")
DISCOUNT = Param("discount", "choice", "log2p1", "log2p1: 1/log2(i+1) (trec_eval); jk: 1/log_b(max(b,i)) (Jarvelin & Kekalainen, Sakai)", DISCOUNTS)
BASE = Param("base", "float", 2.0, "logarithm base of the discount; base > 1", low=1.0, low_open=True)
PERSIST = Param("p", "float", 0.8, "persistence phi; 0 < p < 1", low=0.0, high=1.0, low_open=True,
                high_open=True, always_shown=True)
DEPTH = Param("depth", "int", None, "set p by the residual at a depth instead: p = residual^(1/depth), the "
              "persistence whose weight beyond rank depth is residual (depth=10: p = 0.7943); "
              "depth >= 1", low=1, excludes="p",
              sets=Setting(("residual", "depth"), rbp_persistence, "pow({residual}, 1.0::DOUBLE / {depth})"))
RESIDUAL = Param("residual", "float", 0.1, "with depth: the weight beyond rank depth; 0 < residual < 1",
                 low=0.0, high=1.0, low_open=True, high_open=True, always_shown=True,
                 requires="depth")
ALL_JUDGED_ZERO = Param("zero_if_judged", "bool", False,
                        "0 when every document within min(k, n) is judged (trec_eval's rbp_resid, "
                        "which then leaves out the tail p^n)")
BETA = Param("beta", "float", 1.0, "weight of gain against rank (0 gives AP); beta >= 0", low=0.0)


UNLISTED = Param("unlisted", "choice", "zero", "gain of the grades gains does not list: zero, or "
                 "grade (trec_eval's ndcg.1=3 form keeps the other grades' gain = grade)",
                 ("zero", "grade"), requires="gains")
MULT = Param("mult", "float", 1.0, "the cut-off as a multiple of R: P at floor(mult R + 0.9) "
             "(trec_eval's Rprec_mult); mult >= 0", low=0.0)
RECALLS = Param("recalls", "floats", tuple(i / 10 for i in range(11)),
                "the recall levels averaged, e.g. {0.2,0.5,0.8}; levels >= 0", low=0.0)
SET_BETA = Param("beta", "float", 1.0, "weight of recall against precision: (1+beta) P R / (beta P + R) "
                 "(trec_eval's set_F parameter, the square of van Rijsbergen's beta); beta >= 0",
                 low=0.0)
GMAX = Param("gmax", "int", None, "the grade of certain relevance: R_i = (2^g_i - 1) / 2^gmax, "
             "grades above it count as gmax (default: the top grade of the qrels; ir_measures' "
             "gdeval uses 4); gmax >= 0", low=0)
UTILITY = (Param("a", "float", 1.0, "worth of a relevant document retrieved"),
           Param("b", "float", -1.0, "worth of a non-relevant (or unjudged) document retrieved"),
           Param("c", "float", 0.0, "worth of a relevant document not retrieved"),
           Param("d", "float", 0.0, "worth of a non-relevant document not retrieved (with docs)"),
           Param("docs", "int", 0, "documents in the collection (trec_eval -N); docs >= 0", low=0))


# What a measure may declare in ``needs`` beyond its ranking: values the engine computes only
# for the measures that ask (documented with the hooks in sql/evaluate.sql).
NEEDS = {
    "top_grade": "m.top_grade: the largest grade judged in the qrels (one value per qrels)",
    "pool_unjudged": "m.pool_unjudged: per row, the documents ranked above it that the qrels "
                     "lists with a grade below 0 (in the pool, not assessed)",
    "intents": "m.intent_counts, m.intent_ap: per row, for each intent the document is relevant "
               "to, the documents above relevant to it; m.n_intents: the topic's intents",
    "intent_ideal": "intent_ideal(m) over m.intent_ideal: the greedy ideal ranking of a "
                    "diversity topic at redundancy m.alpha (ndeval's)",
    "grade_above": "m.grade_above: per row of grade >= 1, the documents of the topic judged at a "
                   "higher grade",
    "strata": "sampled judgments: strata_aggs(m) over the ranked documents of the prels with their "
              "strata's weights and the running estimate est; est_R and est_idcg per topic",
}

# Names a parameter of a measure may not take: the context ``m`` already uses them.
_RESERVED = {"id", "label", "name", "module", "pos", "n", "k", "within", "ideal_within", "rel",
             "R", "N", "c_rel", "c_nonrel", "gain", "gkey", "cg", "gmax_g", "gain_max", "top_grade",
             "pool_unjudged", "grade_above", "run", "iv", "ipos", "ideal_ranking", "ideal_len", "needs",
             "threshold", "gainset", "args", "checks", "window_guard", "many", "intent_counts",
             "intent_ap", "n_intents", "intent_ideal"}


BINARY = (REL, JUDGED)
GRADED = (GAINS, UNLISTED, DISCOUNT, BASE, REL, JUDGED)

CATALOGUE: dict[str, MeasureDef] = {
    m.name: m
    for m in [
        MeasureDef("P", "Precision: relevant retrieved in the top k, divided by k (no k: by the number retrieved)",
                   BINARY, aliases=("SetP",), ir_measures="P@k; SetP (no k)", paper=BUCKLEY,
                   examples=("P@10", "P", "P(rel=2)@5", "P'@5")),
        MeasureDef("R", "Recall: relevant retrieved in the top k, divided by R", BINARY,
                   aliases=("SetR",), ir_measures="R@k; SetR (no k)", raw_form="NumRelRet", paper=BUCKLEY, examples=("R@20", "R@100", "R")),
        MeasureDef("SP", "Sum of precisions: sum over relevant ranks i <= k of P@i", BINARY,
                   normalized_form="AP", paper=WEBBER, examples=("SP@10",)),
        MeasureDef("AP", "Average precision, expanded normalization: SP@k / R", BINARY,
                   ir_measures="AP", raw_form="SP", paper=BUCKLEY,
                   examples=("AP", "AP@10", "AP(rel=2)", "AP'")),
        MeasureDef("aAP", "Average precision, abbreviated normalization: SP@k / min(k, R)", BINARY,
                   raw_form="SP", paper=WEBBER, examples=("aAP@5", "aAP")),
        MeasureDef("RPrec", "R-precision: P@R; with mult, P at floor(mult R + 0.9) (0 if that is 0)",
                   (MULT, REL, JUDGED), cutoff=False, aliases=("Rprec",), ir_measures="Rprec",
                   paper=BUCKLEY, examples=("RPrec", "RPrec(rel=2)", "RPrec(mult=0.6)", "RPrec(mult=1.8)")),
        MeasureDef("RR", "Reciprocal rank of the first relevant document within k (0 if none)", BINARY,
                   ir_measures="RR", paper=KANTOR,
                   examples=("RR", "RR@3")),
        MeasureDef("Success", "1 if a relevant document is within the top k, else 0", BINARY,
                   ir_measures="Success@k", paper=BUCKLEY, examples=("Success@1", "Success@10")),
        MeasureDef("DCG", "Discounted cumulative gain: sum of gain x discount over ranks i <= k", GRADED,
                   graded=True, normalized_form="nDCG", paper=JK,
                   examples=("DCG@10", "DCG(discount=jk,base=3)@10")),
        MeasureDef("nDCG", "Normalized DCG: DCG@k / ideal DCG@k (ideal ranking truncated at k); no k: whole run and ideal ranking",
                   GRADED, graded=True, ideal=True, ir_measures="nDCG@k", raw_form="DCG", paper=JK,
                   examples=("nDCG", "nDCG@10", "nDCG(discount=jk)@10", "nDCG(gains={1:1,2:3,3:7})@5",
                             "nDCG(gains={2:5},unlisted=grade)@20", "nDCG(rel=2)@10", "nDCG'@10",
                             "nDCG(discount=jk)@1000")),
        MeasureDef("enDCG", "DCG@k divided by the DCG of the whole ideal ranking (expanded normalization)",
                   GRADED, graded=True, ideal=True, raw_form="DCG", paper=WEBBER,
                   examples=("enDCG@5", "enDCG(base=10)")),
        MeasureDef("IDCG", "Ideal DCG: the DCG of the ideal ranking (every judged document by gain, "
                   "descending), whole or truncated at k; trec_eval's ideal_dcg",
                   GRADED, graded=True, ideal=True, paper=JK, examples=("IDCG", "IDCG@10", "IDCG(gains={1:1,2:3})")),
        MeasureDef("YAAP", "Yet another AP: ln((1 + SP@k) / (1 + R - SP@k)), SP@k the sum of precisions "
                   "at the relevant ranks; trec_eval's yaap", BINARY,
                   paper=Citation(("Robertson",), "On smoothing average precision", "ECIR", 2012),
                   examples=("YAAP", "YAAP@10", "YAAP(rel=2)")),
        MeasureDef("RBP", "Rank-biased precision (base score): (1-p) sum_{i<=k} (g_i/g_max) p^(i-1)",
                   (PERSIST, DEPTH, RESIDUAL, GAINS, REL, JUDGED), graded=True, ir_measures="RBP(p=...)",
                   paper=MOFFAT,
                   examples=("RBP(p=0.8)", "RBP(p=0.95)@20", "RBP(p=0.5,rel=2)", "RBP(gains={1:1,2:2,3:10},p=0.9)",
                             "RBP'(p=0.8)", "RBP(depth=10)", "RBP(depth=100,residual=0.05)@50")),
        MeasureDef("RBPres", "RBP residual: weight of unjudged ranks within min(k, n) plus the tail p^min(k, n)",
                   (PERSIST, DEPTH, RESIDUAL, ALL_JUDGED_ZERO, JUDGED), paper=MOFFAT,
                   examples=("RBPres(p=0.8)", "RBPres(p=0.9)@10", "RBPres(depth=20)@10",
                             "RBPres(p=0.9,zero_if_judged=True)")),
        MeasureDef("nRBP", "Normalized RBP: RBP@k divided by the RBP@k of the ideal ranking",
                   (PERSIST, DEPTH, RESIDUAL, GAINS, REL, JUDGED), graded=True, ideal=True, raw_form="RBP",
                   paper=SAKAI_KANDO,
                   examples=("nRBP(p=0.8)@10", "nRBP(p=0.6,rel=2)", "nRBP(depth=5,residual=0.2)")),
        MeasureDef("Q", "Q-measure: (1/R) sum_{relevant i<=k} (C(i) + beta cg(i)) / (i + beta cg_ideal(i))",
                   (BETA, GAINS, UNLISTED, REL, JUDGED), graded=True, rel_binarizes=False,
                   cumulative_gain=True, ideal=True, paper=SAKAI,
                   examples=("Q", "Q(beta=0.5)@10", "Q(rel=2)", "Q(gains={1:1,2:2,3:3})")),
        MeasureDef("Bpref", "Bpref: (1/R) sum over relevant retrieved of 1 - min(n_i, R)/min(R, N)", BINARY,
                   ir_measures="Bpref", paper=BPREF,
                   examples=("Bpref", "Bpref(rel=2)", "Bpref'")),
        MeasureDef("Judged", "Fraction of the top min(k, n) documents that is judged", (JUDGED,),
                   ir_measures="Judged@k", paper=MOFFAT, examples=("Judged@10", "Judged")),
        MeasureDef("Unjudged", "Unjudged documents in the top k, divided by k (no k: by the number retrieved)",
                   (JUDGED,), paper=TREC_EVAL_10, examples=("Unjudged@5", "Unjudged@20", "Unjudged")),
        MeasureDef("FirstUnjudged", "Rank of the first unjudged document (length + 1 if all are judged)",
                   (JUDGED,), cutoff=False, paper=UNCERTAINTY,
                   examples=("FirstUnjudged", "FirstUnjudged'")),
        MeasureDef("NumRet", "Number of documents retrieved (within k)", (JUDGED,), ir_measures="NumRet",
                   paper=TREC, examples=("NumRet", "NumRet@50")),
        MeasureDef("NumRel", "R: number of relevant documents for the topic", (REL,), cutoff=False,
                   ir_measures="NumRel", paper=TREC, examples=("NumRel", "NumRel(rel=2)")),
        MeasureDef("NumRelRet", "Number of relevant documents retrieved (within k)", BINARY,
                   ir_measures="NumRelRet", normalized_form="R", paper=TREC,
                   examples=("NumRelRet@10", "NumRelRet@100")),
        MeasureDef("NumNonRelJudgedRet", "Number of judged non-relevant documents retrieved (within k)",
                   BINARY, paper=TREC, examples=("NumNonRelJudgedRet", "NumNonRelJudgedRet(rel=2)@10")),
        MeasureDef("RelP", "Relative precision: relevant in the top k divided by min(k, R) (no k: by min(n, R))",
                   BINARY, paper=TREC, examples=("RelP@5", "RelP(rel=2)@10", "RelP")),
        MeasureDef("SetAP", "Set AP: relevant retrieved squared over (retrieved x R), set precision times set recall",
                   BINARY, cutoff=False, ir_measures="SetAP", paper=TREC, examples=("SetAP", "SetAP(rel=2)")),
        MeasureDef("SetF", "Set F: (1 + beta) P R / (beta P + R) of set precision P and set recall R (0 if none relevant retrieved)",
                   (SET_BETA, REL, JUDGED), cutoff=False, ir_measures="SetF", paper=VANRIJSBERGEN,
                   examples=("SetF", "SetF(beta=0.25)", "SetF(rel=2)")),
        MeasureDef("IPrec", "Interpolated precision at recall level r: the best precision at or after the "
                   "round(r R)-th relevant document retrieved (0 if it is not retrieved)",
                   BINARY, cutoff_kind="recall", cutoff_required=True, ir_measures="IPrec@r", paper=SALTON,
                   examples=("IPrec@0.0", "IPrec@0.3", "IPrec@1.0", "IPrec(rel=2)@0.5", "IPrec'@0.2")),
        MeasureDef("IPrecAvg", "Interpolated precision averaged over recall levels (11 points by default)",
                   (RECALLS, REL, JUDGED), cutoff=False, paper=SALTON,
                   examples=("IPrecAvg", "IPrecAvg(recalls={0.2,0.5,0.8})")),
        MeasureDef("infAP", "Inferred AP: AP estimated from a sample of the pool (grade < 0: pooled, not assessed)",
                   BINARY, cutoff=False, needs=("pool_unjudged",), ir_measures="infAP",
                   paper=INFAP, examples=("infAP", "infAP(rel=2)", "infAP'")),
        MeasureDef("binG", "Binary G: (1/R) sum over relevant retrieved of 1/log2(2 + documents above not relevant)",
                   BINARY, cutoff=False, paper=TREC_EVAL_9,
                   examples=("binG", "binG(rel=2)")),
        MeasureDef("G", "G: sum of g_i / log2(2 + ideal cost(i) - cg(i)) over the ranking, divided by the ideal total gain",
                   (GAINS, UNLISTED, REL, JUDGED), cutoff=False, graded=True, cumulative_gain=True, ideal=True,
                   paper=TREC_EVAL_9,
                   examples=("G", "G(gains={1:1,2:3})", "G(rel=2)")),
        MeasureDef("RnDCG", "nDCG averaged at the R levels: where the ideal gain changes, and at n beyond them",
                   (GAINS, UNLISTED, REL, JUDGED), cutoff=False, graded=True, rel_binarizes=False, ideal=True,
                   paper=TREC_EVAL_9,
                   examples=("RnDCG", "RnDCG(gains={1:1,2:5})", "RnDCG(rel=2)")),
        MeasureDef("nDCGRel", "nDCG averaged over the relevant documents (DCG at each one retrieved, at the end for the others)",
                   (GAINS, UNLISTED, REL, JUDGED), cutoff=False, graded=True, ideal=True,
                   paper=TREC_EVAL_9,
                   examples=("nDCGRel", "nDCGRel(gains={1:2,2:3})")),
        MeasureDef("ERR", "Expected reciprocal rank: sum_{r<=k} (1/r) R_r prod_{i<r} (1 - R_i), R_i = (2^g_i - 1)/2^gmax",
                   (GMAX, JUDGED), needs=("top_grade",), ir_measures="ERR@k",
                   paper=Citation(("Chapelle", "Metzler", "Zhang", "Grinspan"),
                                  "Expected reciprocal rank for graded relevance", "CIKM", 2009),
                   examples=("ERR@20", "ERR", "ERR(gmax=4)@20", "ERR'@10")),
        MeasureDef("Utility", "Set utility: a rel_ret + b nonrel_ret + c rel_not_ret + d nonrel_not_ret",
                   UTILITY + (REL, JUDGED), cutoff=False, paper=TREC,
                   examples=("Utility", "Utility(a=2,b=-1,c=-0.5,d=0.01,docs=1000)")),
        MeasureDef("Compat", "Compatibility: the RBO of the ranking with the ideal ranking most compatible with it "
                   "(by grade, ties in the ranking's order), over the ideal's own RBO",
                   (Param("p", "float", 0.95, "persistence of the rank-biased overlap; 0 < p < 1", low=0.0, high=1.0,
                          low_open=True, high_open=True),
                    Param("normalize", "bool", True, "divide by the ideal ranking's RBO (False: by the RBO weights' sum)")),
                   cutoff=False, needs=("grade_above",), ir_measures="Compat(p=...)",
                   paper=Citation(("Clarke", "Vtyurina", "Smucker"), "Assessing top-k preferences", "TOIS", 2021),
                   examples=("Compat", "Compat(p=0.8)", "Compat(normalize=False)", "Compat(p=0.99)")),
        *(MeasureDef(**entry) for entry in CWL_ENTRIES),
        MeasureDef("xinfAP", "Extended inferred AP from stratified sampled judgments (sample_eval's infAP)", (),
                   cutoff=False, needs=("strata",), reads="prels", paper=XINFAP, examples=("xinfAP",)),
        MeasureDef("infNDCG", "Inferred nDCG from stratified sampled judgments, ideal DCG estimated (sample_eval)",
                   (), cutoff=False, needs=("strata",), reads="prels", paper=XINFAP, examples=("infNDCG",)),
        MeasureDef("iP", "Inferred precision at k: estimated relevant retrieved in the top k, divided by k "
                   "(sample_eval's iP10, iP50, iP1000)", (), cutoff_required=True, needs=("strata",),
                   reads="prels", paper=XINFAP, examples=("iP@10", "iP@1000")),
        MeasureDef("iNumRelRet", "Estimated relevant retrieved within k and 1,000 (sample_eval's inum_rel_ret)", (),
                   needs=("strata",), aliases=("inum_rel_ret",), reads="prels", paper=XINFAP,
                   examples=("iNumRelRet", "iNumRelRet@50")),
        MeasureDef("iNumRel", "Estimated number of relevant documents, R (sample_eval's inum_rel)", (),
                   cutoff=False, needs=("strata",), aliases=("inum_rel",), reads="prels", paper=XINFAP,
                   examples=("iNumRel",)),
        MeasureDef("iIPrec", "Inferred interpolated precision at recall level r = 0, 0.1, ..., 1 (sample_eval's "
                   "iprec@rec)", (), cutoff_kind="recall", cutoff_required=True, needs=("strata",),
                   aliases=("iprec",), reads="prels", paper=XINFAP, examples=("iIPrec@0.0", "iIPrec@0.5"),
                   cutoff_levels=tuple(i / 10 for i in range(11))),
        *(MeasureDef(name, text, (), cutoff=False, reads="prefs", paper=TREC_EVAL_10, examples=(name,))
          for name, text in PREFS_MEASURES),  # trec_eval's preference measures (sql/evaluate_prefs.sql)
    ] + list(DIVERSITY)
}


def _aliases() -> list[tuple[str, str, tuple, str]]:
    """The trec_eval names ``irw eval -m`` accepts, from TREC_FAMILIES: (pattern, measure,
    fixed parameters, what the captured group sets: '' none, '@' the cut-off, or a
    parameter). A family of one measure value per name (map, rbp, P_k, iprec_at_recall_r,
    Rprec_mult_r); not the geometric-mean families (gm_map is AP aggregated otherwise) nor
    those averaged over judgment groups (map_avgjg)."""
    out = []
    for f in TREC_FAMILIES:
        if not f.measure or f.aggregate == "gm" or f.name in BY_JUDGMENT_GROUP:
            continue
        name = re.escape(f.name)
        if f.takes == "cutoffs":
            out.append((rf"{name}_(\d+)", f.measure, f.fixed, "@"))
        elif f.takes == "levels":
            out.append((rf"{name}_(\d+(?:\.\d*)?)", f.measure, f.fixed, f.level_param or "@"))
        else:
            out.append((name, f.measure, f.fixed, ""))
    return out


def check_catalogue(catalogue: dict | None = None, families=None) -> None:
    """The catalogue's invariants (an AssertionError naming the entry and the rule), checked
    when the catalogue is built: an entry breaking one is a programming error, raised at
    import. ``catalogue`` and ``families`` default to CATALOGUE and TREC_FAMILIES."""
    catalogue = CATALOGUE if catalogue is None else catalogue
    families = TREC_FAMILIES if families is None else families
    names = set(catalogue)
    aliases: set[str] = set()
    assert len({n.lower() for n in names}) == len(names), "two measures differ only in case (SQL macros)"
    for m in catalogue.values():
        where = f"measure {m.name}"
        seen = [p.name for p in m.params]
        assert len(seen) == len(set(seen)), f"{where}: a parameter is declared twice"
        assert m.cutoff_kind in ("rank", "recall"), f"{where}: cutoff_kind {m.cutoff_kind!r}"
        assert m.cutoff or not m.cutoff_required, f"{where}: cutoff_required without a cut-off"
        assert not m.graded or m.param("gains"), f"{where}: graded measures need a gains parameter"
        assert not m.param("gains") or m.graded, f"{where}: a gains parameter needs graded=True"
        assert not m.cumulative_gain or m.graded, f"{where}: cumulative_gain needs graded=True"
        assert m.rel_binarizes or (m.graded and m.param("rel")), f"{where}: rel_binarizes=False needs a graded measure with rel"
        assert set(m.needs) <= set(NEEDS), f"{where}: needs {set(m.needs) - set(NEEDS)} (known: {', '.join(NEEDS)})"
        assert any(m.reads in k.serves for k in KINDS.values()), f"{where}: no judgment kind serves {m.reads}"
        for p in m.params:
            assert p.kind in ("int", "float", "bool", "choice", "gains", "floats"), f"{where}: kind {p.kind}"
            assert p.name in ENGINE_PARAMS or p.name not in _RESERVED, f"{where}: parameter name {p.name} is reserved"
            for other in (p.excludes, p.requires):
                assert not other or m.param(other), f"{where}: {p.name} refers to unknown parameter {other}"
            if p.kind == "choice":
                assert p.default in p.choices, f"{where}: default of {p.name} is not a choice"
            if p.kind in ("int", "float") and p.default is not None:
                assert p.in_range(p.default), f"{where}: default of {p.name} is out of its range"
        for form in (m.raw_form, m.normalized_form):
            assert not form or form in names, f"{where}: unknown form {form}"
        for alias in m.aliases:
            assert alias not in names and alias not in aliases, f"{where}: alias {alias} is taken"
            aliases.add(alias)
        assert m.examples, f"{where}: give at least one example setting"
        if catalogue is CATALOGUE:
            for example in m.examples:
                assert parse(example).name == m.name, f"{where}: example {example} is not {m.name}"
    for f in families:
        assert not f.measure or f.measure in names, f"trec_eval {f.name}: unknown measure {f.measure}"
        assert f.takes in ("", "cutoffs", "levels", "pairs", "values"), f"trec_eval {f.name}: takes {f.takes}"
        assert f.aggregate in TREC_AGGREGATES and f.value_kind in TREC_VALUE_KINDS, f"trec_eval {f.name}"
        if f.measure:
            m = catalogue[f.measure]
            assert all(m.param(k) for k, _ in f.fixed), f"trec_eval {f.name}: unknown fixed parameter"
            assert f.takes != "cutoffs" or (m.cutoff and m.cutoff_kind == "rank"), f"trec_eval {f.name}"
            assert f.takes != "levels" or (m.param(f.level_param) if f.level_param
                                           else m.cutoff_kind == "recall"), f"trec_eval {f.name}"
            assert all(m.param(v.lstrip("*")) for v in f.value_params), f"trec_eval {f.name}: value_params"
    known = {f.name for f in families}
    for nick, members in TREC_NICKNAMES.items():
        assert set(members) <= known, f"trec_eval nickname {nick}: {set(members) - known}"


_TREC_ALIASES = _aliases()
# the aliases as one pattern, tried in their order: alternative i is the group a<i>, its
# captured value (if it has one) the group after it
_TREC_ALIAS_RE = re.compile("|".join(f"(?P<a{i}>{pattern})" for i, (pattern, *_) in enumerate(_TREC_ALIASES)))
_ALIAS_NAMES = {alias: m.name for m in CATALOGUE.values() for alias in m.aliases}


@dataclass(frozen=True)
class Measure:
    """A parsed measure: definition, explicit parameter values and cut-off (an integer rank,
    or a recall level for a measure whose cutoff_kind is 'recall')."""

    name: str
    params: tuple = field(default_factory=tuple)  # sorted (name, value) pairs, defaults dropped
    cutoff: int | float | None = None

    @property
    def definition(self) -> MeasureDef:
        return CATALOGUE[self.name]

    def get(self, name: str):
        for key, value in self.params:
            if key == name:
                return value
        for other in self.definition.params:  # set by another parameter given (RBP's depth sets p)
            if other.excludes == name and other.sets is not None and self.has(other.name):
                return other.sets.compute(**{i: self.get(i) for i in other.sets.inputs})
        param = self.definition.param(name)
        return param.default if param is not None else None

    def has(self, name: str) -> bool:
        return any(key == name for key, _ in self.params)

    @property
    def judged_only(self) -> bool:
        return bool(self.get("judged_only"))

    def with_params(self, **updates) -> "Measure":
        params = dict(self.params)
        for key, value in updates.items():
            param = self.definition.param(key)
            if param is None:
                continue
            if value is None or (value == param.default and not param.always_shown):
                params.pop(key, None)
            else:
                params[key] = value
        return Measure(self.name, tuple(sorted(params.items())), self.cutoff)

    def __str__(self) -> str:
        """Canonical name: Name['](sorted non-default params)[@k]; condensed as Name'."""
        text = self.name + ("'" if self.judged_only else "")
        shown = [(k, v) for k, v in self.params if k != "judged_only"]
        if shown:
            text += "(" + ",".join(f"{k}={format_value(v)}" for k, v in shown) + ")"
        if self.cutoff is not None:
            text += f"@{self.cutoff!r}" if isinstance(self.cutoff, float) else f"@{self.cutoff}"
        return text


_integer = numbers.integer
_decimal = numbers.decimal


_NAME_RE = re.compile(
    r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?P<prime1>')?(?:\((?P<params>.*)\))?(?P<prime2>')?(?:@(?P<k>[^@]*))?$"
)


def catalogue_name(name: str) -> str | None:
    """The catalogue entry a measure name (without parameters or cut-off) stands for: the
    name itself or an alias of an entry (ir_measures' ``Rprec``, ``SetP``); None if none."""
    name = _ALIAS_NAMES.get(name, name)
    return name if name in CATALOGUE else None


def definition_of(name: str) -> MeasureDef:
    """The catalogue entry that ``name`` names: a catalogue name or alias (any case), a
    trec_eval name, or a measure as written (``nDCG@10``, ``RBP(p=0.9)``)."""
    text = str(name).strip().rstrip("'")
    known = catalogue_name(text) or next((m for m in CATALOGUE if m.lower() == text.lower()), None)
    if known is None:
        family = next((f for f in TREC_FAMILIES if f.name == text), None)
        known = family.measure if family is not None else parse(text).name
    return CATALOGUE[known]


def _valid_names() -> str:
    return ", ".join(CATALOGUE)


def parse(text: str) -> Measure:
    """Parse a measure name; raise :class:`IrwError` listing what is valid."""
    raw = str(text).strip()
    m = _TREC_ALIAS_RE.fullmatch(raw)
    if m is None:
        return _parse(raw)
    index = m.re.groupindex[m.lastgroup]
    _, name, fixed, group = _TREC_ALIASES[int(m.lastgroup[1:])]
    if group == "@":
        measure = _parse(f"{name}@{m.group(index + 1)}")
    else:
        measure = _parse(name)
        if group:
            value = _convert(measure.definition.param(group), m.group(index + 1), raw)
            measure = measure.with_params(**{group: value})
    return measure.with_params(**dict(fixed))


def _parse(raw: str) -> Measure:
    """:func:`parse` of a name of the catalogue (or an alias of an entry)."""
    whole = shown(raw)
    m = _NAME_RE.match(raw)
    if not m:
        raise IrwError(
            f"cannot parse measure {whole}: expected Name(param=value,...)@k, e.g. "
            f"nDCG(discount=jk)@10; measures: {_valid_names()}"
        )
    name = _ALIAS_NAMES.get(m.group("name"), m.group("name"))
    if name not in CATALOGUE:
        meant = names.measure_spelling(name, CATALOGUE)
        if len(meant) != 1:
            k = f"@{m.group('k')}" if m.group("k") is not None else ""
            hint = (f" (it could mean {' or '.join(n + k for n in meant)}: name one)" if meant else "")
            raise IrwError(f"unknown measure {shown(name)} in {whole}{hint}; measures: {_valid_names()}")
        name = meant[0]
    if m.group("prime1") and m.group("prime2"):
        raise IrwError(f"the condensed mark ' is given twice in {whole}")
    definition = CATALOGUE[name]
    values: dict[str, object] = {}
    for item in _split_params(m.group("params") or "", raw):
        key, _, value = item.partition("=")
        key = key.strip()
        param = definition.param(key)
        if param is None or not _:
            valid = ", ".join(f"{p.name} (default {p.default})" for p in definition.params) or "none"
            raise IrwError(f"measure {name} has no parameter {shown(item.strip())} in {whole}; parameters: {valid}")
        if key in values:
            raise IrwError(f"parameter {key} is given twice in {whole}")
        values[key] = _convert(param, value.strip(), raw)
    if m.group("prime1") or m.group("prime2"):
        if not definition.param("judged_only"):
            raise IrwError(f"measure {name} has no condensed form (' in {whole})")
        if "judged_only" in values:
            raise IrwError(f"the condensed form is given twice in {whole} (' and judged_only): "
                           "give one")
        values["judged_only"] = True
    cutoff = _cutoff(definition, m.group("k"), whole)
    for param in definition.params:
        if param.excludes and param.name in values and param.excludes in values:
            raise IrwError(f"give {param.excludes} or {param.name} in {whole}, not both "
                           f"({param.name} sets {param.excludes})")
        if param.requires and param.name in values and param.requires not in values:
            raise IrwError(f"parameter {param.name} of {whole} means nothing without {param.requires}")
    for param in definition.params:
        excluded = any(other.excludes == param.name and other.name in values
                       for other in definition.params)
        if (param.always_shown and param.name not in values and not excluded
                and (not param.requires or param.requires in values)):
            values[param.name] = param.default
    return Measure(name, (), cutoff).with_params(**values)


def _cutoff(definition: MeasureDef, text: str | None, whole: str):
    """The cut-off of ``@text``: an integer rank from 1 to MAX_INT, or a recall level >= 0."""
    name = definition.name
    if text is None:
        if definition.cutoff_required:
            example = "@0.3" if definition.cutoff_kind == "recall" else "@10"
            raise IrwError(f"measure {name} needs a cut-off in {whole}, e.g. {name}{example}")
        return None
    if not definition.cutoff:
        raise IrwError(f"measure {name} takes no cut-off (@k) in {whole}")
    if definition.cutoff_kind == "recall":
        level = _decimal(text)
        if level is None or level < 0:
            raise IrwError(f"cut-off @{shown(text, 20)[1:-1]} in {whole} must be a recall level >= 0, e.g. 0.3")
        if definition.cutoff_levels and float(level) not in definition.cutoff_levels:
            raise IrwError(f"cut-off @{shown(text, 20)[1:-1]} in {whole} must be one of "
                           + ", ".join(map(repr, definition.cutoff_levels)))
        return float(level)
    cutoff = _integer(text)
    if cutoff is None or not 1 <= cutoff <= MAX_INT:
        raise IrwError(f"cut-off @{shown(text, 20)[1:-1]} in {whole} must be an integer from 1 to {MAX_INT}")
    return cutoff


def _split_top_level(text: str, opening: str, closing: str) -> tuple[list[str], int]:
    """``text`` split on the commas outside the brackets ``opening``/``closing`` (pieces as
    they are, empty ones too), and the depth of brackets left open at its end."""
    items, depth, current = [], 0, []
    for ch in text:
        if ch in opening:
            depth += 1
        elif ch in closing:
            depth -= 1
        if ch == "," and depth == 0:
            items.append("".join(current))
            current = []
        else:
            current.append(ch)
    items.append("".join(current))
    return items, depth


def _split_params(text: str, whole: str) -> list[str]:
    items, depth = _split_top_level(text, "{", "}")
    if depth != 0:
        raise IrwError(f"unbalanced braces in {shown(whole)}")
    return [i for i in items if i.strip()]


def _number(param: Param, value: str, where: str, kind: str):
    number = _integer(value) if kind == "int" else _decimal(value)
    if number is None:
        what = "an integer" if kind == "int" else "a finite decimal number (e.g. 0.95)"
        raise IrwError(f"{where} must be {what}, got {shown(value, 30)}")
    if kind == "int" and number > MAX_INT:
        raise IrwError(f"{where} must be at most {MAX_INT}, got {shown(value, 30)[1:-1]}")
    if not param.in_range(number):
        why = f" ({param.why})" if param.why else ""
        raise IrwError(f"{where} must be {param.valid_range()}{why}, got {shown(value, 30)[1:-1]}")
    return number


def _convert(param: Param, value: str, whole: str):
    where = f"parameter {param.name} of {shown(whole)}"
    if param.kind in ("int", "float"):
        return _number(param, value, where, param.kind)
    if param.kind == "bool":
        if value.lower() in ("true", "1", "yes"):
            return True
        if value.lower() in ("false", "0", "no"):
            return False
        raise IrwError(f"{where} must be True or False, got {value!r}")
    if param.kind == "choice":
        if value not in param.choices:
            raise IrwError(f"{where} must be one of {', '.join(param.choices)}, got {value!r}")
        return value
    if param.kind == "gains":
        return _gains(value, where)
    if param.kind == "floats":
        body = value.strip()
        if not (body.startswith("{") and body.endswith("}")):
            raise IrwError(f"{where} must look like {format_value(param.default)}, got {value!r}")
        items = [i for i in body[1:-1].split(",") if i.strip()]
        if not items:
            raise IrwError(f"{where} needs at least one number")
        return tuple(float(_number(param, i.strip(), where, "float")) for i in items)
    raise AssertionError(param.kind)


def _gains(value: str, where: str) -> tuple:
    """A gain map {grade:gain,...}: grades integers >= 0, gains finite and >= 0, one > 0."""
    body = value.strip()
    if not (body.startswith("{") and body.endswith("}")):
        raise IrwError(f"{where} must look like {{0:0,1:1,2:3}}, got {value!r}")
    gains: dict[int, float] = {}
    for item in body[1:-1].split(","):
        if not item.strip():
            continue
        grade_text, sep, gain_text = item.partition(":")
        grade, gain = _integer(grade_text), _decimal(gain_text)
        if not sep or grade is None or gain is None:
            raise IrwError(f"{where}: bad entry {item.strip()!r} (want grade:gain, an integer "
                           "and a finite number)")
        if not 0 <= grade <= MAX_INT:
            raise IrwError(f"{where}: grade {grade} must be >= 0 (grades below 0 mark documents "
                           "in the pool but not assessed, which gain nothing)")
        if gain < 0:
            raise IrwError(f"{where}: the gain of grade {grade} must be >= 0, got {gain_text.strip()}")
        if grade in gains:
            raise IrwError(f"{where}: grade {grade} is given twice")
        gains[grade] = gain
    if not gains or max(gains.values()) <= 0:
        raise IrwError(f"{where} needs at least one positive gain")
    return tuple(sorted(gains.items()))


def parse_all(texts, rel_level: int | None = None) -> list[Measure]:
    """Parse several names; ``rel_level`` (trec_eval ``-l``) sets ``rel`` where not given.
    A measure parsed already (a :class:`Measure`) is taken as it is: a name is parsed once,
    at the edge, and the parsed measures flow down.

    Gain-based measures keep graded gains under ``rel_level`` (as trec_eval's ndcg does);
    only an explicit ``rel=`` makes them binary.
    """
    if rel_level is not None and not REL.in_range(rel_level):
        raise IrwError(f"--rel-level must be {REL.valid_range()} ({REL.why}), got {rel_level}")
    out: list[Measure] = []
    for text in texts:
        for measure in [text] if isinstance(text, Measure) else map(parse, _split_cli(text)):
            if rel_level is not None and not measure.has("rel") and measure.definition.takes_rel_level:
                measure = measure.with_params(rel=rel_level)
            if measure not in out:
                out.append(measure)
    if not out:
        raise IrwError("no measure given: use -m NAME (see `irw measures`)")
    return out


def _split_cli(text: str) -> list[str]:
    """``-m 'AP,P@10'`` is allowed: split on commas outside parentheses."""
    items, _ = _split_top_level(text, "({", ")}")
    return [i.strip() for i in items if i.strip()]


def parse_condition(text: str) -> tuple[Measure, str]:
    """A condition of a correlation matrix, ``MEASURE:QRELS`` -- a measure name of the
    grammar above at a qrels, e.g. ``AP@100:trec8-d10`` or ``nDCG(gains={1:1,2:3})@10:trec8``:
    split at the first ``:`` outside parentheses and braces (a measure name has none
    elsewhere; a qrels name may hold one)."""
    raw = str(text).strip()
    depth = 0
    for at, ch in enumerate(raw):
        if ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
        elif ch == ":" and depth == 0:
            measure, qrels = raw[:at].strip(), raw[at + 1:].strip()
            if not measure or not qrels:
                break
            return parse(measure), qrels
    raise IrwError(f"cannot read the condition {shown(raw)}: expected MEASURE:QRELS, e.g. "
                   "AP@100:trec8-d10 (a measure at a qrels)")


def macro_arguments(measure: Measure) -> str:
    """The arguments after the qrels with which the measure macro ``measure.<name>`` computes
    ``measure``: its cut-off as ``k`` and each parameter given by its name, e.g.
    ``k := 10, discount := 'jk'`` for nDCG(discount=jk)@10 (empty at the defaults)."""
    args = [] if measure.cutoff is None else [f"k := {_literal(measure.cutoff)}"]
    return ", ".join(args + [f"{key} := {_literal(value)}" for key, value in measure.params])


def _literal(value) -> str:
    """A parameter value (validated) as DuckDB text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return quote_literal(value)
    if isinstance(value, tuple) and value and isinstance(value[0], tuple):  # gains
        return "MAP {" + ", ".join(f"{g}: {float(v)!r}" for g, v in value) + "}"
    if isinstance(value, tuple):
        return "[" + ", ".join(f"{float(v)!r}" for v in value) + "]"
    return repr(value)


check_catalogue()
