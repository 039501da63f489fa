"""From warehouse scores to published answers: significance tests with the intervals of the
differences and their effect sizes, discriminative power, rank correlations and confidence
intervals (SPEC §5).

SQL hands over per-topic score matrices (runs x topics, from ``evaluate``); the statistics
in :mod:`irwarehouse.stats` do the rest, vectorized over all run pairs. A matrix of systems
(``by="system"``: :meth:`Matrix.by_system`, the mean of each system's runs per topic) goes
through the same functions: its rows are systems, and the tables add each system's number
of runs and their spread.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import catalogue, connection, sql, stats
from . import systems as sysmod
from .engine import evaluation
from .errors import IrwError, note
from .measures import Measure, parse
from .significance_tests import MIN_B, TESTS
from .significance_tests import correction as check_correction


@dataclass
class Matrix:
    """Per-topic scores of one measure under one qrels: X[row, topic], a row per run -- or,
    with ``systems``, per system (``run_ids`` then names the systems, and ``spread`` holds
    each system's number of runs and the sd, min and max of its runs' means:
    :func:`irwarehouse.systems.spread`)."""

    qrels: str
    measure: str
    run_ids: list[str]
    topics: list[str]
    X: np.ndarray
    systems: sysmod.Systems | None = None
    spread: dict | None = None

    @property
    def means(self) -> np.ndarray:
        return self.X.mean(axis=1)

    @property
    def unit(self) -> str:
        """What a row is: ``run`` or ``system``."""
        return "run" if self.systems is None else "system"

    def by_system(self, systems: sysmod.Systems) -> "Matrix":
        """The matrix of the systems: each system's per-topic score the mean of its runs'
        (SPEC), with the spread of its runs' means over these topics."""
        if self.systems is not None:
            raise IrwError("the matrix is of systems already")
        if len(systems) < 2:
            raise IrwError(f"need at least two systems, got {len(systems)}")
        X = sysmod.group_means(self.X, systems, self.run_ids)
        spread = sysmod.spread(stats.row_means(self.X), systems, self.run_ids)
        return Matrix(self.qrels, self.measure, list(systems.names), list(self.topics), X,
                      systems, spread)

    def subset(self, rows: list[str], topics: list[str]) -> "Matrix":
        """The matrix over the rows (runs or systems) and topics named, in that order."""
        r = [self.run_ids.index(x) for x in rows]
        t = [self.topics.index(x) for x in topics]
        spread = None if self.spread is None else {k: v[r] for k, v in self.spread.items()}
        systems = None if self.systems is None else sysmod.Systems(
            tuple(rows), tuple(self.systems.members[self.systems.names.index(x)] for x in rows))
        return Matrix(self.qrels, self.measure, list(rows), list(topics), self.X[np.ix_(r, t)],
                      systems, spread)


def matrix(per: pd.DataFrame, label: str, run_ids: list[str],
           topics: list[str] | None = None) -> tuple[np.ndarray, list[str]]:
    """X[run, topic] of one measure from ``evaluate``'s long frame: runs in the order given,
    topics as given (default: sorted); a missing score is NaN."""
    wide = per[per["measure"] == label].pivot(index="run_id", columns="topic", values="value")
    wide = wide.reindex(index=list(run_ids),
                        columns=sorted(wide.columns) if topics is None else list(topics))
    return wide.to_numpy(dtype=float), list(wide.columns)


def score_matrices(con, qrels: str, measures: list[Measure], run_ids: list[str],
                   topics: str = "qrels", store: bool = True, by: str = "run",
                   ties: str | None = None) -> dict[str, Matrix]:
    """Evaluate ``measures`` in one pass (kept in ``scores`` if ``store``), each tie ranked by
    the tie policy ``ties`` (default trec_eval), and return, per measure, the run x topic
    matrix over the topics every run has a score for; with ``by="system"``, the matrix of the
    runs' systems (:meth:`Matrix.by_system`)."""
    sysmod.check_unit(by)
    if by == "system":
        systems = systems_of(con, qrels, run_ids)
        runs = score_matrices(con, qrels, measures, run_ids, topics, store, ties=ties)
        return {label: m.by_system(systems) for label, m in runs.items()}
    if len(run_ids) < 2:
        raise IrwError(f"need at least two runs, got {len(run_ids)}")
    per = evaluation.evaluate(con, qrels, list(measures), run_ids, topics=topics, store=store,
                              ties=ties).df()
    check_evaluated(con, per, qrels, run_ids, topics)
    return matrices(per, qrels, measures, run_ids)


