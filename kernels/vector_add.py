"""vector_add — c = a + b, float32: the first real launch configuration.

Tolerance: one float32 rounding per element, so |c - exact| <= 2·u·(|a| + |b|)
(grader/tolerance.py).
"""
import numpy as np
from numba import cuda

from grader import bulk_random
from grader.spec import Array, Benchmark, Case, Spec
from grader.tolerance import few_ops


def make_inputs(dims, rng):
    n = dims["n"]
    return {
        "a": bulk_random.normal(rng, n),
        "b": bulk_random.normal(rng, n),
    }


def oracle(a, b):
    return a.astype(np.float64) + b.astype(np.float64)


def tolerance(inputs, expected):
    return few_ops(1, np.abs(inputs["a"]) + np.abs(inputs["b"]))


SPEC = Spec(
    id="vector_add",
    stage=1,
    title="Add two vectors",
    lesson="1-D launch configuration: blocks × threads ≥ n, and a bounds guard",
    params=(
        Array("a", "float32", ("n",)),
        Array("b", "float32", ("n",)),
        Array("c", "float32", ("n",), role="out"),
    ),
    make_inputs=make_inputs,
    cases=(
        Case("one element", {"n": 1}),
        Case("prime length", {"n": 251}),
        Case("one short of a block", {"n": 255}),
        Case("one past a block", {"n": 257}),
        Case("several blocks", {"n": 1000}),
        Case("many blocks", {"n": 3001}),
    ),
    tolerance=tolerance,
    hints={
        "unwritten_output": "Use enough blocks: blocks = (n + threads - 1) // threads, so "
        "blocks × threads ≥ n.",
    },
    benchmark=Benchmark(dims={"n": 1 << 27}, bound="memory", bytes_moved=lambda d: 12.0 * d["n"]),
)


@cuda.jit
def _add_naive(a, b, c):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < c.size:
        c[i] = a[i] + b[i]


def baseline(a, b, c):
    """One thread per element, small blocks."""
    threads = 64
    _add_naive[(c.size + threads - 1) // threads, threads](a, b, c)


@cuda.jit
def _add_grid_stride(a, b, c):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, c.size, stride):
        c[i] = a[i] + b[i]


def target(a, b, c):
    """Grid-stride loop over a grid sized to the device: fewer, fuller blocks."""
    threads = 256
    blocks = min((c.size + threads - 1) // threads, 132 * 32)
    _add_grid_stride[blocks, threads](a, b, c)
