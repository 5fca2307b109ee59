"""The functions a transformed kernel calls instead of indexing, atomics and array creation.

`HELPERS` is installed in every transformed function's globals under the names the
transformer emits. Subscripts of names known to be arrays call the array's method directly
(`a._ld2(i, j, site)`); the others go through `_zg_ld2(a, i, j, site)`, which indexes plainly
what is not one of our arrays.
"""

from __future__ import annotations

import numpy as np

from grader.doctor.errors import Unsupported
from grader.doctor.fakecuda import FAKE_CUDA, numpy_dtype
from grader.doctor.memory import View
from grader.doctor.arrays import global_array, local_array, shared_array
from grader.doctor.sites import SITES
from grader.doctor.warp_calls import lanemask_lt, warp_call
from grader.backend.simulator import garbage, unset
from grader.doctor.efficiency import profiled


class Block:
    """The block being run: its shared arrays (one per call site) and the views the
    memory-efficiency profiler watches (grader/doctor/efficiency.py)."""

    shared: dict = {}
    views: list = []
    profiling = False


BLOCK = Block()


# `_zg_ld2(a, i, j, site)` & co: the array's method when `a` is one of our arrays, plain
# Python indexing otherwise (a tuple argument, a shape...).
def ld1(a, i, site):
    try:
        method = a._ld1
    except AttributeError:
        return a[i]
    return method(i, site)


def ld2(a, i, j, site):
    try:
        method = a._ld2
    except AttributeError:
        return a[i, j]
    return method(i, j, site)


def ld3(a, i, j, k, site):
    try:
        method = a._ld3
    except AttributeError:
        return a[i, j, k]
    return method(i, j, k, site)


def ldn(a, idx, site):
    try:
        method = a._ldn
    except AttributeError:
        return a[idx]
    return method(idx, site)


def st1(a, i, value, site):
    try:
        method = a._st1
    except AttributeError:
        a[i] = value
        return
    method(i, value, site)


def st2(a, i, j, value, site):
    try:
        method = a._st2
    except AttributeError:
        a[i, j] = value
        return
    method(i, j, value, site)


def st3(a, i, j, k, value, site):
    try:
        method = a._st3
    except AttributeError:
        a[i, j, k] = value
        return
    method(i, j, k, value, site)


def stn(a, idx, value, site):
    try:
        method = a._stn
    except AttributeError:
        a[idx] = value
        return
    method(idx, value, site)


def upd1(a, i, op, value, site):
    try:
        method = a._upd1
    except AttributeError:
        a[i] = op(a[i], value)
        return
    method(i, op, value, site)


def upd2(a, i, j, op, value, site):
    try:
        method = a._upd2
    except AttributeError:
        a[i, j] = op(a[i, j], value)
        return
    method(i, j, op, value, site)


def upd3(a, i, j, k, op, value, site):
    try:
        method = a._upd3
    except AttributeError:
        a[i, j, k] = op(a[i, j, k], value)
        return
    method(i, j, k, op, value, site)


def updn(a, idx, op, value, site):
    try:
        method = a._updn
    except AttributeError:
        a[idx] = op(a[idx], value)
        return
    method(idx, op, value, site)


def _inc(old, val):
    return 0 if old >= val else old + 1


def _dec(old, val):
    return val if (old == 0 or old > val) else old - 1


ATOMIC_OPS = {
    "add": lambda old, v: old + v,
    "sub": lambda old, v: old - v,
    "and_": lambda old, v: old & v,
    "or_": lambda old, v: old | v,
    "xor": lambda old, v: old ^ v,
    "max": lambda old, v: max(old, v),
    "min": lambda old, v: min(old, v),
    "nanmax": lambda old, v: np.nanmax([old, v]),
    "nanmin": lambda old, v: np.nanmin([old, v]),
    "exch": lambda old, v: v,
    "inc": _inc,
    "dec": _dec,
}


def atomic(op, a, idx, value, site):
    """cuda.atomic.<op>(a, idx, value): returns the old value."""
    fn = ATOMIC_OPS.get(op)
    if fn is None:
        raise Unsupported(f"cuda.atomic.{op}", SITES[site].line)
    if not isinstance(a, View):
        raise TypeError(f"cuda.atomic.{op} needs a device array, not {type(a).__name__}")
    return a._atomic(fn, idx, value, site)


def cas(a, idx, old, value, site):
    """cuda.atomic.cas(a, idx, old, value) / compare_and_swap(a, old, value)."""
    if not isinstance(a, View):
        raise TypeError(f"cuda.atomic.cas needs a device array, not {type(a).__name__}")
    if a.ndim > 1 and idx == 0:
        idx = (0,) * a.ndim
    return a._atomic(lambda loaded, v: v if loaded == old else loaded, idx, value, site)


def _dynamic(shape) -> bool:
    return (shape.__class__ is int or isinstance(shape, np.integer)) and shape == 0 or shape == (0,)


def _shape(shape, site):
    dims = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if not dims or not all(isinstance(d, (int, np.integer)) for d in dims):
        raise TypeError(f"an array shape must be an integer or a tuple of integers, not {shape!r}")
    if any(d == 0 for d in dims):
        raise Unsupported("dynamic shared memory (shape 0)", SITES[site].line)
    return tuple(int(d) for d in dims)


def shared(shape, dtype, site):
    """cuda.shared.array: one array per call site and block, full of garbage at first. Shape 0
    is the launch's dynamic shared memory: one array per block, whatever the site (they alias on a
    GPU), of as many elements as the launch's 4th parameter has bytes for."""
    key = ("dynamic", numpy_dtype(dtype)) if _dynamic(shape) else site
    view = BLOCK.shared.get(key)
    if view is None:
        if key == site:
            dims = _shape(shape, site)
        elif any(k[0] == "dynamic" for k in BLOCK.shared if k.__class__ is tuple):
            raise Unsupported("dynamic shared memory read as two dtypes", SITES[site].line)
        else:
            dims = (FAKE_CUDA.dynamic_shared // key[1].itemsize,)
        view = shared_array(dims, SITES[site].array or "shared array", garbage(dims, numpy_dtype(dtype)).copy())
        BLOCK.shared[key] = view
        if BLOCK.profiling:
            BLOCK.views.append(view)
            view.__class__ = profiled(view.__class__)
    return view


def local(shape, dtype, site):
    """cuda.local.array: a fresh array per thread, holding the poison value (an accumulator
    nobody set is plainly wrong)."""
    dims = _shape(shape, site)
    dt = numpy_dtype(dtype)
    return local_array(dims, dt, SITES[site].array or "local array", lambda: unset(dims, dt))


def const(array, site):
    """cuda.const.array_like: a copy in (read-only) global memory."""
    data = np.array(array.arr if isinstance(array, View) else array, copy=True)
    return global_array(data, SITES[site].array or "constant array")


HELPERS = {
    "_zg_cuda": FAKE_CUDA,
    "_zg_atomic": atomic,
    "_zg_cas": cas,
    "_zg_shared": shared,
    "_zg_local": local,
    "_zg_const": const,
    "_zg_warp": warp_call,
    "_zg_lanemask_lt": lanemask_lt,
}
HELPERS.update({f"_zg_{f.__name__}": f for f in (ld1, ld2, ld3, ldn, st1, st2, st3, stn, upd1, upd2, upd3, updn)})
