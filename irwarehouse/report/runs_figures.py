"""The figures of the runs' report (:class:`~irwarehouse.report.runs.Report`): the means
with their intervals, the significance heat map, the groups of runs not significantly
different, the per-topic box plots, the correlation of the measures, the judgment
coverage. Each takes the report (``r``, a :class:`~irwarehouse.report.runs.Report`, which
imports this module: the annotations name it without importing it)."""

from __future__ import annotations

import numpy as np

from . import figures as fg

# the significance heat map: worse, not significant, better
_WORSE, _NOT, _BETTER = "#c2413b", "#ececec", "#2f6fae"
# the groups: a run in the group, a run between its first and last run
_GROUP, _GROUP_SPAN = "#2f4f7f", "#dfe7ef"


def tau_matrix(r: Report) -> np.ndarray:
    index = {m: k for k, m in enumerate(r.measures)}
    tau = np.eye(len(r.measures))
    for c in r.correlations.itertuples():
        tau[index[c.measure_a], index[c.measure_b]] = tau[index[c.measure_b], index[c.measure_a]] = c.kendall_tau
    return tau



def _colours(runs: list[str], highlight, colour: str, marked: str = fg.HIGHLIGHT) -> list[str]:
    wanted = set(highlight)
    return [marked if run in wanted else colour for run in runs]


def forest_figure(r: Report) -> str:
    """Means with their intervals, a row per run, named: every run; or, with more than MANY
    runs, those of the page's first screen (the top ones and the highlighted ones, see
    :meth:`Report.first_screen`), named with their ranks. Highlighted runs in orange."""
    lb = r.leaderboard.set_index(["measure", "run_id"])
    ranked = len(r.run_ids) > fg.MANY
    shown = r.first_screen() if ranked else r.run_ids
    rank = {run: k + 1 for k, run in enumerate(r.run_ids)}
    names = [f"{rank[run]}. {run}" for run in shown] if ranked else shown
    n = len(shown)
    per, size = fg.run_axis(n)
    fig, axes = fg.figure_of(2.6, per * n, ncols=len(r.measures))
    y = np.arange(n)
    for ax, m in zip(axes, r.measures):
        rows = lb.loc[m].loc[shown]
        ax.hlines(y, rows["ci_low"], rows["ci_high"], color=_colours(shown, r.highlight, "#7fa7cf", "#f0b77a"),
                  linewidth=1)
        ax.scatter(rows["mean"], y, s=10, color=_colours(shown, r.highlight, "#2f6fae"), linewidths=0, zorder=3)
        fg.title(ax, m)
        fg.x_grid(ax)
    fg.runs_yaxis(axes, names, size, fg.marked_at(shown, r.highlight))
    return fg.svg(fig)


def overview_figure(r: Report) -> str:
    """Every run's means with their intervals, a row per measure, the runs along x by rank
    (named when there is room to read their names; else the highlighted ones only)."""
    n = len(r.run_ids)
    lb = r.leaderboard.set_index(["measure", "run_id"])
    width, size = fg.runs_along(n)
    fig, axes = fg.stacked(width, 1.5, len(r.measures))
    x = np.arange(n)
    for ax, m in zip(axes, r.measures):
        rows = lb.loc[m].loc[r.run_ids]
        ax.vlines(x, rows["ci_low"], rows["ci_high"], color=_colours(r.run_ids, r.highlight, "#7fa7cf", "#f0b77a"),
                  linewidth=1)
        ax.scatter(x, rows["mean"], s=6, color=_colours(r.run_ids, r.highlight, "#2f6fae"), linewidths=0, zorder=3)
        ax.set_ylabel(fg.plain(m), fontsize=8)
    fg.runs_xaxis(axes, r.run_ids, size, fg.marked_at(r.run_ids, r.highlight))
    return fg.svg(fig)


def significance_figure(r: Report, measure: str) -> str:
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    runs, M, P = r.decisions(measure)
    n = len(runs)
    np.fill_diagonal(M, np.nan)
    side = min(3.2, max(2.4, (0.34 if n <= 12 else 0.2 if n <= 40 else 0.045) * n))  # 3 to a row
    fig, (ax,) = fg.figure_of(side, side, top=0.6)
    ax.imshow(M, cmap=ListedColormap([_WORSE, _NOT, _BETTER]), vmin=-1.5, vmax=1.5,
              interpolation="nearest", aspect="auto")
    if n <= fg.MANY:
        _, size = fg.run_axis(n)
        marked = fg.marked_at(runs, r.highlight)
        fg.mark(ax.set_xticks(range(n), [fg.plain(x) for x in runs], rotation=90, fontsize=size), marked)
        fg.mark(ax.set_yticks(range(n), [fg.plain(x) for x in runs], fontsize=size), marked)
    else:  # too many runs to name: their ranks by mean
        ticks = [0] + list(range(9, n, 10))
        ax.set_xticks(ticks, [str(t + 1) for t in ticks], fontsize=7)
        ax.set_yticks(ticks, [str(t + 1) for t in ticks], fontsize=7)
        ax.set_xlabel(f"runs by mean {fg.plain(measure)} (rank)", fontsize=8)
        ax.set_ylabel(f"runs by mean {fg.plain(measure)} (rank)", fontsize=8)
    if n <= 12:  # room for the (adjusted) p-values
        for i in range(n):
            for j in range(n):
                if i != j and not np.isnan(P[i, j]):
                    ax.text(j, i, f"{P[i, j]:.3f}", ha="center", va="center", fontsize=6,
                            color="white" if M[i, j] else "#444")
    fg.title(ax, measure, 10, pad=20)
    ax.legend(handles=[Patch(color=_BETTER, label="row better"), Patch(color=_WORSE, label="row worse"),
                       Patch(color=_NOT, label="not significant")],
              loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, fontsize=7, frameon=False,
              handlelength=1.2, columnspacing=1.0)
    return fg.svg(fig)


