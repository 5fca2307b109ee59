"""Device arrays are opaque to a submission's host code while its `launch` runs.

The answer must be computed by the learner's kernels, so `launch` may size the grid, slice
device arrays into views, allocate, copy host constants to new device arrays and launch; it
may not read a device array's data on the host (indexing to a value, iteration, `__array__`,
`copy_to_host`, NumPy methods forwarded by the simulator's arrays, arithmetic) nor write data
into one (`copy_to_device`, assignment of anything but a single constant: `out[:] = 0` is a
fill, a memset on a GPU, and computes nothing).

The seal is per thread: it holds in the thread that calls `launch`, so Numba's simulator,
whose GPU threads are Python threads of their own, runs kernels unhindered. The kernel
doctor's arrays ask `refuse_host_read`/`refuse_host_write` themselves (grader/doctor/memory.py);
Numba's device arrays, on a GPU and on the simulator, are patched once by `seal_numba_arrays`.
The static policy stays the first line, with its teaching messages; this is the second,
and the OS sandbox (sandbox.py) the wall around both.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from functools import wraps

HINT = (
    "Device arrays are for kernels: read and write them inside your @cuda.jit kernels. "
    "`launch` only chooses the grid and launches (a fill such as `out[:] = 0` is fine)."
)

_state = threading.local()

DOCTOR_INTERNALS = frozenset(
    ("arr", "mem", "vals", "wr", "rd", "ws", "rs", "off", "st", "stype", "rows") + ("n0", "n1", "n2", "s0", "s1", "s2")
)
"""The kernel doctor's device arrays' own bookkeeping (grader/doctor/memory.py `View`'s slots
less the public `shape`, `ndim`, `size`, `dtype`, `name`): their data and shadow memory, plain
attributes the seal cannot guard without slowing every kernel access. The static policy refuses
them by name (tests/test_device_data.py keeps the two in step). Numba's arrays keep theirs
behind underscores, which the policy refuses as a class."""


class HostDataAccess(PermissionError):
    """Host code touched a device array's data while `launch` ran; the verdict is `forbidden`."""

    learner_verdict = "forbidden"
    learner_hint = HINT

    def __init__(self, name: str, action: str):
        super().__init__(f"host code {action} `{name}`'s data outside a kernel: compute it in a kernel")


@contextmanager
def sealed(arguments: dict | None = None):
    """Device arrays refuse host access from this thread inside. `arguments` (launch's keyword
    arguments) name the arrays in messages."""
    previous = getattr(_state, "names", None)
    _state.names = {id(value): name for name, value in (arguments or {}).items()}
    try:
        yield
    finally:
        _state.names = previous


def is_sealed() -> bool:
    return getattr(_state, "names", None) is not None


def _name(array, fallback: str | None) -> str:
    names = getattr(_state, "names", None) or {}
    return names.get(id(array)) or fallback or "a device array"


def refuse_host_read(array, name: str | None = None) -> None:
    if is_sealed():
        raise HostDataAccess(_name(array, name), "read")


def refuse_host_write(array, value=None, name: str | None = None) -> None:
    """A write of one constant (a fill) is allowed; any other write from the host is not."""
    if is_sealed() and not _is_constant(value):
        raise HostDataAccess(_name(array, name), "wrote")


def _is_constant(value) -> bool:
    import numpy as np

    return isinstance(value, (int, float, bool, complex, np.generic))


_READS = (
    "copy_to_host",
    "__array__",
    "__iter__",
    "tolist",
    "getitem",
    "__add__",
    "__sub__",
    "__mul__",
    "__truediv__",
    "__floordiv__",
    "__mod__",
    "__pow__",
    "__eq__",
    "__ne__",
    "__lt__",
    "__le__",
    "__gt__",
    "__ge__",
)
_WRITES = ("copy_to_device", "setitem")


def _refusing_read(original):
    @wraps(original)
    def method(self, *args, **kwargs):
        refuse_host_read(self)
        return original(self, *args, **kwargs)

    return method


def _refusing_write(original):
    @wraps(original)
    def method(self, *args, **kwargs):
        refuse_host_write(self)
        return original(self, *args, **kwargs)

    return method


def _getitem(original, array_class):
    @wraps(original)
    def method(self, key):
        value = original(self, key)
        if is_sealed() and not isinstance(value, array_class):  # a value, not a view
            refuse_host_read(self)
        return value

    return method


def _setitem(original):
    @wraps(original)
    def method(self, key, value):
        refuse_host_write(self, value)
        return original(self, key, value)

    return method


METADATA = frozenset(("shape", "size", "ndim", "dtype", "strides", "itemsize", "nbytes", "flags", "alloc_size"))
"""What host code may ask of a device array: its form, never its values."""


def _getattr(original):
    @wraps(original)
    def method(self, name):
        value = original(self, name)  # the simulator forwards names it lacks to the NumPy array
        if name not in METADATA:
            refuse_host_read(self)
        return value

    return method


def _defines(cls, name: str) -> bool:
    """`cls` or a base of it other than `object` defines `name` (object's `__eq__` is identity)."""
    return any(name in vars(base) for base in cls.__mro__ if base is not object)


def _patch(cls, array_class) -> None:
    if vars(cls).get("_zerogpu_sealed"):
        return
    for name in _READS:
        if _defines(cls, name):
            setattr(cls, name, _refusing_read(getattr(cls, name)))
    for name in _WRITES:
        if _defines(cls, name):
            setattr(cls, name, _refusing_write(getattr(cls, name)))
    if _defines(cls, "__getitem__"):
        cls.__getitem__ = _getitem(cls.__getitem__, array_class)
    if _defines(cls, "__setitem__"):
        cls.__setitem__ = _setitem(cls.__setitem__)
    if _defines(cls, "__getattr__"):
        cls.__getattr__ = _getattr(cls.__getattr__)
    if not _defines(cls, "__iter__"):  # else iteration would go through __getitem__, value by value
        cls.__iter__ = _refusing_read(lambda self: (self[i] for i in range(len(self))))
    cls._zerogpu_sealed = True


def seal_numba_arrays() -> None:
    """Patch the device arrays of whichever Numba CUDA target is loaded (idempotent). Outside
    `sealed`, every patched method does what it did."""
    from numba import config

    if config.ENABLE_CUDASIM:
        from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

        _patch(FakeCUDAArray, FakeCUDAArray)
    else:
        from numba.cuda.cudadrv.devicearray import DeviceNDArray, DeviceNDArrayBase

        _patch(DeviceNDArray, DeviceNDArrayBase)
