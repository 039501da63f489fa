"""Standardization through the door (:class:`irwarehouse.api.Warehouse`): factor sets,
standardized scores, topic splits and their experiments. Each method hands the parsed
measures and resolved runs to irwarehouse.standardize, which computes.
"""

from __future__ import annotations

from . import catalogue, runsets, sql
from .door import Door, _atomic
from .errors import IrwError
from .inputs import _parsed, measure_names, one_measure
from .result import Result

_spec = runsets.spec_of


class StandardizationDoor(Door):
    """The standardization methods of :class:`irwarehouse.api.Warehouse`."""

    @_atomic
    def standardize(self, name: str, measures, qrels: str | None = None, *, reference="all",
                    replace: bool = False, description: str | None = None) -> Result:
        """Compute a factor set (per measure and topic, the reference runs' mean and sd);
        returns its summary per measure (topics, n_ref, mean mu and sigma, zero sigmas), with
        ``.info`` the set as stored (factors, qrels, measures, topics, reference)."""
        from . import standardize as st

        info = st.create_factor_set(self.con, name, _parsed(measures),
                                    qrels=qrels or catalogue.default_qrels(self.con),
                                    reference=_spec(reference) or "all", replace=replace,
                                    description=description)
        return Result.of(st.factor_summary(self.con, name), info=info)

    @_atomic
    def factor_sets(self) -> Result:
        """The factor sets in the warehouse."""
        from . import standardize as st

        return Result.of(st.list_factor_sets(self.con))

    @_atomic
    def factors(self, name: str, measure: str | None = None) -> Result:
        """The factors of a set: per measure and topic, mu, sigma and n_ref."""
        from . import standardize as st

        return Result.of(st.factors_frame(self.con, name, measure))

    @_atomic
    def standardized_scores(self, factors: str, measures=None, runs="all", *,
                            per_topic: bool = False) -> Result:
        """Standardized scores Phi(z) under a factor set (views std_scores / std_score_means);
        runs without stored scores are evaluated first."""
        from . import standardize as st

        info = st.factor_set_info(self.con, factors)
        run_ids = runsets.resolve(self.con, _spec(runs), qrels=info["qrels"])
        return Result.of(st.standardized_scores(self.con, factors, measure_names(measures) if measures else None,
                                                run_ids, per_topic=per_topic))

    @_atomic(files=True)
    def export_factors(self, name: str, path, *, file_format: str | None = None,
                       replace: bool = False) -> int:
        """Write a factor set to a CSV or Parquet file (through the output guard); the number
        of factors written."""
        from . import standardize as st

        return st.export_factor_set(self.con, name, str(path), file_format, replace=replace)

    @_atomic(files=True)
    def import_factors(self, path, *, name: str | None = None, qrels: str | None = None,
                       replace: bool = False, description: str | None = None,
                       file_format: str | None = None) -> dict:
        """Import a published factor set (all or nothing)."""
        from . import standardize as st

        return st.import_factor_set(self.con, str(path), name=name, qrels=qrels, replace=replace,
                                    description=description, fmt=file_format)

    @_atomic
    def drop_factors(self, name: str) -> None:
        """Remove a factor set."""
        from . import standardize as st

        st.drop_factor_set(self.con, name)

    @_atomic
    def reference_size(self, measure, qrels: str | None = None, runs="all", *, reference=None,
                       sizes=(2, 5, 10, 20), samples: int = 1000, seed: int = 0,
                       progress=None) -> Result:
        """How many standardizing systems: tau of n sampled reference runs vs all of them."""
        from . import standardize as st

        q = qrels or catalogue.default_qrels(self.con)
        return Result.of(st.reference_size_experiment(self.con, q, one_measure(measure), _spec(runs) or "all",
                                                      _spec(reference), sizes=list(sizes),
                                                      samples=samples, seed=seed, progress=progress))

    @_atomic
    def split(self, parent: str, name: str, *, topics: str | None = None, half: int | None = None,
              rest: str | None = None, description: str | None = None,
              replace: bool = False) -> Result:
        """A topic split of ``parent`` (and its rest): one row per split created."""
        from . import standardize as st

        return Result.of(st.split_collection(self.con, parent, name, topics=topics, half_seed=half,
                                             rest=rest, description=description, replace=replace))

    @_atomic
    def splits(self) -> Result:
        """The topic splits (qrels of kind 'topics') with their topic counts."""
        return self.engine.read(sql.statement("catalogue.sql", "splits"))

    @_atomic
    def compare_splits(self, c: str, d: str, measure, *, raw=None, runs="all",
                       reference=None, factors: str | None = None, alpha: float = 0.05,
                       per_run: bool = False) -> Result:
        """The same runs on two qrels: RMSE, dRMSE and t-test false positives per form of the
        measure (``per_run``: one row per run and form)."""
        from . import standardize as st

        if reference and factors:
            raise IrwError("give --reference (self-standardization) or --factors, not both")
        cc, cd = catalogue.collection_of(self.con, c), catalogue.collection_of(self.con, d)
        if cc != cd:
            self._notify(f"comparing the runs of collection {cc} on {c} with the runs of the same "
                         f"ids in collection {cd} on {d}")
        summary, rows = st.compare_collections(self.con, c, d, one_measure(measure), _spec(runs) or "all",
                                               raw=raw, reference=_spec(reference), factors=factors,
                                               alpha=alpha)
        return Result.of(rows if per_run else summary)

    @_atomic
    def random_splits(self, measure, qrels: str | None = None, *, raw=None, runs="all",
                      reference=None, factors: str | None = None, splits: int = 2000, seed: int = 0,
                      size: int | None = None, alpha: float = 0.05, progress=None) -> Result:
        """Random topic-set splits: mean and upper percentiles of dRMSE and false positives."""
        from . import standardize as st

        if reference and factors:
            raise IrwError("give --reference (self-standardization) or --factors, not both")
        q = qrels or catalogue.default_qrels(self.con)
        return Result.of(st.random_splits_experiment(self.con, q, one_measure(measure), _spec(runs) or "all",
                                                     raw=raw, reference=_spec(reference), factors=factors,
                                                     splits=splits, seed=seed, size=size, alpha=alpha,
                                                     progress=progress))
