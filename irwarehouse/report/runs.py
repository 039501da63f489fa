"""The runs' report (``irw report``): :class:`Report`, its data, built by
:func:`build_report`; its paper table (LaTeX, markdown) and its page's sections."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .. import catalogue, judgment_kinds, runsets, significance, stats
from ..engine import evaluation
from ..errors import IrwError, note
from ..judgment_kinds import GRADED
from ..measures import parse
from ..options import tie_policy
from ..output import latex_text as _latex
from ..output import markdown_text as _md
from ..significance_tests import CORRECTIONS, TESTS, correction as correction_entry
from . import figures as fg
from . import runs_figures as rf
from .sections import (FORMATS, RBO_P, SMALL, TIED, TOP, Sections, correction_text, default_correction, mark_list,
                       parse_measures, test_text)



@dataclass
class Report:
    """The data of a report. ``run_ids`` are in leaderboard order (the first measure's mean,
    descending; ties by run id), and ``labels`` name them in the paper table."""

    qrels: str
    measures: list[str]
    run_ids: list[str]
    topic_set: str
    test: str
    correction: str
    alpha: float
    B: int | None
    seed: int
    level: float
    matrices: dict[str, significance.Matrix]
    leaderboard: pd.DataFrame  # run_id, measure, mean, ci_low, ci_high, topics (irw ci)
    pairs: pd.DataFrame  # irw pvalues' rows, every measure
    correlations: pd.DataFrame  # irw correlate's row for every pair of measures
    coverage: pd.DataFrame  # run_id, Judged@k, RBP(p=φ), RBPres(p=φ): means over topics
    coverage_measures: list[str] = field(default_factory=list)
    unit: str = "run"  # what a row is: "run", or "system" (its runs' mean per topic)
    power: pd.DataFrame | None = None  # irw power's row per measure at the report's alpha
    highlight: list[str] = field(default_factory=list)  # the runs the page marks, in leaderboard order
    correction_chosen: bool = False  # the correction is the default for this many runs, not asked for
    ranking: str = "trec_eval"  # the ranking orders of the runs (run_loads.ranking_policy)
    ties: str = "trec_eval"  # the tie policy of the scores (irwarehouse.options.TIE_POLICIES)
    tie_table: pd.DataFrame | None = None  # irw ties' table for the first measure (runs only)
    tie_pairs: pd.DataFrame | None = None  # its pairs whose significance another tie policy changes
    tie_other: str | None = None  # that policy: expected, or trec_eval for a report under expected
    _groups: dict = field(default_factory=dict, repr=False, compare=False)

    # ---------------------------------------------------------------------- the data

    @property
    def labels(self) -> dict[str, str]:
        """Each run's mark in the paper table: a, b, ... or 1, 2, ... beyond 26 runs."""
        if len(self.run_ids) <= 26:
            return {r: chr(ord("a") + k) for k, r in enumerate(self.run_ids)}
        return {r: str(k + 1) for k, r in enumerate(self.run_ids)}

    def means(self, measure: str) -> dict[str, float]:
        rows = self.leaderboard[self.leaderboard["measure"] == measure]
        return dict(zip(rows["run_id"], rows["mean"]))

    def order(self, measure: str) -> list[str]:
        """The runs by their mean of ``measure``, best first (ties by run id)."""
        means = self.means(measure)
        return sorted(self.run_ids, key=lambda r: (-means[r], r))

    def beats(self, measure: str) -> dict[str, list[str]]:
        """For every run, the runs it is significantly better than under ``measure``
        (``irw pvalues``' significant pairs, the winner being the run with the larger mean),
        in leaderboard order."""
        out: dict[str, set] = {r: set() for r in self.run_ids}
        rows = self.pairs[(self.pairs["measure"] == measure) & self.pairs["significant"]]
        for a, b, diff in zip(rows["run_a"], rows["run_b"], rows["diff"]):
            if diff > 0:
                out[a].add(b)
            elif diff < 0:
                out[b].add(a)
        return {r: [s for s in self.run_ids if s in out[r]] for r in self.run_ids}

    def decisions(self, measure: str) -> tuple[list[str], np.ndarray, np.ndarray]:
        """The runs by their mean of ``measure`` (best first) and, in that order, two runs x
        runs matrices of ``irw pvalues``' pairs: the decision (1: the row's run is
        significantly better than the column's, -1: worse, 0: neither) and the adjusted
        p-value (NaN on the diagonal)."""
        runs = self.order(measure)
        n = len(runs)
        rows = self.pairs[self.pairs["measure"] == measure]
        index = pd.Index(runs)
        i, j = index.get_indexer(rows["run_a"]), index.get_indexer(rows["run_b"])
        sign = np.where(rows["significant"].to_numpy(dtype=bool),
                        np.sign(rows["diff"].to_numpy(dtype=float)), 0.0)
        signs = np.zeros((n, n))
        signs[i, j], signs[j, i] = sign, -sign
        p = np.full((n, n), np.nan)
        if "p_adjusted" in rows:
            p[i, j] = p[j, i] = rows["p_adjusted"].to_numpy(dtype=float)
        return runs, signs, p

    def group_matrix(self, measure: str) -> np.ndarray | None:
        """The groups of runs not significantly different under ``measure``
        (:func:`irwarehouse.stats.letter_groups` of :meth:`decisions`): groups x runs, runs by
        their mean of ``measure``; None when there are too many to show."""
        if measure not in self._groups:
            self._groups[measure] = stats.letter_groups(self.decisions(measure)[1] != 0)
        return self._groups[measure]

    def groups(self, measure: str) -> list[list[str]] | None:
        """The groups of :meth:`group_matrix` as lists of run ids, best run first: two runs
        in one group are not significantly different, and every pair of runs that is not
        shares a group (a compact letter display: group k is the k-th letter)."""
        G = self.group_matrix(measure)
        if G is None:
            return None
        runs = np.array(self.order(measure), dtype=object)
        return [list(runs[g]) for g in G]

    def first_screen(self) -> list[str] | None:
        """The runs the page shows first when it has more than SMALL of them: the TOP best by
        the first measure, then the highlighted runs below them (leaderboard order); None when
        the page shows every run unfolded."""
        if len(self.run_ids) <= SMALL:
            return None
        top = self.run_ids[:TOP]
        return top + [r for r in self.highlight if r not in top]

    @property
    def n_pairs(self) -> int:
        n = len(self.run_ids)
        return n * (n - 1) // 2

    def _topics_text(self) -> str:
        counts = {label: m.X.shape[1] for label, m in self.matrices.items()}
        if len(set(counts.values())) == 1:
            n = next(iter(counts.values()))
            return f"{n} topic{'s' if n != 1 else ''}"
        return "topics: " + ", ".join(f"{n} for {label}" for label, n in counts.items())

    def _method(self) -> tuple[str, str]:
        return test_text(self.test, self.B, self.seed), CORRECTIONS[self.correction].label

    def caption(self, latex: bool = False, intervals: bool = False, effects: bool = False) -> str:
        """What the paper table shows, with test, correction, alpha and topics (and what its
        ``intervals`` and ``effects`` are, when it shows them)."""
        test, correction = self._method()
        alpha = f"$\\alpha = {self.alpha:g}$" if latex else f"α = {self.alpha:g}"
        if latex:
            correction = correction.replace("-", "--")
        mark = "letter" if len(self.run_ids) <= 26 else "number"
        measures = ", ".join(self.measures)
        unit = self.unit
        systems = (" (a system's score on a topic: the mean of its runs')" if unit == "system" else "")
        text = (f"Mean {measures} of {len(self.run_ids)} {unit}s{systems} over {self._topics_text()} "
                f"(qrels {self.qrels}, topic set {self.topic_set}, ranking {self.ranking}, ties {self.ties}). A superscript lists, by "
                f"{mark}, the {unit}s a {unit} is significantly better than: {test} on the "
                f"{self.n_pairs:,} {unit} pairs of each measure, {correction}, {alpha}. Best mean per "
                f"measure in bold.")
        pct = f"{self.level * 100:g}%"
        if intervals:
            text += f" In brackets, the mean's {pct} confidence interval (t distribution)."
        if effects:
            text += (f" d_z: Cohen's effect size of the {unit}'s paired differences from the best "
                     f"{unit} of the measure over the topics, with its exact {pct} interval "
                     "(noncentral t).")
        return text

    def marked(self) -> list[dict]:
        """The paper table's rows, runs in leaderboard order: the run's ``label`` and ``run``
        id, and per measure a cell: its ``mean``, whether it is the best mean to four
        decimals (``bold``), and the ``marks`` of the runs it is significantly better than
        (:func:`mark_list`)."""
        labels = self.labels
        numbered = len(self.run_ids) > 26
        rows = [{"label": labels[r], "run": r, "cells": []} for r in self.run_ids]
        for measure in self.measures:
            means = self.means(measure)
            best = max(round(v, 4) for v in means.values())
            beats = self.beats(measure)
            for row in rows:
                run = row["run"]
                row["cells"].append({"mean": means[run], "bold": round(means[run], 4) == best,
                                     "marks": mark_list([labels[s] for s in beats[run]], numbered)})
        return rows

    def best_effects(self, measure: str) -> dict[str, tuple[float, float, float] | None]:
        """Each run's Cohen's d_z against the best run of ``measure`` (its differences from
        the best over the topics, so at most 0), with its interval: ``irw pvalues``' pair of
        the two, seen from the run; None for the best run itself."""
        best = self.order(measure)[0]
        rows = self.pairs[(self.pairs["measure"] == measure)
                          & ((self.pairs["run_a"] == best) | (self.pairs["run_b"] == best))]
        out: dict[str, tuple[float, float, float] | None] = {best: None}
        for a, b, d, lo, hi in zip(rows["run_a"], rows["run_b"], rows["effect_size"],
                                   rows["effect_low"], rows["effect_high"]):
            out[b if a == best else a] = (-d, -hi, -lo) if a == best else (d, lo, hi)
        return out

    def _marked_cells(self, mark, intervals: bool = False, effects: bool = False,
                      latex: bool = False) -> tuple[list[list[str]], list[str]]:
        """The paper table's cells (:meth:`marked`), ``mark(text, bold, superscript)``
        shaping each mean (followed by its confidence interval with ``intervals``; each
        measure followed by the d_z of :meth:`best_effects` with ``effects``); and the
        header."""
        lb = self.leaderboard.set_index(["measure", "run_id"])
        effect = {m: self.best_effects(m) for m in self.measures} if effects else {}
        dash = "--" if latex else "–"

        def interval(low, high, digits=3):
            return f"[{low:.{digits}f}, {high:.{digits}f}]".replace("-", "$-$" if latex else "−")

        rows = []
        for row in self.marked():
            cells = [row["label"], row["run"]]
            for m, c in zip(self.measures, row["cells"]):
                text = mark(f"{c['mean']:.4f}", c["bold"], c["marks"])
                if intervals:
                    ci = lb.loc[(m, row["run"])]
                    text += " " + interval(ci["ci_low"], ci["ci_high"])
                cells.append(text)
                if effects:
                    e = effect[m].get(row["run"])
                    cells.append(dash if e is None or np.isnan(e[0]) else
                                 f"{e[0]:.2f} ".replace("-", "$-$" if latex else "−")
                                 + interval(e[1], e[2], 2))
            rows.append(cells)
        header = ["", self.unit]
        for m in self.measures:
            header += [m] + ([f"{m} d_z"] if effects else [])
        return rows, header

    # ---------------------------------------------------------------------- rendering

    def render(self, fmt: str, intervals: bool = False, effects: bool = False) -> str:
        """The page (``html``) or the paper table (``latex``, ``markdown``; with its means'
        ``intervals`` and its ``effects``: see :meth:`to_latex`)."""
        if fmt not in FORMATS:
            raise IrwError(f"unknown format {fmt!r}; valid: {', '.join(FORMATS)}")
        if fmt == "html":
            return self.to_html()
        table = self.to_latex if fmt == "latex" else self.to_markdown
        return table(intervals=intervals, effects=effects)

    def to_latex(self, intervals: bool = False, effects: bool = False) -> str:
        """A booktabs table (needs ``\\usepackage{booktabs}``). With ``intervals``, each mean
        is followed by its confidence interval; with ``effects``, each measure by a column of
        each run's Cohen's d_z against the measure's best run, with its interval."""
        def mark(text, bold, sup):
            text = f"\\textbf{{{text}}}" if bold else text
            return text + (f"\\textsuperscript{{{sup.replace('–', '--')}}}" if sup else "")

        rows, header = self._marked_cells(mark, intervals, effects, latex=True)
        caption = self.caption(latex=True, intervals=intervals, effects=effects)
        lines = ["\\begin{table}[t]", "\\centering",
                 f"\\caption{{{_latex(caption, keep_math=True)}}}",
                 "\\label{tab:irw-report}",
                 "\\begin{tabular}{ll" + "r" * (len(header) - 2) + "}", "\\toprule",
                 " & ".join(_latex(h) for h in header) + " \\\\", "\\midrule"]
        for row in rows:
            lines.append(" & ".join([_latex(row[0]), _latex(row[1]), *row[2:]]) + " \\\\")
        lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
        return "\n".join(lines) + "\n"

    def to_markdown(self, intervals: bool = False, effects: bool = False) -> str:
        """A GitHub markdown table, its caption above it (``intervals``, ``effects``: as
        :meth:`to_latex`)."""
        def mark(text, bold, sup):
            return (f"**{text}**" if bold else text) + (f"<sup>{sup}</sup>" if sup else "")

        rows, header = self._marked_cells(mark, intervals, effects)
        lines = [self.caption(intervals=intervals, effects=effects), "",
                 "| " + " | ".join(_md(h) for h in header) + " |",
                 "| --- | --- |" + " ---: |" * (len(header) - 2)]
        for row in rows:
            lines.append("| " + " | ".join([_md(row[0]), _md(row[1]), *row[2:]]) + " |")
        return "\n".join(lines) + "\n"

    def to_html(self) -> str:
        """One self-contained page: every section of :data:`SECTIONS`, figures inline."""
        test, _ = self._method()
        correction = correction_text(self.correction, self.correction_chosen, len(self.run_ids), self.unit)
        meta = [f"qrels {self.qrels}", f"{len(self.run_ids)} {self.unit}s",
                f"{self._topics_text()} (topic set {self.topic_set})", f"ranking {self.ranking}, ties {self.ties}",
                f"measures {', '.join(self.measures)}", f"{test}, {correction}, α = {self.alpha:g}"]
        if self.highlight:
            meta.append(f"highlighted: {', '.join(self.highlight)}")
        return PAGE.page(self, f"Evaluation report: {self.qrels}", meta, made_by="irw report")


