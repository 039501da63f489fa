"""Where the catalogue's measures come from, as structured citations, and the long
explanation of a measure that ``irw measures NAME`` prints (as ``trec_eval -h -m NAME``
does): its history, definition, parameters, reference implementation and other names.

A catalogue entry (irwarehouse.measures.MeasureDef) names its sources with ``paper``: a
:class:`Citation`, several (a tuple), or a free-text string; the ``measures`` table and
``irw measures`` show each citation's short form (``Järvelin & Kekäläinen, TOIS 2002``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Citation:
    """A source of a measure: ``authors`` (family names, in order; none for software),
    ``title``, ``venue`` (a journal, conference, publisher or software's maker), ``year``,
    and ``note``: what of it the measure takes (``Q``, ``condensed lists``)."""

    authors: tuple[str, ...]
    title: str
    venue: str
    year: int | None = None
    note: str = ""

    @property
    def short(self) -> str:
        """``Järvelin & Kekäläinen, TOIS 2002``; software: ``trec_eval 9.0 (experimental)``."""
        if not self.authors:
            return self.title + (f" ({self.note})" if self.note else "")
        names = (self.authors[0] if len(self.authors) == 1 else
                 ", ".join(self.authors[:-1]) + " & " + self.authors[-1])
        where = " ".join(str(x) for x in (self.venue, self.year) if x)
        return f"{names}, {where}" + (f" ({self.note})" if self.note else "")

    @property
    def full(self) -> str:
        """The reference as a bibliography prints it: ``Järvelin, Kekäläinen. Cumulated
        gain-based evaluation of IR techniques. TOIS, 2002.``"""
        where = ", ".join(str(x) for x in (self.venue, self.year) if x)
        return ". ".join(p for p in (", ".join(self.authors), self.title, where) if p) + "." + (
            f" ({self.note})" if self.note else "")


def as_citations(paper) -> tuple[tuple[Citation, ...], str]:
    """A catalogue entry's ``paper`` (a Citation, a tuple of them, or free text): its
    citations and the short text shown for them."""
    if isinstance(paper, Citation):
        paper = (paper,)
    if isinstance(paper, tuple):
        return paper, "; ".join(c.short for c in paper)
    return (), str(paper or "")


TREC = Citation((), "trec_eval", "NIST")
JK = Citation(("Järvelin", "Kekäläinen"), "Cumulated gain-based evaluation of IR techniques",
              "TOIS", 2002)
MOFFAT = Citation(("Moffat", "Zobel"), "Rank-biased precision for measurement of retrieval "
                  "effectiveness", "TOIS", 2008)
SAKAI = (Citation(("Sakai",), "New performance metrics based on multigrade relevance: their "
                  "application to question answering", "NTCIR-4", 2004, "Q"),
         Citation(("Sakai",), "Alternatives to bpref", "SIGIR", 2007, "condensed lists"))
WEBBER = Citation(("Webber", "Moffat", "Zobel"), "The effect of pooling and evaluation depth on "
                  "metric stability", "EVIA", 2010)
BUCKLEY = Citation(("Buckley", "Voorhees"), "Retrieval system evaluation",
                   "in TREC: Experiment and Evaluation in IR, MIT Press", 2005)
SALTON = Citation(("Salton", "McGill"), "Introduction to Modern Information Retrieval",
                  "McGraw-Hill", 1983, "interpolated precision")
VANRIJSBERGEN = Citation(("van Rijsbergen",), "Information Retrieval", "Butterworths", 1979)
KANTOR = Citation(("Kantor", "Voorhees"), "The TREC-5 confusion track: comparing retrieval "
                  "methods for scanned text", "Information Retrieval", 2000)
SAKAI_KANDO = Citation(("Sakai", "Kando"), "On information retrieval metrics designed for "
                       "evaluation with incomplete relevance assessments", "IRJ", 2008)
BPREF = Citation(("Buckley", "Voorhees"), "Retrieval evaluation with incomplete information",
                 "SIGIR", 2004)
UNCERTAINTY = Citation(("Moffat", "Scholer", "Yang"), "Estimating measurement uncertainty for "
                       "information retrieval effectiveness metrics", "JDIQ", 2018)
INFAP = Citation(("Yilmaz", "Aslam"), "Estimating average precision with incomplete and "
                 "imperfect judgments", "CIKM", 2006)
XINFAP = Citation(("Yilmaz", "Kanoulas", "Aslam"), "A simple and efficient sampling method for "
                  "estimating AP and NDCG", "SIGIR", 2008)
TREC_EVAL_10 = Citation((), "trec_eval 10.0", "NIST", note="unj")
TREC_EVAL_9 = Citation((), "trec_eval 9.0", "NIST", 2008, "experimental")


def explain(m, format_value=str) -> str:
    """The long explanation of the catalogue entry ``m`` (a MeasureDef), as ``trec_eval -h
    -m NAME`` gives one: history, definition, parameters with defaults and ranges, the
    reference implementation, and its trec_eval and ir_measures names."""
    lines = [f"{m.written}: {m.description}", "", "History:"]
    dated = sorted(m.citations, key=lambda c: c.year or 0)
    lines += [f"    {c.year or '-'}  {c.full}" for c in dated] or [f"    {m.paper or '-'}"]
    lines += ["", "Definition:", f"    {m.description}."]
    kind = ("graded (gains per grade)" if m.graded else
            "binary (relevant: grade >= rel)" if m.param("rel") else "binary (relevant: grade >= 1)")
    lines.append(f"    {kind}; reads {m.reads} judgments" + ("; normalized by the ideal ranking" if m.ideal else "")
                 + ("; cut-off @r is a recall level" if m.cutoff_kind == "recall" else
                    "; cut-off @k: the top k documents" if m.cutoff else "; no cut-off"))
    if m.raw_form or m.normalized_form:
        lines.append(f"    differs by a per-topic constant from {m.raw_form or m.normalized_form}")
    lines += ["", "Parameters:"]
    for p in m.params:
        default = format_value(p.default) if p.default is not None else "-"
        rng = f"; {p.valid_range()}" if p.low is not None or p.high is not None else (
            f"; one of {', '.join(p.choices)}" if p.choices else "")
        lines.append(f"    {p.name} (default {default}{rng}): {p.help}")
    if not m.params:
        lines.append("    none")
    where = (f"every engine, the SQL macro measure.{m.name}, Spark" if m.on_spark else
             f"DuckDB: the engine and the SQL macro measure.{m.name}; not Spark")
    lines += ["", "Reference implementation:", f"    sql/measures/{m.name}.sql ({where})"]
    if m.reference and not m.trec_eval:
        lines.append(f"    equal to {m.reference}; the tests compare them per topic")
    if m.trec_eval:
        lines.append(f"    trec_eval 10.0's C code computes it as {m.trec_eval}; the tests compare them "
                     "per topic")
    lines += ["", "Other names:", f"    trec_eval: {m.trec_eval or '-'}",
              f"    ir_measures: {m.ir_measures or '-'}"]
    if m.aliases:
        lines.append(f"    aliases: {', '.join(m.aliases)}")
    lines += ["", "Examples:", "    " + ", ".join(m.examples)]
    return "\n".join(lines) + "\n"
