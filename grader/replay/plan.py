"""The launch plan: what a submission's `launch` did, as data, and the one message that carries
plans from the recording child to the grading process.

Everything here is validated on receipt (`Message.from_json`): a field of the wrong type, a
reference to a buffer that does not exist, a kernel source too long, more steps than a launch
needs — each is a `PlanError`, which the grading process turns into a failing verdict for that
submission, never an exception of its own. The message carries no verdict, timing, finding or
output value: only what `launch` asked the GPU to do and the kernels' descriptions.
"""

from __future__ import annotations

import base64
import json
import math
import re
from dataclasses import dataclass

import numpy as np

from grader.result import MAX_TEXT

MAX_MESSAGE_BYTES = 32 << 20
"""The most the grading process reads from a recording child's pipe."""
MAX_STEPS = 4096
"""Steps of one plan: a multi-pass reduction launches log(n) kernels; thousands is a loop gone wrong."""
MAX_UPLOAD_BYTES = 16 << 20
"""Bytes of host data one plan may upload (arrays the file built itself, e.g. a lookup table)."""
MAX_ALLOC_BYTES = 32 << 30
MAX_KERNELS = 64
MAX_SOURCE_CHARS = 200_000
MAX_NAME_CHARS = 200
MAX_GLOBALS = 512
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
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,199}$")
FAILING_VERDICTS = ("syntax_error", "exception", "forbidden", "timeout", "crashed")
"""What a recording child may say about its own submission: only ways of failing."""


class PlanError(ValueError):
    """A message that does not follow this schema."""


HOST_ANSWER = (
    "`launch` copied data made on the host into `{name}`: an output is written by your kernels. "
    "Compute it in a kernel (a fill such as `out[:] = 0` is fine)."
)


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
    """kernel key -> description (source, firstline, globals, options)."""

    def to_json(self) -> str:
        return json.dumps(
            {
                "load_failure": _failure_json(self.load_failure),
                "plans": {k: _plan_json(p) for k, p in self.plans.items()},
                "kernels": self.kernels,
            }
        )

    @classmethod
    def from_json(cls, text: str | bytes, outputs=()) -> "Message":
        """The message, checked. `outputs`: the names of `launch`'s output arrays; a plan that
        copies host-made data into one becomes a `forbidden` Failure for its case."""
        if len(text) > MAX_MESSAGE_BYTES:
            raise PlanError(f"the recording is larger than {MAX_MESSAGE_BYTES >> 20} MiB")
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise PlanError(f"the recording is not JSON ({type(exc).__name__})") from None
        _expect(isinstance(data, dict) and set(data) == {"load_failure", "plans", "kernels"}, "message fields")
        kernels = _kernels(data["kernels"])
        plans = data["plans"]
        _expect(isinstance(plans, dict) and len(plans) <= 64, "plans")
        parsed = {}
        for key, plan in plans.items():
            _expect(isinstance(key, str) and len(key) <= 32, "plan key")
            if isinstance(plan, dict) and "failure" in plan:
                parsed[key] = _failure(plan["failure"])
            else:
                parsed[key] = _plan(plan, kernels)
                host_answer = _host_answer(parsed[key], set(outputs))
                if host_answer:
                    parsed[key] = Failure("forbidden", HOST_ANSWER.format(name=host_answer))
        failure = None if data["load_failure"] is None else _failure(data["load_failure"])
        return cls(failure, parsed, kernels)


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


# -- from JSON, checked --------------------------------------------------------------------------
def _expect(ok: bool, what: str) -> None:
    if not ok:
        raise PlanError(f"malformed {what}")


def _text(value, limit: int = MAX_TEXT_CHARS) -> str:
    _expect(isinstance(value, str), "text")
    return value[:limit]


def _int(value, low: int = 0, high: int = 1 << 62) -> int:
    _expect(isinstance(value, int) and not isinstance(value, bool) and low <= value <= high, "integer")
    return value


def _failure(data) -> Failure:
    _expect(isinstance(data, dict) and {"verdict", "message"} <= set(data), "failure")
    verdict = data["verdict"]
    _expect(verdict in FAILING_VERDICTS, "failure verdict")
    line = data.get("line")
    _expect(line is None or (isinstance(line, int) and 0 <= line < 10**7), "failure line")
    return Failure(
        verdict,
        _text(data["message"]),
        line,
        _text(data.get("source", ""), 400),
        _text(data.get("error_type", ""), 100),
        _text(data.get("hint", "")),
    )


def _dtype(value) -> str:
    _expect(value in DTYPES, "dtype")
    return value


def _shape(value) -> tuple:
    _expect(isinstance(value, list) and len(value) <= MAX_DIMS, "shape")
    return tuple(_int(v, 0, 1 << 40) for v in value)


