"""A measure's parameters as the catalogue declares them (irwarehouse.measures): name, kind,
default, valid range and meaning (:class:`Param`), and how a parameter given instead of
another sets it (:class:`Setting`). The parser, ``irw measures``, the measure macros and the
catalogue's checks all read these declarations."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .trec_families import format_number


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
