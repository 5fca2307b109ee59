"""Name the mistake behind a wrong output from its shape: which elements were never written
(none, the tail, the same ones in every block, all but the first block's), and whether every
wrong value is a whole multiple of, or a constant away from, the expected one.

Each diagnosis is a (message, hint, mistake) triple; the judge puts the message in the case's
verdict, the hint becomes the check's hint (grader.checking.verdicts.hint_for) and the mistake
(a name in grader.result.MISTAKES) what a class report counts."""

from __future__ import annotations

import numpy as np

BLOCK_SIZES = (32, 64, 128, 256, 512, 1024)
"""Written prefixes that look like one block's worth of elements."""


def _blocks(report) -> tuple[int, int] | None:
    """(blocks, threads per block) of the run's one launch, when the doctor ran it."""
    launches = getattr(report, "launches", ())
    if len(launches) != 1:
        return None
    grid, block = launches[0]
    return int(np.prod(grid)), int(np.prod(block))


def unwritten(name: str, never: np.ndarray, report=None) -> tuple[str, str, str] | None:
    """A diagnosis of the never-written elements of the 1-D view of one output, or None when
    they follow no pattern worth naming."""
    flat = never.reshape(-1)
    n = flat.size
    count = int(flat.sum())
    if count == n:
        return (
            f"Nothing was written to `{name}`: "
            + ("not its one element." if n == 1 else f"not one of its {n} elements."),
            "Make sure the kernel stores its result (`out[i] = value`), that `launch` launches "
            "the kernel with `kernel[blocks, threads](...)`, and that it passes the output array.",
            "nothing_written",
        )
    if never.ndim == 2:
        return _unwritten_lines(name, never)
    written = np.flatnonzero(~flat)
    ignored = _index_ignores_thread(name, written, n, report)
    if ignored:
        return ignored
    k = int(written[-1]) + 1
    if k == written.size and k < n:  # a prefix was written, the rest never
        launch = _blocks(report)
        if launch is not None and launch[1] == k and launch[0] > 1:
            return (
                f"Only `{name}[0..{k - 1}]` were written and the other {count} of {n} never: "
                f"all {launch[0]} blocks wrote the same elements 0..{k - 1} (0..blockDim-1) — "
                "the index ignores cuda.blockIdx.x.",
                "Give each thread its own element across the whole grid: "
                "i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x, or i = cuda.grid(1).",
                "index_ignores_block",
            )
        if launch is None and k in BLOCK_SIZES and n >= 2 * k:  # the simulator ran it: no geometry
            return (
                f"Only `{name}[0..{k - 1}]` were written and the other {count} of {n} never: "
                f"either every block wrote the same elements 0..{k - 1} (the index ignores "
                "cuda.blockIdx.x) or only one block ran.",
                "Give each thread its own element across the whole grid (i = cuda.grid(1)) and "
                "launch blocks = (n + threads_per_block - 1) // threads_per_block of them.",
                "index_ignores_block",
            )
        if launch is not None and launch[0] * launch[1] >= n:
            return (
                f"The tail of `{name}` was never written: elements {k}..{n - 1} ({count} of {n}), "
                f"although the launch had {launch[0] * launch[1]} threads: the threads past "
                f"{k - 1} did not store.",
                "Compare the bounds guard with the array's size: `if i < n:` lets every element's "
                "thread store (not `i < n - 1`, not a size smaller than the output's).",
                "guard_too_strict",
            )
        return (
            f"The tail of `{name}` was never written: elements {k}..{n - 1} ({count} of {n}) — "
            "the grid stops short of the end.",
            "Launch enough blocks to cover every element: blocks = (n + threads_per_block - 1) "
            "// threads_per_block (round up, not down), or loop with a grid-stride loop.",
            "unwritten_tail",
        )
    for period in (2, 4, 8, 16, 32, 64, 128, 256, 512, 1024):
        if n < 2 * period or count * period > n * (period - 1):
            continue
        whole = n // period * period
        blocks = flat[:whole].reshape(-1, period)
        if (blocks == blocks[0]).all() and blocks[0].any():
            holes = np.flatnonzero(blocks[0])
            shown = _ranges(holes)
            return (
                f"The same elements are unwritten in every stretch of {period} of `{name}`: "
                f"offsets {shown} of each ({count} of {n} never written).",
                "Every thread must write the element it owns: check the index arithmetic (a "
                "stride of 2 where 1 was meant?) and any `if` that keeps some threads of "
                "each block from storing.",
                "unwritten_stretches",
            )
    return None


