"""``irw report``: what a set of runs scored under a qrels, on one page or in one paper table.

:func:`build_report` computes the report's data from a warehouse connection with the same
functions as the commands that print each part (``irw eval``/``irw ci``: means and
confidence intervals; ``irw pvalues``: tests and corrections over all run pairs;
``irw correlate``: rank correlations; ``irw compare``: RBP residual and Judged@k), and a
:class:`Report` renders it:

- :meth:`Report.to_html`: one self-contained HTML page (inline CSS, figures as inline SVG
  data, no scripts, nothing fetched from a network) with the sections of :data:`SECTIONS`,
  rendered from the Jinja2 templates of ``irwarehouse/templates`` (:mod:`irwarehouse.pages`,
  autoescaped): it opens on what is read first (each measure's best run and the runs not
  significantly different from it, the means with their intervals, the significance heat
  maps) and folds the long tables below;
- :meth:`Report.to_latex` / :meth:`Report.to_markdown`: the paper table, runs x measures,
  with superscripts marking the runs each run is significantly better than (runs lettered
  a-z, or numbered when there are more than 26), the best mean per measure in bold, and a
  caption naming the test, correction, alpha and topics.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import catalogue, pages, runsets, significance, stats
from .engine import evaluation
from .errors import IrwError
from .measures import Measure, parse, parse_all
from .output import latex_text as _latex
from .output import markdown_text as _md
from .significance_tests import CORRECTIONS, TESTS

FORMATS = ("html", "latex", "markdown")
_RBO_P = 0.9  # the persistence of the RBO in the correlation section (irw correlate's default)
# the significance heat map: worse, not significant, better
_WORSE, _NOT, _BETTER = "#c2413b", "#ececec", "#2f6fae"
# the groups: a run in the group, a run between its first and last run
_GROUP, _GROUP_SPAN = "#2f4f7f", "#dfe7ef"


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
        test = TESTS[self.test].label
        if self.B is not None:
            test += f" (B = {self.B}, seed {self.seed})"
        return test, CORRECTIONS[self.correction]

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
                f"(qrels {self.qrels}, topic set {self.topic_set}). A superscript lists, by "
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
        (:func:`_mark_list`)."""
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
                                     "marks": _mark_list([labels[s] for s in beats[run]], numbered)})
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
        return _page(self)


def _mark_list(marks: list[str], numbered: bool) -> str:
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


def build_report(con, measures, qrels: str | None = None, runs="all", topics: str = "qrels",
                 test: str = "t", correction: str = "none", alpha: float = 0.05,
                 B: int | None = None, seed: int = 0, level: float = 0.95, judged_k: int = 10,
                 rbp_p: float = 0.8, progress=None, by: str = "run") -> Report:
    """The data of a report on ``runs`` (a run spec, or a list of run ids) under ``qrels``
    (default: the only loaded one) for ``measures`` (names or :class:`Measure`).

    The per-topic scores are evaluated once (and kept in ``scores`` when the connection may
    write). Each measure's means and ``level`` confidence intervals are ``irw ci``'s, its
    run pairs ``irw pvalues``' with ``test``, ``correction`` and ``alpha``; the measures are
    correlated pairwise as by ``irw correlate``; coverage is each run's mean Judged@k,
    RBP(p) and RBP residual over the topics, as ``irw compare`` reports them; the power line
    is ``irw power``'s minimum detectable difference at 80% power and ``alpha``. With
    ``by="system"`` the rows are the runs' systems (their per-topic means: ``--by system``
    of those commands), a system's coverage the mean of its runs'."""
    parsed = []
    for m in [measures] if isinstance(measures, (str, Measure)) else measures:
        parsed.extend([m] if isinstance(m, Measure) else parse_all([m]))
    parsed = list({str(m): m for m in parsed}.values())
    if not parsed:
        raise IrwError("a report needs at least one measure (-m)")
    B = significance.check_test(test, alpha, B)
    if correction not in CORRECTIONS:
        raise IrwError(f"unknown correction {correction!r}; valid: {', '.join(CORRECTIONS)}")
    if not 0 < level < 1:
        raise IrwError(f"the confidence level must be between 0 and 1 (exclusive), got {level}")
    coverage_measures = [parse(f"Judged@{judged_k}"), parse(f"RBP(p={rbp_p})"), parse(f"RBPres(p={rbp_p})")]
    qrels = qrels or catalogue.default_qrels(con)
    run_ids = runsets.resolve(con, runs, qrels=qrels) if isinstance(runs, str) else list(runs)

    mats = significance.score_matrices(con, qrels, parsed, run_ids, topics, by=by)
    labels = [str(m) for m in parsed]
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
        [significance.correlation(mats[a], mats[b], _RBO_P) for i, a in enumerate(labels) for b in labels[i + 1:]],
        columns=["measure_a", "qrels_a", "measure_b", "qrels_b", "topics", "kendall_tau",
                 "kendall_tau_a", "tau_ap", "rbo", "pearson", "n_systems"])
    per = evaluation.evaluate(con, qrels, coverage_measures, run_ids, topics=topics, store=False)
    cov = per.aggregate().df().pivot(index="run_id", columns="measure", values="value")
    cov_labels = [str(m) for m in coverage_measures]
    rows = mats[labels[0]].run_ids  # the runs, or the systems
    if by == "system":  # a system's coverage: the mean of its runs'
        cov = cov.groupby(cov.index.map(mats[labels[0]].systems.system_of())).mean()
    coverage = cov.reindex(index=rows, columns=cov_labels).reset_index(names="run_id")
    coverage.columns.name = None

    means = dict(zip(rows, mats[labels[0]].means))
    ordered = sorted(rows, key=lambda r: (-means[r], r))  # as Report.order
    coverage = coverage.set_index("run_id").loc[ordered].reset_index()
    return Report(qrels=qrels, measures=labels, run_ids=ordered, topic_set=topics, test=test,
                  correction=correction, alpha=alpha, B=B, seed=seed, level=level, matrices=mats,
                  leaderboard=leaderboard, pairs=pd.concat(pairs, ignore_index=True),
                  correlations=correlations, coverage=coverage, coverage_measures=cov_labels,
                  unit=by, power=power)


