"""The page judging a second judgment set (``irw report --qrels A --against B``): the
tables of :mod:`irwarehouse.judges`, one section per question -- agreement as assessors, the
two leaderboards side by side, the scores under both, the significance decisions, the groups
flagged -- each the template ``irwarehouse/templates/judges/<key>.html`` fed by its function
of :data:`PAGE`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import runsets, significance
from ..errors import IrwError
from ..significance_tests import CORRECTIONS
from . import figures as fg
from .sections import RBO_P, SMALL, Sections, correction_text, default_correction, parse_measures, test_text

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
        test = test_text(s["test"], s["B"], s["seed"])
        meta = [f"reference {self.qrels}", f"judged {self.against}", f"{len(self.run_ids)} runs",
                f"measures {', '.join(self.measures)}", f"relevant at grade ≥ {s['rel_level']}",
                f"{test}, {correction_text(s['correction'], s['correction_chosen'], len(self.run_ids))}, "
                f"α = {s['alpha']:g}"]
        return PAGE.page(self, f"Judging the judges: {self.against} against {self.qrels}", meta,
                         made_by="irw report --against")

    def flagged(self) -> pd.DataFrame:
        return self.groups[self.groups["flag"].notna()]


def build_judges_report(con, measures, qrels: str, against: str, runs="all", topics: str = "qrels",
                        test: str = "t", correction: str | None = None, alpha: float = 0.05,
                        B: int | None = None, seed: int = 0, level: float = 0.95, by: str = "team",
                        top_k: int = 10, rbo_p: float = RBO_P, permutations: int = 10000,
                        bias_correction: str = "holm", rel_level: int = 1,
                        interval_samples: int = 1000, progress=None) -> JudgesReport:
    """The data of the page comparing ``against`` (B) with ``qrels`` (A): every table of
    irwarehouse.judges, the rankings evaluated once (kept in ``scores`` when the connection
    may write)."""
    from .. import judges

    parsed = parse_measures(measures)
    judges.check_options("runs", test, correction or "none", alpha, B, top_k, rbo_p, permutations, bias_correction)
    B = significance.check_test(test, alpha, B)
    if not 0 < level < 1:
        raise IrwError(f"the confidence level must be between 0 and 1 (exclusive), got {level}")
    judges.check_pair(con, qrels, against)
    run_ids = runsets.resolve(con, runs, qrels=qrels) if isinstance(runs, str) else list(runs)
    chosen, correction = correction is None, default_correction(correction, len(run_ids))
    counts = judges.pair_counts(con, qrels, against)
    r = judges.rankings(con, qrels, against, parsed, run_ids, topics, by)
    settings = {"test": test, "correction": correction, "correction_chosen": chosen, "alpha": alpha, "B": B, "seed": seed,
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
    return {"a": j.qrels, "b": j.against, "test": test_text(s["test"], s["B"], s["seed"]), "correction": CORRECTIONS[s["correction"]].label,
            "alpha": f"{s['alpha']:g}", "rows": j.decisions.to_dict("records")}


def _j_groups_data(j: JudgesReport) -> dict:
    s = j.settings
    return {"a": j.qrels, "b": j.against, "by": j.by, "permutations": s["permutations"],
            "seed": s["seed"], "correction": CORRECTIONS[s["bias_correction"]].label, "alpha": f"{s['alpha']:g}",
            "flagged": _flags(j.flagged().to_dict("records")),
            "measures": [{"name": m, "rows": _flags(j.groups[j.groups["measure"] == m].to_dict("records"))}
                         for m in j.measures],
            "open": j.groups[j.by].nunique() <= SMALL, "figure": _shift_figure(j)}


def _flags(rows: list[dict]) -> list[dict]:
    """Rows of the groups table with ``flag`` a string or None (never a missing float)."""
    return [{**row, "flag": row["flag"] if isinstance(row["flag"], str) else None} for row in rows]


PAGE = Sections("judges", (
    ("agreement", "Agreement as assessors", _j_agreement_data),
    ("leaderboards", "The two leaderboards", _j_leaderboards_data),
    ("scores", "Scores under both", _j_scores_data),
    ("decisions", "Significance decisions", _j_decisions_data),
    ("groups", "Groups flagged", _j_groups_data),
))
JUDGES_SECTIONS = PAGE.titles


def _topic_agreement_figure(j: JudgesReport) -> str:
    per = j.agreement.iloc[:-1]
    n = len(per)
    fig, (ax,) = fg.figure_of(min(11.0, max(4.0, 0.2 * n)), 1.8, bottom=0.5)
    x = np.arange(n)
    ax.bar(x - 0.2, per["kappa"].fillna(0), width=0.4, color=_KAPPA, label="Cohen's κ (binary)")
    ax.bar(x + 0.2, per["alpha_ordinal"].fillna(0), width=0.4, color=_ALPHA, label="Krippendorff's α (ordinal)")
    ax.axhline(0, color="#444", linewidth=0.6)
    ax.set_xlim(-0.6, n - 0.4)
    ax.set_xticks(x, [fg.plain(t) for t in per["topic"]], rotation=90, fontsize=6 if n > 20 else 7)
    ax.tick_params(axis="y", labelsize=7)
    ax.grid(axis="y", color="#e4e4e4")
    ax.set_axisbelow(True)
    ax.legend(fontsize=7, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False)
    return fg.svg(fig)


def _colour_of(flag) -> str:
    return {"favoured": _FAVOURED, "disfavoured": _DISFAVOURED}.get(flag, _OTHER)


def _judges_scatter_figure(j: JudgesReport, measure: str) -> str:
    rows = j.runs[j.runs["measure"] == measure]
    flags = j.flagged()
    flags = dict(zip(flags.loc[flags["measure"] == measure, j.by], flags.loc[flags["measure"] == measure, "flag"]))
    colours = [_colour_of(flags.get(g)) for g in rows[j.by]]
    fig, (ax,) = fg.figure_of(3.0, 3.0, top=0.3, bottom=0.45)
    ax.scatter(rows["score_a"], rows["score_b"], s=14, c=colours, linewidths=0, zorder=3)
    low = float(min(rows["score_a"].min(), rows["score_b"].min()))
    high = float(max(rows["score_a"].max(), rows["score_b"].max()))
    ax.plot([low, high], [low, high], color="#444", linewidth=0.6)
    ax.set_xlabel(fg.plain(f"mean {measure} under {j.qrels}"), fontsize=8)
    ax.set_ylabel(fg.plain(f"under {j.against}"), fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(color="#e4e4e4")
    ax.set_axisbelow(True)
    fg.title(ax, measure)
    return fg.svg(fig)


def _shift_figure(j: JudgesReport) -> str:
    first = j.groups[j.groups["measure"] == j.measures[0]]
    names = list(first[j.by])  # by the first measure's mean shift, largest first
    per, size = fg.run_axis(len(names))
    fig, axes = fg.figure_of(2.4, per * len(names), ncols=len(j.measures))
    y = np.arange(len(names))
    for ax, m in zip(axes, j.measures):
        rows = j.groups[j.groups["measure"] == m].set_index(j.by).loc[names]
        fg.bars(ax, y, 0, rows["mean_shift"], per, color=[_colour_of(f) for f in rows["flag"]])
        ax.axvline(0, color="#444", linewidth=0.6)
        fg.title(ax, m)
        fg.x_grid(ax)
    fg.runs_yaxis(axes, names, size)
    return fg.svg(fig)