def _number(value, dtype: str):
    kind = np.dtype(dtype).kind
    if isinstance(value, str):
        _expect(value in ("nan", "inf", "-inf") and kind in "fc", "number")
        return float(value)
    if kind == "c":
        _expect(isinstance(value, list) and len(value) == 2, "complex")
        return complex(*(_number(v, "<f8") for v in value))
    if kind == "b":
        _expect(isinstance(value, bool), "bool")
        return value
    if kind in "iu":
        info = np.iinfo(np.dtype(dtype))
        return _int(value, int(info.min), int(info.max))
    _expect(isinstance(value, (int, float)) and not isinstance(value, bool), "number")
    return float(value)


def _key(value) -> tuple:
    _expect(isinstance(value, list) and len(value) <= MAX_DIMS, "index")
    out = []
    for k in value:
        if isinstance(k, int) and not isinstance(k, bool):
            out.append(_int(k, -(1 << 40), 1 << 40))
        elif isinstance(k, dict) and set(k) == {"slice"}:
            parts = k["slice"]
            _expect(isinstance(parts, list) and len(parts) == 3, "slice")
            out.append(slice(*(None if p is None else _int(p, -(1 << 40), 1 << 40) for p in parts)))
        elif k == {"newaxis": True}:
            out.append(None)
        elif k == {"ellipsis": True}:
            out.append(Ellipsis)
        else:
            _expect(False, "index")
    return tuple(out)


def _arg(value, known: dict, depth: int = 0):
    _expect(isinstance(value, dict) and depth <= MAX_NESTING, "kernel argument")
    if set(value) == {"ref"}:
        _expect(value["ref"] in known, "buffer reference")
        return Ref(value["ref"])
    if set(value) == {"param", "dtype"}:
        _expect(isinstance(value["param"], str) and IDENTIFIER.match(value["param"]) is not None, "parameter")
        return Param(value["param"], _dtype(value["dtype"]))
    if set(value) == {"value", "dtype"}:
        dtype = _dtype(value["dtype"])
        return Value(dtype, _number(value["value"], dtype))
    if set(value) == {"tuple"}:
        _expect(isinstance(value["tuple"], list) and len(value["tuple"]) <= 64, "tuple")
        return tuple(_arg(v, known, depth + 1) for v in value["tuple"])
    _expect(False, "kernel argument")


