"""The values a correct kernel never writes, and the fenced buffers built from them.

Each output lives in the middle of a larger buffer: PAD canary elements before and after it,
the output itself poisoned (or zeroed for accumulators). The judge finds a canary that
changed (a write out of bounds) and poison still in place (an element nobody wrote).
"""

from __future__ import annotations

import numpy as np

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


def fresh_value(dtype) -> np.ndarray:
    """What a new device allocation holds before a kernel writes it, on every engine (grader/
    replay/launch.py): neither the outputs' poison nor their canary, so a kernel that copies
    memory nothing wrote into an output writes a wrong value, not an unwritten one."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return _bits(dtype, 0x7FF8FEEDFEEDFEED if dtype.itemsize == 8 else 0x7FC0FEED)
    if dtype.kind == "b":
        return np.array([True], dtype)
    return _bits(dtype, 0x5EEDFEED5EEDFEED)


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
