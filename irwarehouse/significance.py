"""From warehouse scores to published answers: significance tests, discriminative power,
rank correlations and confidence intervals (SPEC §5).

SQL hands over per-topic score matrices (runs x topics, from ``evaluate``); the statistics
in :mod:`irwarehouse.stats` do the rest, vectorized over all run pairs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import catalogue, connection, sql, stats
from .engine import evaluation
from .errors import IrwError
from .measures import Measure, parse
from .significance_tests import CORRECTIONS, MIN_B, TESTS


@dataclass
class Matrix:
    """Per-topic scores of one measure under one qrels: X[run, topic]."""

    qrels: str
    measure: str
    run_ids: list[str]
    topics: list[str]
    X: np.ndarray

    @property
    def means(self) -> np.ndarray:
        return self.X.mean(axis=1)


def matrix(per: pd.DataFrame, label: str, run_ids: list[str],
           topics: list[str] | None = None) -> tuple[np.ndarray, list[str]]:
    """X[run, topic] of one measure from ``evaluate``'s long frame: runs in the order given,
    topics as given (default: sorted); a missing score is NaN."""
    wide = per[per["measure"] == label].pivot(index="run_id", columns="topic", values="value")
    wide = wide.reindex(index=list(run_ids),
                        columns=sorted(wide.columns) if topics is None else list(topics))
    return wide.to_numpy(dtype=float), list(wide.columns)


def score_matrices(con, qrels: str, measures: list[Measure], run_ids: list[str],
                   topics: str = "qrels", store: bool = True) -> dict[str, Matrix]:
    """Evaluate ``measures`` in one pass (kept in ``scores`` if ``store``) and return, per
    measure, the run x topic matrix over the topics every run has a score for."""
    if len(run_ids) < 2:
        raise IrwError(f"need at least two runs, got {len(run_ids)}")
    per = evaluation.evaluate(con, qrels, list(measures), run_ids, topics=topics, store=store).df()
    return matrices(per, qrels, measures, run_ids)


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
                 store: bool = True) -> Matrix:
    """The run x topic matrix of one measure (see :func:`score_matrices`)."""
    return score_matrices(con, qrels, [measure], run_ids, topics, store)[str(measure)]


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
             progress=None) -> stats.PairResult:
    """One test over all run pairs of X: the function the registry names for ``test``."""
    B = check_test(test, alpha, B)
    spec = TESTS[test]
    kwargs = {"B": B, "seed": seed, "progress": progress} if spec.default_B is not None else {}
    if spec.takes_alpha:
        kwargs["alpha"] = alpha
    try:
        return getattr(stats, spec.function)(X, **kwargs)
    except ValueError as exc:
        raise IrwError(str(exc)) from None


def _with_correction(result: stats.PairResult, correction: str) -> stats.PairResult:
    if correction not in CORRECTIONS:
        raise IrwError(f"unknown correction {correction!r}; valid: {', '.join(CORRECTIONS)}")
    if correction == "none":
        return result
    adjusted = stats.adjust(result.p, correction)
    return stats.PairResult(result.i, result.j, result.mean_diff, result.stat, adjusted,
                            result.test, result.extra, result.means)


def _align(a: Matrix, b: Matrix) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Both matrices over the same runs (a's order) and their common topics."""
    if a.run_ids != b.run_ids:
        common = [r for r in a.run_ids if r in set(b.run_ids)]
        if len(common) < 2:
            raise IrwError("the two conditions share fewer than two runs")
    else:
        common = a.run_ids
    topics = [t for t in a.topics if t in set(b.topics)]
    if len(topics) < 2:
        raise IrwError("the two conditions share fewer than two topics")
    ia = [a.run_ids.index(r) for r in common]
    ib = [b.run_ids.index(r) for r in common]
    ta = [a.topics.index(t) for t in topics]
    tb = [b.topics.index(t) for t in topics]
    return a.X[np.ix_(ia, ta)], b.X[np.ix_(ib, tb)], common


def aligned(a: Matrix, b: Matrix) -> tuple[Matrix, Matrix]:
    """Both matrices over their common runs (a's order) and topics (a's order)."""
    xa, xb, runs = _align(a, b)
    topics = [t for t in a.topics if t in set(b.topics)]
    return (Matrix(a.qrels, a.measure, runs, topics, xa), Matrix(b.qrels, b.measure, runs, topics, xb))


def discpower(con, qrels: str, measures: list[Measure], run_ids: list[str], test: str = "t",
              correction: str = "none", alpha: float = 0.05, B: int | None = None, seed: int = 0,
              topics: str = "qrels", reference_qrels: str | None = None,
              reference_measure: Measure | None = None, progress=None) -> pd.DataFrame:
    """One row per measure: discriminative power, and agreement with a reference condition."""
    B = check_test(test, alpha, B)
    mats = score_matrices(con, qrels, measures, run_ids, topics)
    refs = {}
    if reference_qrels or reference_measure:
        wanted = [reference_measure] if reference_measure else measures
        refs = score_matrices(con, reference_qrels or qrels, wanted, run_ids, topics)
    return pd.DataFrame(discpower_rows(qrels, mats, refs, measures, test, correction, alpha, B, seed,
                                       reference_measure, progress))


