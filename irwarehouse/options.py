"""Option sets that several doors share, declared once: the command line builds one from its
options, the Python API from its keyword arguments, Spark takes the same, and the analysis
receives it whole.

:class:`RankingOptions` are those of ``irw qrels rankings`` (Warehouse.compare_rankings,
SparkWarehouse.compare_rankings, irwarehouse.judges), checked by
``irwarehouse.judges.check_options``.

:data:`TIE_POLICIES` are the tie policies (SPEC section 2, "Ties"): how the documents of a
ranking that its order does not tell apart (equal scores) are ranked when a run is
evaluated -- ``--ties`` of ``irw eval``, the statistics and the report, ``ties=`` of the
Python API and Spark. Each is data the engine's SQL reads (sql/_ranking.sql, tie_ranked),
never a branch over its name.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from .errors import IrwError


@dataclass(frozen=True)
class RankingOptions:
    """Two judgment sets as rankings of the runs: ``what`` table (runs | groups |
    correlation | decisions); ``by`` the metadata column grouping the runs; ``topics`` the
    topic policy; the significance decisions' ``test``, ``correction``, ``alpha``, ``B``
    and ``seed``; ``top_k`` and ``rbo_p`` of the correlations; ``permutations`` and
    ``bias_correction`` of the groups' permutation test."""

    what: str = "runs"
    by: str = "team"
    topics: str = "qrels"
    test: str = "t"
    correction: str = "none"
    alpha: float = 0.05
    B: int | None = None
    seed: int = 0
    top_k: int = 10
    rbo_p: float = 0.9
    permutations: int = 10000
    bias_correction: str = "holm"

    @classmethod
    def of(cls, options: "RankingOptions | None" = None, **given) -> "RankingOptions":
        """``options`` (default: the defaults) with the settings ``given`` by name (None:
        not given, but for ``B``); an unknown name is a TypeError, as for a keyword."""
        base = options if options is not None else cls()
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(given) - known)
        if unknown:
            raise TypeError(f"unknown option(s) of the rankings: {', '.join(unknown)}")
        return dataclasses.replace(base, **{k: v for k, v in given.items() if v is not None or k == "B"})


@dataclass(frozen=True)
class TiePolicy:
    """A tie policy: its ``name``, what it ``means``, and ``within``, the sort keys that order
    each tie ((column, direction) pairs over a ranked row's ``given_rank`` and ``gain``, its
    grade under the qrels evaluated, 0 unless judged relevant), the stored rank last; None:
    the ties stay in the run's order, as stored. ``expected``: no one order, but the exact
    mean over every order (sql/_expected.sql)."""

    name: str
    means: str
    within: tuple[tuple[str, str], ...] | None = None
    expected: bool = False  # no one order: the exact mean over every ordering of each tie

    @property
    def by_gain(self) -> bool:
        """Whether it orders each tie by gain alone (then the stored rank): its ranks follow
        from the judged documents and the ties the base records (sql/_ranking.sql,
        tie_ranked_base)."""
        return self.within is not None and [c for c, _ in self.within] == ["gain"]

    @property
    def reranks(self) -> bool:
        """Whether it ranks ties otherwise than the stored ranking does."""
        return self.within is not None or self.expected


TIE_POLICIES: dict[str, TiePolicy] = {p.name: p for p in (
    TiePolicy("trec_eval", "each tie in the run's order, as stored (trec_eval's: docno descending)"),
    TiePolicy("run", "each tie in the file's order: its rank field ascending", (("given_rank", "ASC"),)),
    TiePolicy("optimistic", "each tie by gain descending, judged non-relevant and unjudged documents "
                            "last: the best score any tie-breaking gives", (("gain", "DESC"),)),
    TiePolicy("pessimistic", "each tie by gain ascending, judged non-relevant and unjudged documents "
                             "first: the worst score any tie-breaking gives", (("gain", "ASC"),)),
    TiePolicy("expected", "the exact mean of the measure over every ordering of each tie, every "
                          "ordering equally likely (McSherry & Najork 2008)", expected=True),
)}
DEFAULT_TIES = "trec_eval"


def tie_policy(name: "str | TiePolicy | None") -> TiePolicy:
    """The tie policy ``name`` names (None: the default, trec_eval); an unknown name is a
    one-line error listing the valid ones."""
    if isinstance(name, TiePolicy):
        return name
    policy = TIE_POLICIES.get(DEFAULT_TIES if name is None else name)
    if policy is None:
        raise IrwError(f"unknown tie policy {name!r}; valid: {', '.join(TIE_POLICIES)}")
    return policy