# ------------------------------------------------------------------------------ the page
#
# Each section of the page is the template irwarehouse/templates/report/<key>.html, rendered
# (irwarehouse.pages) with the dict its function of _SECTIONS returns as `d`: plain numbers,
# strings, lists and figure URIs, which the template formats and escapes. A section is added
# by one template, one function and one entry of _SECTIONS.

SMALL = 26  # up to this many runs the page shows its long tables and figures unfolded


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
    rows = [{"label": r.labels[run], "run": run,
             "cells": [lb.loc[(m, run)][["mean", "ci_low", "ci_high", *spread]].to_dict() for m in r.measures]}
            for run in r.run_ids]
    for row in rows:  # a count, not a float of the row's other numbers
        for cell in row["cells"]:
            if "runs" in cell:
                cell["runs"] = int(cell["runs"])
    power = [] if r.power is None else r.power.to_dict("records")
    topics = {p["topics"] for p in power}
    return {"first": r.measures[0], "measures": r.measures, "pct": f"{r.level * 100:g}%",
            "n_pairs": r.n_pairs, "summary": summary, "figure": _forest_figure(r), "rows": rows,
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
            marks = [_mark_list([names[g] for g in np.flatnonzero(G[:, k])], numbered) for k in at]
        columns.append({"better": (signs > 0).sum(axis=1)[at], "worse": (signs < 0).sum(axis=1)[at],
                        "groups": marks})
        measures.append({"name": m, "heatmap": _significance_figure(r, m),
                         "summary": f"{m} {'–' if G is None else len(G)}",
                         "groups_figure": None if G is None else _groups_figure(r, m)})
    rows = r.marked()
    for k, row in enumerate(rows):
        for cell, column in zip(row["cells"], columns):
            cell.update(better=int(column["better"][k]), worse=int(column["worse"][k]),
                        groups=column["groups"][k])
    return {"test": test, "correction": correction, "alpha": f"{r.alpha:g}", "n_pairs": r.n_pairs,
            "measures": measures, "rows": rows, "caption": r.caption(),
            "open": len(r.run_ids) <= SMALL, "max_groups": stats.MAX_GROUPS, "unit": r.unit,
            "pct": f"{r.level * 100:g}%", "interval": TESTS[r.test].interval,
            "all_pairs": len(r.run_ids) <= SMALL, "pairs": _pair_rows(r)}


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
            "figures": [{"measure": m, "uri": _box_figure(r, m)} for m in r.measures]}


def _correlation_data(r: Report) -> dict:
    if len(r.measures) < 2:
        return {"measures": r.measures}
    tau = _tau_matrix(r)
    columns = ["measure_a", "measure_b", "kendall_tau", "kendall_tau_a", "tau_ap", "rbo", "pearson"]
    return {"measures": r.measures, "rbo_p": f"{_RBO_P:g}",
            "tau": [{"measure": m, "values": list(tau[k])} for k, m in enumerate(r.measures)],
            "figure": _correlation_figure(r, tau),
            "pairs": r.correlations[columns].to_dict("records")}


def _coverage_data(r: Report) -> dict:
    judged, base, res = r.coverage_measures
    cov = r.coverage.set_index("run_id").loc[r.run_ids]
    rows = [{"label": r.labels[run], "run": run, "judged": row[judged], "base": row[base],
             "residual": row[res], "high": row[base] + row[res]}
            for run, row in zip(r.run_ids, cov.to_dict("records"))]
    return {"judged": judged, "base": base, "residual": res, "rows": rows,
            "figure": _coverage_figure(r), "open": len(r.run_ids) <= SMALL}


# The page's sections in order: key (the anchor, and the template report/<key>.html),
# heading, and the function that builds the template's data from a Report.
_SECTIONS = (
    ("leaderboard", "Leaderboard", _leaderboard_data),
    ("significance", "Significance", _significance_data),
    ("distributions", "Per-topic scores", _distributions_data),
    ("correlation", "Correlation of the measures", _correlation_data),
    ("coverage", "Judgment coverage", _coverage_data),
)
SECTIONS = {key: title for key, title, _ in _SECTIONS}


