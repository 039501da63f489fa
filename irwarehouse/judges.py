"""Judging the judges: two judgment sets of one collection compared, as assessors and as
rankings of systems (SPEC §5, "Agreement of two judgment sets").

A new judgment set B (an automatic judge, a second assessor, a pool) is compared with a
reference set A (the official qrels) in two ways:

- **as assessors** (:func:`compare_qrels`, ``irw qrels compare``): over the documents both
  judged, the confusion matrix of grades, Cohen's kappa on the binary labels (grade >= L),
  weighted kappa on the grades (linear and quadratic weights) and Krippendorff's alpha
  (nominal on the binary labels, ordinal on the grades), per topic and overall, with
  bootstrap intervals over topics; and the documents only one set judged. The counts are
  one set-based query (``sql/qrels_compare.sql``), run through the engine interface, so
  the Spark engine runs it too; the statistics are :func:`irwarehouse.stats.agreement`,
  vectorized over topics and bootstrap samples.
- **as rankings** (:func:`compare_rankings`, ``irw qrels rankings``): for each measure, each
  run's mean score and rank under A and under B and its rank shift (rank under A minus rank
  under B: positive when B ranks it higher), per group of runs (a metadata column: team by
  default) the mean shift with a permutation test of it against random groups of the same
  size (:func:`irwarehouse.stats.group_mean_test`, corrected over the groups), the rank
  correlations of the two orderings (``irw correlate``'s, and Kendall's tau on A's top k),
  and the significance decisions under B against those under A (``irw discpower
  --reference-qrels``'s). Both qrels are evaluated together (engine.many: in one pass over
  their root's base where they are derived qrels of one root).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import catalogue, significance, sql, stats
from .connection import engine_of
from .engine import evaluation, many
from .errors import IrwError, note
from .measures import Measure
from .options import RankingOptions
from .result import Result
from .significance_tests import correction as check_correction

AGREEMENT_TABLES = ("agreement", "intervals", "confusion", "only-a", "only-b")
RANKING_TABLES = ("runs", "groups", "correlation", "decisions")
ALL = "all"  # the row over every topic
UNJUDGED = "unjudged"  # the confusion matrix's row and column of documents one set did not judge


def check_pair(source, a: str, b: str) -> None:
    """Both qrels exist, and they are two."""
    catalogue.qrels_info(source, a)
    catalogue.qrels_info(source, b)
    if a == b:
        raise IrwError(f"compare two different qrels (both are {a!r})")


def _check_int(value, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise IrwError(f"{name} must be an integer of at least {minimum}, got {value!r}")
    return int(value)


# ------------------------------------------------------------------ the two sets as assessors

@dataclass
class Counts:
    """The documents two qrels judged, per topic: ``C[t]`` the confusion matrix (rows A's
    grade, columns B's, over ``grades``, the grades of the documents both judged), ``only_a``
    and ``only_b`` the documents one set judged; ``cells`` the query's rows (topic, grade_a,
    grade_b, documents; a grade NaN where its set did not judge)."""

    a: str
    b: str
    topics: list[str]
    grades: np.ndarray
    C: np.ndarray
    only_a: np.ndarray
    only_b: np.ndarray
    cells: pd.DataFrame


def pair_counts(source, a: str, b: str) -> Counts:
    """The documents judged by ``a`` and by ``b``, counted per topic and pair of grades in one
    query (sql/qrels_compare.sql, ``cells``) on the engine of ``source``."""
    engine = engine_of(source)
    check_pair(engine, a, b)
    P = {name: sql.param(name, engine.dialect) for name in ("a", "b")}
    rows = engine.rows(sql.statement("qrels_compare.sql", "cells", P, dialect=engine.dialect), {"a": a, "b": b})
    cells = pd.DataFrame(rows, columns=["topic", "grade_a", "grade_b", "documents"])
    cells["documents"] = cells["documents"].astype(np.int64)
    for column in ("grade_a", "grade_b"):
        cells[column] = cells[column].astype(np.float64)  # NaN: not judged by that set
    topics = sorted(set(cells["topic"]))
    both = cells.dropna(subset=["grade_a", "grade_b"])
    grades = np.unique(np.concatenate([both["grade_a"].to_numpy(), both["grade_b"].to_numpy()]))
    t = {topic: i for i, topic in enumerate(topics)}
    g = {grade: i for i, grade in enumerate(grades)}
    C = np.zeros((len(topics), grades.size, grades.size))
    np.add.at(C, (both["topic"].map(t).to_numpy(dtype=np.int64), both["grade_a"].map(g).to_numpy(dtype=np.int64),
                  both["grade_b"].map(g).to_numpy(dtype=np.int64)), both["documents"].to_numpy(np.float64))
    only_a = np.zeros(len(topics), dtype=np.int64)
    only_b = np.zeros(len(topics), dtype=np.int64)
    part = cells[cells["grade_b"].isna()]
    np.add.at(only_a, part["topic"].map(t).to_numpy(dtype=np.int64), part["documents"].to_numpy())
    part = cells[cells["grade_a"].isna()]
    np.add.at(only_b, part["topic"].map(t).to_numpy(dtype=np.int64), part["documents"].to_numpy())
    if C.sum() == 0:
        note(f"qrels {a} and {b} judge no document in common: their agreement is undefined")
    return Counts(a, b, topics, grades.astype(np.int64), C, only_a, only_b, cells)


def agreement_frame(counts: Counts, rel_level: int = 1) -> pd.DataFrame:
    """Per topic and overall (topic ``all``, over every document both judged): the documents
    judged by both and by one only, the relevant ones among those both judged under each,
    and the agreement statistics (stats.agreement)."""
    per = stats.agreement(counts.C, counts.grades, rel_level)
    overall = stats.agreement(counts.C.sum(axis=0), counts.grades, rel_level)
    frame = pd.DataFrame({"topic": [*counts.topics, ALL]})
    frame["both"] = np.append(per["both"], overall["both"]).astype(np.int64)
    frame["only_a"] = np.append(counts.only_a, counts.only_a.sum())
    frame["only_b"] = np.append(counts.only_b, counts.only_b.sum())
    for name in ("relevant_a", "relevant_b"):
        frame[name] = np.append(per[name], overall[name]).astype(np.int64)
    for name in stats.AGREEMENT_STATISTICS:
        frame[name] = np.append(per[name], overall[name])
    return frame


def intervals_frame(counts: Counts, rel_level: int = 1, B: int = 1000, seed: int = 0,
                    level: float = 0.95) -> pd.DataFrame:
    """Each overall statistic with its bootstrap percentile interval over the topics both
    sets judged a document of (stats.agreement_intervals: B samples of the topics with
    replacement, seeded); ``defined``: the samples where the statistic is defined."""
    shared = counts.C.sum(axis=(1, 2)) > 0
    if not shared.any():
        raise IrwError(f"qrels {counts.a} and {counts.b} judge no document in common: no interval")
    try:
        intervals = stats.agreement_intervals(counts.C[shared], counts.grades, rel_level, B, seed, level)
    except ValueError as exc:
        raise IrwError(str(exc)) from None
    overall = stats.agreement(counts.C.sum(axis=0), counts.grades, rel_level)
    return pd.DataFrame([{"statistic": name, "value": float(overall[name]), "ci_low": intervals[name][0],
                          "ci_high": intervals[name][1], "level": level, "B": B, "seed": seed,
                          "topics": int(shared.sum()), "defined": intervals[name][2]}
                         for name in stats.AGREEMENT_STATISTICS])


def confusion_frame(counts: Counts, per_topic: bool = False) -> Result:
    """The confusion matrix of grades: a row per grade of A (and ``unjudged``: the documents
    only B judged), a column ``b=G`` per grade of B (and ``b=unjudged``: only A judged), over
    every topic (topic ``all``) and, with ``per_topic``, per topic first."""
    cells = counts.cells
    grades_a = sorted(int(x) for x in cells["grade_a"].dropna().unique())
    grades_b = sorted(int(x) for x in cells["grade_b"].dropna().unique())
    row_keys = [*grades_a, None]
    col_keys = [*grades_b, None]
    keyed = cells.assign(ga=cells["grade_a"].astype(object).where(cells["grade_a"].notna(), None),
                         gb=cells["grade_b"].astype(object).where(cells["grade_b"].notna(), None))

    def label(grade) -> str:
        return UNJUDGED if grade is None else str(int(grade))

    def block(part: pd.DataFrame, topic: str) -> list[dict]:
        found: dict[tuple, int] = {}
        for ga, gb, n in zip(part["ga"], part["gb"], part["documents"]):
            key = (None if ga is None else int(ga), None if gb is None else int(gb))
            found[key] = found.get(key, 0) + int(n)
        out = []
        for ga in row_keys:
            row = {"topic": topic, "grade_a": label(ga)}
            for gb in col_keys:
                row[f"b={label(gb)}"] = None if ga is None and gb is None else found.get((ga, gb), 0)
            out.append(row)
        return out

    rows = []
    if per_topic:
        for topic in counts.topics:
            rows += block(keyed[keyed["topic"] == topic], topic)
    return Result.of(rows + block(keyed, ALL))


def only_frame(source, a: str, b: str, side: str) -> Result:
    """The documents only qrels ``a`` (side ``a``) or only ``b`` (side ``b``) judged: topic,
    docno, their grade there, and the other qrels's rel where it lists the document without
    assessing it (rel < 0)."""
    engine = engine_of(source)
    check_pair(engine, a, b)
    other = "b" if side == "a" else "a"
    P = {name: sql.param(name, engine.dialect) for name in ("a", "b")}
    rows = engine.rows(sql.statement("qrels_compare.sql", "only", P, side, dialect=engine.dialect),
                       {"a": a, "b": b})
    return Result(["topic", "docno", f"grade_{side}", f"rel_{other}"],
                  [(t, d, int(g), None if o is None else int(o)) for t, d, g, o in rows])


def compare_qrels(source, a: str, b: str, what: str = "agreement", rel_level: int = 1, B: int = 1000,
                  seed: int = 0, level: float = 0.95, per_topic: bool = False) -> Result:
    """One table comparing the judgment sets ``a`` (the reference) and ``b`` (AGREEMENT_TABLES):
    ``agreement`` per topic and overall, ``intervals`` (bootstrap over topics), ``confusion``
    (the matrix of grades; ``per_topic`` adds each topic's), ``only-a`` / ``only-b`` (the
    documents one set judged)."""
    if what not in AGREEMENT_TABLES:
        raise IrwError(f"unknown table {what!r}; valid: {', '.join(AGREEMENT_TABLES)}")
    rel_level = _check_int(rel_level, "the relevance level", 0)
    if what in ("only-a", "only-b"):
        return only_frame(source, a, b, what[-1])
    counts = pair_counts(source, a, b)
    if what == "agreement":
        return Result.of(agreement_frame(counts, rel_level))
    if what == "intervals":
        return Result.of(intervals_frame(counts, rel_level, B, seed, level))
    return confusion_frame(counts, per_topic)


# ------------------------------------------------------------------ the two sets as rankings

@dataclass
class Rankings:
    """Per measure label, the run x topic matrices under ``a`` and ``b`` over the same runs and
    topics (the topics both evaluate), and each run's group (the metadata column ``by``)."""

    a: str
    b: str
    by: str
    labels: list[str]
    run_ids: list[str]
    groups: list[str]
    under_a: dict[str, significance.Matrix]
    under_b: dict[str, significance.Matrix]

    def means(self, label: str) -> tuple[np.ndarray, np.ndarray]:
        """Each run's mean under A and under B (as ``irw eval`` computes a mean)."""
        return stats.row_means(self.under_a[label].X), stats.row_means(self.under_b[label].X)


