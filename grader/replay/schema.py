"""A recording child's message read back and checked: `read_message`.

Everything is validated on receipt: a field of the wrong type, a reference to a buffer that does
not exist, more steps or host data than a launch needs, a kernel the hand-in does not define
where the recording says — each is a `PlanError`, which the grading process turns into a failing
verdict for that submission, never an exception of its own. Sizes are capped before anything is
built from them (grader/replay/plan.py states each cap and why).
"""

from __future__ import annotations

import base64
import json
import math

import numpy as np

from grader.replay.plan import (
    DTYPES,
    FAILING_VERDICTS,
    MAX_ALL_GLOBALS,
    MAX_ALLOC_BYTES,
    MAX_DIMS,
    MAX_FUNCTIONS,
    MAX_GLOBALS,
    MAX_KERNELS,
    MAX_MESSAGE_BYTES,
    MAX_NAME_CHARS,
    MAX_NESTING,
    MAX_PLANS,
    MAX_STEPS,
    MAX_TEXT_CHARS,
    MAX_UPLOAD_BYTES,
    Failure,
    Message,
    Param,
    Plan,
    Ref,
    Step,
    Value,
)
from grader.replay.sources import HandIn, NotInHandIn, pinned


class PlanError(ValueError):
    """A message that does not follow this schema."""


class NotTheHandIns(PlanError):
    """A kernel the hand-in does not define where the recording says: the message is the
    learner's to read as it is (grader/replay/sources.py)."""


HOST_ANSWER = (
    "`launch` copied data made on the host into `{name}`: an output is written by your kernels. "
    "Compute it in a kernel (a fill such as `out[:] = 0` is fine)."
)
HOST_DATA = (
    "`launch` uploaded data made on the host, and this exercise's answer depends on no input: "
    "host data could be the answer itself. Compute every value in your kernel (a fill such as "
    "`out[:] = 0` is fine)."
)


def read_message(text: str | bytes, outputs=(), hand_in: HandIn | None = None, host_data: bool = True) -> Message:
    """The message, checked. `outputs`: the names of `launch`'s output arrays; a plan that
    copies host-made data into one becomes a `forbidden` Failure for its case, as does any plan
    that uploads host data when `host_data` is False (an exercise whose answer depends on no
    input). `hand_in`: a recording child's message, whose kernels are named by where they are
    and get their text from the hand-in; None: the grader's own message (texts included)."""
    if len(text) > MAX_MESSAGE_BYTES:
        raise PlanError(f"the recording is larger than {MAX_MESSAGE_BYTES >> 20} MiB")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise PlanError(f"the recording is not JSON ({type(exc).__name__})") from None
    _expect(isinstance(data, dict) and set(data) == {"load_failure", "plans", "kernels"}, "message fields")
    kernels = _kernels(data["kernels"], hand_in)
    plans = data["plans"]
    _expect(isinstance(plans, dict) and len(plans) <= MAX_PLANS, "plans")
    most_lines = hand_in.lines() if hand_in is not None else 10**7
    parsed = {}
    for key, plan in plans.items():
        _expect(isinstance(key, str) and len(key) <= 32, "plan key")
        if isinstance(plan, dict) and "failure" in plan:
            parsed[key] = _failure(plan["failure"])
            continue
        parsed[key] = _plan(plan, kernels, most_lines)
        if not host_data and _uploads(parsed[key]):
            parsed[key] = Failure("forbidden", HOST_DATA)
            continue
        host_answer = _host_answer(parsed[key], set(outputs))
        if host_answer:
            parsed[key] = Failure("forbidden", HOST_ANSWER.format(name=host_answer))
    failure = None if data["load_failure"] is None else _failure(data["load_failure"])
    return Message(failure, parsed, kernels)


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


def _identifier(value) -> bool:
    """A Python identifier (any script, as Python's own), of a sane length."""
    return isinstance(value, str) and value.isidentifier() and len(value) <= MAX_NAME_CHARS