def _period(lines: np.ndarray) -> int | None:
    """The stretch (a power of 2) whose pattern of unwritten lines every later stretch repeats,
    the last one cut short, when some but not all of the first stretch's lines are unwritten."""
    for period in (2, 4, 8, 16, 32, 64, 128, 256, 512, 1024):
        first = lines[:period]
        if lines.size <= period or not first.any() or first.all():
            continue
        if np.array_equal(lines, np.resize(first, lines.size)):
            return period
    return None


def _tile_loop(noun: str) -> str:
    """A thread's loop over the rows (or columns) of its block's tile."""
    return "ty, ty + cuda.blockDim.y" if noun == "rows" else "tx, tx + cuda.blockDim.x"


def _region_hint(noun: str, missing: np.ndarray, count: int) -> str:
    """The fix for whole rows or columns unwritten: the last ones, a grid that stops short along
    that axis (or x and y crossed); others, blocks writing their tile somewhere else. (An
    exercise may give its own: transpose's names its swapped tile corner, kernels/transpose.py.)"""
    axis, along = ("y", "down the rows") if noun == "rows" else ("x", "along a row's columns")
    if missing[-1] == count - 1 and missing.size == missing[-1] - missing[0] + 1:
        return (
            f"The grid stops short of the last {noun}: launch enough blocks along {axis} to cover "
            f"every one (blocks = ceil({noun} / threads along {axis}), rounded up), and let {axis} "
            f"run {along} (cuda.grid(2) gives x first)."
        )
    return (
        "Check where each block writes its tile of the output: its first row comes from one "
        "block index and its first column from the other, and the grid must have enough blocks "
        "along x and y."
    )


def _unwritten_lines(name: str, never: np.ndarray) -> tuple[str, str, str] | None:
    """Whole rows or whole columns of a 2-D output never written: blocks that do not reach
    them, or that write their tile somewhere else."""
    rows, cols = never.shape
    for axis, noun, count in ((1, "rows", rows), (0, "columns", cols)):
        lines = never.all(axis=axis)
        missing = np.flatnonzero(lines)
        if missing.size and missing.size < count and np.array_equal(never, np.expand_dims(lines, axis) & never):
            period = _period(lines)
            if period is not None:
                return (
                    f"The same {noun} are unwritten in every stretch of {period} {noun} of `{name}` "
                    f"({rows} × {cols}): {noun} {_ranges(np.flatnonzero(lines[:period]))} of each "
                    f"({int(never.sum())} of {never.size} elements never written).",
                    f"Every thread must store every one of the {noun} it owns: a thread that moves "
                    f"several {noun} of its block's tile needs a loop over them ({_tile_loop(noun)}, …), "
                    "and no `if` may keep some of them from storing.",
                    "unwritten_stretches",
                )
            return (
                f"{noun.capitalize()} {_ranges(missing)} of `{name}` ({rows} × {cols}) were never "
                f"written ({int(never.sum())} of {never.size} elements): no block wrote there.",
                _region_hint(noun, missing, count),
                "unwritten_region",
            )
    return None


def _index_ignores_thread(name: str, written: np.ndarray, n: int, report) -> tuple[str, str, str] | None:
    """Only the first element of each block's stretch was written (0, 128, 256...), and the
    doctor saw several threads store to one element: every thread of a block computed the same
    index, one without cuda.threadIdx.x."""
    launch = _blocks(report)
    if launch is None or launch[1] < 2:
        return None
    blocks, threads = launch
    if not np.array_equal(written, np.arange(0, n, threads)[:blocks]):
        return None
    shared = any(f.kind == "duplicate_write" and f.array == name for f in getattr(report, "findings", ()))
    if not shared and written.size < 2:  # `if i == 0:` would write element 0 alone too
        return None
    firsts = ", ".join(str(int(i)) for i in written[:3]) + (", ..." if written.size > 3 else "")
    return (
        f"Only `{name}[{firsts}]` {'was' if written.size == 1 else 'were'} written, the first element of each block's stretch of "
        f"{threads}: every thread of a block stored to the same element, so the index does not "
        "use cuda.threadIdx.x.",
        "The index must tell the threads of a block apart: i = cuda.blockIdx.x * cuda.blockDim.x "
        "+ cuda.threadIdx.x (or i = cuda.grid(1)), then `if i < n:`.",
        "index_ignores_thread",
    )