def rankings_of(per_a: pd.DataFrame, per_b: pd.DataFrame, a: str, b: str, measures: list[Measure],
                run_ids: list[str], groups: dict[str, str], by: str = "team") -> Rankings:
    """:class:`Rankings` from the per-topic scores (run_id, topic, measure, value) of the runs
    under ``a`` and under ``b``, from any engine."""
    if len(run_ids) < 2:
        raise IrwError(f"need at least two runs, got {len(run_ids)}")
    mats_a = significance.matrices(per_a, a, measures, run_ids)
    mats_b = significance.matrices(per_b, b, measures, run_ids)
    under_a, under_b = {}, {}
    for label in mats_a:
        under_a[label], under_b[label] = significance.aligned(mats_a[label], mats_b[label])
    return Rankings(a, b, by, list(mats_a), list(run_ids), [groups[r] for r in run_ids], under_a, under_b)


def rankings(con, a: str, b: str, measures: list[Measure], run_ids: list[str], topics: str = "qrels",
             by: str = "team", store: bool = True) -> Rankings:
    """:class:`Rankings` of the runs ``run_ids`` (of ``a``'s collection) under ``a`` and ``b``,
    both evaluated by one call of engine.many.evaluate_many (kept in ``scores`` if ``store``
    and the warehouse may write)."""
    check_pair(con, a, b)
    collection = catalogue.collection_of(con, a)
    groups = catalogue.groups_of(con, run_ids, collection, by)
    if len(run_ids) < 2:
        raise IrwError(f"need at least two runs, got {len(run_ids)}")
    per = many.evaluate_many(con, [a, b], list(measures), list(run_ids), topics=topics, store=store,
                             collection=collection).df()
    part = {q: frame.drop(columns="qrels") for q, frame in per.groupby("qrels", sort=False)}
    empty = per.iloc[0:0].drop(columns="qrels")
    for q in (a, b):
        significance.check_evaluated(con, part.get(q, empty), q, run_ids, topics)
    return rankings_of(part.get(a, empty), part.get(b, empty), a, b, measures, run_ids, groups, by)