def check_evaluated(source, per: pd.DataFrame, qrels: str, run_ids: list[str], topics: str = "qrels") -> None:
    """An evaluation under ``qrels`` that gave no score at all is an error saying why, in
    ``irw eval``'s words (engine.evaluation.no_rows_reason): an empty topic set, say."""
    if per.empty:
        raise IrwError(evaluation.no_rows_reason(source, qrels, run_ids, topics))


def matrices(per: pd.DataFrame, qrels: str, measures: list[Measure], run_ids: list[str]) -> dict[str, Matrix]:
    """Per measure, the run x topic matrix of ``evaluate``'s long frame ``per`` (one qrels's
    scores) over the topics every run has a score for (see :func:`score_matrices`)."""
    out = {}
    for measure in measures:
        label = str(measure)
        X, names = matrix(per, label, run_ids)
        common = ~np.isnan(X).any(axis=0)
        if common.sum() == 0:
            raise IrwError(f"the runs have no topic in common under {qrels} ({label})")
        if common.sum() < 2:
            raise IrwError(f"the runs have only one topic in common under {qrels}: need at least two")
        out[label] = Matrix(qrels, label, list(run_ids), [t for t, c in zip(names, common) if c],
                            X[:, common])
    return out


def score_matrix(con, qrels: str, measure: Measure, run_ids: list[str], topics: str = "qrels",
                 store: bool = True, by: str = "run", ties: str | None = None) -> Matrix:
    """The run (or system) x topic matrix of one measure (see :func:`score_matrices`)."""
    return score_matrices(con, qrels, [measure], run_ids, topics, store, by, ties)[str(measure)]


def systems_of(con, qrels: str, run_ids: list[str]) -> sysmod.Systems:
    """The systems of the runs ``run_ids`` of the qrels's collection (run_meta.system; a run
    without one is its own system)."""
    return catalogue.systems_of(con, run_ids, catalogue.collection_of(con, qrels))


def check_test(test: str, alpha: float, B: int | None) -> int | None:
    """The number of samples ``test`` (a name of the registry, significance_tests.TESTS) uses:
    ``B``, or its default (None for a test that draws none); an error for an unknown test, an
    alpha outside (0, 1) or too few samples."""
    if test not in TESTS:
        raise IrwError(f"unknown test {test!r}; valid: {', '.join(TESTS)}")
    if not 0 < alpha < 1:
        raise IrwError(f"alpha must be between 0 and 1 (exclusive), got {alpha}")
    default = TESTS[test].default_B
    if default is None:
        return None
    B = default if B is None else B
    if B < MIN_B:
        raise IrwError(f"B must be at least {MIN_B}, got {B}")
    return B


def run_test(X: np.ndarray, test: str, B: int | None = None, seed: int = 0, alpha: float = 0.05,
             progress=None, level: float | None = None) -> stats.PairResult:
    """One test over all run pairs of X: the function the registry names for ``test``; with
    ``level``, each pair's interval of the difference too (``extra['ci_low']``,
    ``extra['ci_high']``: the test's own, see the registry's ``interval``)."""
    B = check_test(test, alpha, B)
    spec = TESTS[test]
    kwargs = {"B": B, "seed": seed, "progress": progress} if spec.default_B is not None else {}
    if spec.takes_alpha:
        kwargs["alpha"] = alpha
    if level is not None:
        kwargs["level"] = check_level(level)
    try:
        return getattr(stats, spec.function)(X, **kwargs)
    except ValueError as exc:
        raise IrwError(str(exc)) from None


def check_level(level: float) -> float:
    """The level of an interval, between 0 and 1 (exclusive)."""
    if not 0 < level < 1:
        raise IrwError(f"the level of an interval must be between 0 and 1 (exclusive), got {level}")
    return float(level)