def _data(value, dtype: str, count: int | None = None) -> bytes:
    """Base64 host data of `count` elements of `dtype` (any whole number of them if None)."""
    _expect(isinstance(value, str) and len(value) <= MAX_UPLOAD_BYTES * 4 // 3 + 4, "data")
    try:
        data = base64.b64decode(value, validate=True)
    except ValueError:
        raise PlanError("malformed data") from None
    size = np.dtype(dtype).itemsize
    _expect(len(data) % size == 0 and (count is None or len(data) == count * size), "data length")
    return data


def _plan(data, kernels: dict) -> Plan:
    _expect(isinstance(data, dict) and set(data) == {"steps"} and isinstance(data["steps"], list), "plan")
    _expect(len(data["steps"]) <= MAX_STEPS, f"plan: more than {MAX_STEPS} steps")
    known: dict = {}
    uploaded = allocated = 0
    steps = []
    for d in data["steps"]:
        _expect(isinstance(d, dict) and isinstance(d.get("op"), str), "step")
        op = d["op"]
        fields = {"op"}
        if op in ("param", "alloc", "upload", "view"):
            new = _int(d.get("id"), 0, 1 << 30)
            _expect(new not in known, "buffer id")
        if op == "param":
            fields |= {"id", "name"}
            _expect(isinstance(d.get("name"), str) and IDENTIFIER.match(d["name"]) is not None, "parameter")
            step = Step(op, id=new, name=d["name"])
        elif op in ("alloc", "upload"):
            fields |= {"id", "shape", "dtype"} | ({"data"} if op == "upload" else set())
            shape, dtype = _shape(d.get("shape")), _dtype(d.get("dtype"))
            count = math.prod(shape)
            allocated += count * np.dtype(dtype).itemsize
            _expect(allocated <= MAX_ALLOC_BYTES, "plan: allocations too large")
            payload = b""
            if op == "upload":
                payload = _data(d.get("data"), dtype, count)
                uploaded += len(payload)
            step = Step(op, id=new, shape=shape, dtype=dtype, data=payload)
        elif op == "write":
            fields |= {"target", "dtype", "data"}
            _expect(d.get("target") in known, "buffer reference")
            dtype = _dtype(d.get("dtype"))
            payload = _data(d.get("data"), dtype)
            uploaded += len(payload)
            step = Step(op, target=d["target"], dtype=dtype, data=payload)
        elif op == "fill":
            fields |= {"target", "value"}
            _expect(d.get("target") in known, "buffer reference")
            value = d.get("value")
            _expect(isinstance(value, (int, float, bool, str)), "fill value")
            kind = "|b1" if isinstance(value, bool) else "<i8" if isinstance(value, int) else "<f8"
            step = Step(op, target=d["target"], value=_number(value, kind))
        elif op == "copy":
            fields |= {"target", "source"}
            _expect(d.get("target") in known and d.get("source") in known, "buffer reference")
            step = Step(op, target=d["target"], source=d["source"])
        elif op == "view":
            fields |= {"id", "source", "shape" if "shape" in d else "key"}
            _expect(d.get("source") in known, "buffer reference")
            if "shape" in d:
                step = Step(op, id=new, source=d["source"], shape=_shape(d["shape"]))
            else:
                step = Step(op, id=new, source=d["source"], key=_key(d.get("key")))
        elif op == "launch":
            fields |= {"kernel", "grid", "block", "shared", "args", "line"}
            _expect(d.get("kernel") in kernels, "kernel reference")
            grid, block = _shape(d.get("grid")), _shape(d.get("block"))
            _expect(len(grid) == 3 and len(block) == 3, "launch configuration")
            _expect(isinstance(d.get("args"), list) and len(d["args"]) <= 256, "kernel arguments")
            step = Step(
                op,
                kernel=d["kernel"],
                grid=grid,
                block=block,
                shared=_int(d.get("shared"), 0, 1 << 32),
                args=tuple(_arg(a, known) for a in d["args"]),
                line=_int(d.get("line"), 0, 10**7),
            )
        else:
            _expect(False, f"step `{op[:20]}`")
        _expect(set(d) == fields, f"{op} step fields")
        _expect(uploaded <= MAX_UPLOAD_BYTES, f"plan: more than {MAX_UPLOAD_BYTES >> 20} MiB of host data uploaded")
        if step.id >= 0:
            known[step.id] = step
        steps.append(step)
    return Plan(tuple(steps))


def _host_answer(plan: Plan, outputs: set) -> str:
    """The output a plan writes host-made data into (an upload, or data written from the host,
    copied into it), or "". Fills stay allowed: an accumulator starts at zero."""
    answers, host_made = {}, set()
    for s in plan.steps:
        if s.op == "param" and s.name in outputs:
            answers[s.id] = s.name
        elif s.op == "upload":
            host_made.add(s.id)
        elif s.op == "view":
            if s.source in answers:
                answers[s.id] = answers[s.source]
            if s.source in host_made:
                host_made.add(s.id)
        elif s.op == "write":
            if s.target in answers:
                return answers[s.target]
            host_made.add(s.target)
        elif s.op == "copy":
            if s.source in host_made:
                if s.target in answers:
                    return answers[s.target]
                host_made.add(s.target)
    return ""


def _kernels(data) -> dict:
    _expect(isinstance(data, dict) and len(data) <= MAX_KERNELS, "kernels")
    for key, desc in data.items():
        _expect(isinstance(key, str) and len(key) <= MAX_NAME_CHARS, "kernel key")
        _description(desc, 0)
    return data


def _description(desc, depth: int) -> None:
    """A described function (grader/compiler/describe.py): checked for shape and size here, and
    for what each global may be where it is rebuilt (grader/compiler/server.py)."""
    _expect(depth <= MAX_NESTING and isinstance(desc, dict), "kernel description")
    _expect(
        {"source", "filename", "firstline", "globals", "options"}
        <= set(desc)
        <= {"source", "filename", "firstline", "globals", "options", "signatures"},
        "kernel description fields",
    )
    signatures = desc.get("signatures", [])
    _expect(isinstance(signatures, list) and len(signatures) <= 16, "declared signatures")
    _expect(all(isinstance(s, list) and len(s) <= 256 for s in signatures), "declared signatures")
    _expect(isinstance(desc["source"], str) and len(desc["source"]) <= MAX_SOURCE_CHARS, "kernel source")
    _expect(isinstance(desc["filename"], str) and len(desc["filename"]) <= 4096, "kernel file name")
    _int(desc["firstline"], 1, 10**7)
    _expect(isinstance(desc["options"], dict) and len(desc["options"]) <= 8, "kernel options")
    _expect(all(isinstance(v, (bool, int, str)) for v in desc["options"].values()), "kernel options")
    _expect(isinstance(desc["globals"], dict) and len(desc["globals"]) <= MAX_GLOBALS, "kernel globals")
    for name, value in desc["globals"].items():
        _expect(isinstance(name, str) and IDENTIFIER.match(name) is not None, "global name")
        _expect(not (name.startswith("__") and name.endswith("__")), "global name")  # __builtins__ and kin
        _expect(isinstance(value, list) and 1 <= len(value) <= 4 and isinstance(value[0], str), "global value")
        if value[0] == "device":
            _description(value[1], depth + 1)
        elif value[0] == "array":
            _expect(isinstance(value[3], list) and len(value[3]) <= 1 << 16, "constant array")
        else:
            _expect(all(isinstance(v, str) and len(v) <= 10_000 for v in value[1:]), "global value")