def _page(r: Report) -> str:
    test, correction = r._method()
    meta = [f"qrels {r.qrels}", f"{len(r.run_ids)} runs", f"{r._topics_text()} (topic set {r.topic_set})",
            f"measures {', '.join(r.measures)}", f"{test}, {correction}, α = {r.alpha:g}"]
    sections = [pages.Section(key, title, f"report/{key}.html", data(r))
                for key, title, data in _SECTIONS]
    return pages.page(f"Evaluation report: {r.qrels}", meta, sections, made_by="irw report")


# --------------------------------------------------------------------------- the figures

def _tau_matrix(r: Report) -> np.ndarray:
    index = {m: k for k, m in enumerate(r.measures)}
    tau = np.eye(len(r.measures))
    for c in r.correlations.itertuples():
        tau[index[c.measure_a], index[c.measure_b]] = tau[index[c.measure_b], index[c.measure_a]] = c.kendall_tau
    return tau


def _svg(fig) -> str:
    """A figure as an ``img`` source: SVG, base64, with no external reference."""
    import matplotlib

    buffer = io.BytesIO()
    # text as SVG text, not glyph outlines: the page is half the size (the browser draws
    # it in the figure's font, DejaVu Sans, or a sans-serif font like it)
    with matplotlib.rc_context({"svg.hashsalt": "irw-report", "svg.fonttype": "none"}):
        fig.savefig(buffer, format="svg", metadata={"Date": None}, bbox_inches="tight")
    return "data:image/svg+xml;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _text(label: str) -> str:
    """A label for matplotlib, which would read ``$...$`` as mathematics."""
    return label.replace("$", r"\$")


def _run_axis(n: int) -> tuple[float, float]:
    """Height per run (inches) and font size of run labels."""
    return (0.22, 8) if n <= MANY else (0.15, 6)


def _figure_of(width: float, height: float, ncols: int = 1, gap: float = 0.25,
               top: float = 0.35, bottom: float = 0.4):
    """A figure whose plotting areas measure ``width`` x ``height`` inches each, side by side.
    Tick labels and titles go outside them (saving with ``bbox_inches="tight"`` keeps them),
    so no layout pass has to draw the figure first: with hundreds of run labels, each pass
    costs seconds. Side by side plots share the runs' axis: only the first has its labels."""
    from matplotlib.figure import Figure

    total_w = ncols * width + (ncols - 1) * gap
    total_h = height + top + bottom
    fig = Figure(figsize=(total_w, total_h))
    fig.subplots_adjust(left=0, right=1, bottom=bottom / total_h, top=1 - top / total_h,
                        wspace=gap / width)
    return fig, fig.subplots(1, ncols, squeeze=False)[0]


def _title(ax, text: str, size: float = 9, pad: float = 4) -> None:
    """A title at a fixed place (placing it automatically measures every tick label)."""
    ax.set_title(_text(text), fontsize=size, y=1.0, pad=pad)


def _bars(ax, y, left, right, per: float, **style) -> None:
    """Horizontal bars from ``left`` to ``right`` at ``y``, all runs as one artist."""
    ax.hlines(y, left, right, linewidth=per * 72 * 0.7, capstyle="butt", **style)


def _runs_yaxis(axes, runs: list[str], size: float) -> None:
    """The runs, top to bottom, named on the first of ``axes``."""
    axes[0].set_yticks(range(len(runs)), [_text(x) for x in runs], fontsize=size)
    for ax in axes[1:]:
        ax.set_yticks([])
    for ax in axes:
        ax.set_ylim(len(runs) - 0.5, -0.5)


MANY = 40  # beyond this many runs, the leaderboard and coverage figures lay the runs along x


def _stacked(width: float, height: float, nrows: int, gap: float = 0.3, top: float = 0.25,
             bottom: float = 0.2):
    """A figure whose plotting areas measure ``width`` x ``height`` inches each, one above
    the other (as :func:`_figure_of`, which puts them side by side)."""
    from matplotlib.figure import Figure

    total_h = nrows * height + (nrows - 1) * gap + top + bottom
    fig = Figure(figsize=(width, total_h))
    fig.subplots_adjust(left=0, right=1, bottom=bottom / total_h, top=1 - top / total_h,
                        hspace=gap / height)
    return fig, fig.subplots(nrows, 1, squeeze=False)[:, 0]


def _runs_along(n: int) -> tuple[float, float | None]:
    """For runs laid along x: the plotting width (inches, the page's width at most) and the
    font size of their names (None: too narrow to name them, their ranks instead)."""
    width = min(11.0, max(6.0, 0.085 * n))
    pitch = width / n * 72  # points per run
    return width, (min(7.0, 0.9 * pitch) if pitch >= 4.5 else None)