def _with_correction(result: stats.PairResult, correction: str) -> stats.PairResult:
    adjusted = stats.adjust(result.p, check_correction(correction).name)
    return stats.PairResult(result.i, result.j, result.mean_diff, result.stat, adjusted,
                            result.test, result.extra, result.means)


def aligned(a: Matrix, b: Matrix) -> tuple[Matrix, Matrix]:
    """Both matrices over their common rows -- runs, or systems -- and topics (a's order)."""
    if a.run_ids != b.run_ids:
        common = [r for r in a.run_ids if r in set(b.run_ids)]
        if len(common) < 2:
            raise IrwError(f"the two conditions share fewer than two {a.unit}s")
    else:
        common = a.run_ids
    topics = [t for t in a.topics if t in set(b.topics)]
    if len(topics) < 2:
        raise IrwError("the two conditions share fewer than two topics")
    return a.subset(common, topics), b.subset(common, topics)


def discpower(con, qrels: str, measures: list[Measure], run_ids: list[str], test: str = "t",
              correction: str = "none", alpha: float = 0.05, B: int | None = None, seed: int = 0,
              topics: str = "qrels", reference_qrels: str | None = None,
              reference_measure: Measure | None = None, progress=None, by: str = "run",
              pairs: bool = False, level: float = 0.95,
              ties: str | None = None) -> pd.DataFrame | tuple[pd.DataFrame, pd.DataFrame]:
    """One row per measure: discriminative power, the residual variance V_E of the matrix,
    the smallest significant difference and the median |d_z|, and agreement with a
    reference condition. With ``pairs``, also the table of every pair behind each row, as
    :func:`pair_frame` gives it (intervals at ``level``): (rows, pairs)."""
    B = check_test(test, alpha, B)
    mats = score_matrices(con, qrels, measures, run_ids, topics, by=by, ties=ties)
    refs = {}
    if reference_qrels or reference_measure:
        wanted = [reference_measure] if reference_measure else measures
        refs = score_matrices(con, reference_qrels or qrels, wanted, run_ids, topics, by=by, ties=ties)
    out = discpower_rows(qrels, mats, refs, measures, test, correction, alpha, B, seed,
                         reference_measure, progress, pair_level=level if pairs else None)
    if pairs:
        rows, tables = out
        return pd.DataFrame(rows), pd.concat(tables, ignore_index=True)
    return pd.DataFrame(out)


def discpower_rows(qrels: str, mats: dict[str, Matrix], refs: dict[str, Matrix], measures: list[Measure],
                   test: str, correction: str, alpha: float, B: int | None, seed: int,
                   reference_measure: Measure | None = None, progress=None,
                   agreement_keys=("misses", "false_alarms", "tp", "fp", "fn", "tn"),
                   pair_level: float | None = None) -> list[dict] | tuple[list[dict], list[pd.DataFrame]]:
    """The rows of :func:`discpower` from score matrices already computed (of runs or of
    systems): ``mats`` per measure under ``qrels``, ``refs`` the reference condition's
    (empty: none), by measure label (the reference measure's when one is given);
    ``agreement_keys``, the counts of stats.compare_to_reference each row takes (also:
    ``significant_reference``, ``opposite``). With ``pair_level``, also each measure's table
    of pairs (:func:`pair_frame`'s, intervals at that level): (rows, tables)."""
    rows, tables = [], []
    for measure in measures:
        m = mats[str(measure)]
        ref = None
        if refs:
            m, ref = aligned(m, refs[str(reference_measure or measure)])
        X = m.X
        raw = run_test(X, test, B, seed, alpha, progress, pair_level)
        result = _with_correction(raw, correction)
        row = {"qrels": qrels, "measure": m.measure, "test": test, "correction": correction,
               "alpha": alpha, "B": B,
               "runs": X.shape[0] if m.systems is None else sum(len(r) for r in m.systems.members)}
        if m.systems is not None:
            row["systems"] = X.shape[0]
        row["topics"] = X.shape[1]
        row.update(stats.discriminative_power(result, alpha))
        mean, sd, undefined = stats.pair_moments(X)
        significant = result.p < alpha
        with np.errstate(divide="ignore", invalid="ignore"):
            dz = np.abs(mean / sd)[~undefined]
        row["residual_variance"] = stats.residual_variance(X)
        row["smallest_significant_diff"] = float(np.abs(result.mean_diff[significant]).min()) \
            if significant.any() else np.nan
        row["median_effect_size"] = float(np.median(dz)) if dz.size else np.nan
        if TESTS[test].estimated_difference:
            summary = stats.estimated_difference_summary(result)
            row["estimated_difference_max"] = summary["max"]
            row["estimated_difference_median"] = summary["median"]
        if ref is not None:
            reference = _with_correction(run_test(ref.X, test, B, seed, alpha, progress), correction)
            agreement = stats.compare_to_reference(result, reference, alpha)
            row.update({"reference_qrels": ref.qrels, "reference_measure": ref.measure,
                        **{k: agreement[k] for k in agreement_keys}})
        rows.append(row)
        if pair_level is not None:
            tables.append(_pair_table(m, raw, test, correction, alpha, pair_level))
    return (rows, tables) if pair_level is not None else rows


