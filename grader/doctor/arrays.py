"""The doctor's arrays, made: global memory (a kernel's argument, `cuda.to_device`), scratch
memory (`cuda.device_array`), a block's shared and a thread's local arrays, and the read-only
twin of a global array that a launch never writes (its loads skip the shadow).

The classes of each memory space and their checks are grader/doctor/spaces.py's.
"""

from __future__ import annotations

import numpy as np

from grader.doctor.memory import UNSET, Memory, View
from grader.doctor.spaces import CLASSES

_CLASSES = CLASSES


# Read-only global arrays (a launch that never writes them, by static analysis of the kernel):
# nobody can conflict with their elements, so loads skip the shadow, and read nested lists
# (`rows[i][j]`, copied at the launch) instead of computing an offset. Negative indices and
# anything else unusual take the checked path. Writes keep the full checks.
def _ld1_rows(self, i, site):
    try:
        if i >= 0:
            return self.rows[i]
    except (IndexError, TypeError):
        pass
    return self._ldn((i,), site)


def _ld2_rows(self, i, j, site):
    try:
        if i >= 0 and j >= 0:
            return self.rows[i][j]
    except (IndexError, TypeError):
        pass
    return self._ldn((i, j), site)


def _ld3_rows(self, i, j, k, site):
    try:
        if i >= 0 and j >= 0 and k >= 0:
            return self.rows[i][j][k]
    except (IndexError, TypeError):
        pass
    return self._ldn((i, j, k), site)


for _ndim, _load in ((1, _ld1_rows), (2, _ld2_rows), (3, _ld3_rows)):
    _CLASSES[("readonly", _ndim)] = type(
        f"ReadOnlyView{_ndim}", (_CLASSES[("global", _ndim)],), {"__slots__": (), f"_ld{_ndim}": _load}
    )


def _nested(vals, off, shape, strides):
    if len(shape) == 1:
        n, s = shape[0], strides[0]
        return vals[off : off + n] if s == 1 else [vals[off + i * s] for i in range(n)]
    return [_nested(vals, off + i * strides[0], shape[1:], strides[1:]) for i in range(shape[0])]


def read_only(view: View) -> View:
    """The same global array, for a launch that only reads it: its loads skip the shadow and
    read nested lists of the values."""
    if view.ndim not in (1, 2, 3) or view.size == 0 or view.mem.scratch:
        return view  # scratch memory keeps its checks: a read of what nothing wrote
    twin = object.__new__(_CLASSES[("readonly", view.ndim)])
    for slot in View.__slots__:
        setattr(twin, slot, getattr(view, slot))
    twin.rows = _nested(view.vals, view.off, view.shape, view.st)
    return twin


def view_class(space: str, ndim: int) -> type:
    return _CLASSES[(space, ndim if ndim in (1, 2, 3) else None)]


def make_view(mem: Memory, arr: np.ndarray, name: str | None = None) -> View:
    return view_class(mem.space, arr.ndim)(mem, arr, name)


def global_array(data: np.ndarray, name: str, window: slice | None = None, shape: tuple | None = None) -> View:
    """A device array over `data`; `window`/`shape` pick the part the kernel sees (the
    grader's fenced outputs: the canaries on both sides stay outside the view)."""
    flat = data.reshape(-1)
    if window is not None:  # the canaries stay out of the memory too: no shadow, no copies
        flat = flat[window]
    mem = Memory(flat, "global", name)
    return make_view(mem, flat.reshape(shape if shape is not None else data.shape), name)


def scratch_array(data: np.ndarray, name: str) -> View:
    """A device array allocated without data (`cuda.device_array`): `data` is garbage, and a
    kernel that reads an element before anything wrote it is told so."""
    view = global_array(data, name)
    view.mem.never_written()
    return view


def shared_array(shape, name: str, fill: np.ndarray) -> View:
    mem = Memory(fill.reshape(-1), "shared", name)
    return make_view(mem, mem.data.reshape(shape), name)


_LOCAL_PROTOTYPES: dict = {}


def local_array(shape, dtype, name: str, fill) -> View:
    """A thread's array: a copy of a cached prototype (its values list is the only state;
    every element starts UNSET)."""
    key = (shape, dtype, name)
    proto = _LOCAL_PROTOTYPES.get(key)
    if proto is None:
        mem = Memory(fill().reshape(-1), "local", name)
        mem.vals[:] = [UNSET] * len(mem.vals)  # the poison stays in mem.data
        proto = _LOCAL_PROTOTYPES[key] = make_view(mem, mem.data.reshape(shape), name)
    mem = object.__new__(Memory)
    for slot in Memory.__slots__[:4] + ("stype", "space", "name", "addr", "itemsize"):
        setattr(mem, slot, getattr(proto.mem, slot, None))
    mem.vals = proto.mem.vals[:]
    view = object.__new__(proto.__class__)
    for slot in View.__slots__:
        setattr(view, slot, getattr(proto, slot))
    view.mem, view.vals = mem, mem.vals
    return view
