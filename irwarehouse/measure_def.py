"""The shape of a measure's catalogue entry: :class:`MeasureDef` and its parameters
(:class:`Param`, :class:`Setting`). irwarehouse.measures builds the catalogue from them (and
re-exports them); the families of measures declared in modules of their own
(irwarehouse.measures_diversity) import them from here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .citations import Citation, as_citations
from .judgment_kinds import GRADED as GRADED_KIND, KINDS
from .trec_families import TREC_FAMILIES, format_number

# The parameters the engine itself interprets (relevance threshold, condensed list, gains,
# discount): every other parameter reaches the measure's SQL as ``m.<name>``.
ENGINE_PARAMS = ("rel", "judged_only", "gains", "unlisted", "discount", "base")

# The hooks of sql/evaluate.sql (measures.NEEDS) only DuckDB computes, each with what of
# DuckDB it uses (engine.rendering refuses them on Spark): none, every hook is written with
# the macros of sql/_dialect.sql.
DUCKDB_ONLY: dict[str, str] = {}


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # int | float | bool | choice | gains | floats (a list of numbers: {0.2,0.5})
    default: object
    help: str
    choices: tuple = ()
    low: float | None = None  # the valid range of a number: [low, high], or open where
    high: float | None = None  # low_open / high_open say so
    low_open: bool = False
    high_open: bool = False
    always_shown: bool = False  # part of the canonical name even at its default
    why: str = ""  # said when a value is out of range
    excludes: str = ""  # the parameter this one sets instead (not both in one name)
    requires: str = ""  # the parameter without which this one means nothing
    sets: "Setting | None" = None  # how it sets the parameter it excludes (given: its value)

    def valid_range(self) -> str:
        if self.low is not None and self.high is not None:
            return (f"in {'(' if self.low_open else '['}{format_number(self.low)}, "
                    f"{format_number(self.high)}{')' if self.high_open else ']'}")
        if self.low is not None:
            return f"{'>' if self.low_open else '>='} {format_number(self.low)}"
        return f"{'<' if self.high_open else '<='} {format_number(self.high)}"

    def in_range(self, value: float) -> bool:
        return ((self.low is None or value > self.low or (value == self.low and not self.low_open))
                and (self.high is None or value < self.high
                     or (value == self.high and not self.high_open)))


@dataclass(frozen=True)
class Setting:
    """How a parameter sets the one it excludes (``Param.excludes``, ``Param.sets``) when it
    is given: the value from the parameters ``inputs`` (the setter among them), computed in
    Python by ``compute`` (keyword arguments named as the inputs) and in SQL by ``sql`` (an
    expression with ``{name}`` for each input's SQL value). Measure.get and the measure
    macros (engine.rendering) read it; neither knows any parameter by name."""

    inputs: tuple[str, ...]
    compute: Callable[..., object] = field(compare=False, repr=False)
    sql: str


@dataclass(frozen=True)
class MeasureDef:
    """A measure of the catalogue: what it is and what its SQL (``sql/measures/<name>.sql``)
    needs -- the engine reads these properties and has no branch on a measure's name.

    ``params``: its parameters; each one the engine does not interpret (ENGINE_PARAMS) reaches
    the SQL as ``m.<name>`` and the measure macro as an argument of that name. ``cutoff``:
    it takes ``@k``; ``cutoff_kind`` 'rank' (an integer k) or 'recall' (a recall level in
    [0, ...), IPrec@0.3); ``cutoff_required``: ``@`` must be given.
    ``graded``: it sums gains (the ``gains`` map, or grade as gain), not binary relevance;
    ``rel_binarizes``: for a graded measure, an explicit ``rel=t`` makes its gains binary at t
    (Q keeps its gains and uses ``rel`` for C(i) and R instead); ``cumulative_gain``: its SQL
    uses the running gain sums of the ranking (Q's cg); ``ideal``: it is normalized by the
    ideal ranking; ``needs``: values of NEEDS its SQL uses. ``aliases``: other names that
    parse to it (ir_measures'), ``ir_measures``: its name there as written in docs;
    ``raw_form`` / ``normalized_form``: the measure that differs from it only by a per-topic
    constant (SP for AP; standardization compares them); ``examples``: parameter settings
    the tests evaluate it at (every engine, the measure macros, Spark); ``paper``: where it
    is defined -- a citations.Citation (authors, title, venue, year), several (a tuple), or
    free text; ``citations`` holds them, and ``paper`` then reads as their short forms.
    ``reads``: the kind of judgments it reads (irwarehouse.judgment_kinds.KINDS; 'trec', the
    graded rows of table qrels, which every qrels of a graded kind serves)."""

    name: str
    description: str
    params: tuple[Param, ...]
    cutoff: bool = True
    cutoff_kind: str = "rank"
    cutoff_required: bool = False
    graded: bool = False
    rel_binarizes: bool = True
    cumulative_gain: bool = False
    ideal: bool = False
    needs: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    ir_measures: str = ""
    raw_form: str = ""
    normalized_form: str = ""
    examples: tuple[str, ...] = ()
    paper: "str | Citation | tuple[Citation, ...]" = ""
    reads: str = GRADED_KIND
    cutoff_levels: tuple[float, ...] = ()  # the only recall levels it takes (none: any)
    citations: tuple[Citation, ...] = field(init=False, default=(), compare=False)

    def __post_init__(self):
        citations, text = as_citations(self.paper)
        object.__setattr__(self, "citations", citations)
        object.__setattr__(self, "paper", text)

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    @property
    def takes_rel_level(self) -> bool:
        """Does ``--rel-level`` (trec_eval ``-l``) set its threshold? Binary measures, and
        graded ones whose ``rel`` is not a gain switch (Q); other graded measures keep their
        gains, as trec_eval's ndcg does."""
        return self.param("rel") is not None and (not self.graded or not self.rel_binarizes)

    @property
    def own_params(self) -> tuple[Param, ...]:
        """The parameters that reach its SQL as ``m.<name>`` (not ENGINE_PARAMS)."""
        return tuple(p for p in self.params if p.name not in ENGINE_PARAMS)

    @property
    def trec_eval(self) -> str:
        """Its trec_eval names, from TREC_FAMILIES (e.g. 'map, map_cut_k, gm_map (gm)')."""
        return ", ".join(f.shown for f in TREC_FAMILIES if f.measure == self.name)

    @property
    def on_spark(self) -> bool:
        """Does Spark compute it (none of its hooks is DuckDB's only)?"""
        return not any(n in DUCKDB_ONLY for n in self.needs)

    @property
    def reference(self) -> str:
        """The implementation its values equal: the reference of the kind it reads -- for a
        measure of graded judgments, trec_eval 10.0 where trec_eval has it ('' otherwise:
        its paper defines it)."""
        return KINDS[self.reads].reference if self.trec_eval or self.reads != GRADED_KIND else ""

    @property
    def written(self) -> str:
        """How it is written with its cut-off: AP@k, IPrec@r, RPrec."""
        if not self.cutoff:
            return self.name
        return self.name + ("@r" if self.cutoff_kind == "recall" else "@k")