def pvalues(con, qrels: str, measure: Measure, run_ids: list[str], test: str = "t",
            correction: str = "none", alpha: float = 0.05, B: int | None = None, seed: int = 0,
            topics: str = "qrels", progress=None, level: float = 0.95, by: str = "run",
            ties: str | None = None) -> pd.DataFrame:
    """Every run (or system) pair with its p-value (and adjusted p-value), the interval of
    its difference and its effect sizes (:func:`pair_frame`)."""
    return pair_frame(score_matrix(con, qrels, measure, run_ids, topics, by=by, ties=ties), test, correction,
                      alpha, B, seed, progress, level)


PAIR_EFFECTS = ("ci_low", "ci_high", "effect_size", "effect_low", "effect_high")


def pair_frame(m: Matrix, test: str = "t", correction: str = "none", alpha: float = 0.05,
               B: int | None = None, seed: int = 0, progress=None, level: float = 0.95,
               residual: bool = True) -> pd.DataFrame:
    """Every pair of a score matrix (``irw pvalues``): the means and their difference, the
    difference's interval at ``level`` (the test's own: TESTS[test].interval), Cohen's d_z
    with its exact noncentral-t interval, Sakai's effect size over the residual variance of
    the whole matrix (``effect_size_residual``, with ``residual``), the test's statistic,
    p-value, adjusted p-value and whether it is significant. A matrix of systems names them
    (``system_a``, ``system_b``), with their numbers of runs and whether the difference is
    within their runs' spread (:func:`irwarehouse.systems.within_spread`)."""
    result = run_test(m.X, test, B, seed, alpha, progress, level)
    return _pair_table(m, result, test, correction, alpha, level, residual)


def _pair_table(m: Matrix, result: stats.PairResult, test: str, correction: str, alpha: float,
                level: float, residual: bool = True) -> pd.DataFrame:
    """:func:`pair_frame`'s table from the test's result (run with ``level``)."""
    check_correction(correction)
    known = "sd" in result.extra and "undefined" in result.extra  # the test computed them
    moments = (result.mean_diff, result.extra["sd"], result.extra["undefined"]) if known else None
    try:
        effects = stats.effect_sizes(m.X, level, residual, moments)
    except ValueError as exc:
        raise IrwError(str(exc)) from None
    names = np.asarray(m.run_ids, dtype=object)
    i, j = result.i, result.j
    columns = {"qrels": m.qrels, "measure": m.measure, "test": test}
    if m.systems is None:
        columns.update(run_a=names[i], run_b=names[j])
    else:
        runs = m.spread["runs"]
        columns.update(system_a=names[i], system_b=names[j], runs_a=runs[i], runs_b=runs[j])
    columns.update(mean_a=result.means[i], mean_b=result.means[j], diff=result.mean_diff)
    if m.systems is not None:
        sd = m.spread["run_sd"]
        columns["within_spread"] = sysmod.within_spread(result.mean_diff, sd[i], sd[j])
    columns.update(ci_low=result.extra["ci_low"], ci_high=result.extra["ci_high"], **effects)
    p_adjusted = stats.adjust(result.p, correction)
    columns.update(statistic=result.stat, p_value=result.p, p_adjusted=p_adjusted,
                   significant=p_adjusted < alpha)
    return pd.DataFrame(columns)


