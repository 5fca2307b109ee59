"""histogram — bins[v] = how many elements of `values` equal v, for v = 0..255: atomics and
shared-memory privatisation.

Tolerance: none. Counts are integers and must be exact (tolerance.exact).

Inputs: half the values fall into three "hot" bins (one below 128, one at or above 128, one
anywhere), the rest are uniform over 0..255. The hot bins make many threads update the same
bin at the same time, which is what atomics are for; bins at and above 128 catch code that
treats the bytes as signed.
"""
import numpy as np
from numba import cuda, int32

from grader.spec import Array, Benchmark, Case, Spec
from grader.tolerance import exact

BINS = 256


def make_inputs(dims, rng):
    n = dims["n"]
    hot = np.array([rng.integers(0, 128), rng.integers(128, 256), rng.integers(0, 256)], np.uint8)
    values = rng.integers(0, BINS, n, dtype=np.uint8)  # uint8 throughout: 2**28 values fit
    is_hot = rng.integers(0, 2, n, dtype=np.uint8).astype(bool)
    values[is_hot] = hot[rng.integers(0, 3, int(is_hot.sum()), dtype=np.uint8)]
    return {"values": values}


def oracle(values):
    return np.bincount(values, minlength=BINS).astype(np.int64)


def tolerance(inputs, expected):
    return exact(inputs, expected)


SPEC = Spec(
    id="histogram",
    stage=5,
    title="Histogram of bytes",
    lesson="Atomics and privatisation: count in a per-block shared-memory histogram, then "
    "merge it into the global one",
    params=(
        Array("values", "uint8", ("n",)),
        Array("bins", "int32", (BINS,), role="out", init="zeros"),
    ),
    make_inputs=make_inputs,
    cases=(
        Case("one value", {"n": 1}),
        Case("one short of a block", {"n": 255}),
        Case("one past a block", {"n": 257}),
        Case("prime length, several blocks", {"n": 521}),
        Case("many blocks", {"n": 1500}),
    ),
    tolerance=tolerance,
    hints={
        "wrong_result": "Counts are exact, so every lost update shows. Is the shared "
        "histogram set to 0 before anyone counts (and a cuda.syncthreads() after that)? Do "
        "all 256 bins get zeroed and merged, whatever the block size? Is there a "
        "cuda.syncthreads() before the merge? Does the merge use cuda.atomic.add(bins, v, "
        "count)? `bins[v] = count` keeps only the last block's counts.",
        "out_of_bounds": "The last block has threads past the end of `values`: guard the "
        "read with `if i < values.size:`, but keep those threads for zeroing and merging "
        "their bin (and for every cuda.syncthreads()).",
        "race": "Two runs gave different counts. Either a thread read or reset a shared bin "
        "while others were still adding to it (put a cuda.syncthreads() between zeroing and "
        "counting, and another between counting and merging), or the shared histogram was "
        "never set to 0: shared memory starts with whatever the last user left there.",
    },
    benchmark=Benchmark(dims={"n": 1 << 28}, bound="memory",
                        bytes_moved=lambda d: 1.0 * d["n"] + 4.0 * BINS),
)


@cuda.jit
def _histogram_global_atomics(values, bins):
    i = cuda.grid(1)
    if i < values.size:
        cuda.atomic.add(bins, values[i], 1)


def baseline(values, bins):
    """One global atomic per element: hot bins serialise the whole GPU on one address."""
    threads = 256
    _histogram_global_atomics[(values.size + threads - 1) // threads, threads](values, bins)


TARGET_THREADS = 256  # one thread per bin for zeroing and merging


@cuda.jit
def _histogram_privatised(values, bins):
    local = cuda.shared.array(BINS, int32)
    tid = cuda.threadIdx.x
    local[tid] = 0
    cuda.syncthreads()
    for i in range(cuda.grid(1), values.size, cuda.gridsize(1)):
        cuda.atomic.add(local, values[i], 1)
    cuda.syncthreads()
    count = local[tid]
    if count > 0:
        cuda.atomic.add(bins, tid, count)


def target(values, bins):
    """Per-block shared-memory histogram over a grid-stride loop, merged with one global
    atomic per non-zero bin; the grid is capped at 8 blocks of 256 per SM (132 SMs)."""
    blocks = max(1, min((values.size + TARGET_THREADS - 1) // TARGET_THREADS, 132 * 8))
    _histogram_privatised[blocks, TARGET_THREADS](values, bins)
