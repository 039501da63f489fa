"""The syntax of numbers in input files and measure names (README, "Input files").

Rank and grade are integers, a score is a decimal number, optionally in exponent notation.
Nothing else: no spaces, no ``_`` separators, no hexadecimal, no ``inf`` or ``nan``. The
loader's SQL staging, its Python locator and the measure parser all use these expressions.
A number is checked against its range before it is converted, whatever its length.
"""

from __future__ import annotations

import math
import re

INTEGER_SYNTAX = r"[+-]?[0-9]+"
DECIMAL_SYNTAX = r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?"
INTEGER = re.compile(INTEGER_SYNTAX)
DECIMAL = re.compile(DECIMAL_SYNTAX)
MAX_DIGITS = 25  # an integer of more digits is out of every range irw has (2**63 has 19)
MAX_INT = 2**31 - 1  # grades, thresholds and cut-offs are SQL INTEGERs


def integer(text: str) -> int | None:
    """An integer in the syntax (None otherwise); one of more than MAX_DIGITS digits is
    returned as +/-2**63, beyond every range, without converting it."""
    text = text.strip()
    if not INTEGER.fullmatch(text):
        return None
    if len(text.lstrip("+-").lstrip("0")) > MAX_DIGITS:
        return -2**63 if text.startswith("-") else 2**63
    return int(text)


def decimal(text: str) -> float | None:
    """A finite decimal number in the syntax (optionally in exponent notation); None
    otherwise."""
    text = text.strip()
    value = float(text) if DECIMAL.fullmatch(text) else None
    return value if value is not None and math.isfinite(value) else None
