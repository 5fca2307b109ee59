"""Two 4-byte elements in one 8-byte access, for bundled targets that are bound by memory.

On a GPU a float32 array is read as complex64 pairs and an int32 array as int64 words: half
the load and store instructions (scan's target on an H200: 0.759 → 0.720 ms; softmax_fused's
and warp_reduce's use them too; docs/BENCHMARKS.md). The kernel doctor follows each element
of an array (races, unwritten outputs) and cannot read an array's bytes as another type, so on
the CPU engines `pair_view` returns the array itself and the same device functions read or
write elements 2i and 2i + 1: one kernel, the same meaning on both.

Device functions take the pair index and return or take (lo, hi) = (element 2i, element 2i + 1).
Indices are cast to uint64: Numba checks a signed index for wrap-around on every access, which
cost scan's target a third of its time on an H200 (1.133 → 0.759 ms).
Import this module after the back end is chosen (as kernels/<id>.py are).
"""

import numpy as np
from numba import config, cuda, int32, int64, uint64

__all__ = ["pair_view", "load_f32", "store_f32", "load_i32", "store_i32", "load_f32_2d", "store_f32_2d"]

LOW = 0xFFFFFFFF
PAIR_OF = {np.dtype(np.float32): np.complex64, np.dtype(np.int32): np.int64}


if config.ENABLE_CUDASIM:

    def pair_view(array, count: int):
        """The first 2·count elements of a contiguous array, as seen by the functions below."""
        return array

    @cuda.jit(device=True)
    def load_f32(a2, i):
        return a2[uint64(2 * i)], a2[uint64(2 * i + 1)]

    @cuda.jit(device=True)
    def store_f32(a2, i, lo, hi):
        a2[uint64(2 * i)] = lo
        a2[uint64(2 * i + 1)] = hi

    load_i32 = load_f32
    store_i32 = store_f32

    @cuda.jit(device=True)
    def load_f32_2d(a2, row, i):
        return a2[uint64(row), uint64(2 * i)], a2[uint64(row), uint64(2 * i + 1)]

    @cuda.jit(device=True)
    def store_f32_2d(a2, row, i, lo, hi):
        a2[uint64(row), uint64(2 * i)] = lo
        a2[uint64(row), uint64(2 * i + 1)] = hi

else:

    def pair_view(array, count: int):
        """The first 2·count elements of a contiguous array as `count` 8-byte pairs (a 2-D
        array: whole rows, `count` pairs each)."""
        pair = PAIR_OF[np.dtype(array.dtype)]
        if array.ndim == 1:
            return array[: 2 * count].view(pair)
        return array.view(pair)

    @cuda.jit(device=True, inline=True)
    def load_f32(a2, i):
        v = a2[uint64(i)]
        return v.real, v.imag

    @cuda.jit(device=True, inline=True)
    def store_f32(a2, i, lo, hi):
        a2[uint64(i)] = complex(lo, hi)

    @cuda.jit(device=True, inline=True)
    def load_i32(a2, i):
        w = a2[uint64(i)]
        return int32(w & LOW), int32(w >> 32)

    @cuda.jit(device=True, inline=True)
    def store_i32(a2, i, lo, hi):
        a2[uint64(i)] = (int64(hi) << 32) | (int64(lo) & LOW)

    @cuda.jit(device=True, inline=True)
    def load_f32_2d(a2, row, i):
        v = a2[uint64(row), uint64(i)]
        return v.real, v.imag

    @cuda.jit(device=True, inline=True)
    def store_f32_2d(a2, row, i, lo, hi):
        a2[uint64(row), uint64(i)] = complex(lo, hi)