def correlate(con, measure_a: Measure, qrels_a: str, measure_b: Measure, qrels_b: str,
              run_ids: list[str], topics: str = "qrels", rbo_p: float = 0.9) -> dict:
    """Rank correlation of the run orderings by mean score (A on X is the reference; means
    as :func:`stats.row_means`, equal to ``irw eval``'s)."""
    if qrels_a == qrels_b:  # one evaluation pass for both measures
        mats = score_matrices(con, qrels_a, list(dict.fromkeys([measure_a, measure_b])), run_ids, topics)
        a, b = mats[str(measure_a)], mats[str(measure_b)]
    else:
        a = score_matrix(con, qrels_a, measure_a, run_ids, topics)
        b = score_matrix(con, qrels_b, measure_b, run_ids, topics)
    return correlation(a, b, rbo_p)


def correlation(a: Matrix, b: Matrix, rbo_p: float = 0.9) -> dict:
    """Rank correlation of the run orderings by mean score of two score matrices, over their
    common runs and topics (a is the reference; ``irw correlate``)."""
    ma, mb = aligned(a, b)
    xa, xb = ma.X, mb.X
    try:
        out = stats.rank_correlations(stats.row_means(xa), stats.row_means(xb), rbo_p=rbo_p)
    except ValueError as exc:
        raise IrwError(str(exc)) from None
    return {"measure_a": a.measure, "qrels_a": a.qrels, "measure_b": b.measure, "qrels_b": b.qrels,
            "topics": xa.shape[1], **out}


STATISTICS = ("kendall_tau", "kendall_tau_a", "tau_ap", "rbo", "pearson")
MATRIX_OF = ("scores", "pvalues")


def correlation_matrix(con, conditions: list[tuple[Measure, str]], run_ids: list[str],
                       topics: str = "qrels", rbo_p: float = 0.9, of: str = "scores",
                       statistics: list[str] | None = None, store: bool = True,
                       notify=None) -> pd.DataFrame:
    """Every cell of the correlation matrix over the ``conditions`` (measure, qrels), in the
    order given: one row per statistic, row condition a (the reference of tau_AP) and column
    condition b.

    ``of="scores"``: the rank correlations of the run orderings by mean score, as
    :func:`correlate` gives for (a, b).  ``of="pvalues"``: Kendall's tau-b and tau-a and
    tau_AP between the orderings of all run pairs by their paired t-test p-values under a
    and under b, the most significant pair on top (:func:`stats.pvalue_correlation_matrix`:
    pairs undefined under either are left out).  Each qrels is evaluated once for all its
    measures; every condition is taken over the topics that all conditions share
    (``notify`` is told when that leaves some out)."""
    if of not in MATRIX_OF:
        raise IrwError(f"unknown --of {of!r}; valid: {', '.join(MATRIX_OF)}")
    valid = STATISTICS if of == "scores" else stats.PVALUE_STATISTICS
    statistics = list(dict.fromkeys(statistics or valid))
    unknown = [x for x in statistics if x not in valid]
    if unknown:
        raise IrwError(f"unknown statistic {unknown[0]!r} for --of {of}; valid: {', '.join(valid)}")
    by_qrels: dict[str, list[Measure]] = {}
    for m, q in conditions:
        by_qrels.setdefault(q, []).append(m)
    mats = {q: score_matrices(con, q, list(dict.fromkeys(ms)), run_ids, topics, store)
            for q, ms in by_qrels.items()}
    conditions = [(str(m), q) for m, q in conditions]
    first = mats[conditions[0][1]][conditions[0][0]]
    shared = set.intersection(*(set(mats[q][m].topics) for m, q in conditions))
    common = [t for t in first.topics if t in shared]
    if len(common) < 2:
        raise IrwError(f"the conditions share {len(common)} topic(s): need at least two")
    most = max(len(mats[q][m].topics) for m, q in conditions)
    if most > len(common) and notify:
        notify(f"the conditions differ in their topics: every cell uses the {len(common)} "
               f"topics they all share (up to {most - len(common)} left out of a condition)")
    X = [mats[q][m].X[:, [mats[q][m].topics.index(t) for t in common]] for m, q in conditions]
    try:
        if of == "scores":
            values = stats.rank_correlation_matrix(np.vstack([stats.row_means(x) for x in X]), rbo_p)
            items = np.full((len(X), len(X)), len(run_ids))
        else:
            values, items = stats.pvalue_correlation_matrix(
                np.vstack([stats.paired_t(x).p for x in X]), statistics)
    except ValueError as exc:
        raise IrwError(str(exc)) from None
    rows = [{"of": of, "measure_a": ma, "qrels_a": qa, "measure_b": mb, "qrels_b": qb,
             "statistic": name, "value": float(values[name][a, b]), "topics": len(common),
             "items": int(items[a, b])}
            for name in statistics
            for a, (ma, qa) in enumerate(conditions)
            for b, (mb, qb) in enumerate(conditions)]
    return pd.DataFrame(rows)


