"""The figures of the report's pages, drawn with matplotlib and inlined as SVG ``data:``
URIs: the figure of given plotting sizes, runs named along an axis, bars, titles and grids
placed without a layout pass (with hundreds of run labels, each pass costs seconds)."""

from __future__ import annotations

import base64
import io

MANY = 40  # beyond this many runs, the leaderboard and coverage figures lay the runs along x
HIGHLIGHT = "#d9822b"  # the runs the user highlighted (irw report --highlight)
READABLE = 7.0  # the smallest font size (points) a run's name is drawn in


def svg(fig) -> str:
    """A figure as an ``img`` source: SVG, base64, with no external reference."""
    import matplotlib

    buffer = io.BytesIO()
    # text as SVG text, not glyph outlines: the page is half the size (the browser draws
    # it in the figure's font, DejaVu Sans, or a sans-serif font like it)
    with matplotlib.rc_context({"svg.hashsalt": "irw-report", "svg.fonttype": "none"}):
        fig.savefig(buffer, format="svg", metadata={"Date": None}, bbox_inches="tight")
    return "data:image/svg+xml;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def plain(label: str) -> str:
    """A label for matplotlib, which would read ``$...$`` as mathematics."""
    return label.replace("$", r"\$")


def run_axis(n: int) -> tuple[float, float]:
    """Height per run (inches) and font size of run labels."""
    return (0.22, 8) if n <= MANY else (0.15, 6)


def figure_of(width: float, height: float, ncols: int = 1, gap: float = 0.25,
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


def title(ax, text: str, size: float = 9, pad: float = 4) -> None:
    """A title at a fixed place (placing it automatically measures every tick label)."""
    ax.set_title(plain(text), fontsize=size, y=1.0, pad=pad)


def bars(ax, y, left, right, per: float, **style) -> None:
    """Horizontal bars from ``left`` to ``right`` at ``y``, all runs as one artist."""
    ax.hlines(y, left, right, linewidth=per * 72 * 0.7, capstyle="butt", **style)


def runs_yaxis(axes, runs: list[str], size: float, marked=()) -> None:
    """The runs, top to bottom, named on the first of ``axes``; the names at the positions
    ``marked`` in the highlight colour, bold."""
    mark(axes[0].set_yticks(range(len(runs)), [plain(x) for x in runs], fontsize=size), marked)
    for ax in axes[1:]:
        ax.set_yticks([])
    for ax in axes:
        ax.set_ylim(len(runs) - 0.5, -0.5)


def mark(ticks, marked) -> None:
    """The labels of the ``ticks`` (what ``set_xticks``/``set_yticks`` return) at the
    positions ``marked`` in the highlight colour, bold."""
    for k in marked:
        for label in (ticks[k].label1, ticks[k].label2):  # either side of the axis
            label.set_color(HIGHLIGHT)
            label.set_fontweight("bold")


def marked_at(runs: list[str], highlight) -> list[int]:
    """The positions in ``runs`` of the highlighted runs."""
    wanted = set(highlight)
    return [k for k, run in enumerate(runs) if run in wanted]


def stacked(width: float, height: float, nrows: int, gap: float = 0.3, top: float = 0.25,
             bottom: float = 0.2):
    """A figure whose plotting areas measure ``width`` x ``height`` inches each, one above
    the other (as :func:`_figure_of`, which puts them side by side)."""
    from matplotlib.figure import Figure

    total_h = nrows * height + (nrows - 1) * gap + top + bottom
    fig = Figure(figsize=(width, total_h))
    fig.subplots_adjust(left=0, right=1, bottom=bottom / total_h, top=1 - top / total_h,
                        hspace=gap / height)
    return fig, fig.subplots(nrows, 1, squeeze=False)[:, 0]


def runs_along(n: int) -> tuple[float, float | None]:
    """For runs laid along x: the plotting width (inches, the page's width at most) and the
    font size of their names (None: too narrow to name them all readably, their ranks
    instead)."""
    width = min(11.0, max(6.0, 0.085 * n))
    pitch = width / n * 72  # points per run
    return width, (READABLE if 0.9 * pitch >= READABLE else None)


def runs_xaxis(axes, runs: list[str], size: float | None, marked=()) -> None:
    """The runs, left to right, named (or ranked) under the last of ``axes``; the runs at
    the positions ``marked`` in the highlight colour, named above the first of ``axes`` when
    the others are ranked."""
    n = len(runs)
    for ax in axes:
        ax.set_xlim(-0.5, n - 0.5)
        ax.set_xticks([])
        ax.grid(axis="y", color="#e4e4e4")
        ax.set_axisbelow(True)
        ax.tick_params(axis="y", labelsize=7)
    if size is not None:
        mark(axes[-1].set_xticks(range(n), [plain(x) for x in runs], rotation=90, fontsize=size), marked)
        return
    ticks = [0] + list(range(9, n, 10))
    axes[-1].set_xticks(ticks, [str(t + 1) for t in ticks], fontsize=7)
    axes[-1].set_xlabel("runs (rank)", fontsize=8)
    if marked:  # the highlighted runs named above the figure, at their ranks
        top = axes[0].secondary_xaxis("top")
        mark(top.set_xticks(list(marked), [f"{plain(runs[k])} ({k + 1})" for k in marked],
                            rotation=90, fontsize=READABLE), range(len(marked)))


def x_grid(ax) -> None:
    ax.grid(axis="x", color="#e4e4e4")
    ax.set_axisbelow(True)
    ax.tick_params(axis="x", labelsize=7)