def _runs_xaxis(axes, runs: list[str], size: float | None) -> None:
    """The runs, left to right, named (or ranked) under the last of ``axes``."""
    n = len(runs)
    for ax in axes:
        ax.set_xlim(-0.5, n - 0.5)
        ax.set_xticks([])
        ax.grid(axis="y", color="#e4e4e4")
        ax.set_axisbelow(True)
        ax.tick_params(axis="y", labelsize=7)
    if size is not None:
        axes[-1].set_xticks(range(n), [_text(x) for x in runs], rotation=90, fontsize=size)
    else:
        ticks = [0] + list(range(9, n, 10))
        axes[-1].set_xticks(ticks, [str(t + 1) for t in ticks], fontsize=7)
        axes[-1].set_xlabel("runs (rank)", fontsize=8)


def _x_grid(ax) -> None:
    ax.grid(axis="x", color="#e4e4e4")
    ax.set_axisbelow(True)
    ax.tick_params(axis="x", labelsize=7)


def _forest_figure(r: Report) -> str:
    n = len(r.run_ids)
    lb = r.leaderboard.set_index(["measure", "run_id"])
    if n > MANY:  # a row per measure, the runs along x
        width, size = _runs_along(n)
        fig, axes = _stacked(width, 1.5, len(r.measures))
        x = np.arange(n)
        for ax, m in zip(axes, r.measures):
            rows = lb.loc[m].loc[r.run_ids]
            ax.vlines(x, rows["ci_low"], rows["ci_high"], color="#7fa7cf", linewidth=1)
            ax.scatter(x, rows["mean"], s=6, color="#2f6fae", linewidths=0, zorder=3)
            ax.set_ylabel(_text(m), fontsize=8)
        _runs_xaxis(axes, r.run_ids, size)
        return _svg(fig)
    per, size = _run_axis(n)
    fig, axes = _figure_of(2.6, per * n, ncols=len(r.measures))
    y = np.arange(n)
    for ax, m in zip(axes, r.measures):
        rows = lb.loc[m].loc[r.run_ids]
        ax.hlines(y, rows["ci_low"], rows["ci_high"], color="#7fa7cf", linewidth=1)
        ax.scatter(rows["mean"], y, s=10, color="#2f6fae", linewidths=0, zorder=3)
        _title(ax, m)
        _x_grid(ax)
    _runs_yaxis(axes, r.run_ids, size)
    return _svg(fig)


def _significance_figure(r: Report, measure: str) -> str:
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    runs, M, P = r.decisions(measure)
    n = len(runs)
    np.fill_diagonal(M, np.nan)
    side = min(3.2, max(2.4, (0.34 if n <= 12 else 0.2 if n <= 40 else 0.045) * n))  # 3 to a row
    fig, (ax,) = _figure_of(side, side, top=0.6)
    ax.imshow(M, cmap=ListedColormap([_WORSE, _NOT, _BETTER]), vmin=-1.5, vmax=1.5,
              interpolation="nearest", aspect="auto")
    if n <= MANY:
        _, size = _run_axis(n)
        ax.set_xticks(range(n), [_text(x) for x in runs], rotation=90, fontsize=size)
        ax.set_yticks(range(n), [_text(x) for x in runs], fontsize=size)
    else:  # too many runs to name: their ranks by mean
        ticks = [0] + list(range(9, n, 10))
        ax.set_xticks(ticks, [str(t + 1) for t in ticks], fontsize=7)
        ax.set_yticks(ticks, [str(t + 1) for t in ticks], fontsize=7)
        ax.set_xlabel(f"runs by mean {_text(measure)} (rank)", fontsize=8)
        ax.set_ylabel(f"runs by mean {_text(measure)} (rank)", fontsize=8)
    if n <= 12:  # room for the (adjusted) p-values
        for i in range(n):
            for j in range(n):
                if i != j and not np.isnan(P[i, j]):
                    ax.text(j, i, f"{P[i, j]:.3f}", ha="center", va="center", fontsize=6,
                            color="white" if M[i, j] else "#444")
    _title(ax, measure, 10, pad=20)
    ax.legend(handles=[Patch(color=_BETTER, label="row better"), Patch(color=_WORSE, label="row worse"),
                       Patch(color=_NOT, label="not significant")],
              loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, fontsize=7, frameon=False,
              handlelength=1.2, columnspacing=1.0)
    return _svg(fig)


