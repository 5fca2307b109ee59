"""The stand-ins a submission's `launch` gets while it is recorded (grader/replay/record.py):
`DeviceRef`, a device array with a shape and a dtype and no data; the device and the streams it
asks for; what a module-level device array becomes in a kernel's globals; and the errors that
say, in the learner's words, what a recording cannot do (read data that is not there, run out
of the device's memory, upload too much from the host); a launch configuration read as the
learner wrote it.
"""

from __future__ import annotations

import math
from contextlib import contextmanager

import numpy as np

from grader.compiler.dispatch import AXES, MAX_BLOCK, MAX_GRID, MAX_THREADS_PER_BLOCK, SHARED_BYTES_PER_BLOCK


H200 = {
    "name": "NVIDIA H200",
    "compute_capability": (9, 0),
    "MULTIPROCESSOR_COUNT": 132,
    "MAX_THREADS_PER_BLOCK": MAX_THREADS_PER_BLOCK,
    **{f"MAX_BLOCK_DIM_{axis.upper()}": most for axis, most in zip(AXES, MAX_BLOCK)},
    **{f"MAX_GRID_DIM_{axis.upper()}": most for axis, most in zip(AXES, MAX_GRID)},
    "MAX_SHARED_MEMORY_PER_BLOCK": SHARED_BYTES_PER_BLOCK,
    "WARP_SIZE": 32,
    "TOTAL_MEMORY": 143771 << 20,
}
"""What `cuda.get_current_device()` answers while recording when the grading process names no
GPU (a laptop): the reference GPU of the course."""


class NoDataHere(Exception):
    """Host code asked for a device array's values: while the grader records `launch` there are
    none (and on a GPU they would cost a copy back each time)."""

    learner_verdict = "forbidden"  # grader/steps/explain.py: host code doing a kernel's work
    learner_hint = "Compute it in a kernel: `launch` only sizes grids, allocates device arrays and launches kernels."


class NotOnTheDevice(AttributeError):
    """Host code asked a placeholder for something a device array offers no kernel-free way to
    use (an engine's internals, NumPy's methods)."""

    learner_verdict = "forbidden"
    learner_hint = NoDataHere.learner_hint


class NoRoomOnTheDevice(MemoryError):
    """An allocation larger than the whole memory of the GPU the submission is graded on."""

    learner_verdict = "exception"
    learner_hint = (
        "Size each device array from the arrays `launch` is given (`c.size`, `a.shape`), not from a "
        "fixed or multiplied count: check the shape you pass to `cuda.device_array`."
    )


class TooMuchHostData(ValueError):
    """More host data uploaded by one plan than MAX_UPLOAD_BYTES: on every engine, at every size."""

    learner_verdict = "exception"
    learner_hint = (
        "Make large arrays on the device (`cuda.device_array`) and fill them in a kernel: host data "
        "is for small tables (weights, a lookup table), and copying it costs time on every launch."
    )


class NotInTheFile(TypeError):
    """A kernel whose `def` is not in the submission's file (built by `exec`, imported)."""

    learner_verdict = "exception"
    learner_hint = "Write each kernel as a `def` under `@cuda.jit` in your file."


class RefusedArgument(TypeError):
    """A kernel argument made past Numba's public API (its internals' arrays)."""

    learner_verdict = "forbidden"
    learner_hint = "Pass the device arrays `launch` is given, or ones from cuda.device_array and cuda.to_device."


def _no_data(what: str) -> NoDataHere:
    return NoDataHere(
        f"{what} reads a device array's values on the host. The grader runs `launch` once to record "
        "the kernels it launches, and the arrays hold no values then: compute the result in a kernel "
        "(a second kernel launch is fine), and let `launch` only size grids, allocate and launch."
    )