def rankings_on(source, a: str, b: str, measures: list[Measure], run_ids: list[str],
                topics: str = "qrels", by: str = "team") -> Rankings:
    """:class:`Rankings` computed on any engine (the Spark engine, say): each qrels evaluated by
    the engine's query of engine.evaluation (the scores are read, not stored)."""
    engine = engine_of(source)
    check_pair(engine, a, b)
    collection = catalogue.collection_of(engine, a)
    groups = catalogue.groups_of(engine, run_ids, collection, by)
    if len(run_ids) < 2:
        raise IrwError(f"need at least two runs, got {len(run_ids)}")
    per = {}
    for q in (a, b):
        query, params, _, _ = evaluation.scores_query(engine, q, list(measures), list(run_ids), topics,
                                                      collection=collection)
        per[q] = pd.DataFrame(engine.rows(f"SELECT run_id, topic, measure, value FROM ({query}) AS scored",
                                          params), columns=["run_id", "topic", "measure", "value"])
        significance.check_evaluated(engine, per[q], q, run_ids, topics)
    return rankings_of(per[a], per[b], a, b, measures, run_ids, groups, by)


def runs_frame(r: Rankings) -> pd.DataFrame:
    """Per measure and run: its group, mean score and rank under A and under B (rank: 1 + the
    runs scoring strictly higher), and its rank shift, rank under A minus rank under B
    (positive: B ranks it higher). Ordered by measure, then rank under A."""
    parts = []
    for label in r.labels:
        score_a, score_b = r.means(label)
        rank_a, rank_b = stats.competition_ranks(score_a), stats.competition_ranks(score_b)
        part = pd.DataFrame({"measure": label, "run_id": r.run_ids, r.by: r.groups,
                             "score_a": score_a, "rank_a": rank_a, "score_b": score_b, "rank_b": rank_b,
                             "shift": rank_a - rank_b, "topics": len(r.under_a[label].topics)})
        parts.append(part.sort_values(["rank_a", "run_id"], kind="stable"))
    return pd.concat(parts, ignore_index=True)


