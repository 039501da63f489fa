"""trec_eval 10.0's measures as the catalogue (irwarehouse.measures) knows them: each family
of its measure table with the catalogue measure computing it, its parameters and how it
prints and aggregates (:data:`TREC_FAMILIES`, in trec_eval's print order), its nicknames, the
measures irw does not compute, and how the catalogue writes values (:func:`format_value`).
irwarehouse.measures re-exports all of it; irwarehouse.trec_names reads trec_eval's ``-m``
arguments with it.
"""

from __future__ import annotations

from dataclasses import dataclass


def format_value(value) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, tuple):
        if value and isinstance(value[0], tuple):  # gains
            return "{" + ",".join(f"{g}:{format_number(v)}" for g, v in value) + "}"
        return "{" + ",".join(format_number(v) for v in value) + "}"  # a list of numbers
    return str(value)


def format_number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


@dataclass(frozen=True)
class TrecFamily:
    """A measure of trec_eval 10.0 (its measure table, measures.c, and its m_*.c file).

    ``measure``: the catalogue measure giving its per-topic value ('' for runid, num_q and
    relstring, which the trec_eval command computes) with the parameters ``fixed``;
    ``takes``: what its ``-m name.params`` are -- 'cutoffs' (integer cut-offs: ``@k``),
    'levels' (decimal cut-offs, printed %3.2f: the cut-off ``@r``, or the parameter
    ``level_param``), 'pairs' (name=value: integer names are gains, others the measure's
    parameters named in ``value_params``), 'values' (decimals given to ``value_params`` in
    order; '*' before a name takes them all as one list) or '' (none: parameters are
    ignored); ``defaults`` its default
    cut-offs or values. ``aggregate`` forms the ``all`` line ('mean'; 'sum'; 'gm', trec_eval's
    exp(mean(log(max(x, 1e-5)))); 'count', the topics; 'none'); ``value_kind`` how a value
    prints ('float' %6.4f, 'long' %ld, 'string'); ``per_query`` / ``summary``: whether the
    per-topic lines and the ``all`` line are printed."""

    name: str
    measure: str = ""
    fixed: tuple = ()
    takes: str = ""
    defaults: tuple = ()
    level_param: str = ""
    value_params: tuple[str, ...] = ()
    aggregate: str = "mean"
    value_kind: str = "float"
    per_query: bool = True
    summary: bool = True

    @property
    def shown(self) -> str:
        """How ``irw measures`` names it: 'P_k', 'map', 'gm_map (gm)', 'rbp (p=0.9)'."""
        text = self.name + ("_k" if self.takes == "cutoffs" else "_r" if self.takes == "levels" else "")
        notes = [f"{k}={format_value(v)}" for k, v in self.fixed]
        if self.aggregate == "gm":
            notes.append("gm")
        return text + (f" ({', '.join(notes)})" if notes else "")


_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)

# trec_eval 10.0's preference measures (-R prefs, -R qrels_prefs), each a catalogue measure of
# the same name reading preference judgments (sql/evaluate_prefs.sql), in its print order.
# "fulfilled": a preferred document a ranked above b, or retrieved when b is not.
PREFS_MEASURES: tuple[tuple[str, str], ...] = (
    ("prefs_num_prefs_poss", "Preferences of the topic's judgment groups, retrieved or not"),
    ("prefs_num_prefs_ful", "Preferences fulfilled (a retrieved above b, or a retrieved and b not)"),
    ("prefs_num_prefs_ful_ret", "Preferences fulfilled with both documents retrieved"),
    ("prefs_simp", "Preferences fulfilled over preferences possible (neither retrieved: not fulfilled)"),
    ("prefs_pair", "Over the document pairs a group orders: the share of groups preferring the "
                   "higher ranked one (0 if neither is retrieved), averaged"),
    ("prefs_avgjg", "Preferences fulfilled over possible per judgment group, averaged over the groups"),
    ("prefs_avgjg_Rnonrel", "prefs_avgjg with each group's non-relevant documents (level 0) "
                            "counted as its relevant ones, R"),
    ("prefs_simp_ret", "prefs_simp of the preferences with both documents retrieved"),
    ("prefs_pair_ret", "prefs_pair of the pairs with both documents retrieved"),
    ("prefs_avgjg_ret", "prefs_avgjg of the preferences with both documents retrieved"),
    ("prefs_avgjg_Rnonrel_ret", "prefs_avgjg_Rnonrel of the retrieved documents"),
    ("prefs_simp_imp", "prefs_simp of the preferences with a document retrieved"),
    ("prefs_pair_imp", "prefs_pair of the pairs with a document retrieved"),
    ("prefs_avgjg_imp", "prefs_avgjg of the preferences with a document retrieved"),
)
_TENTHS = tuple(i / 10 for i in range(11))

