"""The C/W/L family of the catalogue (irwarehouse.measures): INST, INSQ, BPM, NERR8-11, SDCG
(cwl_eval's NDCG-k) and the C/W/L forms of P and RBP (cwlP, cwlRBP) as cwl_eval computes them
(Azzopardi, Thomas & Moffat, SIGIR 2019), each the keyword arguments of its
:class:`irwarehouse.measures.MeasureDef` and one template, ``sql/measures/<Name>.sql``, over
what the family shares (``sql/_cwl.sql``).

Gains are in [0, 1], read from the grades as ir_measures maps TREC grades onto cwl_eval's
gains (``min_rel``, ``max_rel``; by default the top grade of the qrels has gain 1, so a binary
qrels gives cwl_eval's own gains); unjudged documents gain 0 and every document costs 1
(cwl_eval's defaults). The value is cwl_eval's expected rate of gain per document (its EU
column, the measure's score in the papers and in ir_measures).
"""

from __future__ import annotations

from .citations import JK, MOFFAT, VANRIJSBERGEN, Citation
from .measure_def import Param

CWL_GAIN = (Param("min_rel", "int", 0, "the grade of gain 0: gain = (g - min_rel) / (max_rel - min_rel), "
                  "g the grade clipped to [min_rel, max_rel]; min_rel >= 0", low=0),
            Param("max_rel", "int", None, "the grade of gain 1 (default: the top grade of the qrels); "
                  "max_rel >= 1; no gain at all if max_rel <= min_rel", low=1),
            Param("max_depth", "int", 1000, "the ranks a user may reach, N (cwl_eval's --max_depth; "
                  "ranks beyond the ranking gain 0); max_depth >= 1", low=1))
CWL_T = Param("T", "float", 1.0, "the gain the user wants; T > 0", low=0.0, low_open=True)
CWL = Citation(("Azzopardi", "Thomas", "Moffat"), "cwl_eval: an evaluation tool for information retrieval",
               "SIGIR", 2019)
NERR = (Citation(("Azzopardi", "Mackenzie", "Moffat"), "[Expected reciprocal rank] is not C/W/L: exploring the "
                 "relationship between expected reciprocal rank and other metrics", "ICTIR", 2021), CWL)


def _cwl(name, description, params=(), **extra) -> dict:
    """The keyword arguments of a MeasureDef of the family: its own parameters, then the gain's
    and the depth's; the top grade of the qrels (max_rel's default) from the engine; its
    ir_measures name its own unless given."""
    extra.setdefault("ir_measures", name + ("@k" if extra.get("cutoff_required") else ""))
    return dict(name=name, description=description + " (C/W/L: expected rate of gain, cwl_eval's EU)",
                params=params + CWL_GAIN, needs=("top_grade",), **extra)


CWL_ENTRIES = (
    _cwl("INST", "INST: C(i) = ((i + 2T - cg(i) - 1) / (i + 2T - cg(i)))^2, cg(i) the gain of ranks 1..i",
         (Param("T", "float", 1.0, "the gain the user wants; T > 0.5 (below it a continuation can be 0 or "
                "above 1)", low=0.5, low_open=True),), cutoff=False,
         paper=(Citation(("Moffat", "Bailey", "Scholer", "Thomas"), "INST: an adaptive metric for information "
                         "retrieval evaluation", "ADCS", 2015), CWL),
         examples=("INST", "INST(T=3)", "INST(T=2,max_rel=1,max_depth=20)", "INST(min_rel=1,max_rel=2)")),
    _cwl("INSQ", "INSQ: C(i) = ((i + 2T - 1) / (i + 2T))^2", (CWL_T,), cutoff=False,
         paper=(Citation(("Moffat", "Scholer", "Thomas"), "Models and metrics: IR evaluation as a user process",
                         "ADCS", 2012), CWL), examples=("INSQ", "INSQ(T=2.5)", "INSQ(max_depth=10)")),
    _cwl("BPM", "Bejeweled player model (static): read until the gain reaches T or k documents", (CWL_T,),
         cutoff_required=True, paper=(Citation(("Zhang", "Liu", "Li", "Zhang", "Xu", "Ma"), "Evaluating web "
                                               "search with a bejeweled player model", "SIGIR", 2017), CWL),
         examples=("BPM@10", "BPM(T=2)@20", "BPM(T=0.5,max_rel=2)@5")),
    _cwl("NERR8", "Nearly expected reciprocal rank, equation 8: C(i) = 1 - g_i for i < k, then 0",
         cutoff_required=True, aliases=("NERReq8",), paper=NERR, examples=("NERR8@10", "NERR8@1", "NERR8(max_rel=2)@20")),
    _cwl("NERR9", "Nearly expected reciprocal rank, equation 9: C(i) = (i / (i + 1)) (1 - g_i) for i < k, "
         "then 0",
         cutoff_required=True, aliases=("NERReq9",), paper=NERR, examples=("NERR9@10", "NERR9(min_rel=1)@5")),
    _cwl("NERR10", "Nearly expected reciprocal rank, equation 10: C(i) = p (1 - g_i)",
         (Param("p", "float", 0.9, "persistence phi; 0 < p < 1", low=0.0, high=1.0, low_open=True,
                high_open=True),), cutoff=False, aliases=("NERReq10",), paper=NERR,
         examples=("NERR10", "NERR10(p=0.5)", "NERR10(p=0.99,max_depth=50)")),
    _cwl("NERR11", "Nearly expected reciprocal rank, equation 11: C(i) = ((i + 2T - 1) / (i + 2T))^2 (1 - g_i)",
         (CWL_T,),
         cutoff=False, aliases=("NERReq11",), paper=NERR, examples=("NERR11", "NERR11(T=3)")),
    _cwl("SDCG", "Scaled DCG: DCG@k of the gains over the DCG@k of k documents of gain 1 (cwl_eval's NDCG-k)",
         cutoff_required=True, paper=(JK, CWL), examples=("SDCG@10", "SDCG@5", "SDCG(max_rel=1)@20")),
    _cwl("cwlP", "Precision as cwl_eval computes it (its P@k): C(i) = 1 for i < k, then 0; the gain of the "
         "first min(k, N) ranks over min(k, N) (graded precision)",
         cutoff_required=True, paper=(VANRIJSBERGEN, CWL),
         ir_measures="P(rel=r)@k of its cwl_eval provider: cwlP(min_rel=r-1,max_rel=r)@k",
         examples=("cwlP@10", "cwlP@1", "cwlP(max_rel=1)@5", "cwlP(min_rel=1,max_depth=20)@20")),
    _cwl("cwlRBP", "Rank-biased precision as cwl_eval computes it (its RBP): C(i) = p; "
         "(1 - p) sum_{i<=N} p^(i-1) g_i / (1 - p^N)",
         (Param("p", "float", 0.9, "persistence phi (cwl_eval's theta); 0 < p < 1", low=0.0, high=1.0,
                low_open=True, high_open=True, always_shown=True),), cutoff=False, paper=(MOFFAT, CWL),
         ir_measures="RBP(rel=r,p=...) of its cwl_eval provider: cwlRBP(p=...,min_rel=r-1,max_rel=r)",
         examples=("cwlRBP", "cwlRBP(p=0.5)", "cwlRBP(p=0.99,max_depth=50)", "cwlRBP(p=0.8,max_rel=1)")),
)
