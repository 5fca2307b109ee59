"""Random arrays of 10^8 elements in well under a second: fixed-size chunks, each drawn from
its own child generator (`rng.spawn`) on a thread pool. NumPy's generators release the GIL
while filling, so the chunks run in parallel; the result depends only on `rng` and the size,
never on the number of cores. `over_chunks`, the chunking itself, serves large oracles too.

Benchmark inputs (2^27-2^28 elements) are built twice per timed check, in the child and in
the grading process; drawn serially they took 3-7 s each on the H200's host.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

CHUNK = 1 << 22


def over_chunks(size: int, work, chunk: int = CHUNK) -> None:
    """Call `work(start, stop)` for every `chunk`-element slice of range(size), on a thread
    pool when there is more than one (NumPy releases the GIL in bulk operations)."""
    starts = range(0, size, chunk)
    if len(starts) <= 1:
        for start in starts:
            work(start, min(start + chunk, size))
        return
    with ThreadPoolExecutor(max_workers=min(len(starts), os.cpu_count() or 1)) as pool:
        list(pool.map(lambda start: work(start, min(start + chunk, size)), starts))


def filled(rng: np.random.Generator, shape, dtype, fill) -> np.ndarray:
    """An array of `shape`, each CHUNK-element slice filled by `fill(child_rng, out_slice)`."""
    out = np.empty(shape, dtype=dtype)
    flat = out.reshape(-1)
    children = rng.spawn(len(range(0, flat.size, CHUNK)))
    over_chunks(flat.size, lambda start, stop: fill(children[start // CHUNK], flat[start:stop]))
    return out


def normal(rng, shape, dtype=np.float32, scale: float = 1.0) -> np.ndarray:
    def fill(r, out):
        r.standard_normal(out=out, dtype=out.dtype)
        if scale != 1.0:
            out *= out.dtype.type(scale)

    return filled(rng, shape, dtype, fill)


def uniform(rng, low: float, high: float, shape, dtype=np.float32) -> np.ndarray:
    """Uniform on [low, high)."""

    def fill(r, out):
        r.random(out=out, dtype=out.dtype)
        out *= out.dtype.type(high - low)
        out += out.dtype.type(low)

    return filled(rng, shape, dtype, fill)


SUMMANDS_LOW = -0.9


def summands(rng, shape, dtype=np.float32) -> np.ndarray:
    """Terms of a long float sum (reduce_sum, warp_reduce, scan's amounts): uniform on
    [-0.9, 1.1), mean 0.1. With a mean of 0 the sum of 2^28 of them is about ±10^4 against a
    float32 bound of 10^6, and an answer from any part of the input, or none, would pass the
    timed check; with 0.1 the sum is 2.7·10^7, the bound 3.9% of it, and an answer from 90% of
    the input is off by 2.7·10^6 (docs/SECURITY.md, "The timed check"). A larger mean would let
    one float32 accumulator (the baseline's order) stop growing, as values under half its
    spacing round away; a range of 2 keeps every order's rounding unbiased (a partial sum's
    spacing, 1 or 2 up to 2^25, divides it)."""
    return uniform(rng, SUMMANDS_LOW, SUMMANDS_LOW + 2.0, shape, dtype)


def integers(rng, low: int, high: int, shape, dtype=np.int64) -> np.ndarray:
    """Integers on [low, high)."""

    def fill(r, out):
        out[...] = r.integers(low, high, out.size, dtype=out.dtype)

    return filled(rng, shape, dtype, fill)