def build_report(con, measures, qrels: str | None = None, runs="all", topics: str = "qrels",
                 test: str = "t", correction: str | None = None, alpha: float = 0.05,
                 B: int | None = None, seed: int = 0, level: float = 0.95, judged_k: int = 10,
                 rbp_p: float = 0.8, progress=None, by: str = "run", highlight=None,
                 ties: str | None = None) -> Report:
    """The data of a report on ``runs`` (a run spec, or a list of run ids) under ``qrels``
    (default: the only loaded one) for ``measures`` (names or :class:`Measure`).

    The per-topic scores are evaluated once (and kept in ``scores`` when the connection may
    write). Each measure's means and ``level`` confidence intervals are ``irw ci``'s, its
    run pairs ``irw pvalues``' with ``test``, ``correction`` and ``alpha``; the measures are
    correlated pairwise as by ``irw correlate``; coverage is each run's mean Judged@k,
    RBP(p) and RBP residual over the topics, as ``irw compare`` reports them; the power line
    is ``irw power``'s minimum detectable difference at 80% power and ``alpha``. With
    ``by="system"`` the rows are the runs' systems (their per-topic means: ``--by system``
    of those commands), a system's coverage the mean of its runs'.

    Without a ``correction``, the pairs are corrected by Holm's method when there are more
    than :data:`~irwarehouse.report.sections.AUTO_CORRECTION_RUNS` runs (the page says so),
    else not. ``highlight``: run ids (systems with ``by="system"``) of the report that the
    page marks in its tables and figures. ``ties``: the tie policy of every score (default
    trec_eval), named with the runs' ranking orders on the page and in the caption."""
    parsed = parse_measures(measures)
    B = significance.check_test(test, alpha, B)
    if correction is not None:
        correction_entry(correction)
    if not 0 < level < 1:
        raise IrwError(f"the confidence level must be between 0 and 1 (exclusive), got {level}")
    coverage_measures = [parse(f"Judged@{judged_k}"), parse(f"RBP(p={rbp_p})"), parse(f"RBPres(p={rbp_p})")]
    qrels = qrels or catalogue.default_qrels(con)
    run_ids = runsets.resolve(con, runs, qrels=qrels) if isinstance(runs, str) else list(runs)
    highlight = _highlighted(highlight, run_ids, by) if by == "run" else highlight

    ties = tie_policy(ties)
    mats = significance.score_matrices(con, qrels, parsed, run_ids, topics, by=by, ties=ties)
    labels = [str(m) for m in parsed]
    rows = mats[labels[0]].run_ids  # the runs, or the systems
    highlight = _highlighted(highlight, rows, by)
    chosen, correction = correction is None, default_correction(correction, len(rows))
    names = {"system": "run_id", "system_a": "run_a", "system_b": "run_b"}  # a row is a system
    leaderboard = pd.concat([significance.interval_frame(mats[label], level) for label in labels],
                            ignore_index=True).rename(columns=names)
    pairs = []
    for k, label in enumerate(labels):
        step = None if progress is None else (
            lambda done, total, k=k: progress(k * total + done, len(labels) * total))
        pairs.append(significance.pair_frame(mats[label], test, correction, alpha, B, seed, step,
                                             level).rename(columns=names))
    power = significance.power_frame(mats, labels, alpha)
    correlations = pd.DataFrame(
        [significance.correlation(mats[a], mats[b], RBO_P) for i, a in enumerate(labels) for b in labels[i + 1:]],
        columns=["measure_a", "qrels_a", "measure_b", "qrels_b", "topics", "kendall_tau",
                 "kendall_tau_a", "tau_ap", "rbo", "pearson", "n_systems"])
    cov_labels = [str(m) for m in coverage_measures]
    if judgment_kinds.serves(catalogue.judgments_of(con, qrels), GRADED):
        per = evaluation.evaluate(con, qrels, coverage_measures, run_ids, topics=topics, store=False, ties=ties)
        cov = per.aggregate().df().pivot(index="run_id", columns="measure", values="value")
    else:  # coverage is of graded judgments, which preferences do not give
        note(f"qrels {qrels} holds no graded judgments: the report shows no coverage ({', '.join(cov_labels)})")
        cov = pd.DataFrame(index=pd.Index(run_ids, name="run_id"), columns=cov_labels, dtype=float)
    if by == "system":  # a system's coverage: the mean of its runs'
        cov = cov.groupby(cov.index.map(mats[labels[0]].systems.system_of())).mean()
    coverage = cov.reindex(index=rows, columns=cov_labels).reset_index(names="run_id")
    coverage.columns.name = None

    tie_frame = tie_pairs = other = None
    if by == "run":
        tie_frame, tie_pairs, other = _tie_data(con, qrels, parsed[0], run_ids, topics, ties, pairs[0],
                                                test, correction, alpha, B, seed, level)
    means = dict(zip(rows, mats[labels[0]].means))
    ordered = sorted(rows, key=lambda r: (-means[r], r))  # as Report.order
    coverage = coverage.set_index("run_id").loc[ordered].reset_index()
    return Report(qrels=qrels, measures=labels, run_ids=ordered, topic_set=topics, test=test,
                  correction=correction, alpha=alpha, B=B, seed=seed, level=level, matrices=mats,
                  leaderboard=leaderboard, pairs=pd.concat(pairs, ignore_index=True),
                  correlations=correlations, coverage=coverage, coverage_measures=cov_labels,
                  unit=by, power=power, highlight=[r for r in ordered if r in highlight],
                  correction_chosen=chosen,
                  ranking=evaluation.ranking_orders(con, catalogue.collection_of(con, qrels), run_ids),
                  ties=ties.name, tie_table=tie_frame, tie_pairs=tie_pairs, tie_other=other)


