"""thread_ids — out[i] = i: every CUDA thread writes its own global index.

The inputs are only the sizes, so `make_inputs` returns `n` alone (`launch` takes no input
array); the oracle builds 0, 1, …, n-1 from it.

Tolerance: exact. The answer is an integer that every correct thread computes without
rounding (grader/authoring/tolerance.py).
"""

import numpy as np
from numba import cuda

from grader.authoring.spec import Array, Benchmark, Case, Spec
from grader.authoring.tolerance import exact


def make_inputs(dims, rng):
    # No input arrays: the oracle only needs the length. Not a parameter of `launch`.
    return {"n": np.int64(dims["n"])}


def oracle(n):
    return np.arange(int(n), dtype=np.int64)


SPEC = Spec(
    id="thread_ids",
    stage=0,
    title="Every thread writes its own index",
    lesson="Grid, block, thread: the global index blockIdx.x × blockDim.x + threadIdx.x, and a bounds guard",
    params=(Array("out", "int32", ("n",), role="out"),),
    make_inputs=make_inputs,
    cases=(
        Case("one element", {"n": 1}),
        Case("less than a warp", {"n": 7}),
        Case("one short of a block", {"n": 255}),
        Case("one past a block", {"n": 257}),
        Case("several blocks", {"n": 1000}),
        Case("many blocks, prime length", {"n": 2053}),
    ),
    tolerance=exact,
    hints={
        "wrong_result": "Each thread must write the index of the element it owns: "
        "i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x (cuda.grid(1) computes the "
        "same). threadIdx.x alone restarts at 0 in every block; blockIdx.x * threadIdx.x "
        "skips and repeats elements.",
        "unwritten_output": "Some elements were never written: launch enough blocks that "
        "blocks × threads_per_block ≥ n, i.e. blocks = (n + threads_per_block - 1) // "
        "threads_per_block. n // threads_per_block rounds down and misses the tail.",
        "too_slow": "Use bigger blocks: 128 or 256 threads per block. With tiny blocks the "
        "GPU spends its time starting blocks instead of writing memory.",
        "out_of_bounds": "The last block usually has more threads than elements left. Guard "
        "the write with `if i < out.size:` (not `<=`: the last element is out[n - 1]).",
    },
    benchmark=Benchmark(dims={"n": 1 << 27}, bound="memory", bytes_moved=lambda d: 4.0 * d["n"]),
)


@cuda.jit
def _ids_naive(out):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < out.size:
        out[i] = i


def baseline(out):
    """One thread per element, small blocks."""
    threads = 64
    _ids_naive[(out.size + threads - 1) // threads, threads](out)


@cuda.jit
def _ids_grid_stride(out):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, out.size, stride):
        out[i] = i


def target(out):
    """Grid-stride loop over a grid sized to the device: 256-thread blocks, at most
    132 SMs × 32 blocks, each thread writing several elements."""
    threads = 256
    blocks = min((out.size + threads - 1) // threads, 132 * 32)
    _ids_grid_stride[blocks, threads](out)
