"""Kinds of judgments as data: one entry per file format a qrels may be loaded from.

Each :class:`JudgmentKind` says what a line of its file holds (its fields, in order, and
which of them are staged with which type), which detail table keeps those lines as they are
(``qrels_intents``, ``qrels_strata``, ``qrels_prefs``; none for trec's own format), which
fields name one judgment (a second line with the same ones is an error), how its lines
become the graded rows of the table ``qrels`` (topic, docno, rel) that every graded measure,
pool, subset and comparison reads -- an SQL aggregate over a document's lines, or none --
and which judgments it serves: a measure declares the kind it reads
(``MeasureDef.reads``), and a qrels serves the measures of every kind its entry lists.

The loader (``engine.loading.qrels``), the schema and the evaluation read these entries;
no code branches on a kind's name.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import numbers
from .errors import IrwError

GRADED = "trec"  # the kind of the graded rows of table qrels, which most measures read


@dataclass(frozen=True)
class Field:
    """A field of a judgment line: its name (the staged column; '' for a field that is read
    but not kept, such as trec's iteration), its SQL type ('' for text) and, for a number,
    the syntax its text must have (numbers.INTEGER_SYNTAX, ...) and how a problem names it."""

    name: str
    type: str = ""
    syntax: str = ""
    what: str = ""


@dataclass(frozen=True)
class JudgmentKind:
    """One kind of judgments: see the module's docstring.

    ``fields``: the file's fields in order. ``detail``: the table its lines are kept in
    (columns qrels, then ``detail_columns``), or '' when the graded rows are all it holds.
    ``key``: the fields naming one judgment. ``graded``: the SQL aggregate over the lines of
    a (topic, docno) that gives its grade in table qrels ('' : it gives no graded rows).
    ``serves``: the kinds of measure it serves. ``reference``: the tool whose format it is."""

    name: str
    help: str
    fields: tuple[Field, ...]
    detail: str
    detail_columns: tuple[str, ...]
    key: tuple[str, ...]
    graded: str
    serves: tuple[str, ...]
    reference: str
    graded_help: str = ""

    @property
    def layout(self) -> str:
        """The fields as the documentation writes them: ``topic iteration docno rel``."""
        return " ".join(f.name or "iteration" for f in self.fields)

    @property
    def staged(self) -> list[tuple[str, int, str | None, str | None]]:
        """The staged columns (name, field number from 1, SQL type, number syntax) of the
        kept fields, as the staging templates (sql/stage_*.sql) take them."""
        return [(f.name, i, f.type or None, f.syntax or None)
                for i, f in enumerate(self.fields, 1) if f.name]

    @property
    def kept(self) -> tuple[str, ...]:
        """The names of the kept fields."""
        return tuple(f.name for f in self.fields if f.name)

    @property
    def numbers(self) -> list[tuple[int, Field]]:
        """The numeric fields with their field numbers (from 1)."""
        return [(i, f) for i, f in enumerate(self.fields, 1) if f.type]

    @property
    def sql_context(self) -> dict:
        """What the loading templates (sql/load.sql) read of the kind, as plain values, so
        that their renderings are kept between commands (irwarehouse.sql.kept)."""
        return {"name": self.name, "fields": [f.name for f in self.fields], "staged": self.staged,
                "key": list(self.key), "detail": self.detail,
                "detail_columns": list(self.detail_columns), "kept": list(self.kept),
                "graded": self.graded}

    def load_hint(self) -> str:
        return f"irw load qrels FILE --name NAME --format {self.name} ({self.layout})"


_TOPIC, _DOCNO = Field("topic"), Field("docno")
_GRADE = Field("rel", "INTEGER", numbers.INTEGER_SYNTAX, "relevance")

KINDS: dict[str, JudgmentKind] = {k.name: k for k in (
    JudgmentKind(
        "trec", "graded judgments, trec_eval's qrels (the default)",
        (_TOPIC, Field(""), _DOCNO, _GRADE), "", (), ("topic", "docno"), "max(rel)", ("trec",),
        "trec_eval 10.0", "a document's grade as given"),
    JudgmentKind(
        "diversity", "judgments per intent (subtopic) of a topic, ndeval's qrels",
        (_TOPIC, Field("intent"), _DOCNO, _GRADE), "qrels_intents",
        ("topic", "intent", "docno", "rel"), ("topic", "intent", "docno"), "max(rel)",
        ("trec", "diversity"), "TREC's ndeval (pyndeval)",
        "a document's grade is its largest grade over the topic's intents"),
    JudgmentKind(
        "prels", "judgments of a stratified sample of the pool, sample_eval's prels "
        "(rel -1: pooled, not sampled)",
        (_TOPIC, Field(""), _DOCNO, Field("stratum", "INTEGER", numbers.INTEGER_SYNTAX, "stratum"),
         _GRADE), "qrels_strata", ("topic", "docno", "stratum", "rel"), ("topic", "docno"),
        "max(rel)", ("trec", "prels"), "NIST's sample_eval.pl",
        "a document's grade is its rel (-1: in the pool, not assessed)"),
    JudgmentKind(
        "prefs", "preferences within judgment sub-groups, trec_eval's -R prefs file",
        (_TOPIC, Field("jg"), Field("jsg"), _DOCNO,
         Field("rel", "DOUBLE", numbers.DECIMAL_SYNTAX, "preference level")),
        "qrels_prefs", ("topic", "jg", "jsg", "docno", "rel"), ("topic", "jg", "jsg", "docno"),
        "", ("prefs",), "trec_eval 10.0 (-R prefs)",
        "no graded rows: a preference level orders documents within a sub-group only"),
    JudgmentKind(
        "jg", "graded judgments of several judgment groups (users), trec_eval's -R qrels_jg file",
        (_TOPIC, Field("jg"), _DOCNO, _GRADE), "qrels_prefs", ("topic", "jg", "jsg", "docno", "rel"),
        ("topic", "jg", "docno"), "", ("jg", "prefs"), "trec_eval 10.0 (-R qrels_jg)",
        "no graded rows: trec_eval evaluates each judgment group on its own and averages them"),
)}

# The detail tables (each a public table of the schema) and their columns after qrels.
DETAIL_TABLES: dict[str, tuple[str, ...]] = {}
for _kind in KINDS.values():
    if _kind.detail:
        assert DETAIL_TABLES.setdefault(_kind.detail, _kind.detail_columns) == _kind.detail_columns
        assert set(f.name for f in _kind.fields if f.name) <= set(_kind.detail_columns)
    assert set(_kind.key) <= {f.name for f in _kind.fields}
    assert GRADED in _kind.serves or not _kind.graded or _kind.name == GRADED


def kind(name: str) -> JudgmentKind:
    """The entry of a kind given by a user (``--format``); an IrwError listing the kinds."""
    found = KINDS.get(str(name).strip().lower()) if name is not None else KINDS[GRADED]
    if found is None:
        raise IrwError(f"unknown judgment format {name!r}; formats: "
                       + "; ".join(f"{k.name} ({k.layout})" for k in KINDS.values()))
    return found


def serves(held: str | None, reads: str) -> bool:
    """Does a qrels of kind ``held`` (None: trec) serve measures that read ``reads``?"""
    return reads in KINDS.get(held or GRADED, KINDS[GRADED]).serves


def refusal(measure: str, reads: str, qrels: str, held: str | None) -> str:
    """The one line refusing ``measure`` on a qrels that cannot serve it."""
    needed = [k for k in KINDS.values() if reads in k.serves]
    how = " or ".join(f"--format {k.name}" for k in needed)
    return (f"measure {measure} reads {reads} judgments, which qrels {qrels} (loaded as "
            f"{held or GRADED}) does not hold: load them with irw load qrels FILE --name NAME {how}")