def _tie_data(con, qrels, measure, run_ids, topics, ties, pairs, test, correction, alpha, B, seed, level):
    """The ties section's data for the first ``measure``: irw ties' table (none when no run
    has a tie) and, where the measure has an exact expected value, the pairs of ``pairs``
    (the report's, under tie policy ``ties``) whose significance differs under expected (or,
    for a report under expected, under trec_eval), with that policy's name."""
    from .. import ties as tie_module
    from ..engine.rendering import has_expectation

    counts = tie_module.tie_counts(con, qrels, run_ids)
    if not (counts["tie_groups"] > 0).any():
        return tie_module.tie_table_empty(), None, None
    table = tie_module.tie_table(con, qrels, [measure], run_ids, topics, counts)
    if not has_expectation(measure):
        return table, None, None
    other = "trec_eval" if ties.name == "expected" else "expected"
    matrix = significance.score_matrices(con, qrels, [measure], run_ids, topics, store=False, ties=other)[str(measure)]
    theirs = significance.pair_frame(matrix, test, correction, alpha, B, seed, level=level)
    both = pairs.merge(theirs[["run_a", "run_b", "diff", "p_adjusted", "significant"]], on=["run_a", "run_b"],
                       suffixes=("", "_other"))
    changed = both[both["significant"] != both["significant_other"]]
    return table, changed[["run_a", "run_b", "diff", "p_adjusted", "significant", "diff_other",
                           "p_adjusted_other", "significant_other"]].reset_index(drop=True), other


