"""``irw report``: what a set of runs scored under a qrels, on one page or in one paper table.

:func:`build_report` computes the report's data from a warehouse connection with the same
functions as the commands that print each part (``irw eval``/``irw ci``: means and
confidence intervals; ``irw pvalues``: tests and corrections over all run pairs;
``irw correlate``: rank correlations; ``irw compare``: RBP residual and Judged@k), and a
:class:`Report` renders it:

- :meth:`Report.to_html`: one self-contained HTML page (inline CSS, figures as inline SVG
  data, no scripts, nothing fetched from a network) with the sections of :data:`SECTIONS`;
- :meth:`Report.to_latex` / :meth:`Report.to_markdown`: the paper table, runs x measures,
  with superscripts marking the runs each run is significantly better than (runs lettered
  a-z, or numbered when there are more than 26), the best mean per measure in bold, and a
  caption naming the test, correction, alpha and topics.
"""

from __future__ import annotations

import base64
import html
import io
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import catalogue, runsets, significance
from .version import __version__
from .engine import evaluation
from .errors import IrwError
from .measures import Measure, parse, parse_all
from .output import latex_text as _latex
from .output import markdown_text as _md
from .significance_tests import CORRECTIONS, TESTS

FORMATS = ("html", "latex", "markdown")
SECTIONS = {
    "leaderboard": "Leaderboard",
    "significance": "Significance",
    "distributions": "Per-topic scores",
    "correlation": "Correlation of the measures",
    "coverage": "Judgment coverage",
}
_RBO_P = 0.9  # the persistence of the RBO in the correlation section (irw correlate's default)
# the significance heat map: worse, not significant, better
_WORSE, _NOT, _BETTER = "#c2413b", "#ececec", "#2f6fae"


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

    def caption(self, latex: bool = False) -> str:
        """What the paper table shows, with test, correction, alpha and topics."""
        test, correction = self._method()
        alpha = f"$\\alpha = {self.alpha:g}$" if latex else f"α = {self.alpha:g}"
        if latex:
            correction = correction.replace("-", "--")
        mark = "letter" if len(self.run_ids) <= 26 else "number"
        measures = ", ".join(self.measures)
        return (f"Mean {measures} of {len(self.run_ids)} runs over {self._topics_text()} "
                f"(qrels {self.qrels}, topic set {self.topic_set}). A superscript lists, by "
                f"{mark}, the runs a run is significantly better than: {test} on the "
                f"{self.n_pairs:,} run pairs of each measure, {correction}, {alpha}. Best mean per "
                f"measure in bold.")

    def _marked_cells(self, mark) -> tuple[list[list[str]], list[str]]:
        """The paper table's cells: per run (leaderboard order) the mean of each measure,
        ``mark(text, bold, superscript)`` shaping each; and the header."""
        labels = self.labels
        rows = [[labels[r], r] for r in self.run_ids]
        for measure in self.measures:
            means = self.means(measure)
            best = max(round(v, 4) for v in means.values())
            beats = self.beats(measure)
            for row, run in zip(rows, self.run_ids):
                sup = _mark_list([labels[s] for s in beats[run]], len(self.run_ids) > 26)
                row.append(mark(f"{means[run]:.4f}", round(means[run], 4) == best, sup))
        return rows, ["", "run", *self.measures]

    # ---------------------------------------------------------------------- rendering

    def render(self, fmt: str) -> str:
        if fmt not in FORMATS:
            raise IrwError(f"unknown format {fmt!r}; valid: {', '.join(FORMATS)}")
        return {"html": self.to_html, "latex": self.to_latex, "markdown": self.to_markdown}[fmt]()

    def to_latex(self) -> str:
        """A booktabs table (needs ``\\usepackage{booktabs}``)."""
        def mark(text, bold, sup):
            text = f"\\textbf{{{text}}}" if bold else text
            return text + (f"\\textsuperscript{{{sup.replace('–', '--')}}}" if sup else "")

        rows, header = self._marked_cells(mark)
        lines = ["\\begin{table}[t]", "\\centering",
                 f"\\caption{{{_latex(self.caption(latex=True), keep_math=True)}}}",
                 "\\label{tab:irw-report}",
                 "\\begin{tabular}{ll" + "r" * len(self.measures) + "}", "\\toprule",
                 " & ".join(_latex(h) for h in header) + " \\\\", "\\midrule"]
        for row in rows:
            lines.append(" & ".join([_latex(row[0]), _latex(row[1]), *row[2:]]) + " \\\\")
        lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
        return "\n".join(lines) + "\n"

    def to_markdown(self) -> str:
        """A GitHub markdown table, its caption above it."""
        def mark(text, bold, sup):
            return (f"**{text}**" if bold else text) + (f"<sup>{sup}</sup>" if sup else "")

        rows, header = self._marked_cells(mark)
        lines = [self.caption(), "",
                 "| " + " | ".join(_md(h) for h in header) + " |",
                 "| --- | --- |" + " ---: |" * len(self.measures)]
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
                 rbp_p: float = 0.8, progress=None) -> Report:
    """The data of a report on ``runs`` (a run spec, or a list of run ids) under ``qrels``
    (default: the only loaded one) for ``measures`` (names or :class:`Measure`).

    The per-topic scores are evaluated once (and kept in ``scores`` when the connection may
    write). Each measure's means and ``level`` confidence intervals are ``irw ci``'s, its
    run pairs ``irw pvalues``' with ``test``, ``correction`` and ``alpha``; the measures are
    correlated pairwise as by ``irw correlate``; coverage is each run's mean Judged@k,
    RBP(p) and RBP residual over the topics, as ``irw compare`` reports them."""
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

    mats = significance.score_matrices(con, qrels, parsed, run_ids, topics)
    labels = [str(m) for m in parsed]
    leaderboard = pd.concat([significance.interval_frame(mats[label], level) for label in labels],
                            ignore_index=True)
    pairs = []
    for k, label in enumerate(labels):
        step = None if progress is None else (
            lambda done, total, k=k: progress(k * total + done, len(labels) * total))
        pairs.append(significance.pair_frame(mats[label], test, correction, alpha, B, seed, step))
    correlations = pd.DataFrame(
        [significance.correlation(mats[a], mats[b], _RBO_P) for i, a in enumerate(labels) for b in labels[i + 1:]],
        columns=["measure_a", "qrels_a", "measure_b", "qrels_b", "topics", "kendall_tau",
                 "kendall_tau_a", "tau_ap", "rbo", "pearson", "n_systems"])
    per = evaluation.evaluate(con, qrels, coverage_measures, run_ids, topics=topics, store=False)
    cov = per.aggregate().df().pivot(index="run_id", columns="measure", values="value")
    cov_labels = [str(m) for m in coverage_measures]
    coverage = cov.reindex(index=run_ids, columns=cov_labels).reset_index()
    coverage.columns.name = None

    means = dict(zip(mats[labels[0]].run_ids, mats[labels[0]].means))
    ordered = sorted(run_ids, key=lambda r: (-means[r], r))  # as Report.order
    coverage = coverage.set_index("run_id").loc[ordered].reset_index()
    return Report(qrels=qrels, measures=labels, run_ids=ordered, topic_set=topics, test=test,
                  correction=correction, alpha=alpha, B=B, seed=seed, level=level, matrices=mats,
                  leaderboard=leaderboard, pairs=pd.concat(pairs, ignore_index=True),
                  correlations=correlations, coverage=coverage, coverage_measures=cov_labels)


