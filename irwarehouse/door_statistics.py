"""The statistics of the door (:class:`irwarehouse.api.Warehouse`): discriminative power,
p-values, comparisons of two runs, correlations, topic set size design, confidence intervals
and summaries. Each method resolves the qrels and runs it is given and hands them, with the
parsed measures, to irwarehouse.significance (or irwarehouse.summary), which computes.
"""

from __future__ import annotations

from . import catalogue, runsets
from .door import Door, _atomic
from .engine import evaluation
from .errors import IrwError, note
from .inputs import _conditions, _parsed, measure_names, one_measure
from .options import tie_policy
from .result import Result
from .systems import check_unit

_spec = runsets.spec_of


def _ties_param(ties) -> dict:
    """The tie policy among a saved result's parameters, where it is not the default."""
    policy = tie_policy(ties)
    return {"ties": policy.name} if policy.reranks else {}


class StatisticsDoor(Door):
    """The statistical methods of :class:`irwarehouse.api.Warehouse`."""

    def _qrels_runs(self, qrels, runs) -> tuple[str, list[str]]:
        q = qrels or catalogue.default_qrels(self.con)
        return q, runsets.resolve(self.con, _spec(runs), qrels=q)

    @_atomic
    def discpower(self, measures, qrels: str | None = None, runs="all", *, test: str = "t",
                  correction: str = "none", alpha: float = 0.05, B: int | None = None, seed: int = 0,
                  topics: str = "qrels", reference_qrels: str | None = None,
                  reference_measure=None, save: str | None = None, progress=None,
                  by: str = "run", level: float = 0.95, ties: str | None = None) -> Result:
        """Discriminative power per measure (and agreement with a reference condition), with
        the matrix's residual variance V_E, the smallest significant difference and the
        median |d_z|; ``by="system"`` over systems. ``save`` keeps the rows in
        discpower_results and every pair behind them in pair_tests, both under that name,
        with the interval of each difference and its effect sizes at ``level``
        (``.info['pairs']``: that table). ``ties``: the tie policy (default trec_eval)."""
        from . import significance

        check_unit(by)
        parsed = _parsed(measures)
        ref = one_measure(reference_measure) if reference_measure is not None else None
        q, run_ids = self._qrels_runs(qrels, runs)
        if save and self.read_only:
            raise IrwError("this warehouse is open read-only: open it for writing to --save")
        out = significance.discpower(self.con, q, parsed, run_ids, test, correction, alpha, B, seed,
                                     topics, reference_qrels, ref, progress, by=by,
                                     pairs=bool(save), level=level, ties=ties)
        if not save:
            return Result.of(out)
        frame, pairs = out
        params = {"runs": runs if isinstance(runs, str) else list(runs), "topics": topics,
                  "seed": seed, "by": by, "level": level, **_ties_param(ties)}
        self._save(significance, "discpower_results", save, frame, params)
        self._save(significance, "pair_tests", save, pairs,
                   {**params, "correction": correction, "alpha": alpha, "B": B})
        return Result.of(frame, info={"pairs": pairs})

    def _save(self, significance, table: str, name: str, frame, params: dict) -> None:
        if self.read_only:
            raise IrwError("this warehouse is open read-only: open it for writing to --save")
        significance.save(self.con, table, name, frame, params)

    @_atomic
    def pvalues(self, measure, qrels: str | None = None, runs="all", *, test: str = "t",
                correction: str = "none", alpha: float = 0.05, B: int | None = None, seed: int = 0,
                topics: str = "qrels", save: str | None = None, progress=None, level: float = 0.95,
                by: str = "run", rel_level: int | None = None,
                ties: str | None = None) -> Result:
        """Every run pair with its mean difference and its interval at ``level`` (the test's
        own: ``TESTS[test].interval``), Cohen's d_z with its exact interval, Sakai's effect
        size over the residual variance (``effect_size_residual``), p-value and adjusted
        p-value; ``by="system"``: every pair of systems, with their runs and whether the
        difference is within their spread. ``save`` keeps them in pair_tests. ``rel_level``:
        the relevance threshold of a binary measure, as :meth:`eval`'s. ``ties``: the tie
        policy (default trec_eval)."""
        from . import significance

        check_unit(by)
        m = _parsed([one_measure(measure)], rel_level)[0]
        q, run_ids = self._qrels_runs(qrels, runs)
        evaluation.note_default_threshold(self.con, q, [m])
        frame = significance.pvalues(self.con, q, m, run_ids, test, correction, alpha, B, seed,
                                     topics, progress, level, by, ties)
        if save:
            self._save(significance, "pair_tests", save, frame,
                       {"runs": runs if isinstance(runs, str) else list(runs), "topics": topics,
                        "correction": correction, "alpha": alpha, "B": B, "seed": seed,
                        "by": by, "level": level, **_ties_param(ties)})
        return Result.of(frame)

    @_atomic
    def compare(self, run_a: str, run_b: str, measures, qrels: str | None = None, *,
                tests=("t",), alpha: float = 0.05, B: int | None = None, seed: int = 0,
                topics: str = "qrels", rbp_p: float = 0.8, judged_k: int = 10,
                level: float = 0.95, by: str = "run", rel_level: int | None = None) -> Result:
        """Two runs (``by="system"``: two systems) per measure: means, difference with its
        interval at ``level`` (that of the first test), d_z with its exact interval,
        p-values, RBP residual and Judged@k. ``rel_level``: the relevance threshold of the
        binary measures, as :meth:`eval`'s."""
        from . import significance

        check_unit(by)
        parsed = _parsed(measures, rel_level)
        q = qrels or catalogue.default_qrels(self.con)
        if by == "run":
            runsets.resolve(self.con, _spec([run_a, run_b]), qrels=q)
        evaluation.note_default_threshold(self.con, q, parsed)
        return Result.of(significance.compare(self.con, q, run_a, run_b, parsed,
                                              [tests] if isinstance(tests, str) else list(tests),
                                              alpha, B, seed, topics, rbp_p, judged_k, level, by))

    @_atomic
    def repro(self, original: str, reproduced: str, measures, *, baseline: str | None = None,
              reproduced_baseline: str | None = None, qrels: str | None = None,
              reproduced_qrels: str | None = None, topics: str = "run", show: str = "effects",
              per_topic: bool = False, save: str | None = None) -> Result:
        """Whether ``original`` reproduces (Breuer et al. 2020, as repro_eval computes it):
        ``reproduced`` is a run or a system of runs (seeds, folds), replicated when
        ``reproduced_qrels`` is another qrels. ``show``: effects (means, RMSE, p-value, ER and
        ΔRI per measure), order (KTU and RBO per cut-off: their means over the topics, and
        with ``per_topic`` each topic's) or spread (over the reproductions); ``.info`` holds
        all three. ``save`` keeps the effects and the order
        in repro_effects and repro_order."""
        from . import repro

        if save and self.read_only:
            raise IrwError("this warehouse is open read-only: open it for writing to --save")
        table, tables = repro.run(self.con, original, reproduced, _parsed(measures), baseline,
                                  reproduced_baseline, qrels, reproduced_qrels, topics, show,
                                  per_topic, save)
        return Result.of(table, info=tables)

    @_atomic
    def correlate(self, measure_a, measure_b=None, qrels: str | None = None, qrels_b: str | None = None,
                  runs="all", *, topics: str = "qrels", rbo_p: float = 0.9) -> Result:
        """Rank correlation (tau-b, tau-a, tau_AP, RBO, Pearson) of the run orderings by
        ``measure_a`` on ``qrels`` and ``measure_b`` (default: a) on ``qrels_b`` (default: qrels)."""
        from . import significance

        a = one_measure(measure_a)
        b = one_measure(measure_b) if measure_b is not None else a
        q, run_ids = self._qrels_runs(qrels, runs)
        return Result.of([significance.correlate(self.con, a, q, b, qrels_b or q, run_ids, topics, rbo_p)])

    @_atomic
    def correlation_matrix(self, measures=None, qrels=None, runs="all", *, conditions=None,
                           topics: str = "qrels", rbo_p: float = 0.9, of: str = "scores",
                           statistics=None, save: str | None = None) -> Result:
        """``irw correlate --matrix``: every cell over the conditions, one row per cell and
        statistic. The conditions are every measure of ``measures`` at every qrels of
        ``qrels`` (a list; default the only loaded qrels), measures outer; or the list
        ``conditions``, each ``MEASURE:QRELS`` (e.g. ``AP@100:trec8-d10``) or a (measure,
        qrels) pair, in the order given. ``of`` scores (run orderings) or pvalues (orderings
        of the run pairs by paired t-test p-value); ``save`` keeps the cells in table
        correlation_matrices."""
        from . import significance

        if conditions is not None:
            if measures is not None or qrels is not None:
                raise IrwError("give the conditions as measures and qrels or as a list of "
                               "conditions, not both")
            pairs = _conditions(self.con, conditions)
            qs = list(dict.fromkeys(q for _, q in pairs))
        else:
            if not measures:
                raise IrwError("no measure given: name the measures (-m), or the conditions "
                               "(--condition MEASURE:QRELS)")
            parsed = _parsed(measures)
            qs = catalogue.expand_qrels(self.con, qrels)
            pairs = [(m, q) for m in parsed for q in qs]
        run_ids = runsets.resolve(self.con, _spec(runs), qrels=qs[0])
        wanted = list(statistics) if statistics else (
            ["kendall_tau", "tau_ap", "rbo"] if of == "scores" else ["kendall_tau"])
        frame = significance.correlation_matrix(self.con, pairs, run_ids, topics, rbo_p, of, wanted,
                                                notify=self._notify_note)
        if save:
            params = ({"conditions": [f"{m}:{q}" for m, q in pairs]} if conditions is not None else
                      {"measures": [str(m) for m in parsed], "qrels": qs})
            self._save(significance, "correlation_matrices", save, frame,
                       {**params, "runs": runs if isinstance(runs, str) else list(runs),
                        "topics": topics, "rbo_p": rbo_p})
        return Result.of(frame)

    @_atomic
    def power(self, measures, delta, qrels: str | None = None, runs="all", *, alpha: float = 0.05,
              beta: float = 0.2, topics: str = "qrels", by: str = "run", anova: bool = False,
              systems: int | None = None) -> Result:
        """Topic set size design (Sakai 2016; ``irw power``): from the runs x topics matrix of
        each measure, the residual variance V_E of the two-way ANOVA without replication;
        per difference in ``delta`` (a number or a list), the topics a two-sided paired
        t-test at ``alpha`` needs to detect it with power 1 - ``beta`` (exact noncentral t,
        a pair's differences of variance 2 V_E; None beyond irwarehouse.power.MAX_TOPICS),
        the power with the collection's topics, and the minimum detectable difference with
        them. ``anova``: also the one-way ANOVA design over ``systems`` systems (default:
        the runs, or systems, of the matrix), ``delta`` the range between the best and the
        worst. ``by="system"``: the matrix of the runs' systems."""
        from . import significance

        check_unit(by)
        deltas = [delta] if isinstance(delta, (int, float)) else list(delta)
        q, run_ids = self._qrels_runs(qrels, runs)
        return Result.of(significance.power_design(self.con, q, _parsed(measures), run_ids,
                                                   [float(d) for d in deltas], alpha, beta, topics,
                                                   by, anova, systems))

    @staticmethod
    def _notify_note(message: str) -> None:
        note(message)

    @_atomic
    def ties(self, measures, qrels: str | None = None, runs="all", *, topics: str = "qrels") -> Result:
        """How much each run's scores depend on its ties (``irw ties``; irwarehouse.ties): its
        tie groups, the documents in them and the topics with one; per measure its mean under
        the stored ranking, its exact mean over every ordering of the ties (``expected``, NaN
        where no exact computation is built) and ``trec_eval_minus_expected``, its means under
        the tie policies optimistic and pessimistic, their difference (``spread``), its place on the leaderboard and the best and worst places
        any tie-breaking gives it."""
        from . import ties

        q, run_ids = self._qrels_runs(qrels, runs)
        return Result.of(ties.tie_table(self.con, q, _parsed(measures), run_ids, topics))

    @_atomic
    def ci(self, measure, qrels: str | None = None, runs="all", *, topics: str = "qrels",
           level: float = 0.95, by: str = "run", ties: str | None = None) -> Result:
        """Each run's mean with its t-distribution confidence interval; ``by="system"``: each
        system's, with its number of runs and their spread. ``ties``: the tie policy."""
        from . import significance

        check_unit(by)
        q, run_ids = self._qrels_runs(qrels, runs)
        return Result.of(significance.mean_intervals(self.con, q, one_measure(measure), run_ids, topics,
                                                     level, by, ties))

    @_atomic
    def summary(self, measures, qrels: str | None = None, runs="all", *, topics: str = "qrels",
                by: str = "run") -> Result:
        """Per run (over its topics) or per topic (over the runs): n, mean, sd, min and max of
        each measure (``irw summary``). When there are no rows, a note says why."""
        from . import summary

        q, run_ids = self._qrels_runs(qrels, runs)
        parsed = _parsed(measures)
        rows = summary.summary(self.con, q, parsed, run_ids, topics, by)
        if not rows:
            note(evaluation.no_rows_reason(self.con, q, run_ids, topics), "no rows")
            key = "run_id" if by == "run" else "topic"
            return Result([key, "measure", "n", "mean", "sd", "min", "max"], [])
        return Result.of(rows)
