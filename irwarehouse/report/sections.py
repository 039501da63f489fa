"""What the pages of ``irw report`` share: their section tables (:class:`Sections`), the
text naming a significance test, the superscripts of significance marks, and the measures a
report is asked for."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .. import pages
from ..errors import IrwError
from ..measures import Measure, parse_all
from ..significance_tests import CORRECTIONS, TESTS

FORMATS = ("html", "latex", "markdown")
SMALL = 26  # up to this many runs a page shows its long tables and figures unfolded
TOP = 10  # with more than SMALL runs, the ranked table's first screen: this many, and the highlighted
TIED = 8  # the runs named in the summary's "not significantly different from the best" (and how many more)
AUTO_CORRECTION_RUNS = 10  # beyond this many runs (45 pairs), Holm's correction by default
RBO_P = 0.9  # the persistence of the RBO of the pages' correlations (irw correlate's default)


@dataclass(frozen=True)
class Sections:
    """A page's sections in order: each ``(key, heading, data)``, its body the template
    ``<folder>/<key>.html`` (under ``irwarehouse/templates``) rendered with what ``data``
    returns for the page's data (a :class:`~irwarehouse.report.Report` or
    :class:`~irwarehouse.report.JudgesReport`) as ``d``. A section is added by one template,
    one function and one entry."""

    folder: str
    entries: tuple[tuple[str, str, Callable[[Any], dict]], ...]

    @property
    def titles(self) -> dict[str, str]:
        """Each section's heading by its key (the anchor), in page order."""
        return {key: title for key, title, _ in self.entries}

    def page(self, source, title: str, meta: list[str], made_by: str) -> str:
        """The page of ``source``: ``title``, the ``meta`` line, every section."""
        sections = [pages.Section(key, heading, f"{self.folder}/{key}.html", data(source))
                    for key, heading, data in self.entries]
        return pages.page(title, meta, sections, made_by=made_by)


def default_correction(correction: str | None, n_runs: int) -> str:
    """The correction of a report's run pairs: ``correction`` when given; else Holm's when
    there are more than :data:`AUTO_CORRECTION_RUNS` runs (more than 45 pairs: at α = 0.05,
    more than two pairs of equal runs would be expected to test significant), none below."""
    if correction is not None:
        return correction
    return "holm" if n_runs > AUTO_CORRECTION_RUNS else "none"


def correction_text(correction: str, chosen: bool, n_runs: int, unit: str = "run") -> str:
    """The correction as a page's subtitle names it; when it was ``chosen`` by
    :func:`default_correction` (not asked for), why, and how to turn it off."""
    entry = CORRECTIONS[correction]
    text = entry.label
    if chosen and entry.adjusts:
        pairs = n_runs * (n_runs - 1) // 2
        text += (f" (the default with more than {AUTO_CORRECTION_RUNS} {unit}s: {pairs:,} pairs; "
                 "--correction none for none)")
    return text


def test_text(test: str, B: int | None, seed: int) -> str:
    """The significance test as a page names it, with its samples and seed when it draws
    them."""
    return TESTS[test].label + (f" (B = {B}, seed {seed})" if B is not None else "")


def mark_list(marks: list[str], numbered: bool) -> str:
    """The superscript of a cell: letters run together (``bde``); numbers comma-separated,
    three or more consecutive ones as a range (``1–3,5``)."""
    if not numbered:
        return "".join(marks)
    nums = [int(m) for m in marks]
    parts, k = [], 0
    while k < len(nums):
        end = k
        while end + 1 < len(nums) and nums[end + 1] == nums[end] + 1:
            end += 1
        if end - k >= 2:
            parts.append(f"{nums[k]}–{nums[end]}")
        else:
            parts.extend(str(n) for n in nums[k:end + 1])
        k = end + 1
    return ",".join(parts)


def parse_measures(measures) -> list[Measure]:
    """The measures of a report (names or :class:`Measure`, one or several), each once, in
    order; at least one."""
    parsed = []
    for m in [measures] if isinstance(measures, (str, Measure)) else measures:
        parsed.extend([m] if isinstance(m, Measure) else parse_all([m]))
    parsed = list({str(m): m for m in parsed}.values())
    if not parsed:
        raise IrwError("a report needs at least one measure (-m)")
    return parsed