def compare(con, qrels: str, run_a: str, run_b: str, measures: list[Measure], tests: list[str],
            alpha: float = 0.05, B: int | None = None, seed: int = 0, topics: str = "qrels",
            rbp_p: float = 0.8, judged_k: int = 10, level: float = 0.95,
            by: str = "run") -> pd.DataFrame:
    """Two runs (or systems) per measure: means, difference with its interval at ``level``
    (that of the first test), d_z with its exact interval, p-values, and the measurement
    uncertainty beside them (mean RBP residual and Judged@k of each run; of a system, the
    mean over its runs)."""
    if run_a == run_b:
        raise IrwError(f"compare two different {by}s")
    for test in tests:
        check_test(test, alpha, B)
    check_level(level)
    if by == "system":
        systems = systems_of(con, qrels, catalogue.loaded_runs(con, catalogue.collection_of(con, qrels)))
        unknown = [x for x in (run_a, run_b) if x not in systems.names]
        if unknown:
            raise IrwError(f"no system {unknown[0]} among the runs of qrels {qrels}'s collection "
                           "(a system is named by run_meta.system, or by the run id of a run "
                           "without one)")
        members = systems.as_dict()
        runs = list(dict.fromkeys(members[run_a] + members[run_b]))
        chosen = sysmod.Systems((run_a, run_b), (tuple(members[run_a]), tuple(members[run_b])))
    else:
        sysmod.check_unit(by)
        runs, chosen = [run_a, run_b], None
    uncertainty = [parse(f"RBPres(p={rbp_p})"), parse(f"Judged@{judged_k}")]
    unc = evaluation.evaluate(con, qrels, uncertainty, runs, topics=topics, store=False).aggregate().df()
    unc = unc.set_index(["run_id", "measure"])["value"]
    mats = score_matrices(con, qrels, measures, runs, topics)
    rows = []
    for measure in measures:
        m = mats[str(measure)]
        if chosen is not None:
            m = Matrix(m.qrels, m.measure, m.run_ids, m.topics, m.X).by_system(chosen)
        frame = pair_frame(m, tests[0], "none", alpha, B, seed, None, level, residual=False)
        pair = frame.iloc[0]
        names = ("system_a", "system_b") if chosen is not None else ("run_a", "run_b")
        row = {"measure": m.measure, **{k: pair[k] for k in names}}
        if chosen is not None:
            row.update(runs_a=int(pair["runs_a"]), runs_b=int(pair["runs_b"]))
        row.update({k: pair[k] for k in ("mean_a", "mean_b", "diff")})
        if chosen is not None:
            row["within_spread"] = bool(pair["within_spread"])
        row.update({k: pair[k] for k in PAIR_EFFECTS})
        row["topics"] = m.X.shape[1]
        row[f"p_{tests[0]}"] = pair["p_value"]
        if pd.isna(pair["p_value"]):
            _note_undefined(m, run_a, run_b, tests[0])
        for test in tests[1:]:
            row[f"p_{test}"] = float(run_test(m.X, test, B, seed, alpha).p[0])
        for name, tag in ((run_a, "a"), (run_b, "b")):
            members = chosen.as_dict()[name] if chosen is not None else [name]
            row[f"residual_{tag}"] = float(np.mean([unc[(r, str(uncertainty[0]))] for r in members]))
            row[f"judged_{tag}"] = float(np.mean([unc[(r, str(uncertainty[1]))] for r in members]))
        rows.append(row)
    return pd.DataFrame(rows)


