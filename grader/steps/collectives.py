"""What the wrong values of a scan or a warp reduction say about the mistake: an exclusive scan
where an inclusive one was asked, a carry between blocks that is missing or adds the block's own
total, warps that miss the totals of the warps before them, a shuffle that moves values the
wrong way, and a warp's sum stored by a lane that does not hold it.

A scan is recognised from its values (the expected output is the running sum of an input of the
same shape); the shuffles from the doctor's record of each shuffle site (`DoctorReport.shuffles`:
the offsets lane 0 passed, in order). Each diagnosis is a (text for the message, hint, mistake)
triple, like grader/steps/diagnose.py's.
"""

from __future__ import annotations

import numpy as np

WARP = 32


def diagnose(got: np.ndarray, want: np.ndarray, inputs: dict | None, report, tol) -> tuple[str, str, str] | None:
    """The mistake behind a wrong scan or warp reduction, or None when these values show none."""
    g, w = got.astype(np.float64).reshape(-1), want.astype(np.float64).reshape(-1)
    if not np.isfinite(g).all():
        return None
    allowed = 4 * np.broadcast_to(np.asarray(tol, dtype=np.float64), want.shape).reshape(-1) + 1e-9
    x = _scanned_input(w, inputs)
    shuffles = getattr(report, "shuffles", ()) or ()
    if x is not None:
        return _scan(g, w, x, allowed, _block_threads(report), shuffles)
    return _reduction(g, w, shuffles)


def _scanned_input(want: np.ndarray, inputs: dict | None) -> np.ndarray | None:
    """The input whose running sum `want` is, if any (`inputs`: those declared with the
    output's shape, so that a one-element sum is not taken for a scan)."""
    for value in (inputs or {}).values():
        x = np.asarray(value)
        if x.ndim == 1 and x.size == want.size and x.dtype.kind in "iuf":
            running = np.cumsum(x.astype(np.float64))
            if np.allclose(want, running, rtol=1e-9, atol=1e-9 * max(1.0, float(np.abs(running).max()))):
                return x.astype(np.float64)
    return None


def _block_threads(report) -> int | None:
    launches = getattr(report, "launches", ()) or ()
    return int(np.prod(launches[0][1])) if launches else None


def _scan(g, w, x, allowed, threads, shuffles) -> tuple[str, str, str] | None:
    def close(h) -> bool:
        return bool(np.all(np.abs(g - h) <= allowed))

    wrong_way = _shuffle(shuffles, "shfl_down", rising=True)
    if wrong_way:
        return (
            f" The warp scan shuffles down: `{wrong_way[3]}` (line {wrong_way[2]}) gives lane k the "
            "value of lane k + offset, from above.",
            "A prefix sum needs cuda.shfl_up_sync(mask, value, offset), offsets 1, 2, 4, 8, 16: lane k "
            "adds the value of lane k - offset, and only when k >= offset.",
            "shuffle_direction",
        )
    if close(w - x):
        return (
            " Element i holds the sum of the elements before it (an exclusive scan); the exercise "
            "asks for an inclusive one, x[0] + ... + x[i].",
            "Include the element itself: start each lane's scan from its own value, or add x[i] to "
            "the exclusive result.",
            "exclusive_scan",
        )
    for size in dict.fromkeys(s for s in (threads, WARP) if s and s < g.size):
        found = _per_stretch(g, w, x, size, close)
        if found:
            return found
    return None


def _per_stretch(g, w, x, size, close) -> tuple[str, str, str] | None:
    """Every stretch of `size` elements (a block, or a warp) off by one amount of its own."""
    count = -(-g.size // size)
    diff = g - w
    starts = np.arange(count) * size
    offsets = diff[starts]
    if not close(w + np.repeat(offsets, size)[: g.size]) or not np.any(offsets):
        return None
    totals = np.add.reduceat(x, starts)
    before = np.concatenate([[0.0], np.cumsum(totals)[:-1]])
    first = int(np.flatnonzero(offsets)[0])
    if size == WARP:
        return (
            f" From element {first * size} on, every warp's {size} elements are off by one amount "
            "each: the warps miss what the warps before them add up to.",
            "After the warp scans, warp w of a block must add the scanned total of warps 0..w-1 "
            "(lane 31 of each warp holds its warp's total; scan those totals, then add "
            "warp_totals[w - 1] for w > 0).",
            "warp_carry",
        )
    if close(w + np.repeat(totals, size)[: g.size]):
        return (
            f" Every block's {size} elements are too big by that block's own total: block b adds the "
            "total of blocks 0..b, itself included.",
            "The carry between blocks: block b adds the scanned total of the blocks before it, "
            "scanned_totals[b - 1] (block 0 adds nothing), not its own scanned_totals[b].",
            "carry_own_total",
        )
    if close(w - np.repeat(before, size)[: g.size]):
        return (
            f" Each block of {size} elements is scanned on its own: from block 1 on, the elements "
            "miss the sum of all the blocks before.",
            "The carry between blocks: scan the blocks' totals, then add the scanned total of "
            "blocks 0..b-1 to every element of block b (block 0 adds nothing).",
            "missing_carry",
        )
    return (
        f" From block {first} on, every block of {size} elements is off by one amount of its own: "
        "the carry between blocks is wrong.",
        "The carry between blocks: every element of block b must add the sum of all the elements "
        "of blocks 0..b-1 (the block totals, scanned in turn however many blocks there are).",
        "wrong_carry",
    )


def _reduction(g, w, shuffles) -> tuple[str, str, str] | None:
    up = _shuffle(shuffles, "shfl_up", rising=False)
    if up:
        return (
            f" Lane 0 kept doubling its own value: `{up[3]}` (line {up[2]}) gives lane k the value "
            "of lane k - offset, so lane 0, below every offset, gets its own value back at each "
            "step and adds it (x2 each time), while the warp's sum ends in lane 31.",
            "Use cuda.shfl_down_sync(mask, value, offset) with offsets 16, 8, 4, 2, 1: lane k adds "
            "the value of lane k + offset, so lane 0 gathers the sum from the higher lanes.",
            "shuffle_direction",
        )
    down = _shuffle(shuffles, "shfl_down", rising=False)
    if down and g.size == 1 and g[0] == 0 and w[0] != 0:
        return (
            f" Nothing of the sum arrived: after the shfl_down_sync steps (line {down[2]}) only "
            "lane 0 holds the warp's sum (the other lanes hold partial sums), so the lane that "
            "stores it must be lane 0.",
            "Let lane 0 (lane = cuda.threadIdx.x % 32; `if lane == 0:`) store or add each warp's "
            "sum: after a shfl_down_sync reduction no other lane holds it.",
            "result_lane",
        )
    return None


def _shuffle(shuffles, op: str, rising: bool):
    """The first shuffle site of `op` whose offsets rise (1, 2, 4...: a scan's order) or fall
    (16, 8, 4...: a reduction's), or None."""
    for found in shuffles:
        offsets = found[4]
        if found[1] != op or len(offsets) < 2:
            continue
        steps = [b - a for a, b in zip(offsets, offsets[1:])]
        if all(s > 0 for s in steps) if rising else all(s < 0 for s in steps):
            return found
    return None