def _highlighted(highlight, rows: list[str], unit: str) -> list[str]:
    """The ids of ``highlight`` (a list, or one string; each may be comma-separated), each a
    row of the report: a run (a system with ``unit`` system); else a one-line error."""
    wanted = [highlight] if isinstance(highlight, str) else list(highlight or [])
    ids = [x.strip() for item in wanted for x in str(item).split(",") if x.strip()]
    known = set(rows)
    missing = [x for x in ids if x not in known]
    if missing:
        some = ", ".join(list(rows)[:5]) + (", ..." if len(rows) > 5 else "")
        raise IrwError(f"--highlight: no {unit} {missing[0]!r} in this report ({len(rows)} {unit}s: {some})")
    return list(dict.fromkeys(ids))


# ------------------------------------------------------------------------------ the page
#
# Each section of the page is the template irwarehouse/templates/report/<key>.html, rendered
# (irwarehouse.pages) with the dict its function of PAGE returns as `d`: plain numbers,
# strings, lists and figure URIs, which the template formats and escapes. A section is added
# by one template, one function and one entry of PAGE.



def _leaderboard_data(r: Report) -> dict:
    lb = r.leaderboard.set_index(["measure", "run_id"])
    summary = []
    for m in r.measures:
        runs, signs, _ = r.decisions(m)
        best = runs[0]
        row = lb.loc[(m, best)]
        summary.append({
            "measure": m, "best": best, "mean": row["mean"], "ci_low": row["ci_low"],
            "ci_high": row["ci_high"],
            "tied": [run for run, s in zip(runs[1:], signs[0, 1:]) if s == 0],
            "significant": int(np.count_nonzero(np.triu(signs, 1))),
            "groups": None if r.group_matrix(m) is None else len(r.group_matrix(m)),
        })
    spread = ["runs", "run_sd"] if r.unit == "system" else []
    rows = [{"label": r.labels[run], "run": run, "hl": run in r.highlight,
             "cells": [lb.loc[(m, run)][["mean", "ci_low", "ci_high", *spread]].to_dict() for m in r.measures]}
            for run in r.run_ids]
    for row in rows:  # a count, not a float of the row's other numbers
        for cell in row["cells"]:
            if "runs" in cell:
                cell["runs"] = int(cell["runs"])
    power = [] if r.power is None else r.power.to_dict("records")
    topics = {p["topics"] for p in power}
    shown = r.first_screen()
    top = None if shown is None else [rows[r.run_ids.index(run)] for run in shown]
    return {"first": r.measures[0], "measures": r.measures, "pct": f"{r.level * 100:g}%",
            "n_pairs": r.n_pairs, "summary": summary, "figure": rf.forest_figure(r), "rows": rows,
            "top": top, "top_n": min(TOP, len(r.run_ids)), "tied_shown": TIED, "highlight": r.highlight,
            "overview": rf.overview_figure(r) if len(r.run_ids) > fg.MANY else None,
            "open": len(r.run_ids) <= SMALL, "unit": r.unit, "power": power,
            "power_topics": topics.pop() if len(topics) == 1 else None, "alpha": f"{r.alpha:g}"}


