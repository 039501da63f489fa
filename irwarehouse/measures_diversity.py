"""The diversity family: intent-aware measures over judgments per intent (a qrels loaded with
``--format diversity``), each equal to TREC's ndeval (the ``pyndeval`` package) with its
defaults -- alpha = 0.5, beta = 0.5, relevance to an intent at grade >= 1, ndeval's greedy
ideal ranking (ties to the larger docno) and its normalizations. Names as ir_measures writes
them (NRBP is NRBP_IA here: measure macros are named by the catalogue name, and SQL
names ignore case, so NRBP would be nRBP's). irwarehouse.measures adds these entries to the catalogue; their SQL is
``sql/measures/<name>.sql`` over the hooks ``intents`` and ``intent_ideal`` of
``sql/evaluate.sql`` (shared pieces: ``sql/_diversity.sql``)."""

from __future__ import annotations

from .citations import Citation
from .measure_def import MeasureDef, Param

KIND = "diversity"

ALPHA = Param("alpha", "float", 0.5, "redundancy intolerance: a document's gain for an intent is "
              "(1 - alpha)^(documents above it relevant to that intent); 0 <= alpha <= 1",
              low=0.0, high=1.0)
BETA = Param("beta", "float", 0.5, "patience: rank i weighs beta^(i-1); 0 <= beta <= 1",
             low=0.0, high=1.0)

CLARKE_2008 = Citation(("Clarke", "Kolla", "Cormack", "Vechtomova", "Ashkan", "Büttcher", "MacKinnon"),
                       "Novelty and diversity in information retrieval evaluation", "SIGIR", 2008)
CHAPELLE_2009 = Citation(("Chapelle", "Metzler", "Zhang", "Grinspan"),
                         "Expected reciprocal rank for graded relevance", "CIKM", 2009)
CLARKE_2009 = Citation(("Clarke", "Kolla", "Vechtomova"), "An effectiveness measure for ambiguous "
                       "and underspecified queries", "ICTIR", 2009)
AGRAWAL_2009 = Citation(("Agrawal", "Gollapudi", "Halverson", "Ieong"), "Diversifying search results",
                        "WSDM", 2009)
ZHAI_2003 = Citation(("Zhai", "Cohen", "Lafferty"), "Beyond independent relevance: methods and "
                     "evaluation metrics for subtopic retrieval", "SIGIR", 2003)

_INTENTS = ("intents",)
_IDEAL = ("intents", "intent_ideal")

DIVERSITY: tuple[MeasureDef, ...] = (
    MeasureDef("alpha_nDCG", "alpha-nDCG: intent-aware DCG@k (gain sum_j (1-alpha)^c_j, discount "
               "1/log2(i+1)) over that of ndeval's greedy ideal ranking", (ALPHA,),
               cutoff_required=True, needs=_IDEAL, ir_measures="alpha_nDCG@k", paper=CLARKE_2008,
               reads=KIND, examples=("alpha_nDCG@20", "alpha_nDCG@5", "alpha_nDCG(alpha=0.8)@10")),
    MeasureDef("ERR_IA", "Intent-aware expected reciprocal rank: sum over ranks i <= k of the intent-aware gain / i, over that of "
               "a ranking covering every intent at every rank (ndeval's collection-independent "
               "normalization; k = 1: the gain)", (ALPHA,), cutoff_required=True, needs=_INTENTS,
               ir_measures="ERR_IA@k", paper=CHAPELLE_2009, reads=KIND,
               examples=("ERR_IA@20", "ERR_IA@1", "ERR_IA(alpha=0.3)@10")),
    MeasureDef("NRBP_IA", "Novelty- and rank-biased precision (ir_measures' NRBP): (1 - (1-alpha) "
               "beta) / intents x sum of the intent-aware gain x beta^(i-1) over the ranking",
               (ALPHA, BETA), cutoff=False, needs=_INTENTS, aliases=("NRBP",), ir_measures="NRBP",
               paper=CLARKE_2009, reads=KIND, examples=("NRBP_IA", "NRBP(alpha=0.3,beta=0.9)")),
    MeasureDef("nNRBP", "NRBP over the NRBP of ndeval's greedy ideal ranking", (ALPHA, BETA),
               cutoff=False, needs=_IDEAL, ir_measures="nNRBP", raw_form="NRBP_IA", paper=CLARKE_2009,
               reads=KIND, examples=("nNRBP", "nNRBP(alpha=0.7,beta=0.8)")),
    MeasureDef("P_IA", "Intent-aware precision: relevant (document, intent) pairs in the top k "
               "over k x intents", (), cutoff_required=True, needs=_INTENTS, ir_measures="P_IA@k",
               paper=AGRAWAL_2009, reads=KIND, examples=("P_IA@20", "P_IA@5")),
    MeasureDef("AP_IA", "Intent-aware AP (ndeval's MAP-IA): the AP of each intent averaged over "
               "the topic's intents", (), cutoff=False, needs=_INTENTS, aliases=("MAP_IA",),
               ir_measures="AP_IA (MAP_IA)", paper=AGRAWAL_2009, reads=KIND, examples=("AP_IA",)),
    MeasureDef("StRecall", "Subtopic recall: the intents covered by the top k documents over the "
               "topic's intents", (), cutoff_required=True, needs=_INTENTS,
               ir_measures="StRecall@k", paper=ZHAI_2003, reads=KIND,
               examples=("StRecall@20", "StRecall@5")),
)