def _groups_figure(r: Report, measure: str) -> str:
    """The runs by mean ``measure`` with their confidence intervals, and beside them the
    groups of runs not significantly different: a column per group, dark at its runs and
    light between its first and its last."""
    from matplotlib.colors import ListedColormap
    from matplotlib.figure import Figure

    G = r.group_matrix(measure)
    runs = r.order(measure)
    n, g = len(runs), len(G)
    per, size = _run_axis(n)

    ci_w, gap, col = 2.2, 0.15, (0.2 if g <= 26 else 0.06)
    groups_w = max(0.5, col * g)
    top, bottom, height = 0.55, 0.4, per * n
    fig = Figure(figsize=(ci_w + gap + groups_w, height + top + bottom))
    W, H = fig.get_size_inches()
    ax_ci = fig.add_axes((0, bottom / H, ci_w / W, height / H))
    ax_g = fig.add_axes(((ci_w + gap) / W, bottom / H, groups_w / W, height / H))
    lb = r.leaderboard[r.leaderboard["measure"] == measure].set_index("run_id").loc[runs]
    y = np.arange(n)
    ax_ci.hlines(y, lb["ci_low"], lb["ci_high"], color="#7fa7cf", linewidth=1)
    ax_ci.scatter(lb["mean"], y, s=10, color="#2f6fae", linewidths=0, zorder=3)
    _x_grid(ax_ci)
    _title(ax_ci, f"{measure}: mean, {r.level * 100:g}% CI")
    # one image, a cell per run and group: dark where the run is in the group, light between
    # the group's first and last run, white elsewhere
    first = G.argmax(axis=1)
    last = n - 1 - G[:, ::-1].argmax(axis=1)
    rows = np.arange(n)[:, None]
    cells = np.where(G.T, 2, np.where((rows >= first) & (rows <= last), 1, 0))
    # each group three quarters of its column, a white quarter between it and the next
    cells = np.repeat(cells, 4, axis=1)
    cells[:, 3::4] = 0
    ax_g.imshow(cells, cmap=ListedColormap(["#ffffff", _GROUP_SPAN, _GROUP]), vmin=0, vmax=2,
                interpolation="nearest", aspect="auto", extent=(-0.5, g - 0.5, n - 0.5, -0.5))
    ax_g.tick_params(axis="x", top=True, labeltop=True, bottom=False, labelbottom=False,
                     labelsize=6, length=2, pad=1)
    ticks = np.arange(g) if g <= 26 else np.r_[0, np.arange(9, g, 10)]
    ax_g.set_xticks(ticks - 0.125, [chr(ord("a") + k) if g <= 26 else str(k + 1) for k in ticks])
    ax_g.set_title("groups", fontsize=9, y=1.0, pad=14)
    for side in ("top", "right", "bottom"):
        ax_g.spines[side].set_visible(False)
    _runs_yaxis([ax_ci, ax_g], runs, size)
    return _svg(fig)


def _box_figure(r: Report, measure: str) -> str:
    from matplotlib.cbook import boxplot_stats
    from matplotlib.collections import PolyCollection

    m = r.matrices[measure]
    runs = r.order(measure)
    n = len(runs)
    per, size = _run_axis(n)
    X = m.X[[m.run_ids.index(run) for run in runs]]
    box = {k: np.array([s[k] for s in boxplot_stats(list(X))])
           for k in ("q1", "q3", "med", "mean", "whislo", "whishi")}
    y = np.arange(n)
    fig, (ax,) = _figure_of(5.0, per * n)
    # one artist per element for all runs at once: drawing stays fast for hundreds of runs
    ax.hlines(np.r_[y, y], np.r_[box["whislo"], box["q3"]], np.r_[box["q1"], box["whishi"]],
              color="#444", linewidth=0.8)
    ax.vlines(np.r_[box["whislo"], box["whishi"]], np.r_[y, y] - 0.15, np.r_[y, y] + 0.15,
              color="#444", linewidth=0.8)
    ax.add_collection(PolyCollection(
        [[(lo, k - 0.3), (hi, k - 0.3), (hi, k + 0.3), (lo, k + 0.3)]
         for k, lo, hi in zip(y, box["q1"], box["q3"])],
        facecolors="#dbe7f3", edgecolors="#2f6fae", linewidths=0.8))
    ax.vlines(box["med"], y - 0.3, y + 0.3, color="#2f6fae", linewidth=1.2)
    if X.size <= 2000:  # the topics themselves, where there is room
        jitter = np.random.default_rng(0).uniform(-0.18, 0.18, X.shape)
        ax.scatter(X.ravel(), (y[:, None] + jitter).ravel(), s=7, color="#333", alpha=0.6,
                   linewidths=0, zorder=3)
    else:  # the outliers
        rows, cols = np.nonzero((X < box["whislo"][:, None]) | (X > box["whishi"][:, None]))
        ax.scatter(X[rows, cols], rows, s=3, facecolors="none", edgecolors="#555", linewidths=0.5)
    ax.scatter(box["mean"], y, marker="D", s=9, color="#c2413b", linewidths=0, zorder=4)
    _runs_yaxis([ax], runs, size)
    _title(ax, measure, 10)
    _x_grid(ax)
    return _svg(fig)


def _correlation_figure(r: Report, tau: np.ndarray) -> str:
    k = len(r.measures)
    side = 0.55 * k + 0.6
    fig, (ax,) = _figure_of(side, side, top=0.1, bottom=0.1)
    image = ax.imshow(tau, vmin=min(0.0, float(tau.min())), vmax=1.0, cmap="viridis")
    names = [_text(m) for m in r.measures]
    ax.set_xticks(range(k), names, rotation=45, ha="right", fontsize=8)
    ax.set_yticks(range(k), names, fontsize=8)
    for a in range(k):
        for b in range(k):
            ax.text(b, a, f"{tau[a, b]:.3f}", ha="center", va="center", fontsize=7,
                    color="white" if tau[a, b] < 0.6 else "black")
    fig.colorbar(image, ax=ax, fraction=0.08, pad=0.04, label="Kendall's τ-b")
    return _svg(fig)


