"""The measure catalogue as rows: ``irw measures``' listing and the table ``measures`` of
the schema, one row per entry of irwarehouse.measures.CATALOGUE."""

from __future__ import annotations

from .measures import CATALOGUE, Measure, macro_arguments, parse
from .trec_families import format_value


LISTING_COLUMNS = ("name", "description", "parameters", "trec_eval", "ir_measures", "graded",
                   "ideal", "paper", "judgments", "reference")


def listing_rows() -> list[tuple]:
    """``irw measures``: each measure as it is written (``AP@k``), its description, its
    parameters with their defaults, its trec_eval and ir_measures names, graded, ideal,
    paper, the kind of judgments it reads and the reference implementation of that kind."""
    return [(m.written, m.description,
             ", ".join(f"{p.name}={format_value(p.default) if p.default is not None else '-'}"
                       for p in m.params),
             m.trec_eval, m.ir_measures, m.graded, m.ideal, m.paper, m.reads, m.reference)
            for m in CATALOGUE.values()]


CATALOGUE_COLUMNS = ("name", "description", "parameters", "cutoff", "trec_eval", "ir_measures",
                     "graded", "ideal", "paper", "example", "example_arguments", "judgments",
                     "reference")


def catalogue_rows() -> list[tuple]:
    """The rows of the table ``measures`` (CATALOGUE_COLUMNS), one per catalogue entry."""
    rows = []
    for m in CATALOGUE.values():
        params = "; ".join(f"{p.name}={format_value(p.default) if p.default is not None else '-'}: {p.help}" for p in m.params)
        example = parse(m.examples[0]) if m.examples else Measure(m.name)
        rows.append((m.name, m.description, params, m.cutoff, m.trec_eval or None,
                     m.ir_measures or None, m.graded, m.ideal, m.paper or None, str(example),
                     macro_arguments(example), m.reads, m.reference))
    return rows
