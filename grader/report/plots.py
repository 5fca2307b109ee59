"""The class report's charts, drawn from summaries (grader/report/data.py), one figure per chart:
a class of thousands costs one bar per verdict, one box per exercise and at most
MAX_DOTS dots per exercise, never one artist per gradebook row.

No pyplot: figures are plain matplotlib Figures rendered with Agg, as in grader/notebook/charts.py.
"""

from __future__ import annotations

import io

import matplotlib
import numpy as np
from matplotlib import rc_context
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator, NullLocator

from grader.notebook.charts import STATE_COLOURS
from grader.classroom.gradebook import NOT_SUBMITTED
from grader.report.data import VERDICT_ORDER

VERDICT_COLOURS = {
    "passed": STATE_COLOURS["passed"],
    "too_slow": "#d4a72c",
    "syntax_error": "#1b7c83",
    "exception": "#bf3989",
    "wrong_result": "#cf222e",
    "out_of_bounds": "#8250df",
    "unwritten_output": "#0969da",
    "timeout": "#6e7781",
    "race": "#fb8f44",
    "forbidden": "#24292f",
    "crashed": "#953800",
    "not_attempted": "#afb8c1",
    NOT_SUBMITTED: "#d8dee4",
}
"""One colour per verdict, shared by the charts and the page's tables."""
VERDICT_LABELS = {
    NOT_SUBMITTED: "not submitted",
    "too_slow": "too slow (correct)",
    "not_attempted": "not attempted (starter unchanged)",
}
INK, MUTED, GRID = "#1f2328", "#656d76", "#d0d7de"
SPEEDUP_TICKS = (0.1, 0.2, 0.3, 0.5, 0.7, 1, 1.5, 2, 3, 5, 7, 10, 20, 30, 50, 100, 200, 500, 1000)
"""Readable ticks on the log-scaled speedup axis (a log axis alone labels only decades)."""
MAX_DOTS = 300
"""Dots drawn per exercise on the speed chart; the box summarises all of them."""
_MPL = tuple(int(part) for part in matplotlib.__version__.split(".")[:2])
HORIZONTAL = {"orientation": "horizontal"} if _MPL >= (3, 10) else {"vert": False}
"""Boxplots lying down; `vert` is deprecated since matplotlib 3.10."""
STYLE = {
    "font.size": 10,
    "axes.edgecolor": GRID,
    "axes.labelcolor": INK,
    "xtick.color": MUTED,
    "ytick.color": INK,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "text.color": INK,
}


def label(verdict: str) -> str:
    return VERDICT_LABELS.get(verdict, verdict.replace("_", " "))


def png(fig: Figure, dpi: int = 144) -> bytes:
    FigureCanvasAgg(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, facecolor="white")
    return buffer.getvalue()


def charts(report) -> dict:
    """Chart name -> PNG bytes; "speed" is None when nothing was timed on a GPU."""
    with rc_context(STYLE):
        return {
            "verdicts": png(verdict_chart(report.exercises)),
            "speed": png(speed_chart(report.exercises)) if report.speed_graded else None,
            "scores": png(score_histogram([s.percent for s in report.active], report.median_percent)),
        }


def _exercise_label(e) -> str:
    return e.id if e.stage is None else f"{e.stage}  {e.id}"


def verdict_chart(exercises) -> Figure:
    """One stacked bar per exercise: how many students got each verdict."""
    n = len(exercises)
    fig = Figure(figsize=(9.6, 0.42 * n + 1.5))
    ax = fig.add_axes((0.17, 0.9 / (0.42 * n + 1.5), 0.68, 1 - 1.45 / (0.42 * n + 1.5)))
    rows = np.arange(n)
    left = np.zeros(n)
    present = [v for v in VERDICT_ORDER if any(e.verdicts.get(v) for e in exercises)]
    for verdict in present:
        counts = np.array([e.verdicts.get(verdict, 0) for e in exercises], float)
        ax.barh(
            rows,
            counts,
            left=left,
            height=0.68,
            color=VERDICT_COLOURS[verdict],
            label=label(verdict),
            edgecolor="white",
            linewidth=0.6,
        )
        left += counts
    for row, e in zip(rows, exercises):
        rate = f"{e.pass_rate:.0%}" if e.pass_rate is not None else "–"
        ax.text(
            left[row] + left.max() * 0.01,
            row,
            f"{e.passed}/{e.submitted} pass  ({rate})",
            va="center",
            fontsize=9,
            color=MUTED,
        )
    ax.set_yticks(rows, [_exercise_label(e) for e in exercises], family="monospace")
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_xlim(0, left.max() * 1.02 if left.max() else 1)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("students")
    ax.grid(axis="x", color=GRID, linewidth=0.6)
    ax.set_axisbelow(True)
    ax.tick_params(axis="y", length=0)
    _legend_in_rows(fig, ax, per_row=7)
    return fig