def groups_frame(r: Rankings, permutations: int = 10000, seed: int = 0, correction: str = "holm",
                 alpha: float = 0.05) -> pd.DataFrame:
    """Per measure and group of runs: its runs, their mean score under A and B, the mean rank
    shift, and the permutation test of the mean shift against random groups of the same size
    (stats.group_mean_test: ``permutations`` draws, seeded, two-sided), its p-value adjusted
    over the groups of the measure (``correction``) and ``flag``: ``favoured`` (B ranks the
    group's runs higher than chance would: adjusted p < alpha, mean shift above the mean of
    all runs) or ``disfavoured``. Ordered by measure, then mean shift, largest first."""
    check_correction(correction)
    if not 0 < alpha < 1:
        raise IrwError(f"alpha must be between 0 and 1 (exclusive), got {alpha}")
    frame = runs_frame(r)
    shifts = np.vstack([frame.loc[frame["measure"] == label].set_index("run_id").loc[r.run_ids, "shift"]
                        .to_numpy(np.float64) for label in r.labels])
    try:
        test = stats.group_mean_test(shifts, r.groups, B=permutations, seed=seed)
    except ValueError as exc:
        raise IrwError(str(exc)) from None
    means = frame.groupby(["measure", r.by], sort=False)[["score_a", "score_b"]].mean()
    parts = []
    for m, label in enumerate(r.labels):
        p = test["p"][m]
        adjusted = stats.adjust(p, correction)
        flagged = adjusted < alpha
        above = test["mean"][m] > test["mu"][m]
        part = pd.DataFrame({
            "measure": label, r.by: test["labels"], "runs": test["size"],
            "mean_score_a": [means.loc[(label, g), "score_a"] for g in test["labels"]],
            "mean_score_b": [means.loc[(label, g), "score_b"] for g in test["labels"]],
            "mean_shift": test["mean"][m], "p_value": p, "p_adjusted": adjusted,
            "flag": [("favoured" if up else "disfavoured") if f else None for f, up in zip(flagged, above)]})
        parts.append(part.sort_values(["mean_shift", r.by], ascending=[False, True], kind="stable"))
    out = pd.concat(parts, ignore_index=True)
    out.insert(len(out.columns) - 1, "correction", correction)
    return out