def _coverage_figure(r: Report) -> str:
    judged, base, res = r.coverage_measures
    n = len(r.run_ids)
    per, size = _run_axis(n)
    cov = r.coverage.set_index("run_id").loc[r.run_ids]
    if n > MANY:  # the two one above the other, the runs along x
        width, size = _runs_along(n)
        fig, (ax_rbp, ax_judged) = _stacked(width, 1.3, 2)
        x = np.arange(n)
        pitch = width / n
        ax_rbp.vlines(x, 0, cov[base], linewidth=pitch * 72 * 0.7, color="#2f6fae")
        ax_rbp.vlines(x, cov[base], cov[base] + cov[res], linewidth=pitch * 72 * 0.7, color="#b9cfe6")
        ax_judged.vlines(x, 0, cov[judged], linewidth=pitch * 72 * 0.7, color="#6a8f3a")
        ax_rbp.set_ylabel(_text(f"{base}\n+ residual"), fontsize=8)
        ax_judged.set_ylabel(_text(judged), fontsize=8)
        for ax in (ax_rbp, ax_judged):
            ax.set_ylim(0, 1)
        _runs_xaxis([ax_rbp, ax_judged], r.run_ids, size)
        return _svg(fig)
    fig, (ax_rbp, ax_judged) = _figure_of(3.4, per * n, ncols=2)
    y = np.arange(n)
    _bars(ax_rbp, y, 0, cov[base], per, color="#2f6fae")
    _bars(ax_rbp, y, cov[base], cov[base] + cov[res], per, color="#b9cfe6")
    _bars(ax_judged, y, 0, cov[judged], per, color="#6a8f3a")
    _title(ax_rbp, f"{base} (dark) + residual (light)")
    _title(ax_judged, judged)
    for ax in (ax_rbp, ax_judged):
        ax.set_xlim(0, 1)
        _x_grid(ax)
    _runs_yaxis([ax_rbp, ax_judged], r.run_ids, size)
    return _svg(fig)


# ------------------------------------------------------------- two judgment sets (--against)
#
# `irw report --qrels A --against B`: the page of irwarehouse.judges' tables, one section per
# question -- agreement as assessors, the two leaderboards side by side, the scores under
# both, the significance decisions, the groups flagged -- each the template
# irwarehouse/templates/judges/<key>.html fed by its function of _JUDGES_SECTIONS.

# the scatter and shift figures: a favoured group, a disfavoured one, the others
_FAVOURED, _DISFAVOURED, _OTHER = "#c2413b", "#2f6fae", "#8c8c8c"
# the per-topic agreement figure: kappa, ordinal alpha
_KAPPA, _ALPHA = "#2f6fae", "#6a8f3a"


@dataclass
class JudgesReport:
    """The data of the page comparing the judgment set ``against`` (B) with ``qrels`` (A):
    the tables of ``irw qrels compare`` (``agreement``, ``intervals``, ``confusion``) and of
    ``irw qrels rankings`` (``runs``, ``groups``, ``correlation``, ``decisions``), and how
    they were computed."""

    qrels: str
    against: str
    measures: list[str]
    run_ids: list[str]
    by: str
    settings: dict
    agreement: pd.DataFrame
    intervals: pd.DataFrame
    confusion: pd.DataFrame
    runs: pd.DataFrame
    groups: pd.DataFrame
    correlation: pd.DataFrame
    decisions: pd.DataFrame

    def render(self, fmt: str) -> str:
        if fmt != "html":
            raise IrwError(f"the report of two judgment sets is an html page, not {fmt!r} (its tables: "
                           "irw qrels compare, irw qrels rankings, or irw experiment judges)")
        return self.to_html()

    def to_html(self) -> str:
        s = self.settings
        test = TESTS[s["test"]].label + (f" (B = {s['B']}, seed {s['seed']})" if s["B"] is not None else "")
        meta = [f"reference {self.qrels}", f"judged {self.against}", f"{len(self.run_ids)} runs",
                f"measures {', '.join(self.measures)}", f"relevant at grade ≥ {s['rel_level']}",
                f"{test}, {CORRECTIONS[s['correction']]}, α = {s['alpha']:g}"]
        sections = [pages.Section(key, title, f"judges/{key}.html", data(self))
                    for key, title, data in _JUDGES_SECTIONS]
        return pages.page(f"Judging the judges: {self.against} against {self.qrels}", meta, sections,
                          made_by="irw report --against")

    def flagged(self) -> pd.DataFrame:
        return self.groups[self.groups["flag"].notna()]