def _ranges(values: np.ndarray, shown: int = 4) -> str:
    runs, start = [], int(values[0])
    for a, b in zip(values[:-1], values[1:]):
        if b != a + 1:
            runs.append((start, int(a)))
            start = int(b)
    runs.append((start, int(values[-1])))
    text = ", ".join(f"{a}" if a == b else f"{a}..{b}" for a, b in runs[:shown])
    return text + (", ..." if len(runs) > shown else "")


def relation(got: np.ndarray, want: np.ndarray, bad: np.ndarray, report=None) -> tuple[str, str]:
    """(' Every value is 256 x the expected: ...', "repeated_adds") when all the wrong values
    are one whole multiple of the expected ones ("constant_offset": one constant away from
    them); ("", "") otherwise. A pattern is named only where it is one: a multiple needs three
    or more different expected values sharing it, or (an output of one or two elements, a
    sum) a multiple that is a number of threads the launch had (`report`, the doctor's); an
    offset needs three or more."""
    if bad.sum() < 1:
        return "", ""
    g, w = got[bad].astype(np.float64).reshape(-1), want[bad].astype(np.float64).reshape(-1)
    if not (np.isfinite(g).all() and np.isfinite(w).all()):
        return "", ""
    every = ("the value" if bad.size == 1 else "every value") if bad.all() else f"every wrong value ({int(bad.sum())})"
    several = np.unique(w).size >= 3
    whole = _whole_multiple(g, w)
    if whole and (several or whole in _thread_counts(report)):
        return (
            f" {every.capitalize()} is {whole} x the expected: did {whole} threads each add "
            "the same value (e.g. every thread of a block adding the block's partial)?",
            "repeated_adds",
        )
    if not several:  # an offset needs several different expected values
        return "", ""
    offsets = g - w
    c = float(np.median(offsets))
    scale = max(float(np.abs(w).max(initial=0.0)), 1.0)
    if abs(c) > 1e-6 * scale and np.all(np.abs(offsets - c) <= 1e-4 * scale):
        return (
            f" {every.capitalize()} is off by {c:+.7g} from the expected: a constant added, or a start value not 0?",
            "constant_offset",
        )
    return "", ""


def _whole_multiple(g: np.ndarray, w: np.ndarray) -> int | None:
    """k >= 2 when every g is k times its w (a count of threads adding: never negative, never a
    fraction), else None."""
    if not np.all(w != 0):
        return None
    ratios = g / w
    r = float(np.median(ratios))
    whole = round(r)
    if whole >= 2 and abs(r - whole) <= 1e-3 * whole and np.all(np.abs(ratios - r) <= 1e-3 * r):
        return int(whole)
    return None


def _thread_counts(report) -> set:
    """Numbers of threads that could each have added one value in the run's launches: a block's,
    a warp's (in a block of one or more), a whole grid's."""
    counts = set()
    for grid, block in getattr(report, "launches", ()) or ():
        threads = int(np.prod(block))
        counts |= {threads, threads * int(np.prod(grid))} | ({32} if threads >= 32 else set())
    return counts


def inputs_text(inputs: dict | None, shown: int = 8) -> str:
    """' Inputs: x = [1.5, -2, ...] (257 values), ...' compactly; '' when there are none."""
    if not inputs:
        return ""
    parts = []
    for name, value in inputs.items():
        a = np.asarray(value)
        if a.ndim == 0:
            parts.append(f"{name} = {a.item():.6g}" if a.dtype.kind == "f" else f"{name} = {a.item()}")
            continue
        flat = a.reshape(-1)
        values = ", ".join(f"{v:.4g}" if a.dtype.kind == "f" else str(v) for v in flat[:shown].tolist())
        more = (
            f", ... ({flat.size} values{', shape ' + str(a.shape) if a.ndim > 1 else ''})" if flat.size > shown else ""
        )
        parts.append(f"{name} = [{values}{more}]")
    return " Inputs: " + "; ".join(parts) + "."
