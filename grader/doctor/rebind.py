"""Run a learner's unmodified `launch` under the doctor.

`launch` is plain Python that calls `kernel[blocks, threads](args)`. We give it (and every
plain function of its module, which it may call) a copy of its globals in which each numba
kernel is a DoctorKernel and numba.cuda is the doctor's fake, then call it as usual. The
learner's module itself is untouched, so the same `launch` still runs on Numba afterwards.
"""

from __future__ import annotations

import types

from grader.doctor.errors import Unsupported
from grader.doctor.fakecuda import builtins_importing_fakes, replacement
from grader.doctor.kernel import DoctorKernel
from grader.doctor.kernel_source import jit_function


def doctor_launch(launch):
    """`launch`, re-bound so that its kernels run on the doctor."""
    if not isinstance(launch, types.FunctionType):
        raise Unsupported(f"`launch` is a {type(launch).__name__}, not a plain function")
    original = launch.__globals__
    env: dict = {}
    converted: dict = {}

    def convert(value):
        key = id(value)
        if key in converted:
            return converted[key]
        found = jit_function(value)
        if found is not None:
            out = value if isinstance(value, DoctorKernel) else DoctorKernel(*found, original=value)
        elif isinstance(value, types.FunctionType) and value.__globals__ is original:
            out = _rebound(value, env, convert)
        else:
            swapped = replacement(value)
            out = value if swapped is None else swapped
        converted[key] = out
        return out

    for name, value in original.items():
        env[name] = value
    env["__builtins__"] = builtins_importing_fakes(original.get("__builtins__", __builtins__))
    for name, value in original.items():
        if name != "__builtins__":
            env[name] = convert(value)
    return convert(launch)


def _rebound(func, env, convert):
    closure = None
    if func.__closure__:
        cells = []
        for cell in func.__closure__:
            try:
                cells.append(types.CellType(convert(cell.cell_contents)))
            except ValueError:  # an empty cell: keep it
                cells.append(cell)
        closure = tuple(cells)
    new = types.FunctionType(func.__code__, env, func.__name__, func.__defaults__, closure)
    new.__kwdefaults__ = func.__kwdefaults__
    new.__dict__.update(func.__dict__)
    return new
