"""Option sets that several doors share, declared once: the command line builds one from its
options, the Python API from its keyword arguments, Spark takes the same, and the analysis
receives it whole.

:class:`RankingOptions` are those of ``irw qrels rankings`` (Warehouse.compare_rankings,
SparkWarehouse.compare_rankings, irwarehouse.judges), checked by
``irwarehouse.judges.check_options``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass


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