def build_judges_report(con, measures, qrels: str, against: str, runs="all", topics: str = "qrels",
                        test: str = "t", correction: str = "none", alpha: float = 0.05,
                        B: int | None = None, seed: int = 0, level: float = 0.95, by: str = "team",
                        top_k: int = 10, rbo_p: float = _RBO_P, permutations: int = 10000,
                        bias_correction: str = "holm", rel_level: int = 1,
                        interval_samples: int = 1000, progress=None) -> JudgesReport:
    """The data of the page comparing ``against`` (B) with ``qrels`` (A): every table of
    irwarehouse.judges, the rankings evaluated once (kept in ``scores`` when the connection
    may write)."""
    from . import judges

    parsed = []
    for m in [measures] if isinstance(measures, (str, Measure)) else measures:
        parsed.extend([m] if isinstance(m, Measure) else parse_all([m]))
    parsed = list({str(m): m for m in parsed}.values())
    if not parsed:
        raise IrwError("a report needs at least one measure (-m)")
    judges.check_options("runs", test, correction, alpha, B, top_k, rbo_p, permutations, bias_correction)
    B = significance.check_test(test, alpha, B)
    if not 0 < level < 1:
        raise IrwError(f"the confidence level must be between 0 and 1 (exclusive), got {level}")
    judges.check_pair(con, qrels, against)
    run_ids = runsets.resolve(con, runs, qrels=qrels) if isinstance(runs, str) else list(runs)
    counts = judges.pair_counts(con, qrels, against)
    r = judges.rankings(con, qrels, against, parsed, run_ids, topics, by)
    settings = {"test": test, "correction": correction, "alpha": alpha, "B": B, "seed": seed,
                "level": level, "top_k": top_k, "rbo_p": rbo_p, "permutations": permutations,
                "bias_correction": bias_correction, "rel_level": rel_level,
                "interval_samples": interval_samples, "topics": topics}
    return JudgesReport(
        qrels=qrels, against=against, measures=list(r.labels), run_ids=list(r.run_ids), by=by,
        settings=settings, agreement=judges.agreement_frame(counts, rel_level),
        intervals=judges.intervals_frame(counts, rel_level, interval_samples, seed, level),
        confusion=judges.confusion_frame(counts).df(), runs=judges.runs_frame(r),
        groups=judges.groups_frame(r, permutations, seed, bias_correction, alpha),
        correlation=judges.correlation_frame(r, top_k, rbo_p),
        decisions=judges.decisions_frame(r, test, correction, alpha, B, seed, progress))


_STATISTIC_NAMES = {
    "agreement": "agreement on the binary label (p_o)",
    "kappa": "Cohen's κ (binary)",
    "kappa_linear": "weighted κ, linear (grades)",
    "kappa_quadratic": "weighted κ, quadratic (grades)",
    "alpha_nominal": "Krippendorff's α, nominal (binary)",
    "alpha_ordinal": "Krippendorff's α, ordinal (grades)",
}


def _j_agreement_data(j: JudgesReport) -> dict:
    overall = j.agreement.iloc[-1]
    per = j.agreement.iloc[:-1]
    columns = [c for c in j.confusion.columns if c.startswith("b=")]
    return {
        "a": j.qrels, "b": j.against, "rel_level": j.settings["rel_level"],
        "both": int(overall["both"]), "only_a": int(overall["only_a"]), "only_b": int(overall["only_b"]),
        "pct": f"{j.settings['level'] * 100:g}%", "samples": j.settings["interval_samples"],
        "intervals": [{"name": _STATISTIC_NAMES[row["statistic"]], "value": row["value"],
                       "low": row["ci_low"], "high": row["ci_high"]} for row in j.intervals.to_dict("records")],
        "topics": per.to_dict("records"), "open": len(per) <= SMALL,
        "figure": _topic_agreement_figure(j) if len(per) else None,
        "confusion": {"columns": [c[2:] for c in columns],
                      "rows": [{"grade": row["grade_a"],
                                "cells": [None if pd.isna(row[c]) else int(row[c]) for c in columns]}
                               for row in j.confusion.to_dict("records")]},
    }


def _side_by_side(j: JudgesReport, measure: str) -> list[dict]:
    rows = j.runs[j.runs["measure"] == measure]
    flagged = j.flagged()
    marked = dict(zip(flagged.loc[flagged["measure"] == measure, j.by],
                      flagged.loc[flagged["measure"] == measure, "flag"]))
    by_a = rows.sort_values(["rank_a", "run_id"]).to_dict("records")
    by_b = rows.sort_values(["rank_b", "run_id"]).to_dict("records")
    return [{"rank_a": a["rank_a"], "run_a": a["run_id"], "group_a": a[j.by], "score_a": a["score_a"],
             "flag_a": marked.get(a[j.by]),
             "rank_b": b["rank_b"], "run_b": b["run_id"], "group_b": b[j.by], "score_b": b["score_b"],
             "shift": int(b["shift"]), "flag_b": marked.get(b[j.by])}
            for a, b in zip(by_a, by_b)]


def _j_leaderboards_data(j: JudgesReport) -> dict:
    return {"a": j.qrels, "b": j.against, "by": j.by, "open": len(j.run_ids) <= SMALL,
            "topics": int(j.runs["topics"].iloc[0]) if len(j.runs) else 0,
            "measures": [{"name": m, "rows": _side_by_side(j, m)} for m in j.measures]}


