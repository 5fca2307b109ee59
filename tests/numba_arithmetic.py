"""Numba's own answers for tests/arithmetic_forms.py, printed as JSON: for each form, the value
and type `numba.njit` computes (with the numpy error model, which numba-cuda's kernels use:
no exception on a division by zero), and the result type `numba.cuda.compile_ptx(...,
device=True)` infers for a GPU; and, under "rules", numba-cuda's CUDA typing context's answer
for every operator, comparison, unification, builtin and range over every pair of scalar types
(what grader/doctor/scalars.py must agree with).

Run by tests/test_doctor_arithmetic.py as `python tests/numba_arithmetic.py`, in a process
without NUMBA_ENABLE_CUDASIM (the simulator shadows numba.cuda's compiler, as
grader/compiler/server.py explains), so it never imports the grader.
"""

from __future__ import annotations

import json
import math
import operator
import os
import sys
import warnings
from pathlib import Path

os.environ.pop("NUMBA_ENABLE_CUDASIM", None)
sys.path.insert(0, str(Path(__file__).parent))

import numba  # noqa: E402
import numpy as np  # noqa: E402
from numba import cuda, types  # noqa: E402

from arithmetic_forms import FORMS, GPU_FORMS  # noqa: E402

PYTHON = {"int": types.int64, "float": types.float64, "bool": types.boolean}


def argument(kind: str, value):
    if kind == "int":
        return int(value)
    if kind == "float":
        return float(value)
    if kind == "bool":
        return bool(value)
    return np.dtype(kind).type(value)


def numba_type(kind: str):
    return PYTHON.get(kind) or numba.from_dtype(np.dtype(kind))


def encoded(value) -> dict:
    if isinstance(value, (bool, np.bool_)):
        return {"bool": bool(value)}
    if isinstance(value, (int, np.integer)):
        return {"int": int(value)}
    return {"float": float(value).hex()}


def answer(form, run_on_cpu: bool = True) -> dict:
    scope: dict = {"math": math, "cuda": cuda, "int32": types.int32}
    exec(form.source, scope)  # noqa: S102 - the test's own forms
    fn = scope["f"]
    args = [argument(kind, value) for kind, value in form.args]
    signature = tuple(numba_type(kind) for kind, _ in form.args)
    out: dict = {"name": form.name}
    try:
        _, resty = cuda.compile_ptx(fn, signature, device=True, cc=(9, 0))
        out["ptx_type"] = str(resty)
    except Exception as exc:  # noqa: BLE001 - a form numba-cuda refuses is reported, not fatal
        out["ptx_type"] = f"refused: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
    if not run_on_cpu:
        return out
    jitted = numba.njit(signature, error_model="numpy")(fn)
    out["njit_type"] = str(jitted.nopython_signatures[0].return_type)
    out["value"] = encoded(jitted(*args))
    return out


SCALARS = (
    "bool",
    "int8",
    "uint8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "float16",
    "float32",
    "float64",
)
BINARY = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "lshift", "rshift", "and_", "or_", "xor")


def rules() -> dict:
    """numba-cuda's typing of each operation, by the names of its operands' types."""
    from numba.cuda.descriptor import cuda_target

    ctx = cuda_target.typing_context
    ctx.refresh()
    named = {name: getattr(types, "boolean" if name == "bool" else name) for name in SCALARS}

    def resolve(fn, args):
        try:
            return ctx.resolve_function_type(fn, tuple(named[a] for a in args), {})
        except Exception:  # noqa: BLE001 - numba refuses this combination
            return None

    out: dict = {"binary": {}, "compare": {}, "unify": {}, "unary": {}, "builtin": {}, "range": {}}
    for a in SCALARS:
        for b in SCALARS:
            for op in BINARY:
                sig = resolve(getattr(operator, op), (a, b))
                out["binary"][f"{op} {a} {b}"] = str(sig.return_type) if sig else None
            sig = resolve(operator.lt, (a, b))
            out["compare"][f"{a} {b}"] = str(sig.args[0]) if sig else None
            out["unify"][f"{a} {b}"] = str(ctx.unify_types(named[a], named[b]))
            out["range"][f"{a} {b}"] = _range_type(resolve(range, (a, b)))
        for op in ("neg", "pos", "invert", "not_"):
            sig = resolve(getattr(operator, op), (a,))
            out["unary"][f"{op} {a}"] = str(sig.return_type) if sig else None
        for name, fn in (("int", int), ("float", float), ("abs", abs), ("round", round)):
            sig = resolve(fn, (a,))
            out["builtin"][f"{name} {a}"] = str(sig.return_type) if sig else None
        sig = resolve(round, (a, "int64"))
        out["builtin"][f"round_ndigits {a}"] = str(sig.return_type) if sig else None
        out["range"][a] = _range_type(resolve(range, (a,)))
    return out


def _range_type(sig):
    return None if sig is None else str(sig.return_type).removeprefix("range_state_")


def main() -> None:
    warnings.simplefilter("ignore")
    forms = [answer(form) for form in FORMS] + [answer(form, run_on_cpu=False) for form in GPU_FORMS]
    print(json.dumps({"forms": forms, "rules": rules()}))


if __name__ == "__main__":
    main()
