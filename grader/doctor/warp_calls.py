"""What one warp collective computes, once its lanes have met: shuffles, votes, matches,
`syncwarp` and `activemask`, with numba-cuda's signatures and the PTX rules for source lanes.

A transformed kernel yields `_zg_warp(SITE, "shfl_down", mask, value, delta)`, a `WarpCall`;
grader/doctor/warps.py gathers the lanes of a warp that meet at it and calls `results` for
them. Numba's forms (numba-cuda 0.30.4, numba/cuda/intrinsics.py and cudadecl.py):
- `shfl_sync(mask, value, src_lane)`, `shfl_up_sync(mask, value, delta)`,
  `shfl_down_sync(mask, value, delta)`, `shfl_xor_sync(mask, value, lane_mask)`: 32- and
  64-bit ints and floats; no `width` argument (Numba fixes PTX's clamp at 31, or 0 for `up`);
  the lane or offset counts by its low 5 bits, and `up`/`down` past the warp's edge return the
  caller's own value (PTX ISA, shfl.sync).
- `all_sync`, `any_sync`, `eq_sync(mask, predicate)` -> bool; `ballot_sync` -> int32 bits.
- `match_any_sync(mask, value)` -> int32 bits; `match_all_sync` -> (int32 bits, bool).
- `syncwarp(mask=0xffffffff)`; `activemask()` and `lanemask_lt()` -> uint32.
"""

from __future__ import annotations

import numpy as np

from grader.doctor.memory import CTX, View

WARP = 32
FULL = 0xFFFFFFFF

SIGNATURES = {
    "shfl": ("mask", "value", "src_lane"),
    "shfl_up": ("mask", "value", "delta"),
    "shfl_down": ("mask", "value", "delta"),
    "shfl_xor": ("mask", "value", "lane_mask"),
    "all": ("mask", "predicate"),
    "any": ("mask", "predicate"),
    "eq": ("mask", "predicate"),
    "ballot": ("mask", "predicate"),
    "match_any": ("mask", "value"),
    "match_all": ("mask", "value"),
    "syncwarp": ("mask",),
    "activemask": (),
}
SHUFFLES = ("shfl", "shfl_up", "shfl_down", "shfl_xor")
NUMBA_NAME = {
    "shfl": "shfl_sync",
    "shfl_up": "shfl_up_sync",
    "shfl_down": "shfl_down_sync",
    "shfl_xor": "shfl_xor_sync",
    "all": "all_sync",
    "any": "any_sync",
    "eq": "eq_sync",
    "ballot": "ballot_sync",
    "match_any": "match_any_sync",
    "match_all": "match_all_sync",
    "syncwarp": "syncwarp",
    "activemask": "activemask",
}


class WarpCall:
    """One lane's arrival at a warp collective: where, which, with what."""

    __slots__ = ("site", "op", "mask", "value", "arg")

    def __init__(self, site, op, mask, value, arg):
        self.site, self.op, self.mask, self.value, self.arg = site, op, mask, value, arg


_PLAIN = frozenset((int, float, np.float32, np.float64, np.int32, np.int64, np.uint32, np.uint64))
"""Types of the values a shuffle moves (bools only as predicates)."""
_PREDICATES = _PLAIN | {bool, np.bool_}
_SHUFFLE_SET = frozenset(SHUFFLES)
_VOTES = frozenset(("all", "any", "eq", "ballot"))


def warp_call(site, op, *args, **kwargs) -> WarpCall:
    """`_zg_warp(...)`: the arguments checked as Numba would when it compiles the call (a
    wrong one raises TypeError in the learner's own line). Called once per lane and call:
    the common form (positional, an int mask, a plain number) takes the short way."""
    if not kwargs and args and args[0].__class__ is int:
        if len(args) == 3 and op in _SHUFFLE_SET and args[2].__class__ is int and args[1].__class__ in _PLAIN:
            return WarpCall(site, op, args[0] & FULL, args[1], args[2])
        if len(args) == 2 and op in _VOTES and args[1].__class__ in _PREDICATES:
            return WarpCall(site, op, args[0] & FULL, args[1], None)
    return _checked_call(site, op, args, kwargs)