def _significance_data(r: Report) -> dict:
    test, correction = r._method()
    measures, columns = [], []
    for m in r.measures:
        runs, signs, _ = r.decisions(m)
        at = pd.Index(runs).get_indexer(r.run_ids)  # each run (leaderboard order) in m's order
        G = r.group_matrix(m)
        if G is None:
            marks = [""] * len(r.run_ids)
        else:
            numbered = len(G) > 26
            names = [str(k + 1) if numbered else chr(ord("a") + k) for k in range(len(G))]
            marks = [mark_list([names[g] for g in np.flatnonzero(G[:, k])], numbered) for k in at]
        columns.append({"better": (signs > 0).sum(axis=1)[at], "worse": (signs < 0).sum(axis=1)[at],
                        "groups": marks})
        measures.append({"name": m, "heatmap": rf.significance_figure(r, m),
                         "summary": (f"more than {stats.MAX_GROUPS:,} under {m} (too many to show)"
                                     if G is None else f"{len(G)} under {m}"),
                         "groups_figure": None if G is None else rf.groups_figure(r, m)})
    rows = r.marked()
    for k, row in enumerate(rows):
        for cell, column in zip(row["cells"], columns):
            cell.update(better=int(column["better"][k]), worse=int(column["worse"][k]),
                        groups=column["groups"][k])
    return {"test": test, "correction": correction, "alpha": f"{r.alpha:g}", "n_pairs": r.n_pairs,
            "measures": measures, "rows": rows, "caption": r.caption(),
            "open": len(r.run_ids) <= SMALL, "max_groups": stats.MAX_GROUPS, "unit": r.unit,
            "pct": f"{r.level * 100:g}%", "interval": TESTS[r.test].interval,
            "all_pairs": len(r.run_ids) <= SMALL, "pairs": _pair_rows(r), "highlight": r.highlight}