def discpower_rows(qrels: str, mats: dict[str, Matrix], refs: dict[str, Matrix], measures: list[Measure],
                   test: str, correction: str, alpha: float, B: int | None, seed: int,
                   reference_measure: Measure | None = None, progress=None,
                   agreement_keys=("misses", "false_alarms", "tp", "fp", "fn", "tn")) -> list[dict]:
    """The rows of :func:`discpower` from score matrices already computed: ``mats`` per measure
    under ``qrels``, ``refs`` the reference condition's (empty: none), by measure label (the
    reference measure's when one is given); ``agreement_keys``, the counts of
    stats.compare_to_reference each row takes (also: ``significant_reference``, ``opposite``)."""
    rows = []
    for measure in measures:
        m = mats[str(measure)]
        ref = None
        if refs:
            ref = refs[str(reference_measure or measure)]
            X, R, _ = _align(m, ref)
        else:
            X, R = m.X, None
        result = _with_correction(run_test(X, test, B, seed, alpha, progress), correction)
        row = {"qrels": qrels, "measure": m.measure, "test": test, "correction": correction,
               "alpha": alpha, "B": B, "runs": X.shape[0], "topics": X.shape[1]}
        row.update(stats.discriminative_power(result, alpha))
        if TESTS[test].estimated_difference:
            summary = stats.estimated_difference_summary(result)
            row["estimated_difference_max"] = summary["max"]
            row["estimated_difference_median"] = summary["median"]
        if R is not None:
            reference = _with_correction(run_test(R, test, B, seed, alpha, progress), correction)
            agreement = stats.compare_to_reference(result, reference, alpha)
            row.update({"reference_qrels": ref.qrels, "reference_measure": ref.measure,
                        **{k: agreement[k] for k in agreement_keys}})
        rows.append(row)
    return rows


def pvalues(con, qrels: str, measure: Measure, run_ids: list[str], test: str = "t",
            correction: str = "none", alpha: float = 0.05, B: int | None = None, seed: int = 0,
            topics: str = "qrels", progress=None) -> pd.DataFrame:
    """Every run pair with its p-value (and adjusted p-value)."""
    return pair_frame(score_matrix(con, qrels, measure, run_ids, topics), test, correction,
                      alpha, B, seed, progress)


def pair_frame(m: Matrix, test: str = "t", correction: str = "none", alpha: float = 0.05,
               B: int | None = None, seed: int = 0, progress=None) -> pd.DataFrame:
    """Every run pair of a score matrix with its p-value, adjusted p-value and whether it is
    significant (``irw pvalues``)."""
    result = run_test(m.X, test, B, seed, alpha, progress)
    if correction not in CORRECTIONS:
        raise IrwError(f"unknown correction {correction!r}; valid: {', '.join(CORRECTIONS)}")
    frame = result.to_frame(m.run_ids, None if correction == "none" else correction)
    if correction == "none":
        frame["p_adjusted"] = frame["p_value"]
    frame["significant"] = frame["p_adjusted"] < alpha
    frame.insert(0, "measure", m.measure)
    frame.insert(0, "qrels", m.qrels)
    frame.insert(2, "test", test)
    return frame


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
    xa, xb, _ = _align(a, b)
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
            rbp_p: float = 0.8, judged_k: int = 10) -> pd.DataFrame:
    """Two runs per measure: means, difference with its 95% CI, p-values, and the
    measurement uncertainty beside them (mean RBP residual and Judged@k of each run)."""
    if run_a == run_b:
        raise IrwError("compare two different runs")
    for test in tests:
        check_test(test, alpha, B)
    uncertainty = [parse(f"RBPres(p={rbp_p})"), parse(f"Judged@{judged_k}")]
    unc = evaluation.evaluate(con, qrels, uncertainty, [run_a, run_b], topics=topics,
                              store=False).aggregate().df()
    unc = unc.set_index(["run_id", "measure"])["value"]
    mats = score_matrices(con, qrels, measures, [run_a, run_b], topics)
    rows = []
    for measure in measures:
        m = mats[str(measure)]
        diff, low, high = stats.diff_ci(m.X[0], m.X[1])
        row = {"measure": m.measure, "run_a": run_a, "run_b": run_b, "mean_a": m.X[0].mean(),
               "mean_b": m.X[1].mean(), "diff": diff, "ci_low": low, "ci_high": high,
               "topics": m.X.shape[1]}
        for test in tests:
            row[f"p_{test}"] = float(run_test(m.X, test, B, seed, alpha).p[0])
        for run, tag in ((run_a, "a"), (run_b, "b")):
            row[f"residual_{tag}"] = unc[(run, str(uncertainty[0]))]
            row[f"judged_{tag}"] = unc[(run, str(uncertainty[1]))]
        rows.append(row)
    return pd.DataFrame(rows)


def mean_intervals(con, qrels: str, measure: Measure, run_ids: list[str], topics: str = "qrels",
                   level: float = 0.95) -> pd.DataFrame:
    """Each run's mean with its t-distribution confidence interval."""
    return interval_frame(score_matrix(con, qrels, measure, run_ids, topics), level)


def interval_frame(m: Matrix, level: float = 0.95) -> pd.DataFrame:
    """Each run's mean of a score matrix with its t-distribution confidence interval
    (``irw ci``)."""
    try:
        mean, low, high = stats.mean_ci(m.X, level)
    except ValueError as exc:
        raise IrwError(str(exc)) from None
    return pd.DataFrame({"run_id": m.run_ids, "measure": m.measure, "mean": mean,
                         "ci_low": low, "ci_high": high, "topics": m.X.shape[1]})


def save(con, table: str, name: str, frame: pd.DataFrame, params: dict) -> None:
    """Keep a result in the warehouse: rows of ``frame`` under ``name`` with the parameters
    that produced them (``table`` is one of the result tables of schema.sql)."""
    if table not in ("discpower_results", "pair_tests", "correlation_matrices"):
        raise AssertionError(table)
    if not name:
        raise IrwError("a saved result needs a name")
    columns = [r[0] for r in con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position",
        [table]).fetchall()]
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
