"""A kernel and one launch's arguments, described for the compile helper (server.py).

The helper runs in another process and never imports the learner's module, so a kernel
travels as data: the source of its `def`, where it sits in the file (line numbers in Numba's
messages stay the learner's), and each global or closure name its code reads, as a constant,
a module, a numba or NumPy type, or another described device function. What cannot be
described (a list, an object of a class of the learner's) is marked opaque, with what to write
instead: the kernel is then refused, never run unchecked (fail closed). Arguments become Numba's
types as a GPU launch would infer them: device arrays C-contiguous (or strided) arrays of their
dtype, NumPy scalars their dtype, Python ints int64, floats float64.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import math
import sys
import textwrap
import types

import numpy as np

from grader.kernel_names import KERNEL_MODULES
from grader.steps.extract import code_names

CONSTANT_TYPES = (bool, int, float, complex, str, type(None))
MODULE_NAMES = set(KERNEL_MODULES)
LARGEST_CONSTANT_ARRAY = 1 << 16
DESCRIPTION = "zerogpu_description"
"""The attribute a function rebuilt from a description keeps it in (grader/replay/launch.py)."""
CONSTANT_FIX = (
    "a kernel reads module-level numbers, tuples, NumPy arrays and device arrays as constants; "
    "pass anything else as a kernel argument"
)


def opaque(what: str, fix: str = CONSTANT_FIX, grader: bool = False) -> list:
    """A value the compile check cannot carry: what it is, and what to write instead. `grader`:
    a GPU would take it, the grader cannot replay it (said so, never blamed on the GPU)."""
    return ["opaque", what, fix, "grader"] if grader else ["opaque", what, fix]


def jit_python_function(value):
    """(py_func, is_device, options) of a numba-jitted object (simulator, doctor or numba-cuda), or None."""
    if type(value).__name__ == "DoctorKernel":  # by name: the doctor builds on this package
        return value.py_func, value.device, {}
    fn = getattr(value, "fn", None) or getattr(value, "py_func", None)
    if isinstance(fn, types.FunctionType) and type(value).__module__.startswith("numba"):
        options = getattr(value, "targetoptions", None) or {}  # numba-cuda's CUDADispatcher on a GPU host
        device = bool(getattr(value, "_device", False) or getattr(value, "device", False) or options.get("device"))
        return fn, device, {"fastmath": bool(getattr(value, "_fastmath", False) or options.get("fastmath"))}
    return None


def describe_value(value, seen: dict, name: str = "it", resolve=None):
    own = getattr(value, "__dict__", None)  # never an attribute a stand-in would answer for
    own = own if isinstance(own, dict) else {}
    if isinstance(own.get("zerogpu_opaque"), tuple):  # the recorder's (grader/replay/record.py)
        return opaque(*own["zerogpu_opaque"], grader=True)
    held = own.get("zerogpu_device_constant")  # a module-level device array's values
    if isinstance(held, np.ndarray) and held.size <= LARGEST_CONSTANT_ARRAY and held.dtype.kind in "biuf":
        return ["array", held.dtype.str, list(held.shape), held.ravel().tolist(), "device"]
    fake = getattr(value, "zerogpu_stands_for", None)  # the doctor's cuda and numba (doctor/fakecuda.py)
    if isinstance(fake, str):
        return ["module", fake]
    if isinstance(value, types.ModuleType):
        module = value.__name__
        if module not in MODULE_NAMES and module.startswith("numba.cuda"):
            module = "numba.cuda"  # the simulator's modules stand for numba.cuda's
        if module in MODULE_NAMES:
            return ["module", module]
        return opaque(f"the module `{module}`", "in a kernel use only math, cmath, operator, numpy and numba's modules")
    if isinstance(value, float) and not math.isfinite(value):
        return ["float", repr(value)]
    if isinstance(value, CONSTANT_TYPES) or (type(value) is tuple and _plain_tuple(value)):
        return ["literal", repr(value)]
    if isinstance(value, list):
        return opaque(
            f"`{name}` is a list",
            f"make it a tuple (`{name} = ({', '.join(map(repr, value[:3]))}{', ...' if len(value) > 3 else ''},)`): "
            "numba freezes a tuple into the kernel, and no GPU kernel can read a Python list",
        )
    device = _device_array(value)
    if device is not None:
        return device
    if isinstance(value, np.generic):
        return ["npscalar", value.dtype.str, repr(value.item())]
    if isinstance(value, type) and issubclass(value, np.generic):
        return ["numpy", value.__name__]
    if isinstance(value, np.dtype) and value.kind in "biufc":
        return ["dtype", value.str]
    if type(value).__module__.startswith("numba.core.types"):
        return ["numba_type", str(value)]
    if isinstance(value, np.ndarray) and value.size <= LARGEST_CONSTANT_ARRAY and value.dtype.kind in "biuf":
        return ["array", value.dtype.str, list(value.shape), value.ravel().tolist()]
    found = jit_python_function(value)
    if found is not None:
        fn, device, options = found
        if not device:
            return opaque(
                f"`{name}` is a kernel, called from a kernel",
                "call a device function (`@cuda.jit(device=True)`) instead: a kernel is launched from the host only",
            )
        return ["device", describe_function(fn, options, seen, resolve)]
    module = getattr(value, "__module__", None) or ""
    own_name = getattr(value, "__name__", "")
    known = MODULE_NAMES | {"builtins"}
    if callable(value) and own_name and (module in known or module.startswith(("numba.cuda", "numpy"))):
        home = module if module in known else "numba.cuda" if module.startswith("numba.cuda") else "numpy"
        return ["attr", home, own_name]  # `from math import exp`, `from numba.cuda import grid`
    if isinstance(value, types.FunctionType):
        return ["pyfunc", own_name]
    return opaque(f"`{name}` is a {type(value).__name__}")


def _device_array(value):
    """A device array the kernel reads as a global (numba-cuda captures it by its pointer):
    ["devarray", dtype, shape], or None for anything else."""
    if isinstance(value, np.ndarray):
        return None
    engine = value
    inner = getattr(engine, "arr", None)  # the doctor's View
    inner = getattr(engine, "_ary", None) if inner is None else inner  # the simulator's arrays
    if not isinstance(inner, np.ndarray) or not type(engine).__module__.startswith(("grader.", "numba")):
        return None
    return ["devarray", inner.dtype.str, list(inner.shape)]


def _plain_tuple(value) -> bool:
    return all(
        isinstance(v, CONSTANT_TYPES)
        and not (isinstance(v, float) and not math.isfinite(v))
        or (isinstance(v, tuple) and _plain_tuple(v))
        for v in value
    )


def describe_function(fn, options: dict | None = None, seen: dict | None = None, resolve=None) -> dict:
    """{"name", "source", "filename", "firstline", "globals", "options"} for the helper.
    `resolve(value)`: what stands for a global this module cannot describe (the recorder's
    placeholders), or the value itself. A function the replayer rebuilt carries its own
    description (`DESCRIPTION`): that one, the text it was built from, is what is compiled."""
    own = getattr(fn, DESCRIPTION, None)
    if isinstance(own, dict):
        return own
    seen = {} if seen is None else seen
    if id(fn) in seen:
        return seen[id(fn)]
    lines, firstline = inspect.getsourcelines(fn)
    desc = {
        "name": fn.__name__,
        "source": textwrap.dedent("".join(lines)),
        "filename": fn.__code__.co_filename,
        "firstline": firstline,
        "globals": {},
        "options": options or {},
    }
    if fn.__name__ == "<lambda>":  # its line is no `def` the helper could rebuild
        desc["lambda"] = True
    seen[id(fn)] = desc
    scope = dict(fn.__globals__)
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                scope[name] = cell.cell_contents
            except ValueError:  # an empty cell
                continue
    builtin_names = set(dir(builtins))
    for name in sorted(code_names(fn.__code__) | set(fn.__code__.co_freevars)):
        if name in scope:
            value = resolve(scope[name]) if resolve is not None else scope[name]
            desc["globals"][name] = describe_value(value, seen, name, resolve)
        elif name not in builtin_names:
            desc["globals"][name] = opaque(f"`{name}` is not defined", f"define `{name}` before the kernel runs")
    return desc


def describe_argument(value):
    """Numba's type of one kernel argument, as data (a list, for JSON)."""
    if type(value).__module__.startswith("grader.doctor."):  # a doctor View over its values
        value = value.arr
    inner = getattr(value, "_ary", None)  # the simulator's device arrays
    if isinstance(inner, np.ndarray):
        value = inner
    if isinstance(value, np.ndarray):
        layout = "C" if value.flags.c_contiguous else "F" if value.flags.f_contiguous else "A"
        return ["array", value.dtype.str, value.ndim, layout]
    if isinstance(value, (bool, np.bool_)):
        return ["scalar", "?"]
    if isinstance(value, np.generic):
        return ["scalar", value.dtype.str]
    if isinstance(value, int):
        return ["scalar", "<i8" if -(1 << 63) <= value < (1 << 63) else "<u8"]
    if isinstance(value, float):
        return ["scalar", "<f8"]
    if isinstance(value, complex):
        return ["scalar", "<c16"]
    if isinstance(value, tuple):
        return ["tuple", [describe_argument(v) for v in value]]
    if value is None:
        return ["none"]
    return ["opaque", type(value).__name__]


@functools.cache
def numba_cuda_version() -> str:
    module = sys.modules.get("numba_cuda")
    try:
        from importlib.metadata import version  # noqa: PLC0415 - importlib.metadata stays out of `import grader`

        return version("numba-cuda")
    except Exception:  # noqa: BLE001
        return getattr(module, "__version__", "unknown")