def _checked_call(site, op, args, kwargs) -> WarpCall:
    names = SIGNATURES[op]
    bound = dict(zip(names, args))
    if len(args) > len(names) or set(kwargs) - set(names) or set(bound) & set(kwargs):
        raise TypeError(_signature_message(op, len(args) + len(kwargs), kwargs))
    bound.update(kwargs)
    if op == "syncwarp":
        bound.setdefault("mask", FULL)
    missing = [n for n in names if n not in bound]
    if missing:
        raise TypeError(_signature_message(op, len(args) + len(kwargs), kwargs))
    mask = bound.get("mask")
    if mask is not None:
        if not isinstance(mask, (int, np.integer)) or isinstance(mask, (bool, np.bool_)):
            raise TypeError(
                f"cuda.{NUMBA_NAME[op]}: the mask must be an integer (0xffffffff for "
                f"the whole warp), not {type(mask).__name__}"
            )
        mask = int(mask) & FULL  # Numba truncates it to 32 bits
    value = bound.get("value", bound.get("predicate"))
    if isinstance(value, (View, np.ndarray, tuple, list)):
        raise TypeError(
            f"cuda.{NUMBA_NAME[op]} exchanges one number per lane, not an array: "
            "pass an element (x[i]) or a local variable"
        )
    if op in SHUFFLES and isinstance(value, (bool, np.bool_)):
        raise TypeError(
            f"cuda.{NUMBA_NAME[op]} moves 32- or 64-bit ints and floats, not a bool: "
            "use int32(flag), or cuda.ballot_sync to share flags"
        )
    arg = bound.get(names[2]) if len(names) > 2 else None
    if arg is not None and not isinstance(arg, (int, np.integer)):
        raise TypeError(f"cuda.{NUMBA_NAME[op]}: `{names[2]}` must be an integer, not {type(arg).__name__}")
    return WarpCall(site, op, mask, value, None if arg is None else int(arg))


def _signature_message(op, given, kwargs) -> str:
    names = SIGNATURES[op]
    shown = f"cuda.{NUMBA_NAME[op]}({', '.join(names)})"
    text = f"{shown} takes {len(names)} argument{'s' if len(names) != 1 else ''}, you gave {given}."
    if op in SHUFFLES and (given > len(names) or "width" in kwargs):
        text += (
            " Numba's shuffles have no `width` argument (CUDA C's __shfl_*_sync do): a "
            "shuffle always spans the 32 lanes of a warp. To work in groups of 16 lanes, "
            "compute the source lane yourself (cuda.shfl_sync(mask, value, (lane & ~15) | k)) "
            "or stop the offsets at 8."
        )
    elif op == "syncwarp":
        text += " Call cuda.syncwarp() for the whole warp, or cuda.syncwarp(mask)."
    return text


def lanemask_lt():
    """`cuda.lanemask_lt()`: the bits of the lanes below this one."""
    return np.uint32((1 << (CTX.lin % WARP)) - 1)


def source_lane(op: str, lane: int, arg: int) -> int:
    """The lane a shuffle reads (PTX shfl.sync with Numba's clamp values): the low 5 bits of
    the lane or offset count; `up`/`down` past the warp's edge read the caller's own lane."""
    b = arg & 31
    if op == "shfl":
        return b
    if op == "shfl_xor":
        return lane ^ b
    j = lane - b if op == "shfl_up" else lane + b
    return j if 0 <= j < WARP else lane


def outside_lanes(op: str, arg: int) -> bool:
    """A lane or offset past 0..31: a GPU keeps its low 5 bits (shfl_sync's wrap-around is
    documented; an offset of 32 reads the caller's own lane, rarely what was meant)."""
    return op in SHUFFLES and not 0 <= arg < WARP


def _int32(bits: int):
    """Numba's int32 result of a ballot or a match (bit 31 makes it negative)."""
    return np.int32(bits - (1 << 32) if bits >= 1 << 31 else bits)


def results(op: str, calls: dict, taking_part: set) -> tuple[dict, list]:
    """{lane: result} for the lanes of one meeting (`calls`: lane -> WarpCall), and the
    (lane, source lane) pairs of shuffles that read a lane not taking part (undefined on a
    GPU; the reader gets its own value here). `taking_part`: lanes that met and are named in
    the mask."""
    bad: list = []
    if op in SHUFFLES:
        out = {}
        for lane, call in calls.items():
            j = source_lane(op, lane, call.arg)
            if j in taking_part:
                out[lane] = calls[j].value
            else:
                out[lane] = call.value
                if j != lane:
                    bad.append((lane, j))
        return out, bad
    values = {lane: calls[lane].value for lane in taking_part}
    bits = sum(1 << lane for lane in taking_part)
    if op in ("all", "any", "eq", "ballot"):
        flags = [bool(v) for v in values.values()]
        result = {
            "all": all(flags),
            "any": any(flags),
            "eq": len(set(flags)) <= 1,
            "ballot": _int32(sum(1 << lane for lane, v in values.items() if v)),
        }[op]
        return {lane: result for lane in calls}, bad
    if op == "match_any":
        return {
            lane: _int32(sum(1 << k for k, v in values.items() if v == call.value)) for lane, call in calls.items()
        }, bad
    if op == "match_all":
        same = len({v.item() if hasattr(v, "item") else v for v in values.values()}) <= 1
        return {lane: (_int32(bits if same else 0), same) for lane in calls}, bad
    if op == "activemask":
        return {lane: np.uint32(sum(1 << k for k in calls)) for lane in calls}, bad
    return {lane: None for lane in calls}, bad  # syncwarp