def correlation_frame(r: Rankings, top_k: int = 10, rbo_p: float = 0.9) -> pd.DataFrame:
    """Per measure: the rank correlations of the orderings by mean score under A (the
    reference of tau_AP) and B (significance.correlation: ``irw correlate``'s), and Kendall's
    tau-b over the runs A ranks within its top ``top_k``."""
    top_k = _check_int(top_k, "top k", 2)
    rows = []
    for label in r.labels:
        row = significance.correlation(r.under_a[label], r.under_b[label], rbo_p)
        score_a, score_b = r.means(label)
        top = stats.kendall_tau_top(score_a, score_b, top_k)
        rows.append({"measure": label, "runs": row["n_systems"], "topics": row["topics"],
                     "kendall_tau": row["kendall_tau"], "kendall_tau_a": row["kendall_tau_a"],
                     "tau_ap": row["tau_ap"], "top_k": top_k, "kendall_tau_top": top,
                     "rbo": row["rbo"], "pearson": row["pearson"]})
    return pd.DataFrame(rows)


def decisions_frame(r: Rankings, test: str = "t", correction: str = "none", alpha: float = 0.05,
                    B: int | None = None, seed: int = 0, progress=None) -> pd.DataFrame:
    """Per measure: the significance decisions over every run pair under B against those under
    A (``irw discpower --qrels B --reference-qrels A``: significance.discpower_rows):
    significant pairs under each, the fraction of pairs with the same decision
    (``agreement``: significant under both in the same direction, or under neither), misses
    (significant under A only), false alarms (under B only, or under both in opposite
    directions: ``opposite``) and the four-way table."""
    B = significance.check_test(test, alpha, B)
    rows = significance.discpower_rows(  # the matrices are looked up by the measures' labels
        r.b, r.under_b, r.under_a, list(r.labels), test, correction, alpha, B, seed, None, progress,
        agreement_keys=("tp", "fp", "fn", "tn", "misses", "false_alarms", "opposite", "significant_reference"))
    out = []
    for row in rows:
        out.append({"measure": row["measure"], "test": test, "correction": correction, "alpha": alpha,
                    "B": row["B"], "runs": row["runs"], "topics": row["topics"], "pairs": row["pairs"],
                    "significant_a": row["significant_reference"], "significant_b": row["significant"],
                    "agreement": (row["tp"] + row["tn"]) / row["pairs"] if row["pairs"] else np.nan,
                    "misses": row["misses"], "false_alarms": row["false_alarms"], "opposite": row["opposite"],
                    "tp": row["tp"], "fp": row["fp"], "fn": row["fn"], "tn": row["tn"]})
    return pd.DataFrame(out)