def _note_undefined(m: Matrix, run_a: str, run_b: str, test: str) -> None:
    """Say why a pair's test is undefined (left blank): the per-topic differences do not vary
    (a single topic, or the same difference on every topic)."""
    diffs = m.X[0] - m.X[1]
    why = (f"{m.measure} on 1 topic only" if m.X.shape[1] == 1 else
           f"{m.measure} differs by the same amount ({float(np.mean(diffs)):.4f}) on all "
           f"{m.X.shape[1]} topics")
    note(f"{run_a} and {run_b}: {why}, so the differences have no variance: the {test} test and "
         "the effect size are undefined (left blank)")


def mean_intervals(con, qrels: str, measure: Measure, run_ids: list[str], topics: str = "qrels",
                   level: float = 0.95, by: str = "run", ties: str | None = None) -> pd.DataFrame:
    """Each run's (or system's) mean with its t-distribution confidence interval."""
    return interval_frame(score_matrix(con, qrels, measure, run_ids, topics, by=by, ties=ties), level)


def interval_frame(m: Matrix, level: float = 0.95) -> pd.DataFrame:
    """Each run's mean of a score matrix with its t-distribution confidence interval
    (``irw ci``); of a matrix of systems, each system's, with its number of runs and their
    spread (sd, min and max of the runs' means)."""
    try:
        mean, low, high = stats.mean_ci(m.X, level)
    except ValueError as exc:
        raise IrwError(str(exc)) from None
    frame = pd.DataFrame({m.unit if m.systems is not None else "run_id": m.run_ids,
                          "measure": m.measure, "mean": mean, "ci_low": low, "ci_high": high,
                          "topics": m.X.shape[1]})
    if m.systems is not None:
        for column in sysmod.SPREAD_COLUMNS:
            frame[column] = m.spread[column]
    return frame


def save(con, table: str, name: str, frame: pd.DataFrame, params: dict) -> None:
    """Keep a result in the warehouse: rows of ``frame`` under ``name`` with the parameters
    that produced them (``table`` is one of the result tables of schema.sql)."""
    if table not in ("discpower_results", "pair_tests", "correlation_matrices", "repro_effects",
                     "repro_order"):
        raise AssertionError(table)
    unknown = set(frame.columns) - {"collection"} - set(_table_columns(con, table))
    if unknown:  # a column the result table lacks would be lost without a word
        raise AssertionError(f"{table} has no column {sorted(unknown)[0]}")
    if not name:
        raise IrwError("a saved result needs a name")
    columns = _table_columns(con, table)
    out = pd.DataFrame({c: frame[c] if c in frame.columns else None for c in columns})
    if "collection" not in frame.columns and "qrels" in frame.columns:  # the runs' collection
        out["collection"] = [catalogue.collection_of(con, q) for q in frame["qrels"]]
    out["name"] = name
    out["params"] = json.dumps(params, default=str)
    out["created_at"] = pd.Timestamp.now()
    with connection.transaction(con):
        con.execute(sql.statement("significance.sql", "forget", table), [name])
        connection.register(con, "irw_result", out)
        try:
            con.execute(sql.statement("significance.sql", "insert", table))
        finally:
            connection.unregister(con, "irw_result")


def _table_columns(con, table: str) -> list[str]:
    return [r[0] for r in con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = ? "
        "AND table_catalog = current_database() AND table_schema = 'main' ORDER BY ordinal_position",
        [table]).fetchall()]


def power_frame(mats: dict[str, Matrix], labels: list[str], alpha: float = 0.05,
                beta: float = 0.2) -> pd.DataFrame:
    """Per measure of score matrices already computed: its topics, residual variance V_E and
    the minimum difference a paired t-test at ``alpha`` detects with power 1 - ``beta`` with
    them (irwarehouse.power; ``irw power``'s ``min_detectable_diff``); NaN where V_E is 0."""
    from . import power

    rows = []
    for label in labels:
        m = mats[label]
        ve = stats.residual_variance(m.X)
        n = m.X.shape[1]
        rows.append({"measure": label, "topics": n, "residual_variance": ve,
                     "min_detectable_diff": power.min_detectable_difference(n, ve, alpha, beta)
                     if ve > 0 else np.nan})
    return pd.DataFrame(rows)