# ------------------------------------------------------------------------------ the page

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif;
       margin: 2em auto; max-width: 1200px; padding: 0 1em; color: #222; line-height: 1.4; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 2em; }
p.meta { color: #555; margin-top: 0; }
nav a { margin-right: 1em; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.9em; }
th, td { padding: 0.2em 0.6em; border-bottom: 1px solid #e4e4e4; text-align: left; }
th { border-bottom: 2px solid #999; background: #f7f7f7; position: sticky; top: 0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.marked { font-variant-numeric: tabular-nums; min-width: 8em; max-width: 22em; }
sup { font-size: 0.7em; color: #2f6fae; }
.figs { display: flex; flex-wrap: wrap; gap: 1.5em; align-items: flex-start; }
figure { margin: 0.8em 0; display: table; }
figure img { max-width: 100%; height: auto; }
figcaption { display: table-caption; caption-side: bottom; font-size: 0.85em; color: #555; }
.wide { overflow-x: auto; }
footer { margin-top: 3em; font-size: 0.8em; color: #777; }
"""


def escape(text) -> str:
    return html.escape(str(text), quote=True)


def _num(value: float) -> str:
    return "–" if value is None or np.isnan(value) else f"{value:.4f}"


def _table(header: list[str], rows: list[list[str]], kinds: str, cls: str) -> str:
    """An HTML table; cells are HTML already (escape text before). ``kinds`` has a letter
    per column: ``t`` text, ``n`` a number, ``m`` a mean with its significance marks."""
    names = {"t": "", "n": ' class="num"', "m": ' class="marked"'}

    def cell(tag, text, kind):
        return f"<{tag}{names[kind]}>{text}</{tag}>"

    head = "".join(cell("th", h, k) for h, k in zip(header, kinds))
    body = "\n".join("<tr>" + "".join(cell("td", c, k) for c, k in zip(row, kinds)) + "</tr>"
                     for row in rows)
    return (f'<div class="wide"><table class="{cls}">\n<thead><tr>{head}</tr></thead>\n'
            f"<tbody>\n{body}\n</tbody></table></div>")


def _figure(uri: str, alt: str, caption: str) -> str:
    return (f'<figure><img src="{uri}" alt="{escape(alt)}">'
            f"<figcaption>{escape(caption)}</figcaption></figure>")


def _sections(r: Report) -> dict[str, str]:
    test, correction = r._method()
    labels = r.labels
    first = r.measures[0]
    out = {}

    # leaderboard: irw ci's means and intervals
    pct = f"{r.level * 100:g}%"
    lb = r.leaderboard.set_index(["run_id", "measure"])
    rows = []
    for run in r.run_ids:
        row = [escape(labels[run]), escape(run)]
        for m in r.measures:
            x = lb.loc[(run, m)]
            row += [_num(x["mean"]), f"[{_num(x['ci_low'])}, {_num(x['ci_high'])}]"]
        rows.append(row)
    header = ["#", "run"] + [h for m in r.measures for h in (escape(m), f"{escape(m)} {pct} CI")]
    out["leaderboard"] = (
        f"<p>The runs by their mean {escape(first)}, best first. Each measure's mean over the "
        f"topics with its {pct} confidence interval (t distribution, as <code>irw ci</code>).</p>\n"
        + _table(header, rows, "tt" + "nn" * len(r.measures), "leaderboard") + "\n"
        + _figure(_forest_figure(r), "means with confidence intervals",
                  f"Means with {pct} confidence intervals, runs in leaderboard order."))

    # significance: heat maps and the paper table with win/loss counts
    figs = "".join(_figure(_significance_figure(r, m), f"significance matrix of {m}",
                           f"{m}: the row's run is significantly better (blue) or worse (red) than "
                           f"the column's, or not significantly different (grey); runs by mean {m}, "
                           f"best first.")
                   for m in r.measures)
    cells, _ = r._marked_cells(lambda text, bold, sup: (f"<b>{text}</b>" if bold else text)
                               + (f"<sup>{escape(sup).replace(',', ',<wbr>')}</sup>" if sup else ""))
    beats = {m: r.beats(m) for m in r.measures}
    beaten = {m: {run: sum(run in b for b in beats[m].values()) for run in r.run_ids} for m in r.measures}
    rows = []
    for run, cell_row in zip(r.run_ids, cells):
        row = [escape(cell_row[0]), escape(run)]
        for k, m in enumerate(r.measures):
            row += [cell_row[2 + k], f"{len(beats[m][run])} / {beaten[m][run]}"]
        rows.append(row)
    header = ["#", "run"] + [h for m in r.measures for h in (escape(m), f"{escape(m)} better / worse")]
    out["significance"] = (
        f"<p>Every pair of runs, per measure: {escape(test)} on the {r.n_pairs:,} pairs, "
        f"{escape(correction)}, α = {r.alpha:g} (as <code>irw pvalues</code>).</p>\n"
        f'<div class="figs">{figs}</div>\n'
        + _table(header, rows, "tt" + "mn" * len(r.measures), "significance")
        + f"\n<p class=\"caption\">{escape(r.caption())} “better / worse”: how many runs a run is "
        f"significantly better / worse than.</p>")

    # per-topic distributions
    figs = "".join(_figure(_box_figure(r, m), f"per-topic {m}",
                           f"Per-topic {m}: box = quartiles, whiskers = 1.5 IQR, diamond = mean; "
                           f"runs by mean {m}, best at the top.")
                   for m in r.measures)
    out["distributions"] = (f"<p>Each run's scores over the {escape(r._topics_text())}.</p>\n"
                            f'<div class="figs">{figs}</div>')

    # correlation of the measures
    if len(r.measures) < 2:
        out["correlation"] = ("<p>One measure was chosen: nothing to correlate "
                              "(give two or more with <code>-m</code>).</p>")
    else:
        tau = _tau_matrix(r)
        rows = [[escape(a)] + [_num(tau[i, j]) for j in range(len(r.measures))]
                for i, a in enumerate(r.measures)]
        square = _table(["τ-b"] + [escape(m) for m in r.measures], rows,
                        "t" + "n" * len(r.measures), "correlation-matrix")
        cols = ["kendall_tau", "kendall_tau_a", "tau_ap", "rbo", "pearson"]
        rows = [[escape(c.measure_a), escape(c.measure_b)] + [_num(getattr(c, k)) for k in cols]
                for c in r.correlations.itertuples()]
        pairs = _table(["measure A", "measure B", "τ-b", "τ-a", "τ_AP (A the reference)", f"RBO (p = {_RBO_P:g})",
                        "Pearson"], rows, "tt" + "n" * len(cols), "correlations")
        out["correlation"] = (
            f"<p>How alike the measures order the runs: rank correlations of the runs' means "
            f"(as <code>irw correlate</code>).</p>\n{square}\n"
            + _figure(_correlation_figure(r, tau), "Kendall tau-b between the measures",
                      "Kendall's τ-b between the run orderings by each pair of measures.")
            + f"\n{pairs}")

    # judgment coverage
    judged, base, res = r.coverage_measures
    cov = r.coverage.set_index("run_id")
    rows = [[escape(labels[run]), escape(run), _num(cov.loc[run, judged]), _num(cov.loc[run, base]),
             _num(cov.loc[run, res]),
             f"[{_num(cov.loc[run, base])}, {_num(cov.loc[run, base] + cov.loc[run, res])}]"]
            for run in r.run_ids]
    out["coverage"] = (
        f"<p>How much of each run's ranking is judged, means over the topics (as "
        f"<code>irw compare</code> reports them): {escape(judged)}, the fraction of the top "
        f"documents that is judged; {escape(res)}, the RBP weight that falls on unjudged "
        f"documents and beyond the ranking, so the run's {escape(base)} lies between the base "
        f"score and the base plus the residual.</p>\n"
        + _table(["#", "run", escape(judged), escape(base), escape(res), f"{escape(base)} range"],
                 rows, "ttnnnn", "coverage")
        + _figure(_coverage_figure(r), "judgment coverage",
                  f"{base} (dark) with its residual (light), and {judged}; runs in leaderboard order."))
    return out


def _page(r: Report) -> str:
    test, correction = r._method()
    sections = _sections(r)
    nav = " ".join(f'<a href="#{key}">{escape(title)}</a>' for key, title in SECTIONS.items())
    body = "\n".join(f'<section id="{key}">\n<h2>{escape(SECTIONS[key])}</h2>\n{sections[key]}\n</section>'
                     for key in SECTIONS)
    meta = (f"qrels <b>{escape(r.qrels)}</b> · {len(r.run_ids)} runs · {escape(r._topics_text())} "
            f"(topic set {escape(r.topic_set)}) · measures {escape(', '.join(r.measures))} · "
            f"{escape(test)}, {escape(correction)}, α = {r.alpha:g}")
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>Evaluation report: {escape(r.qrels)}</title>\n<style>{_CSS}</style>\n</head>\n"
            f"<body>\n<header>\n<h1>Evaluation report: {escape(r.qrels)}</h1>\n"
            f'<p class="meta">{meta}</p>\n<nav>{nav}</nav>\n</header>\n{body}\n'
            f"<footer>Made by <code>irw report</code> (irwarehouse {escape(__version__)}).</footer>\n"
            f"</body>\n</html>\n")


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
    with matplotlib.rc_context({"svg.hashsalt": "irw-report"}):
        fig.savefig(buffer, format="svg", metadata={"Date": None}, bbox_inches="tight")
    return "data:image/svg+xml;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _text(label: str) -> str:
    """A label for matplotlib, which would read ``$...$`` as mathematics."""
    return label.replace("$", r"\$")


def _run_axis(n: int) -> tuple[float, float]:
    """Height per run (inches) and font size of run labels."""
    return (0.22, 8) if n <= 40 else (0.15, 6)


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


def _x_grid(ax) -> None:
    ax.grid(axis="x", color="#e4e4e4")
    ax.set_axisbelow(True)
    ax.tick_params(axis="x", labelsize=7)


def _forest_figure(r: Report) -> str:
    n = len(r.run_ids)
    per, size = _run_axis(n)
    fig, axes = _figure_of(2.6, per * n, ncols=len(r.measures))
    lb = r.leaderboard.set_index(["measure", "run_id"])
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

    runs = r.order(measure)
    n = len(runs)
    index = {run: k for k, run in enumerate(runs)}
    M = np.full((n, n), np.nan)
    P = np.full((n, n), np.nan)
    rows = r.pairs[r.pairs["measure"] == measure]
    for a, b, diff, p, sig in zip(rows["run_a"], rows["run_b"], rows["diff"], rows["p_adjusted"],
                                  rows["significant"]):
        i, j = index[a], index[b]
        sign = float(np.sign(diff)) if sig else 0.0
        M[i, j], M[j, i] = sign, -sign
        P[i, j] = P[j, i] = p
    side = min(4.6, max(2.4, (0.34 if n <= 12 else 0.2 if n <= 40 else 0.045) * n))
    fig, (ax,) = _figure_of(side, side, top=0.6)
    ax.imshow(M, cmap=ListedColormap([_WORSE, _NOT, _BETTER]), vmin=-1.5, vmax=1.5,
              interpolation="nearest", aspect="auto")
    if n <= 40:
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