def check_options(what: str, test: str = "t", correction: str = "none", alpha: float = 0.05,
                  B: int | None = None, top_k: int = 10, rbo_p: float = 0.9, permutations: int = 10000,
                  bias_correction: str = "holm") -> None:
    """The options of a rankings table, checked before anything is evaluated."""
    if what not in RANKING_TABLES:
        raise IrwError(f"unknown table {what!r}; valid: {', '.join(RANKING_TABLES)}")
    significance.check_test(test, alpha, B)
    for name, value in (("correction", correction), ("bias correction", bias_correction)):
        check_correction(value, name)
    _check_int(top_k, "top k", 2)
    _check_int(permutations, "the number of permutations", 100)
    if not 0 < rbo_p < 1:
        raise IrwError(f"the persistence of RBO must be between 0 and 1 (exclusive), got {rbo_p}")


def check(o: RankingOptions) -> None:
    """The options of ``irw qrels rankings`` (options.RankingOptions), checked."""
    check_options(o.what, o.test, o.correction, o.alpha, o.B, o.top_k, o.rbo_p, o.permutations,
                  o.bias_correction)


def compare_rankings(con, a: str, b: str, measures: list[Measure], run_ids: list[str],
                     options: RankingOptions = RankingOptions(), progress=None) -> pd.DataFrame:
    """One table comparing the rankings of the runs under ``a`` (the reference) and ``b``
    (RANKING_TABLES, ``options.what``): ``runs``, ``groups``, ``correlation`` or
    ``decisions``."""
    check(options)
    r = rankings(con, a, b, measures, run_ids, options.topics, options.by)
    return table(r, options, progress)


def table(r: Rankings, o: RankingOptions, progress=None) -> pd.DataFrame:
    """The table ``o.what`` (RANKING_TABLES) of rankings already computed."""
    what = o.what
    if what == "runs":
        return runs_frame(r)
    if what == "groups":
        return groups_frame(r, o.permutations, o.seed, o.bias_correction, o.alpha)
    if what == "correlation":
        return correlation_frame(r, o.top_k, o.rbo_p)
    if what == "decisions":
        return decisions_frame(r, o.test, o.correction, o.alpha, o.B, o.seed, progress)
    raise IrwError(f"unknown table {what!r}; valid: {', '.join(RANKING_TABLES)}")