def power_design(con, qrels: str, measures: list[Measure], run_ids: list[str], deltas: list[float],
                 alpha: float = 0.05, beta: float = 0.2, topics: str = "qrels", by: str = "run",
                 anova: bool = False, systems: int | None = None) -> pd.DataFrame:
    """Topic set size design (Sakai 2016; irwarehouse.power) from the runs x topics matrix of
    each measure: its residual variance V_E, and per difference ``delta``: the topics a
    paired t-test at ``alpha`` needs to detect it with power 1 - ``beta``, the power with
    the matrix's topics, and the minimum detectable difference with them. With ``anova``,
    the one-way ANOVA design too, over ``systems`` systems (default: the matrix's rows),
    ``delta`` the range between the best and the worst."""
    from . import power

    if not deltas:
        raise IrwError("name the difference to detect (--delta)")
    bad = [d for d in deltas if not (d > 0 and np.isfinite(d))]
    if bad:
        raise IrwError(f"a difference to detect must be a positive number, got {bad[0]}")
    problem = power.check_errors(alpha, beta)
    if problem:
        raise IrwError(problem)
    if systems is not None and (not anova or systems < 2):
        raise IrwError("--systems is the number of systems of the ANOVA design (--anova), at least 2")
    mats = score_matrices(con, qrels, measures, run_ids, topics, by=by)
    rows = []
    for measure in measures:
        m = mats[str(measure)]
        ve = stats.residual_variance(m.X)
        n = m.X.shape[1]
        if not ve > 0:
            raise IrwError(f"the residual variance of {m.measure} is 0 (every run's scores differ "
                           "by a constant): no design can be computed")
        mdd = power.min_detectable_difference(n, ve, alpha, beta)
        k = systems or m.X.shape[0]
        for delta in deltas:
            row = {"measure": m.measure, "qrels": m.qrels, m.unit + "s": m.X.shape[0], "topics": n,
                   "residual_variance": ve, "alpha": alpha, "beta": beta, "delta": delta,
                   "topics_needed": power.topics_needed(delta, ve, alpha, beta),
                   "power": float(power.t_power(n, delta, ve, alpha)),
                   "min_detectable_diff": mdd}
            if anova:
                row.update({"anova_systems": k,
                            "anova_topics_needed": _anova_design(power.anova_topics_needed, k, delta, ve, alpha, beta),
                            "anova_power": float(_anova_design(power.anova_power, n, k, delta, ve, alpha)),
                            "anova_min_detectable_range": power.anova_min_detectable_range(n, k, ve, alpha, beta)})
            rows.append(row)
    return _explain_blanks(pd.DataFrame(rows))


def _anova_design(function, *args):
    """``function`` of irwarehouse.power, its ValueError (a range beyond the noncentral F's
    reach) as an IrwError."""
    try:
        return function(*args)
    except ValueError as exc:
        raise IrwError(str(exc)) from None


def _explain_blanks(frame: pd.DataFrame) -> pd.DataFrame:
    """A blank topics_needed (or anova_topics_needed) -- more topics than any design searched
    -- is explained in a column ``note``, present when a row has one."""
    from .power import MAX_TOPICS

    blanks = [(c, t) for c, t in (("topics_needed", "the paired t-test"), ("anova_topics_needed", "the ANOVA"))
              if c in frame.columns and frame[c].isna().any()]
    for c, _ in blanks:  # counts with a blank, not floats
        frame[c] = pd.Series([None if pd.isna(v) else int(v) for v in frame[c]], index=frame.index, dtype=object)
    if blanks:
        def note(row) -> str:
            tests = [t for c, t in blanks if pd.isna(row[c])]
            if not tests:
                return ""
            return (f"{' and '.join(tests)} {'needs' if len(tests) == 1 else 'need'} more than {MAX_TOPICS:,} "
                    f"topics (the largest topic set searched) to detect a difference of {row['delta']:g}")

        frame["note"] = [note(row) for _, row in frame.iterrows()]
    return frame