# trec_eval 10.0's measures in the order it prints them (its measure table), less those of
# preference and judgment-group files.
TREC_FAMILIES: tuple[TrecFamily, ...] = (
    TrecFamily("runid", aggregate="none", value_kind="string", per_query=False),
    TrecFamily("num_q", aggregate="count", value_kind="long", per_query=False),
    TrecFamily("num_ret", "NumRet", aggregate="sum", value_kind="long"),
    TrecFamily("num_rel", "NumRel", aggregate="sum", value_kind="long"),
    TrecFamily("num_rel_ret", "NumRelRet", aggregate="sum", value_kind="long"),
    TrecFamily("map", "AP"),
    TrecFamily("gm_map", "AP", aggregate="gm", per_query=False),
    TrecFamily("Rprec", "RPrec"),
    TrecFamily("bpref", "Bpref"),
    TrecFamily("recip_rank", "RR"),
    TrecFamily("iprec_at_recall", "IPrec", takes="levels", defaults=_TENTHS),
    TrecFamily("P", "P", takes="cutoffs", defaults=_CUTS),
    TrecFamily("relstring", takes="values", defaults=(10.0,), value_params=("length",),
               aggregate="none", value_kind="string", summary=False),
    TrecFamily("recall", "R", takes="cutoffs", defaults=_CUTS),
    TrecFamily("infAP", "infAP"),
    TrecFamily("gm_bpref", "Bpref", aggregate="gm", per_query=False),
    TrecFamily("Rprec_mult", "RPrec", takes="levels", level_param="mult",
               defaults=(0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)),
    TrecFamily("utility", "Utility", takes="values", defaults=(1.0, -1.0, 0.0, 0.0),
               value_params=("a", "b", "c", "d")),
    TrecFamily("11pt_avg", "IPrecAvg", takes="values", defaults=_TENTHS, value_params=("*recalls",)),
    TrecFamily("binG", "binG"),
    TrecFamily("G", "G", takes="pairs"),
    TrecFamily("dcg", "DCG", takes="pairs"),
    TrecFamily("ideal_dcg", "IDCG", takes="pairs"),
    TrecFamily("ndcg", "nDCG", takes="pairs"),
    TrecFamily("ndcg_rel", "nDCGRel", takes="pairs"),
    TrecFamily("Rndcg", "RnDCG", takes="pairs"),
    TrecFamily("ndcg_cut", "nDCG", takes="cutoffs", defaults=_CUTS),
    TrecFamily("map_cut", "AP", takes="cutoffs", defaults=_CUTS),
    TrecFamily("relative_P", "RelP", takes="cutoffs", defaults=_CUTS),
    TrecFamily("success", "Success", takes="cutoffs", defaults=(1, 5, 10)),
    TrecFamily("set_P", "P"),
    TrecFamily("set_relative_P", "RelP"),
    TrecFamily("set_recall", "R"),
    TrecFamily("set_map", "SetAP"),
    TrecFamily("set_F", "SetF", takes="values", defaults=(1.0,), value_params=("beta",)),
    TrecFamily("num_nonrel_judged_ret", "NumNonRelJudgedRet", aggregate="sum", value_kind="long"),
    *(TrecFamily(name, name, **({"aggregate": "sum", "value_kind": "long"} if name.startswith("prefs_num")
                                else {})) for name, _ in PREFS_MEASURES),
    # -R qrels_jg: computed on each judgment group's judgments, averaged over the groups
    TrecFamily("map_avgjg", "AP"),
    TrecFamily("P_avgjg", "P", takes="cutoffs", defaults=_CUTS),
    TrecFamily("Rprec_mult_avgjg", "RPrec", takes="levels", level_param="mult",
               defaults=(0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)),
    TrecFamily("yaap", "YAAP"),
    TrecFamily("rbp", "RBP", fixed=(("p", 0.9),), takes="pairs", value_params=("p",)),
    TrecFamily("rbp_resid", "RBPres", fixed=(("p", 0.9), ("zero_if_judged", True)), takes="pairs",
               value_params=("p",)),
    TrecFamily("unj", "Unjudged", takes="cutoffs", defaults=(5, 10, 20)),
)

# trec_eval's nicknames for lists of its measures (measures.c).
TREC_NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
                 "bpref", "recip_rank", "iprec_at_recall", "P"),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F"),
    "all_trec": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
                 "bpref", "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "unj", "rbp",
                 "rbp_resid", "infAP", "gm_bpref", "utility", "11pt_avg", "ndcg", "relative_P",
                 "Rprec_mult", "success", "map_cut", "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G",
                 "set_P", "set_recall", "set_relative_P", "set_map", "set_F", "num_nonrel_judged_ret"),
}
TREC_NICKNAMES["all_prefs"] = ("runid", "num_q", *(name for name, _ in PREFS_MEASURES))
TREC_NICKNAMES["prefs"] = ("runid", "num_q", *(name for name, _ in PREFS_MEASURES[:6]))
# The families of judgment-group files (trec_eval -R qrels_jg): their catalogue measure is
# computed on the judgments of each judgment group of a topic, and averaged over the groups.
BY_JUDGMENT_GROUP = ("map_avgjg", "P_avgjg", "Rprec_mult_avgjg")
TREC_NICKNAMES["qrels_jg"] = ("runid", "num_q", *BY_JUDGMENT_GROUP)
# trec_eval measures irw does not compute, and why.
TREC_UNSUPPORTED: dict[str, str] = {}
TREC_AGGREGATES = ("mean", "sum", "gm", "count", "none")
TREC_VALUE_KINDS = ("float", "long", "string")
