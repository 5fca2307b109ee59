"""Run a submission's `launch` on one case: device inputs, poisoned and fenced outputs.

Each output lives in the middle of a larger device buffer: PAD canary elements before and
after it. After the launch we copy the whole buffer back; the caller (the judge) checks the
canaries and the poison. Nothing here decides a verdict.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from grader.explain import ErrorInfo, explain_exception
from grader.spec import Dims, Spec

PAD = 1024
"""Canary elements on each side of an output."""


def _bits(dtype: np.dtype, pattern: int) -> np.ndarray:
    """A one-element array of `dtype` whose bytes repeat `pattern`'s low bytes."""
    raw = pattern.to_bytes(8, "little")[: dtype.itemsize]
    return np.frombuffer(raw, dtype=dtype).copy()


def poison_value(dtype) -> np.ndarray:
    """A value a correct kernel never writes: a NaN with an unusual payload, or the most
    negative integer (or the largest unsigned one)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return _bits(dtype, 0x7FF8A5A5A5A5A5A5 if dtype.itemsize == 8 else 0x7FC5A5A5)
    if dtype.kind == "i":
        return np.array([np.iinfo(dtype).min], dtype)
    return np.array([np.iinfo(dtype).max], dtype)


def canary_value(dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return _bits(dtype, 0x7FFCA11A5CA11A5C if dtype.itemsize == 8 else 0x7FCA11A5)
    return _bits(dtype, 0x5AFEC0DE5AFEC0DE)


def same_bits(a: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Elementwise: does `a` hold exactly the bytes of `value` (NaN payloads included)?"""
    unsigned = np.dtype(f"u{a.dtype.itemsize}")
    return a.view(unsigned) == value.view(unsigned)[0]


def fenced_buffer(dtype, size: int, init: str) -> np.ndarray:
    """Host buffer: PAD canaries, `size` poisoned (or zeroed) elements, PAD canaries."""
    buf = np.empty(size + 2 * PAD, dtype=dtype)
    buf[:] = canary_value(dtype)[0]
    buf[PAD : PAD + size] = 0 if init == "zeros" else poison_value(dtype)[0]
    return buf


def output_view(buffer: np.ndarray, shape: tuple) -> np.ndarray:
    size = int(np.prod(shape))
    return buffer[PAD : PAD + size].reshape(shape)


@dataclass
class Outcome:
    """What one run of `launch` left behind, before anyone judges it."""

    buffers: dict
    """Output name -> the whole fenced buffer copied back (canaries included)."""
    error: ErrorInfo | None
    seconds: float


def launch_arguments(spec: Spec, inputs: dict, dims: Dims):
    """Device arrays for every parameter; returns (kwargs for launch, device buffers)."""
    from numba import cuda

    kwargs, device_buffers = {}, {}
    for param in spec.params:
        if param in spec.scalars:
            kwargs[param.name] = np.dtype(param.dtype).type(inputs[param.name])
        elif param.role == "in":
            kwargs[param.name] = cuda.to_device(np.ascontiguousarray(inputs[param.name]))
        else:
            shape = param.shape_for(dims)
            size = int(np.prod(shape))
            buf = cuda.to_device(fenced_buffer(param.dtype, size, param.init))
            device_buffers[param.name] = buf
            kwargs[param.name] = buf[PAD : PAD + size].reshape(shape)
    return kwargs, device_buffers


def execute(spec: Spec, launch, inputs: dict, dims: Dims, learner_files=()) -> Outcome:
    """Call `launch` once on fresh device copies of `inputs`; never raises for learner bugs."""
    from numba import cuda

    kwargs, device_buffers = launch_arguments(spec, inputs, dims)
    start = time.perf_counter()
    error = None
    try:
        launch(**kwargs)
        cuda.synchronize()
    except BaseException as exc:  # noqa: BLE001 - a learner's bug must become a verdict
        if isinstance(exc, KeyboardInterrupt):
            raise
        error = explain_exception(exc, learner_files, kwargs)
    seconds = time.perf_counter() - start
    try:
        buffers = {name: buf.copy_to_host() for name, buf in device_buffers.items()}
    except Exception as exc:  # noqa: BLE001 - e.g. a sticky CUDA error after a bad launch
        return Outcome({}, error or explain_exception(exc, learner_files, kwargs), seconds)
    return Outcome(buffers, error, seconds)