def _pair_rows(r: Report) -> list[dict]:
    """The pairs of the significance section's table, per measure: every pair when there are
    few runs (SMALL), else each run against the next one by the measure's mean; each with
    its difference and interval, d_z and its interval, Sakai's effect size, the (adjusted)
    p-value and the decision (``irw pvalues``' row)."""
    out = []
    for m in r.measures:
        rows = r.pairs[r.pairs["measure"] == m]
        if len(r.run_ids) > SMALL:
            order = r.order(m)
            wanted = set(zip(order[:-1], order[1:])) | set(zip(order[1:], order[:-1]))
            rows = rows[[(a, b) in wanted for a, b in zip(rows["run_a"], rows["run_b"])]]
        records = rows.to_dict("records")
        out.append({"measure": m, "pairs": [
            {k: rec.get(k) for k in ("run_a", "run_b", "diff", "ci_low", "ci_high", "effect_size",
                                     "effect_low", "effect_high", "effect_size_residual",
                                     "p_adjusted", "significant", "within_spread")}
            for rec in records]})
    return out


def _distributions_data(r: Report) -> dict:
    return {"topics": r._topics_text(), "open": len(r.run_ids) <= SMALL,
            "figures": [{"measure": m, "uri": rf.box_figure(r, m)} for m in r.measures]}