class DeviceRef:
    """A device array as `launch` sees it while it is recorded: shape, dtype, no data."""

    __slots__ = ("_recorder", "_id", "_shape", "_dtype")

    def __init__(self, recorder, ref_id: int, shape: tuple, dtype: np.dtype):
        self._recorder, self._id, self._shape, self._dtype = recorder, ref_id, tuple(shape), np.dtype(dtype)

    # what numba's device arrays tell about themselves
    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._dtype)
    ndim = property(lambda self: len(self._shape))
    size = property(lambda self: math.prod(self._shape))
    nbytes = property(lambda self: self.size * self._dtype.itemsize)
    strides = property(lambda self: c_strides(self._shape, self._dtype.itemsize))
    alloc_size = nbytes

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d device array")
        return self._shape[0]

    def __repr__(self):
        return f"<device array shape={self._shape} dtype={self._dtype}>"

    def _shape_of(self, key) -> tuple:
        dummy = np.lib.stride_tricks.as_strided(np.zeros(1, self._dtype), self._shape, (0,) * len(self._shape))
        try:
            part = dummy[key]
        except IndexError as exc:
            raise IndexError(f"{exc} (a device array of shape {self._shape})") from None
        if not isinstance(part, np.ndarray) or part.ndim == 0:
            raise _no_data("Indexing a device array with one element's index")
        return part.shape

    def __getitem__(self, key):
        key = _plain_key(key)
        return self._recorder.view(self, key, self._shape_of(key))

    def __setitem__(self, key, value):
        key = _plain_key(key)
        target = self if key in ((slice(None),), (Ellipsis,)) else self.__getitem__(key)
        self._recorder.assign(target, value)

    def reshape(self, *shape, order="C"):
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        size = self.size
        shape = tuple(int(s) for s in shape)
        if shape.count(-1) == 1:
            known = math.prod(s for s in shape if s != -1)
            shape = tuple(size // known if s == -1 and known else s for s in shape)
        if math.prod(shape) != size or order != "C":
            raise ValueError(f"cannot reshape a device array of {size} elements into shape {shape}")
        return self._recorder.reshaped(self, shape)

    def ravel(self, order="C"):
        return self.reshape(self.size, order=order)

    def copy_to_device(self, other, stream=0):
        self._recorder.assign(self, other)

    def copy_to_host(self, *args, **kwargs):
        raise _no_data("`copy_to_host()`")

    def is_c_contiguous(self):
        return True

    def is_f_contiguous(self):
        return self.ndim <= 1

    def __array__(self, *args, **kwargs):
        raise _no_data("Using a device array as a NumPy array")

    def __iter__(self):
        raise _no_data("Looping over a device array on the host")

    def __bool__(self):
        raise _no_data("Testing a device array's truth")

    def __float__(self):
        raise _no_data("float() of a device array")

    def __int__(self):
        raise _no_data("int() of a device array")

    __index__ = __int__

    def __getattr__(self, name):
        if name == "view" and self._recorder.types_only:  # the grader's own references (Recorder)
            return lambda dtype: self._recorder.viewed_as(self, dtype)
        raise NotOnTheDevice(
            f"device arrays have no `{name}` while the grader records `launch`: "
            "on the host use only their shape, size, dtype, slices and reshape, and launch kernels on them"
        )


class UnfilledDeviceArray:
    """What a module-level device array whose values the recording never saw stands for in a
    kernel's globals: a GPU would read it (numba-cuda captures it by its address), but the
    grader replays only arrays it can rebuild."""

    def __init__(self, shape: tuple, dtype: np.dtype):
        self.zerogpu_opaque = (
            f"a device array made at module level ({dtype}, shape {shape}) that no upload filled is read as a global",
            "pass it to the kernel as an argument, or make it with `cuda.to_device` of a NumPy array",
        )


class DeviceConstant:
    """A module-level device array filled from the host, as a kernel's global: its values, read
    as constants (a kernel that writes to it is told so, grader/compiler/server.py)."""

    def __init__(self, values: np.ndarray):
        self.zerogpu_device_constant = values


def c_strides(shape: tuple, itemsize: int) -> tuple:
    """A C-contiguous array's strides (a zero-length axis counts as one)."""
    strides, step = [], itemsize
    for dim in reversed(shape):
        strides.append(step)
        step *= max(dim, 1)
    return tuple(reversed(strides))


def _plain_key(key) -> tuple:
    key = key if isinstance(key, tuple) else (key,)
    out = []
    for k in key:
        if isinstance(k, (bool, np.bool_)):
            raise TypeError("a device array cannot be indexed with True or False")
        if isinstance(k, (int, np.integer)):
            out.append(int(k))
        elif isinstance(k, slice):
            out.append(slice(*(None if v is None else int(v) for v in (k.start, k.stop, k.step))))
        elif k is None or k is Ellipsis:
            out.append(k)
        else:
            raise TypeError(f"a device array can be indexed with integers and slices, not {type(k).__name__}")
    return tuple(out)


class Stream:
    """What `cuda.stream()` gives while recording: the replay runs every step in order."""

    def synchronize(self):
        return None

    @contextmanager
    def auto_synchronize(self):
        yield self


class Device:
    """`cuda.get_current_device()` while recording: the attributes of the GPU that will replay."""

    def __init__(self, attributes: dict):
        for name, value in attributes.items():
            setattr(self, name, tuple(value) if isinstance(value, list) else value)
        self.id = 0

    def reset(self):
        return None


def bytes_said(count: int) -> str:
    """A number of bytes as a person says it (40 TB, 80 GB, 512 MB)."""
    for unit, size in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if count >= size:
            return f"{count / size:.3g} {unit}"
    return f"{count} bytes"


def _dims(value, what: str) -> tuple:
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        dims = (int(value),)
    elif isinstance(value, (tuple, list)) and 1 <= len(value) <= 3:
        if not all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in value):
            raise TypeError(f"the {what} size must be integers, not {value!r}")
        dims = tuple(int(v) for v in value)
    else:
        raise TypeError(f"the {what} size must be an integer or a tuple of 1 to 3 integers, not {value!r}")
    if any(v < 0 for v in dims):
        raise ValueError(f"the {what} size must not be negative, got {value!r}")
    return dims + (1,) * (3 - len(dims))


def launch_configuration(config) -> tuple:
    """(grid, block, dynamic shared bytes) of `kernel[config]` as the learner wrote it, each
    size three integers; what a GPU would refuse to launch at all is refused here."""
    if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
        raise ValueError("launch a kernel as kernel[blocks, threads_per_block](arguments)")
    shared = config[3] if len(config) == 4 else 0
    if not isinstance(shared, (int, np.integer)) or shared < 0:
        raise TypeError(f"dynamic shared memory is a number of bytes, not {shared!r}")
    if len(config) >= 3 and not (config[2] in (0, None) or isinstance(config[2], Stream)):
        raise TypeError("the third launch parameter is a stream (cuda.stream()) or 0")
    return _dims(config[0], "grid"), _dims(config[1], "block"), int(shared)
