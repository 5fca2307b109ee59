"""Pictures of memory access: one warp's 32-byte sectors, and shared-memory tiles of a matmul.

Models, drawings and text twins, without widgets (see grader/notebook/pictures.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle

from grader.notebook.pictures import canvas, cell, title

WARP = 32
SECTOR_BYTES = 32
"""Global memory is read in 32-byte sectors: the unit that coalescing is counted in."""


# ---- coalescing -------------------------------------------------------------------------


@dataclass(frozen=True)
class WarpAccess:
    """One warp's load from a row-major array: which addresses and 32-byte sectors it touches."""

    rows: int
    cols: int
    order: str
    """"row": lane t reads element t of the flattened array (threadIdx.x walks along a
    row); "column": lane t reads A[t, 0] (threadIdx.x walks down a column)."""
    itemsize: int = 4

    def __post_init__(self):
        if self.order not in ("row", "column"):
            raise ValueError('order must be "row" or "column"')
        if not (1 <= self.rows <= 64 and 1 <= self.cols <= 128):  # readable cells
            raise ValueError("rows must be 1 to 64 and cols 1 to 128")

    @property
    def lane_cells(self) -> tuple:
        if self.order == "row":
            return tuple(divmod(lane, self.cols) for lane in range(WARP))
        return tuple((lane, 0) for lane in range(WARP))

    @property
    def rows_shown(self) -> int:
        """A column walk needs 32 rows, so the drawn array grows to hold the whole warp."""
        return max(self.rows, max(r for r, _ in self.lane_cells) + 1)

    @property
    def addresses(self) -> tuple:
        return tuple(self.itemsize * (r * self.cols + c) for r, c in self.lane_cells)

    @property
    def sectors(self) -> tuple:
        return tuple(sorted({a // SECTOR_BYTES for a in self.addresses}))

    @property
    def bytes_used(self) -> int:
        return WARP * self.itemsize

    @property
    def bytes_fetched(self) -> int:
        return len(self.sectors) * SECTOR_BYTES

    def summary(self) -> str:
        count = len(self.sectors)
        return (
            f"1 request: {count} sector{'s' if count > 1 else ''} of {SECTOR_BYTES} B — "
            f"{self.bytes_fetched} B fetched for {self.bytes_used} B used "
            f"({self.bytes_used / self.bytes_fetched:.0%} useful)"
        )


def draw_coalescing(access: WarpAccess) -> Figure:
    rows, cols = access.rows_shown, access.cols
    fig, ax = canvas(cols, rows + 0.6, unit=0.3 if rows <= 12 else 0.2, left=0.8, top=0.95, bottom=0.45)
    ax.invert_yaxis()  # row 0 at the top, as the array is printed
    fetched = set(access.sectors)
    for r in range(rows):
        for c in range(cols):
            sector = access.itemsize * (r * cols + c) // SECTOR_BYTES
            cell(ax, c, r + 0.6, face="#ffe0b2" if sector in fetched else "white", edge="#c8c8c8")
    for lane, (r, c) in enumerate(access.lane_cells):
        cell(ax, c, r + 0.6, lane, face="#E69F00", edge="#8a5a00", size=7, weight="bold")
    _sector_borders(ax, access, rows, cols)
    title(
        fig,
        [
            f"One warp (32 threads) reads a row-major float32 array ({cols} floats = "
            f"{cols * access.itemsize} B per row)",
            _walk_text(access),
            access.summary(),
        ],
    )
    fig.legend(
        handles=[
            Patch(facecolor="#E69F00", edgecolor="#8a5a00", label="float32 a lane reads (number = lane)"),
            Patch(facecolor="#ffe0b2", edgecolor="#c8c8c8", label="fetched with it, unused"),
            Patch(facecolor="white", edgecolor="#c8c8c8", label="not fetched"),
        ],
        loc="lower center",
        ncol=3,
        frameon=False,
        fontsize=9,
    )
    return fig


def describe_warp(access: WarpAccess) -> str:
    reads = "consecutive floats (A[0, 0], A[0, 1], …)" if access.order == "row" else "A[0..31, 0]"
    return f"{access.order} order: one warp reads {reads} of a {access.cols}-column float32 array\n{access.summary()}"


def _walk_text(access: WarpAccess) -> str:
    if access.order == "row":
        return "threadIdx.x walks along a row: neighbouring lanes read neighbouring addresses."
    grown = (
        f" (drawn {access.rows_shown} rows tall so the whole warp fits)" if (access.rows_shown > access.rows) else ""
    )
    return f"threadIdx.x walks down a column: neighbouring lanes are {access.cols * access.itemsize} B apart{grown}."


def _sector_borders(ax, access, rows, cols):
    """Thick lines where one 32-byte sector ends and the next begins (and around the array)."""
    per_sector = SECTOR_BYTES // access.itemsize
    for r in range(rows):
        for c in range(cols + 1):
            if c in (0, cols) or (r * cols + c) % per_sector == 0:
                ax.plot([c, c], [r + 0.6, r + 1.6], color="#333333", linewidth=1.6)
    ax.plot([0, cols, cols, 0, 0], [0.6, 0.6, rows + 0.6, rows + 0.6, 0.6], color="#333333", linewidth=1.6)
    for c in range(0, cols - per_sector + 1, per_sector):
        ax.text(c + per_sector / 2, 0.3, "32 B sector", ha="center", va="center", fontsize=8)
    step = 1 if rows <= 12 else 4
    for r in range(0, rows, step):
        ax.text(-0.3, r + 1.1, f"row {r}", ha="right", va="center", fontsize=8)


# ---- shared-memory tiling---------------------------------------------------------


@dataclass(frozen=True)
class TileStep:
    """Step k of a tiled C = A @ B (n × n): what block (block_row, block_col) loads and adds."""

    n: int
    tile: int
    block_row: int
    block_col: int
    k: int

    def __post_init__(self):
        if not (1 <= self.n <= 32 and 1 <= self.tile <= self.n):  # readable cells
            raise ValueError("n must be 1 to 32 and tile 1 to n")
        last = self.steps - 1
        if not all(0 <= index <= last for index in (self.block_row, self.block_col, self.k)):
            raise ValueError(f"block indices and k must be between 0 and {last}")

    @property
    def steps(self) -> int:
        """Tiles along one side: the k loop runs this many times."""
        return -(-self.n // self.tile)

    @property
    def a_tile(self) -> tuple:
        return (self.block_row, self.k)

    @property
    def b_tile(self) -> tuple:
        return (self.k, self.block_col)

    @property
    def c_tile(self) -> tuple:
        return (self.block_row, self.block_col)

    def span(self, tile_index: int) -> range:
        """Element indices covered by tile number `tile_index` along one side."""
        return range(tile_index * self.tile, min(self.n, (tile_index + 1) * self.tile))


TILE_COLOURS = {"A": ("#0072B2", "#cde6f5"), "B": ("#009E73", "#c9eee1"), "C": ("#E69F00", "#ffe0b2")}
"""(this step, earlier steps) for each matrix."""


def draw_tiling(step: TileStep) -> Figure:
    n = step.n
    width = 3 * n + 4
    fig, ax = canvas(width, n + 1.2, unit=min(0.36, 13 / width), left=0.2, top=1.15, bottom=0.1)
    ax.invert_yaxis()  # row 0 at the top
    bi, bj, k = step.block_row, step.block_col, step.k
    _draw_matrix(ax, step, "A", 0, [(bi, j) for j in range(k)], step.a_tile)
    _draw_matrix(ax, step, "B", n + 2, [(j, bj) for j in range(k)], step.b_tile)
    _draw_matrix(ax, step, "C", 2 * n + 4, [], step.c_tile)
    rows, cols = step.span(bi), step.span(bj)  # dashed: all this block will ever read
    for left, x, y, w, h in ((0, 0, rows[0], n, len(rows)), (n + 2, cols[0], 0, len(cols), n)):
        ax.add_patch(Rectangle((left + x, y), w, h, fill=False, edgecolor="#D55E00", linewidth=2.5, linestyle="--"))
    for x, symbol in ((n + 1, "×"), (2 * n + 3, "=")):
        ax.text(x, n / 2, symbol, ha="center", va="center", fontsize=22)
    title(fig, tiling_caption(step).split("\n"), bold=0)
    return fig


def _draw_matrix(ax, step, name, left, done, now):
    n, t = step.n, step.tile
    strong, light = TILE_COLOURS[name]
    for r in range(n):
        for c in range(n):
            tile = (r // t, c // t)
            face = strong if tile == now else light if tile in done else "white"
            ax.add_patch(Rectangle((left + c, r), 1, 1, facecolor=face, edgecolor="#cccccc", linewidth=0.5))
    for i in range(step.steps):
        for j in range(step.steps):
            rows, cols = step.span(i), step.span(j)
            ax.add_patch(
                Rectangle(
                    (left + cols[0], rows[0]), len(cols), len(rows), fill=False, edgecolor="#333333", linewidth=1.5
                )
            )
            mine = (i, j) == now
            if name == "C" or mine:
                ax.text(
                    left + cols[0] + len(cols) / 2,
                    rows[0] + len(rows) / 2,
                    _tile_label(step, name, i, j, mine),
                    ha="center",
                    va="center",
                    fontsize=9 if t >= 3 else 7,
                    fontweight="bold" if mine else "normal",
                    color="white" if mine and name != "C" else "#333333",
                )
    ax.text(left + n / 2, n + 0.7, name, ha="center", va="center", fontsize=14, fontweight="bold")


def _tile_label(step, name, i, j, mine):
    roomy = step.tile >= 3  # small tiles get short labels
    if name != "C":
        return f"{name} tile\n({i}, {j})" if roomy else f"{name}\n({i}, {j})"
    if not mine:
        return f"block\n({i}, {j})" if roomy else f"({i}, {j})"
    added = f"k = 0–{step.k} added" if step.k else "k = 0 added"
    return f"block ({i}, {j})\n{added}" if roomy else f"({i}, {j})\nk ≤ {step.k}"


def tiling_caption(step: TileStep) -> str:
    bi, bj, k, t = step.block_row, step.block_col, step.k, step.tile
    finished = "complete" if k == step.steps - 1 else "not finished yet"
    return (
        f"Step {k + 1} of {step.steps} (k = {k}): block ({bi}, {bj}) loads A tile ({bi}, {k}) "
        f"and B tile ({k}, {bj}) into shared memory\n"
        f"Each of its {t}×{t} threads copies one element of each, waits at cuda.syncthreads(), "
        f"then adds {len(step.span(k))} products to its C element.\n"
        f"Dashed: the row of A and the column of B this block walks along, one tile per step; "
        f"pale: earlier steps.\n"
        f"C tile ({bi}, {bj}) is {finished}. Each value in shared memory is read by {t} "
        f"threads: {t}× fewer reads from global memory."
    )
