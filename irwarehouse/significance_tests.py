"""The statistical tests and the corrections for multiple comparisons irw offers: a registry.

A test is one function of :mod:`irwarehouse.stats` (over a runs x topics matrix, all run
pairs at once) and one entry here: its label (in reports and captions), its help (in the
command line's help), the interval of the mean difference it reports at ``--level``, and,
for a Monte Carlo test, the default number of samples B. The
command line, the report and :func:`irwarehouse.significance.run_test` read this table; a new
test is a function and an entry. This module imports nothing heavy, so that the command
line's help can list the tests without loading numpy.

A correction for multiple comparisons is likewise one function of
:mod:`irwarehouse.stats.corrections` (over the family of defined p-values) and one
:class:`Correction` entry of :data:`CORRECTIONS`: its name (``--correction``), its label (in
reports and captions) and its help. ``none`` is an entry too, whose function is the identity:
nothing branches on a correction's name.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import IrwError


@dataclass(frozen=True)
class TestSpec:
    name: str
    label: str
    help: str
    function: str  # the name of the function in irwarehouse.stats
    interval: str  # the interval of the mean difference it gives (ci_low, ci_high), in words
    default_B: int | None = None  # Monte Carlo tests: samples when -B is not given
    takes_alpha: bool = False  # the test reports something at the level alpha
    estimated_difference: bool = False  # its result gives the estimated difference required


TESTS: dict[str, TestSpec] = {t.name: t for t in [
    TestSpec("t", "paired t-test", "paired two-tailed t-test", "paired_t", "t-interval"),
    TestSpec("bootstrap", "paired bootstrap test",
             "paired bootstrap (Sakai 2006), with the estimated difference required",
             "paired_bootstrap", "bootstrap percentile interval", default_B=1000, takes_alpha=True,
             estimated_difference=True),
    TestSpec("randomization", "paired randomization test", "paired sign-flip permutation test",
             "randomization", "the randomization test inverted (exact)", default_B=10000),
    TestSpec("wilcoxon", "Wilcoxon signed-rank test", "Wilcoxon signed-rank test", "wilcoxon",
             "t-interval (the test has no interval of the mean)"),
    TestSpec("tukey", "randomized Tukey HSD test",
             "randomized Tukey HSD (Carterette 2012): family-wise error over all pairs",
             "tukey_hsd", "simultaneous interval of the randomized Tukey HSD (all pairs at once)",
             default_B=10000),
]}

class Correction(str):
    """A correction for multiple comparisons. Where a text is expected (a caption, a page) an
    entry reads as its label; ``name``, ``help`` and ``function`` (the name of the function in
    :mod:`irwarehouse.stats.corrections` that adjusts a family of p-values) are attributes."""

    name: str
    label: str
    help: str
    function: str

    def __new__(cls, name: str, label: str, help: str, function: str) -> "Correction":
        entry = super().__new__(cls, label)
        entry.name, entry.label, entry.help, entry.function = name, label, help, function
        return entry

    @property
    def adjusts(self) -> bool:
        """Whether the correction changes p-values (every entry but the identity)."""
        return self.function != "identity"


CORRECTIONS: dict[str, Correction] = {c.name: c for c in [
    Correction("none", "no correction for multiple comparisons", "no correction", "identity"),
    Correction("bonferroni", "Bonferroni correction", "Bonferroni: min(1, m p)", "bonferroni"),
    Correction("holm", "Holm correction", "Holm's step-down, family-wise error", "holm"),
    Correction("bh", "Benjamini-Hochberg correction",
               "Benjamini-Hochberg step-up, false discovery rate", "benjamini_hochberg"),
]}

MIN_B = 100


def correction(name: str, what: str = "correction") -> Correction:
    """The registry's entry of a correction's name, or an IrwError naming the valid ones."""
    if name not in CORRECTIONS:
        raise IrwError(f"unknown {what} {name!r}; valid: {', '.join(CORRECTIONS)}")
    return CORRECTIONS[name]


def names() -> str:
    """The tests' names, for help texts: ``t | bootstrap | ...``."""
    return " | ".join(TESTS)


def intervals() -> str:
    """Which interval of the difference each test gives, for help texts."""
    return "; ".join(f"{t.name}: {t.interval}" for t in TESTS.values())


def default_samples() -> str:
    """What -B defaults to, in words (for help texts)."""
    return ", ".join(f"{t.default_B} {t.name}" for t in TESTS.values() if t.default_B)
