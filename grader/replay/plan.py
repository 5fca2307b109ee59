"""The launch plan: what a submission's `launch` did, as data, and the one message that carries
plans from the recording child to the grading process.

This module holds the plan's parts and writes them as JSON; grader/replay/schema.py reads a
message back, checking everything (`read_message`). The message carries no verdict, timing,
finding, output value or code: only what `launch` asked the GPU to do, and where in the
hand-in each launched kernel's `def` is (grader/replay/sources.py puts in the text).
"""

from __future__ import annotations

import base64
import json
import math
from dataclasses import dataclass


from grader.result import MAX_TEXT

MAX_MESSAGE_BYTES = 4 << 20
"""The most the grading process reads from a recording child's pipe. The largest honest message
measured is 6 KiB (scan's solution, nine plans, 32 steps at 2^28 elements; docs/SECURITY.md)."""
MAX_STEPS = 4096
"""Steps of one plan: a multi-pass reduction launches log(n) kernels; thousands is a loop gone wrong."""
MAX_UPLOAD_BYTES = 256 << 10
"""Bytes of host data one plan may upload (arrays the file built itself: a lookup table, weights).
Large arrays are made on the device and filled by a kernel; on every engine, at every size."""
MAX_ALLOC_BYTES = 32 << 30
MAX_PLANS = 16
"""Plans of one message: one per case the grading process asks for, and the benchmark's."""
MAX_KERNELS = 64
MAX_FUNCTIONS = 128
"""Kernels and device functions described in one message, all nesting counted."""
MAX_NAME_CHARS = 200
MAX_GLOBALS = 512
MAX_ALL_GLOBALS = 4096
"""Globals of every description of one message together."""
MAX_NESTING = 8
MAX_DIMS = 8
MAX_TEXT_CHARS = MAX_TEXT  # a failure's texts, capped as a result's are
DTYPES = {
    "?",
    "|b1",
    "<i1",
    "|i1",
    "<i2",
    "<i4",
    "<i8",
    "<u1",
    "|u1",
    "<u2",
    "<u4",
    "<u8",
    "<f2",
    "<f4",
    "<f8",
    "<c8",
    "<c16",
}
FAILING_VERDICTS = ("syntax_error", "exception", "forbidden", "timeout", "crashed")
"""What a recording child may say about its own submission: only ways of failing."""


# -- the parts of a plan -------------------------------------------------------------------------
@dataclass(frozen=True)
class Ref:
    """A device buffer of the plan: a parameter's array, an allocation, an upload or a view."""

    id: int


@dataclass(frozen=True)
class Param:
    """A scalar parameter of `launch`, passed through to a kernel as it came."""

    name: str
    dtype: str


@dataclass(frozen=True)
class Value:
    """A number the host code computed (a size, a count) and passed to a kernel."""

    dtype: str
    value: object


@dataclass(frozen=True)
class Step:
    """One thing `launch` did, in order. `op` is one of:
    - "param": buffer `id` is `launch`'s array argument `name`;
    - "alloc": a new uninitialised device array (`shape`, `dtype`);
    - "upload": a new device array holding host data the file built itself (`data`);
    - "fill": every element of buffer `target` set to `value`;
    - "copy": buffer `source` copied into buffer `target` (same shape);
    - "write": host data (`data`) copied into buffer `target`;
    - "view": buffer `id` is buffer `source` indexed by `key` or reshaped to `shape`;
    - "launch": kernel `kernel` on `grid` x `block` with `shared` bytes of dynamic shared
      memory and `args` (Ref, Param, Value or a tuple of those), called at `line` of the
      submission (0: unknown)."""

    op: str
    id: int = -1
    name: str = ""
    shape: tuple = ()
    dtype: str = ""
    data: bytes = b""
    target: int = -1
    source: int = -1
    value: object = None
    key: tuple = ()
    kernel: str = ""
    grid: tuple = ()
    block: tuple = ()
    shared: int = 0
    args: tuple = ()
    line: int = 0


@dataclass(frozen=True)
class Plan:
    steps: tuple


@dataclass(frozen=True)
class Failure:
    """Why the recording child could not record: the submission's own failure, in a learner's words."""

    verdict: str
    message: str
    line: int | None = None
    source: str = ""
    error_type: str = ""
    hint: str = ""


@dataclass(frozen=True)
class Message:
    """The recording child's whole answer: a failure to load, or per case a plan or a failure,
    and the descriptions of every kernel the plans launch (grader/compiler/describe.py)."""

    load_failure: Failure | None
    plans: dict
    """case key -> Plan or Failure."""
    kernels: dict
    """kernel key -> description (grader/compiler/describe.py: name, firstline, globals, options;
    `source` once the grading process has put in the hand-in's text)."""

    def to_json(self) -> str:
        return json.dumps(
            {
                "load_failure": _failure_json(self.load_failure),
                "plans": {k: _plan_json(p) for k, p in self.plans.items()},
                "kernels": self.kernels,
            }
        )


# -- to JSON -------------------------------------------------------------------------------------
def _failure_json(failure: Failure | None):
    return None if failure is None else dict(failure.__dict__)


def _arg_json(arg):
    if isinstance(arg, Ref):
        return {"ref": arg.id}
    if isinstance(arg, Param):
        return {"param": arg.name, "dtype": arg.dtype}
    if isinstance(arg, Value):
        return {"value": _number_json(arg.value), "dtype": arg.dtype}
    return {"tuple": [_arg_json(a) for a in arg]}


def _number_json(value):
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, complex):
        return [value.real, value.imag]
    return value


def _key_json(key):
    out = []
    for k in key:
        if isinstance(k, slice):
            out.append({"slice": [k.start, k.stop, k.step]})
        elif k is None:
            out.append({"newaxis": True})
        elif k is Ellipsis:
            out.append({"ellipsis": True})
        else:
            out.append(int(k))
    return out


def _plan_json(plan) -> dict:
    if isinstance(plan, Failure):
        return {"failure": _failure_json(plan)}
    steps = []
    for s in plan.steps:
        d = {"op": s.op}
        if s.op in ("param", "alloc", "upload", "view"):
            d["id"] = s.id
        if s.op == "param":
            d["name"] = s.name
        if s.op in ("alloc", "upload") or (s.op == "view" and s.shape):
            d["shape"] = list(s.shape)
        if s.op in ("alloc", "upload", "write"):
            d["dtype"] = s.dtype
        if s.op in ("upload", "write"):
            d["data"] = base64.b64encode(s.data).decode()
        if s.op in ("fill", "copy", "write"):
            d["target"] = s.target
        if s.op in ("copy", "view"):
            d["source"] = s.source
        if s.op == "fill":
            d["value"] = _number_json(s.value)
        if s.op == "view" and not s.shape:
            d["key"] = _key_json(s.key)
        if s.op == "launch":
            d.update(kernel=s.kernel, grid=list(s.grid), block=list(s.block), shared=s.shared, line=s.line)
            d["args"] = [_arg_json(a) for a in s.args]
        steps.append(d)
    return {"steps": steps}
