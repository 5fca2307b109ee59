"""The arithmetic and the drawings behind the notebook widgets, without any widgets.

Each picture has a small model (a frozen dataclass that answers the questions a learner
asks: how many blocks, which sectors, which tile), a `draw_*` function that turns it into a
matplotlib Figure and a `describe_*` function that says the same in text. Figures are built
with `matplotlib.figure.Figure`, never pyplot, so nothing here touches the notebook's
backend or leaves figures open.

This module: the shared drawing helpers and the grid of blocks and threads.
grader/notebook/memory_pictures.py: coalescing and shared-memory tiling; grader/notebook/charts.py: the
roofline and the ladder.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from functools import partial

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle

BLOCK_COLOURS = ("#56B4E9", "#009E73", "#CC79A7", "#F0E442", "#0072B2")
"""Colour-blind-safe (Okabe-Ito) colours for blocks; red is kept for mistakes."""
IDLE, MISSED, MISSED_EDGE = "#d9d9d9", "#ffc9c9", "#d62728"


def png_bytes(fig: Figure) -> bytes:
    """Render with Agg whatever the notebook's backend is."""
    FigureCanvasAgg(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight", facecolor="white")
    return buffer.getvalue()


CELL_LOOK = {"face": "white", "edge": "#555555", "hatch": None, "size": 9, "colour": "black", "weight": "normal"}
"""How a cell looks unless told otherwise: its fill, border, hatching, and its text's size,
colour and weight."""


def cell(ax, x, y, text="", width=1.0, height=1.0, **look):
    """One box of a picture at (x, y), `text` in its middle; `look`: any of CELL_LOOK's keys."""
    unknown = set(look) - set(CELL_LOOK)
    if unknown:
        raise TypeError(f"cell() has no look {sorted(unknown)}")
    look = {**CELL_LOOK, **look}
    ax.add_patch(
        Rectangle(
            (x, y), width, height, facecolor=look["face"], edgecolor=look["edge"], hatch=look["hatch"], linewidth=0.8
        )
    )
    if text != "":
        ax.text(
            x + width / 2,
            y + height / 2,
            str(text),
            ha="center",
            va="center",
            fontsize=look["size"],
            color=look["colour"],
            fontweight=look["weight"],
        )


def canvas(width, height, unit=0.36, left=1.7, top=0.9, bottom=0.5, right=0.2):
    """A figure whose axes hold exactly width × height cells of `unit` inches.

    Sizing the figure from the drawing (rather than squeezing the drawing into a fixed
    figure) keeps cells square and leaves no empty bands around them.
    """
    fig_w, fig_h = left + width * unit + right, bottom + height * unit + top
    fig = Figure(figsize=(fig_w, fig_h))
    ax = fig.add_axes((left / fig_w, bottom / fig_h, width * unit / fig_w, height * unit / fig_h))
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.axis("off")
    return fig, ax


def title(fig, lines: list[str], bold: int = -1):
    """Top-left caption, one text per line; line `bold` carries the thing to remember."""
    inch = 1 / fig.get_figheight()
    for row, line in enumerate(lines):
        fig.text(
            0.01,
            1 - (0.08 + 0.22 * row) * inch,
            line,
            va="top",
            fontsize=12 if row == bold % len(lines) else 11,
            fontweight="bold" if row == bold % len(lines) else "normal",
        )


def span_text(numbers) -> str:
    numbers = list(numbers)
    return f"{numbers[0]}" if len(numbers) == 1 else f"{numbers[0]}–{numbers[-1]}"


# ---- 1. grid, blocks and threads -------------------------------------------------------


@dataclass(frozen=True)
class GridLayout:
    """A 1-D launch over n elements: which thread covers which element."""

    n: int
    threads_per_block: int
    floor_division: bool = False
    """Compute blocks as n // threads (the bug) instead of rounding up."""

    def __post_init__(self):
        if self.n < 1 or self.threads_per_block < 1:
            raise ValueError("n and threads_per_block must be at least 1")
        if max(self.n, self.threads) > 256:  # a picture, not a real launch: keep it readable
            raise ValueError("the picture holds at most 256 threads and elements")

    @property
    def blocks(self) -> int:
        if self.floor_division:
            return self.n // self.threads_per_block
        return -(-self.n // self.threads_per_block)  # ceil without floats

    @property
    def threads(self) -> int:
        return self.blocks * self.threads_per_block

    @property
    def idle_threads(self) -> range:
        """Global indices i >= n: the bounds guard `if i < n` turns these threads away."""
        return range(self.n, self.threads)

    @property
    def uncovered_elements(self) -> range:
        """Elements no thread is launched for: never written."""
        return range(self.threads, self.n)

    def global_index(self, block: int, thread: int) -> int:
        return block * self.threads_per_block + thread

    def blocks_formula(self) -> str:
        n, t = self.n, self.threads_per_block
        if self.floor_division:
            return f"blocks = {n} // {t} = {self.blocks}"
        return f"blocks = ceil({n} / {t}) = {self.blocks}"


LINE = 5.0
"""Height of one wrapped line of the grid picture: block label, threadIdx.x, i, arrows, out[i]."""


def draw_grid(layout: GridLayout) -> Figure:
    columns = max(layout.threads, layout.n)
    per_line = min(columns, layout.threads_per_block * max(1, 32 // layout.threads_per_block))
    lines = -(-columns // per_line)
    fig, ax = canvas(per_line, lines * LINE - 0.8, top=0.95, bottom=0.45)
    place = partial(_grid_place, per_line=per_line, lines=lines)
    for block in range(layout.blocks):
        _draw_block(ax, layout, block, place)
    for i in range(layout.n):
        _draw_element(ax, layout, i, place)
    for line in range(lines):
        base = (lines - 1 - line) * LINE
        for y, label in ((2.8, "threadIdx.x"), (2.1, "global index i"), (0.45, "element out[i]")):
            ax.text(-0.3, base + y, label, ha="right", va="center", fontsize=10)
    title(fig, _grid_title(layout))
    fig.legend(handles=_grid_legend(), loc="lower center", ncol=3, frameon=False, fontsize=9)
    return fig


def _grid_place(column, per_line, lines):
    """(x, y of the line's bottom) of a column: long grids wrap onto several lines."""
    return column % per_line, (lines - 1 - column // per_line) * LINE


def _draw_block(ax, layout, block, place):
    t = layout.threads_per_block
    colour = BLOCK_COLOURS[block % len(BLOCK_COLOURS)]
    x, base = place(block * t)
    ax.add_patch(
        Rectangle(
            (x + 0.06, base + 1.55), t - 0.12, 1.75, facecolor=to_rgba(colour, 0.3), edgecolor=colour, linewidth=2.5
        )
    )
    label = f"block {block}" + (f"  (blockIdx.x = {block})" if t >= 6 else "")
    ax.text(
        x + t / 2, base + 3.6, label if t >= 3 else str(block), ha="center", va="center", fontsize=10, fontweight="bold"
    )
    for thread in range(t):
        i = layout.global_index(block, thread)
        x, base = place(i)
        idle = i >= layout.n
        cell(ax, x, base + 2.55, thread, face=to_rgba(colour, 0.3), size=8, colour="#333333", height=0.5)
        cell(
            ax,
            x,
            base + 1.7,
            "" if idle else i,
            face=IDLE if idle else "white",
            hatch="///" if idle else None,
            size=10 if i < 100 else 8,
            height=0.8,
            weight="bold",
        )
        if idle:  # a white backdrop keeps the number readable over the hatching
            ax.text(
                x + 0.5,
                base + 2.1,
                i,
                ha="center",
                va="center",
                fontsize=8,
                color="#555555",
                bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.6},
            )
        else:
            ax.annotate(
                "",
                (x + 0.5, base + 0.95),
                (x + 0.5, base + 1.65),
                arrowprops={"arrowstyle": "->", "color": "#555555", "lw": 0.8},
            )


def _draw_element(ax, layout, i, place):
    x, base = place(i)
    if i in layout.uncovered_elements:
        cell(
            ax, x, base, f"{i}\n✗", face=MISSED, edge=MISSED_EDGE, size=8, colour=MISSED_EDGE, height=0.9, weight="bold"
        )
        return
    colour = BLOCK_COLOURS[(i // layout.threads_per_block) % len(BLOCK_COLOURS)]
    cell(ax, x, base, i, face=colour, size=10 if i < 100 else 8, height=0.9)


def _grid_title(layout: GridLayout) -> list[str]:
    head = (
        f"n = {layout.n} elements, {layout.threads_per_block} threads per block → "
        f"{layout.blocks_formula()} → {layout.threads} threads"
    )
    if layout.uncovered_elements:
        tail = (
            f"Only {layout.threads} threads for {layout.n} elements: elements "
            f"{span_text(layout.uncovered_elements)} are never written! Round up instead."
        )
    elif layout.idle_threads:
        count = len(layout.idle_threads)
        tail = (
            f"{count} thread{'s' if count > 1 else ''} ({span_text(layout.idle_threads)}) "
            f"{'have' if count > 1 else 'has'} i ≥ n: the bounds guard `if i < n:` turns "
            f"{'them' if count > 1 else 'it'} away."
        )
    else:
        tail = "Exactly one thread per element this time (keep the bounds guard anyway)."
    return [head, "Each thread computes i = blockIdx.x * blockDim.x + threadIdx.x.", tail]


def _grid_legend():
    return [
        Patch(facecolor="white", edgecolor="#555555", label="thread: works on out[i]"),
        Patch(facecolor=IDLE, edgecolor="#555555", hatch="///", label="thread with i ≥ n: turned away by the guard"),
        Patch(facecolor=MISSED, edgecolor=MISSED_EDGE, label="element no thread covers (bug)"),
    ]


def describe_grid(layout: GridLayout) -> str:
    t = layout.threads_per_block
    lines = [f"n = {layout.n}, {t} threads per block, {layout.blocks_formula()} → {layout.threads} threads"]
    for block in range(layout.blocks):
        lines.append(f"  block {block}: threads i = {block * t}–{block * t + t - 1}")
    if layout.idle_threads:
        lines.append(f"  turned away by `if i < n`: i = {span_text(layout.idle_threads)}")
    if layout.uncovered_elements:
        lines.append(f"  never written (no thread): elements {span_text(layout.uncovered_elements)}")
    return "\n".join(lines)