def _correlation_data(r: Report) -> dict:
    if len(r.measures) < 2:
        return {"measures": r.measures}
    tau = rf.tau_matrix(r)
    columns = ["measure_a", "measure_b", "kendall_tau", "kendall_tau_a", "tau_ap", "rbo", "pearson"]
    return {"measures": r.measures, "rbo_p": f"{RBO_P:g}",
            "tau": [{"measure": m, "values": list(tau[k])} for k, m in enumerate(r.measures)],
            "figure": rf.correlation_figure(r, tau),
            "pairs": r.correlations[columns].to_dict("records")}


def _coverage_data(r: Report) -> dict:
    judged, base, res = r.coverage_measures
    cov = r.coverage.set_index("run_id").loc[r.run_ids]
    if cov.isna().all(axis=None):  # a qrels of preferences: no graded judgments to cover
        return {"none": True, "judged": judged, "residual": res}
    rows = [{"label": r.labels[run], "run": run, "judged": row[judged], "base": row[base],
             "residual": row[res], "high": row[base] + row[res]}
            for run, row in zip(r.run_ids, cov.to_dict("records"))]
    return {"judged": judged, "base": base, "residual": res, "rows": rows,
            "figure": rf.coverage_figure(r), "open": len(r.run_ids) <= SMALL, "highlight": r.highlight}