def _j_scores_data(j: JudgesReport) -> dict:
    return {"a": j.qrels, "b": j.against, "by": j.by, "top_k": j.settings["top_k"],
            "rbo_p": f"{j.settings['rbo_p']:g}", "correlation": j.correlation.to_dict("records"),
            "figures": [{"measure": m, "uri": _judges_scatter_figure(j, m)} for m in j.measures]}


def _j_decisions_data(j: JudgesReport) -> dict:
    s = j.settings
    test = TESTS[s["test"]].label + (f" (B = {s['B']}, seed {s['seed']})" if s["B"] is not None else "")
    return {"a": j.qrels, "b": j.against, "test": test, "correction": CORRECTIONS[s["correction"]],
            "alpha": f"{s['alpha']:g}", "rows": j.decisions.to_dict("records")}


def _j_groups_data(j: JudgesReport) -> dict:
    s = j.settings
    return {"a": j.qrels, "b": j.against, "by": j.by, "permutations": s["permutations"],
            "seed": s["seed"], "correction": CORRECTIONS[s["bias_correction"]], "alpha": f"{s['alpha']:g}",
            "flagged": _flags(j.flagged().to_dict("records")),
            "measures": [{"name": m, "rows": _flags(j.groups[j.groups["measure"] == m].to_dict("records"))}
                         for m in j.measures],
            "open": j.groups[j.by].nunique() <= SMALL, "figure": _shift_figure(j)}


def _flags(rows: list[dict]) -> list[dict]:
    """Rows of the groups table with ``flag`` a string or None (never a missing float)."""
    return [{**row, "flag": row["flag"] if isinstance(row["flag"], str) else None} for row in rows]


_JUDGES_SECTIONS = (
    ("agreement", "Agreement as assessors", _j_agreement_data),
    ("leaderboards", "The two leaderboards", _j_leaderboards_data),
    ("scores", "Scores under both", _j_scores_data),
    ("decisions", "Significance decisions", _j_decisions_data),
    ("groups", "Groups flagged", _j_groups_data),
)
JUDGES_SECTIONS = {key: title for key, title, _ in _JUDGES_SECTIONS}


def _topic_agreement_figure(j: JudgesReport) -> str:
    per = j.agreement.iloc[:-1]
    n = len(per)
    fig, (ax,) = _figure_of(min(11.0, max(4.0, 0.2 * n)), 1.8, bottom=0.5)
    x = np.arange(n)
    ax.bar(x - 0.2, per["kappa"].fillna(0), width=0.4, color=_KAPPA, label="Cohen's κ (binary)")
    ax.bar(x + 0.2, per["alpha_ordinal"].fillna(0), width=0.4, color=_ALPHA, label="Krippendorff's α (ordinal)")
    ax.axhline(0, color="#444", linewidth=0.6)
    ax.set_xlim(-0.6, n - 0.4)
    ax.set_xticks(x, [_text(t) for t in per["topic"]], rotation=90, fontsize=6 if n > 20 else 7)
    ax.tick_params(axis="y", labelsize=7)
    ax.grid(axis="y", color="#e4e4e4")
    ax.set_axisbelow(True)
    ax.legend(fontsize=7, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False)
    return _svg(fig)


def _colour_of(flag) -> str:
    return {"favoured": _FAVOURED, "disfavoured": _DISFAVOURED}.get(flag, _OTHER)


def _judges_scatter_figure(j: JudgesReport, measure: str) -> str:
    rows = j.runs[j.runs["measure"] == measure]
    flags = j.flagged()
    flags = dict(zip(flags.loc[flags["measure"] == measure, j.by], flags.loc[flags["measure"] == measure, "flag"]))
    colours = [_colour_of(flags.get(g)) for g in rows[j.by]]
    fig, (ax,) = _figure_of(3.0, 3.0, top=0.3, bottom=0.45)
    ax.scatter(rows["score_a"], rows["score_b"], s=14, c=colours, linewidths=0, zorder=3)
    low = float(min(rows["score_a"].min(), rows["score_b"].min()))
    high = float(max(rows["score_a"].max(), rows["score_b"].max()))
    ax.plot([low, high], [low, high], color="#444", linewidth=0.6)
    ax.set_xlabel(_text(f"mean {measure} under {j.qrels}"), fontsize=8)
    ax.set_ylabel(_text(f"under {j.against}"), fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(color="#e4e4e4")
    ax.set_axisbelow(True)
    _title(ax, measure)
    return _svg(fig)


def _shift_figure(j: JudgesReport) -> str:
    first = j.groups[j.groups["measure"] == j.measures[0]]
    names = list(first[j.by])  # by the first measure's mean shift, largest first
    per, size = _run_axis(len(names))
    fig, axes = _figure_of(2.4, per * len(names), ncols=len(j.measures))
    y = np.arange(len(names))
    for ax, m in zip(axes, j.measures):
        rows = j.groups[j.groups["measure"] == m].set_index(j.by).loc[names]
        _bars(ax, y, 0, rows["mean_shift"], per, color=[_colour_of(f) for f in rows["flag"]])
        ax.axvline(0, color="#444", linewidth=0.6)
        _title(ax, m)
        _x_grid(ax)
    _runs_yaxis(axes, names, size)
    return _svg(fig)