def _legend_in_rows(fig, ax, per_row: int) -> None:
    """A legend read left to right, then down (matplotlib fills columns first)."""
    handles, labels = ax.get_legend_handles_labels()
    rows = -(-len(handles) // per_row)
    cols = -(-len(handles) // rows)
    order = [r * cols + c for c in range(cols) for r in range(rows) if r * cols + c < len(handles)]
    fig.legend(
        [handles[i] for i in order],
        [labels[i] for i in order],
        loc="upper left",
        bbox_to_anchor=(0.01, 0.995),
        ncols=cols,
        frameon=False,
        fontsize=9,
        handlelength=1.1,
        columnspacing=1.2,
    )


def speed_chart(exercises) -> Figure:
    """Per exercise timed on a GPU: speedups over the baseline (box and dots, log scale)
    against the speedup it requires (red tick); 1× is the baseline itself."""
    timed = [e for e in exercises if e.speedups]
    n = len(timed)
    height = 0.55 * n + 1.4
    fig = Figure(figsize=(9.6, height))
    ax = fig.add_axes((0.17, 0.75 / height, 0.6, 1 - 1.2 / height))
    rows = np.arange(n)
    data = [np.asarray(e.speedups, float) for e in timed]
    ax.boxplot(
        data,
        positions=rows,
        **HORIZONTAL,
        widths=0.5,
        whis=(5, 95),
        showfliers=False,
        patch_artist=True,
        boxprops={"facecolor": "#ddf4ff", "edgecolor": "#54aeff"},
        medianprops={"color": "#0969da", "linewidth": 2},
        whiskerprops={"color": "#54aeff"},
        capprops={"color": "#54aeff"},
    )
    rng = np.random.default_rng(0)  # the same jitter every time the report is made
    for row, values in zip(rows, data):
        shown = values if len(values) <= MAX_DOTS else rng.choice(values, MAX_DOTS, replace=False)
        ax.scatter(
            shown, row + rng.uniform(-0.18, 0.18, len(shown)), s=9, color=INK, alpha=0.45, linewidths=0, zorder=3
        )
    required = [(row, e.required_speedup) for row, e in zip(rows, timed) if e.required_speedup is not None]
    if required:
        ax.vlines(
            [r for _, r in required],
            [row - 0.38 for row, _ in required],
            [row + 0.38 for row, _ in required],
            color="#cf222e",
            linewidth=2.2,
            zorder=4,
            label="required speedup",
        )
    ax.axvline(1.0, color=MUTED, linestyle=":", linewidth=1, label="baseline (1×)")
    ax.set_xscale("log")
    every = np.concatenate(data + [np.array([1.0] + [r for _, r in required])])
    ax.set_xlim(every.min() / 1.4, every.max() * 1.4)
    low, high = ax.get_xlim()
    ax.xaxis.set_major_locator(FixedLocator([t for t in SPEEDUP_TICKS if low <= t <= high]))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}×"))
    ax.set_yticks(rows, [_exercise_label(e) for e in timed], family="monospace")
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_xlabel("speedup over the baseline kernel (median of paired runs, log scale)")
    ax.grid(axis="x", color=GRID, linewidth=0.6)
    ax.tick_params(axis="y", length=0)
    for row, e in zip(rows, timed):
        need = (
            f", {e.meeting_requirement}/{len(e.speedups)} ≥ {e.required_speedup:g}×"
            if e.required_speedup is not None
            else ""
        )
        ax.text(
            1.02,
            row,
            f"median {e.median_speedup:.2f}×{need}",
            va="center",
            fontsize=9,
            color=MUTED,
            transform=ax.get_yaxis_transform(),
        )
    fig.legend(loc="upper left", bbox_to_anchor=(0.01, 0.995), ncols=2, frameon=False, fontsize=9)
    return fig


def score_histogram(percents, median: float | None) -> Figure:
    """Students (who handed something in) per 10-point band of their total score."""
    fig = Figure(figsize=(9.6, 3.4))
    ax = fig.add_axes((0.07, 0.17, 0.9, 0.72))
    edges = np.arange(0, 101, 10)
    counts, _ = np.histogram(np.clip(percents, 0, 100), bins=edges)
    ax.bar(edges[:-1] + 5, counts, width=9.2, color="#54aeff", edgecolor="#0969da", linewidth=0.6)
    for x, c in zip(edges[:-1] + 5, counts):
        if c:
            ax.text(x, c, str(c), ha="center", va="bottom", fontsize=9, color=MUTED)
    if median is not None:
        ax.axvline(median, color="#cf222e", linewidth=1.6)
        ax.text(
            median,
            1.0,
            f" median {median:.0f}%",
            color="#cf222e",
            fontsize=9,
            va="bottom",
            ha="left" if median < 80 else "right",
            transform=ax.get_xaxis_transform(),
        )
    ax.set_xlim(0, 100)
    ax.set_ylim(0, max(counts.max(initial=0), 1) * 1.15)
    ax.set_xticks(edges, [f"{e}%" for e in edges])
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("total score (points earned of points available)")
    ax.set_ylabel("students")
    ax.grid(axis="y", color=GRID, linewidth=0.6)
    ax.set_axisbelow(True)
    return fig