def _ties_data(r: Report) -> dict:
    if r.unit != "run":
        return {"unit": r.unit}
    table = r.tie_table
    tied = table[table["tie_groups"] > 0] if table is not None and len(table) else None
    if tied is None or not len(tied):
        return {"unit": r.unit, "rows": []}
    rows = tied.sort_values(["spread", "run_id"], ascending=[False, True]).to_dict("records")
    moves = [row["run_id"] for row in rows if row["best_place"] != row["worst_place"]]
    pairs = [] if r.tie_pairs is None else r.tie_pairs.to_dict("records")
    return {"unit": r.unit, "rows": rows, "measure": rows[0]["measure"], "n_runs": len(table),
            "topics": int(tied["topics_with_ties"].max()), "moves": moves,
            "has_expected": bool(tied["expected"].notna().any()), "policy": r.ties,
            "other": r.tie_other, "pairs": pairs, "n_pairs": r.n_pairs,
            "test": test_text(r.test, r.B, r.seed), "alpha": r.alpha, "open": len(rows) <= SMALL,
            "highlight": r.highlight}


# The page's sections in order: key (the anchor, and the template report/<key>.html),
# heading, and the function that builds the template's data from a Report.
PAGE = Sections("report", (
    ("leaderboard", "Leaderboard", _leaderboard_data),
    ("significance", "Significance", _significance_data),
    ("distributions", "Per-topic scores", _distributions_data),
    ("correlation", "Correlation of the measures", _correlation_data),
    ("coverage", "Judgment coverage", _coverage_data),
    ("ties", "Ties", _ties_data),
))
SECTIONS = PAGE.titles
