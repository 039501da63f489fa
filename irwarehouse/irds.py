"""Judgments read through ir_datasets: a source ``irds:DATASET_ID`` wherever a qrels file is
taken (``irw load qrels``, ``irw eval QRELS RUN...``, the Python API).

ir_datasets (an optional dependency, ``pip install 'irwarehouse[irds]'``) gives a dataset's
qrels as named tuples whose class says what they hold. Each class maps to a judgment kind
(irwarehouse.judgment_kinds) by the fields it has -- one entry of :data:`SHAPES` per shape,
the first that fits -- and its records are written, in that kind's file layout, to a file
in a private temporary directory, which the one loader then reads and checks like any
other file: a bad record is named by the source and its line (the record's position).
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator

from . import files
from .errors import IrwError, note
from .judgment_kinds import KINDS, JudgmentKind

PREFIX = "irds:"


@dataclass(frozen=True)
class Shape:
    """How records with the fields ``fields`` (ir_datasets' names) become lines of the
    judgment kind ``kind``; ``note``: what a user should know of the mapping ('' none)."""

    fields: tuple[str, ...]
    kind: str
    line: Callable[[object], tuple]
    note: str = ""


# The first shape whose fields the qrels class has decides; the last fits every qrels.
SHAPES: tuple[Shape, ...] = (
    Shape(("query_id", "subtopic_id", "doc_id", "relevance"), "diversity",
          lambda q: (q.query_id, q.subtopic_id, q.doc_id, q.relevance)),
    Shape(("query_id", "doc_id", "relevance", "method", "iprob"), "trec",
          lambda q: (q.query_id, "0", q.doc_id, q.relevance),
          "statAP judgments (a sampling method and an inclusion probability per document): "
          "loaded as graded judgments, the inclusion probabilities left out"),
    Shape(("query_id", "doc_id", "relevance"), "trec",
          lambda q: (q.query_id, getattr(q, "iteration", "0") or "0", q.doc_id, q.relevance)),
)


def is_source(source) -> bool:
    """Is ``source`` an ir_datasets source (``irds:DATASET_ID``)?"""
    return isinstance(source, str) and source.startswith(PREFIX)


def dataset_id(source: str) -> str:
    return source[len(PREFIX):].strip()


def _dataset(source: str):
    """The ir_datasets dataset of ``source``, with qrels; an IrwError naming the source."""
    ident = dataset_id(source)
    if not ident:
        raise IrwError(f"{source}: name a dataset after irds: (e.g. irds:msmarco-passage/dev/small)")
    try:
        import ir_datasets
    except ImportError:
        raise IrwError(f"{source}: reading judgments through ir_datasets needs it installed: "
                       "pip install 'irwarehouse[irds]'") from None
    try:
        found = ir_datasets.load(ident)
    except KeyError:
        raise IrwError(f"{source}: ir_datasets knows no dataset {ident!r} "
                       "(its catalogue: https://ir-datasets.com)") from None
    if not found.has_qrels():
        raise IrwError(f"{source}: the dataset has no qrels (relevance judgments); "
                       "a dataset below it may have them (e.g. .../dev, .../test)")
    return found


def shape_of(qrels_class) -> Shape:
    """The entry of :data:`SHAPES` for an ir_datasets qrels class; an IrwError when its
    records are not judgments irw reads."""
    have = set(getattr(qrels_class, "_fields", ()))
    for shape in SHAPES:
        if set(shape.fields) <= have:
            return shape
    raise IrwError(f"qrels records of class {qrels_class.__name__} "
                   f"(fields {', '.join(sorted(have)) or 'none'}) are not judgments irw reads: "
                   "they need query_id, doc_id and relevance")


def kind_of(source: str) -> JudgmentKind:
    """The judgment kind the qrels of ``source`` are loaded as."""
    return KINDS[shape_of(_dataset(source).qrels_cls()).kind]


@contextmanager
def qrels_file(source: str, name_in_errors: Callable[[IrwError, str, str], None]) -> Iterator[str]:
    """The qrels of ``source`` written to a file of its kind's layout in a private temporary
    directory (removed afterwards); an IrwError raised inside names ``source`` instead of the
    file (``name_in_errors(exc, path, source)`` renames it)."""
    dataset = _dataset(source)
    shape = shape_of(dataset.qrels_cls())
    tmp = files.temp_dir("irds")
    path = os.path.join(tmp, "qrels")
    try:
        _write(dataset, shape, path, source)
        if shape.note:
            note(f"{source}: {shape.note}")
        yield path
    except IrwError as exc:
        name_in_errors(exc, path, source)
        raise
    finally:
        files.remove_temp(tmp)


def _write(dataset, shape: Shape, path: str, source: str) -> None:
    """Write the dataset's qrels records as lines; a field with white space in it cannot be
    a field of a line, and is named with its record."""
    try:
        with open(path, "w", encoding="utf-8", newline="\n") as out:
            for number, record in enumerate(dataset.qrels_iter(), 1):
                fields = [str(v) for v in shape.line(record)]
                if any(not f or any(c.isspace() for c in f) for f in fields):
                    raise IrwError(f"{source}, record {number}: a field is empty or holds white "
                                   f"space ({' | '.join(fields)})")
                out.write(" ".join(fields) + "\n")
    except IrwError:
        raise
    except Exception as exc:  # a download refused, a missing file: ir_datasets' own words
        raise IrwError(f"{source}: ir_datasets could not give the qrels: "
                       f"{type(exc).__name__}: {exc}".rstrip(": ")) from None
