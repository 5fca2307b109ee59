"""The argument types of a plan's kernel launches, read from the plan alone.

What the grading process asks to have compiled ahead for a GPU's replayer
(grader/children/compiling.py): each kernel with the types numba-cuda will see when the
replayer launches it (grader/replay/launch.py). Buffers are stood in for by arrays of their
shape and strides over one element, never read; the types follow numba-cuda's typing of
device arrays. Where the plan does what the stand-ins cannot follow (a reshape of a strided
view, an index out of range), the walk stops: launches after it compile in the replayer, as
every launch did before.
"""

from __future__ import annotations

import numpy as np

from grader.compiler.describe import describe_argument
from grader.replay.plan import Param, Ref, Value
from grader.replay.placeholders import c_strides
from grader.replay.launch import value_of


class _Unfollowable(Exception):
    pass


def launch_types(plan, spec, dims: dict) -> dict:
    """kernel key -> the distinct argument types (descriptions, grader/compiler/describe.py) it
    is launched with in `plan`, replayed on `spec`'s arrays at `dims`."""
    arrays = {a.name: a for a in spec.arrays}
    buffers: dict = {}
    found: dict = {}
    try:
        for step in plan.steps:
            if step.op == "param":
                array = arrays[step.name]
                buffers[step.id] = _stand_in(array.shape_for(dims), array.dtype)
            elif step.op in ("alloc", "upload"):
                buffers[step.id] = _stand_in(step.shape, step.dtype)
            elif step.op == "view":
                source = buffers[step.source]
                buffers[step.id] = _reshaped(source, step.shape) if step.shape else source[step.key]
            elif step.op == "launch":
                types = [_describe(a, buffers) for a in step.args]
                if types not in found.setdefault(step.kernel, []):
                    found[step.kernel].append(types)
    except (_Unfollowable, KeyError, IndexError, TypeError, ValueError):
        pass
    return found


def _stand_in(shape, dtype) -> np.ndarray:
    """An array of `shape` and C strides over a single element: its type, never its data."""
    dtype = np.dtype(dtype)
    shape = tuple(int(n) for n in shape)
    return np.lib.stride_tricks.as_strided(np.zeros(1, dtype), shape, c_strides(shape, dtype.itemsize))


def _reshaped(source: np.ndarray, shape) -> np.ndarray:
    """A device array's reshape (contiguous arrays only); numpy's would copy a strided one."""
    if not source.flags.c_contiguous or int(np.prod(shape)) != source.size:
        raise _Unfollowable
    return _stand_in(shape, source.dtype)


def _describe(arg, buffers: dict):
    if isinstance(arg, Ref):
        return _array_type(buffers[arg.id])
    if isinstance(arg, Param):
        return describe_argument(np.dtype(arg.dtype).type(0))
    if isinstance(arg, Value):
        return describe_argument(value_of(arg))
    return ["tuple", [_describe(a, buffers) for a in arg]]


def _array_type(a: np.ndarray) -> list:
    """numba-cuda's type of a device array of this shape and strides (`DeviceNDArray._numba_type_`:
    a zero stride is never contiguous)."""
    if 0 in a.strides:
        layout = "A"
    else:
        layout = "C" if a.flags.c_contiguous else "F" if a.flags.f_contiguous else "A"
    return ["array", a.dtype.str, a.ndim, layout]