def groups_figure(r: Report, measure: str) -> str:
    """The runs by mean ``measure`` with their confidence intervals, and beside them the
    groups of runs not significantly different: a column per group, dark at its runs and
    light between its first and its last."""
    from matplotlib.colors import ListedColormap
    from matplotlib.figure import Figure

    G = r.group_matrix(measure)
    runs = r.order(measure)
    n, g = len(runs), len(G)
    per, size = fg.run_axis(n)

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
    fg.x_grid(ax_ci)
    fg.title(ax_ci, f"{measure}: mean, {r.level * 100:g}% CI")
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
    fg.runs_yaxis([ax_ci, ax_g], runs, size, fg.marked_at(runs, r.highlight))
    return fg.svg(fig)


def box_figure(r: Report, measure: str) -> str:
    from matplotlib.cbook import boxplot_stats
    from matplotlib.collections import PolyCollection

    m = r.matrices[measure]
    runs = r.order(measure)
    n = len(runs)
    per, size = fg.run_axis(n)
    X = m.X[[m.run_ids.index(run) for run in runs]]
    box = {k: np.array([s[k] for s in boxplot_stats(list(X))])
           for k in ("q1", "q3", "med", "mean", "whislo", "whishi")}
    y = np.arange(n)
    fig, (ax,) = fg.figure_of(5.0, per * n)
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
    fg.runs_yaxis([ax], runs, size, fg.marked_at(runs, r.highlight))
    fg.title(ax, measure, 10)
    fg.x_grid(ax)
    return fg.svg(fig)


def correlation_figure(r: Report, tau: np.ndarray) -> str:
    k = len(r.measures)
    side = 0.55 * k + 0.6
    fig, (ax,) = fg.figure_of(side, side, top=0.1, bottom=0.1)
    image = ax.imshow(tau, vmin=min(0.0, float(tau.min())), vmax=1.0, cmap="viridis")
    names = [fg.plain(m) for m in r.measures]
    ax.set_xticks(range(k), names, rotation=45, ha="right", fontsize=8)
    ax.set_yticks(range(k), names, fontsize=8)
    for a in range(k):
        for b in range(k):
            ax.text(b, a, f"{tau[a, b]:.3f}", ha="center", va="center", fontsize=7,
                    color="white" if tau[a, b] < 0.6 else "black")
    fig.colorbar(image, ax=ax, fraction=0.08, pad=0.04, label="Kendall's τ-b")
    return fg.svg(fig)


def coverage_figure(r: Report) -> str:
    judged, base, res = r.coverage_measures
    n = len(r.run_ids)
    per, size = fg.run_axis(n)
    cov = r.coverage.set_index("run_id").loc[r.run_ids]
    if n > fg.MANY:  # the two one above the other, the runs along x
        width, size = fg.runs_along(n)
        fig, (ax_rbp, ax_judged) = fg.stacked(width, 1.3, 2)
        x = np.arange(n)
        pitch = width / n
        ax_rbp.vlines(x, 0, cov[base], linewidth=pitch * 72 * 0.7, color="#2f6fae")
        ax_rbp.vlines(x, cov[base], cov[base] + cov[res], linewidth=pitch * 72 * 0.7, color="#b9cfe6")
        ax_judged.vlines(x, 0, cov[judged], linewidth=pitch * 72 * 0.7, color="#6a8f3a")
        ax_rbp.set_ylabel(fg.plain(f"{base}\n+ residual"), fontsize=8)
        ax_judged.set_ylabel(fg.plain(judged), fontsize=8)
        for ax in (ax_rbp, ax_judged):
            ax.set_ylim(0, 1)
        fg.runs_xaxis([ax_rbp, ax_judged], r.run_ids, size, fg.marked_at(r.run_ids, r.highlight))
        return fg.svg(fig)
    fig, (ax_rbp, ax_judged) = fg.figure_of(3.4, per * n, ncols=2)
    y = np.arange(n)
    fg.bars(ax_rbp, y, 0, cov[base], per, color="#2f6fae")
    fg.bars(ax_rbp, y, cov[base], cov[base] + cov[res], per, color="#b9cfe6")
    fg.bars(ax_judged, y, 0, cov[judged], per, color="#6a8f3a")
    fg.title(ax_rbp, f"{base} (dark) + residual (light)")
    fg.title(ax_judged, judged)
    for ax in (ax_rbp, ax_judged):
        ax.set_xlim(0, 1)
        fg.x_grid(ax)
    fg.runs_yaxis([ax_rbp, ax_judged], r.run_ids, size, fg.marked_at(r.run_ids, r.highlight))
    return fg.svg(fig)