def _arg(value, known: dict, depth: int = 0):
    _expect(isinstance(value, dict) and depth <= MAX_NESTING, "kernel argument")
    if set(value) == {"ref"}:
        _expect(value["ref"] in known, "buffer reference")
        return Ref(value["ref"])
    if set(value) == {"param", "dtype"}:
        _expect(_identifier(value["param"]), "parameter")
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


def _plan(data, kernels: dict, most_lines: int) -> Plan:
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
            _expect(_identifier(d.get("name")), "parameter")
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
                line=_int(d.get("line"), 0, most_lines),
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


def _uploads(plan: Plan) -> bool:
    """Does the plan put host-made data on the device (an upload, or data written from the host)?"""
    return any(s.op in ("upload", "write") for s in plan.steps)


RECORDED_FIELDS = {"name", "filename", "firstline", "globals", "options"}
OPTIONAL_FIELDS = {"signatures", "lambda"}


def _kernels(data, hand_in: HandIn | None) -> dict:
    """Kernel key -> description, checked; a recording child's get the hand-in's texts."""
    _expect(isinstance(data, dict) and len(data) <= MAX_KERNELS, "kernels")
    counts = {"functions": 0, "globals": 0}
    for key, desc in data.items():
        _expect(isinstance(key, str) and len(key) <= MAX_NAME_CHARS, "kernel key")
        _description(desc, 0, counts, with_source=hand_in is None)
    if hand_in is None:
        return data
    try:
        return pinned(data, hand_in)
    except NotInHandIn as why:
        raise NotTheHandIns(str(why)) from None


def _description(desc, depth: int, counts: dict, with_source: bool) -> None:
    """A described function (grader/compiler/describe.py): checked for shape and size here, and
    for what each global may be where it is rebuilt (grader/compiler/rebuild.py). A recording
    child's carries no text (`with_source` False): where the `def` is, and its name."""
    _expect(depth <= MAX_NESTING and isinstance(desc, dict), "kernel description")
    counts["functions"] += 1
    _expect(counts["functions"] <= MAX_FUNCTIONS, f"kernels: more than {MAX_FUNCTIONS} functions")
    required = RECORDED_FIELDS | ({"source"} if with_source else set())
    _expect(required <= set(desc) <= required | OPTIONAL_FIELDS, "kernel description fields")
    signatures = desc.get("signatures", [])
    _expect(isinstance(signatures, list) and len(signatures) <= 16, "declared signatures")
    _expect(all(isinstance(s, list) and len(s) <= 256 for s in signatures), "declared signatures")
    _expect(desc.get("lambda", True) is True, "kernel description fields")
    if with_source:
        _expect(isinstance(desc["source"], str) and len(desc["source"]) <= 1 << 20, "kernel source")
    _expect(_identifier(desc["name"]) or desc["name"] == "<lambda>", "kernel name")
    _expect(isinstance(desc["filename"], str) and len(desc["filename"]) <= 4096, "kernel file name")
    _int(desc["firstline"], 1, 10**7)
    _expect(isinstance(desc["options"], dict) and len(desc["options"]) <= 8, "kernel options")
    _expect(all(isinstance(v, (bool, int, str)) for v in desc["options"].values()), "kernel options")
    _expect(isinstance(desc["globals"], dict) and len(desc["globals"]) <= MAX_GLOBALS, "kernel globals")
    counts["globals"] += len(desc["globals"])
    _expect(counts["globals"] <= MAX_ALL_GLOBALS, f"kernels: more than {MAX_ALL_GLOBALS} globals")
    for name, value in desc["globals"].items():
        _expect(_identifier(name), "global name")
        _expect(not (name.startswith("__") and name.endswith("__")), "global name")  # __builtins__ and kin
        _expect(isinstance(value, list) and 1 <= len(value) <= 5 and isinstance(value[0], str), "global value")
        if value[0] == "device":
            _expect(len(value) == 2, "global value")
            _description(value[1], depth + 1, counts, with_source)
        elif value[0] == "array":
            _expect(len(value) in (4, 5) and isinstance(value[3], list) and len(value[3]) <= 1 << 16, "constant array")
            _expect(value[4:] in ([], ["device"]), "constant array")
        else:
            _expect(all(isinstance(v, str) and len(v) <= 10_000 for v in value[1:]), "global value")
