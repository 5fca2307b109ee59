"""saxpy — out = alpha·x + y, float32, with a grid-stride loop over a grid sized for the GPU.

Tolerance: alpha·x is rounded once, the sum once (or both at once with a fused multiply-add),
so |out - exact| <= 2 roundings: 2·2·u·(|alpha·x| + |y|) (grader/authoring/tolerance.py's few_ops(2)).
"""

import numpy as np
from numba import cuda

from grader.authoring import bulk_random
from grader.authoring.spec import Array, Benchmark, Case, Scalar, Spec
from grader.authoring.tolerance import few_ops


def make_inputs(dims, rng):
    n = dims["n"]
    # |alpha| in [1.5, 3), either sign: never 0 or 1, so a forgotten alpha shows.
    alpha = rng.uniform(1.5, 3.0) * rng.choice([-1.0, 1.0])
    return {
        "x": bulk_random.normal(rng, n),
        "y": bulk_random.normal(rng, n),
        "alpha": np.float32(alpha),
    }


def oracle(x, y, alpha):
    return np.float64(alpha) * x.astype(np.float64) + y.astype(np.float64)


def tolerance(inputs, expected):
    alpha = np.float64(inputs["alpha"])
    terms = np.abs(alpha * inputs["x"].astype(np.float64)) + np.abs(inputs["y"].astype(np.float64))
    return few_ops(2, terms)


SPEC = Spec(
    id="saxpy",
    stage=2,
    title="SAXPY with a grid-stride loop",
    lesson="Grid-stride loops: a grid sized for the GPU covers any n; scalar arguments",
    params=(
        Array("x", "float32", ("n",)),
        Array("y", "float32", ("n",)),
        Array("out", "float32", ("n",), role="out"),
        Scalar("alpha", "float32"),
    ),
    make_inputs=make_inputs,
    cases=(
        Case("one element", {"n": 1}),
        Case("prime length, under a block", {"n": 127}),
        Case("one short of a 256-thread block", {"n": 255}),
        Case("one past a 256-thread block", {"n": 257}),
        Case("one past a block's share (128 threads × 4)", {"n": 513}),
        Case("several blocks, prime length", {"n": 4099}),
        Case("several blocks, even length", {"n": 4098}),
    ),
    tolerance=tolerance,
    hints={
        "unwritten_output": "The grid has fewer threads than there are elements, on purpose: "
        "each thread must loop, i = start, start + stride, … while i < n, with "
        "start = cuda.grid(1) and stride = cuda.gridsize(1) (the number of threads in the "
        "whole grid). Starting at threadIdx.x alone leaves the other blocks' elements to "
        "nobody.",
        # the judge's "the grid stops short of the end" would say "launch more blocks": not here
        "unwritten_tail": "The grid stops short of the end on purpose: keep it, and let each "
        "thread loop, i = start, start + stride, … while i < n, with start = cuda.grid(1) and "
        "stride = cuda.gridsize(1) (the number of threads in the whole grid).",
        "too_slow": "Keep the grid `launch` sets (a quarter as many threads as elements, at "
        "most 4096 blocks) and let neighbouring threads take neighbouring elements: start at "
        "cuda.grid(1) and step by cuda.gridsize(1). A thread that walks its own contiguous "
        "chunk makes a warp's accesses far apart (uncoalesced).",
        "wrong_result": "Check the formula out[i] = alpha * x[i] + y[i] (alpha multiplies x, "
        "not y), and that every thread reads and writes the same i.",
        "out_of_bounds": "The loop must stop before n: `for i in range(start, n, stride)` "
        "never reaches n itself. Reading x[i] or y[i] past the end is out of bounds too.",
    },
    pointwise=True,  # out[i] from the inputs at i: a timed output's oracle runs at the judged elements
    benchmark=Benchmark(dims={"n": 1 << 27}, bound="memory", bytes_moved=lambda d: 12.0 * d["n"]),
)


@cuda.jit
def _saxpy_naive(x, y, out, alpha):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < out.size:
        out[i] = alpha * x[i] + y[i]


def baseline(x, y, out, alpha):
    """One thread per element, small blocks."""
    threads = 64
    _saxpy_naive[(out.size + threads - 1) // threads, threads](x, y, out, alpha)


@cuda.jit
def _saxpy_4_in_flight(x, y, out, alpha):
    """Grid-stride, 4 elements per step with all 8 loads issued before any store."""
    stride = cuda.gridsize(1)
    n = out.size
    i = cuda.grid(1)
    while i + 3 * stride < n:
        x0 = x[i]
        x1 = x[i + stride]
        x2 = x[i + 2 * stride]
        x3 = x[i + 3 * stride]
        y0 = y[i]
        y1 = y[i + stride]
        y2 = y[i + 2 * stride]
        y3 = y[i + 3 * stride]
        out[i] = alpha * x0 + y0
        out[i + stride] = alpha * x1 + y1
        out[i + 2 * stride] = alpha * x2 + y2
        out[i + 3 * stride] = alpha * x3 + y3
        i += 4 * stride
    while i < n:
        out[i] = alpha * x[i] + y[i]
        i += stride


def target(x, y, out, alpha):
    """Pairs of float32 read and written as one complex64 (8-byte accesses; a real scale and
    a complex addition act on each half alone), 4 pairs per thread in flight, a grid of
    132 SMs × 16 blocks of 256. Odd lengths run the same kernel on the floats.

    Measured on an H200 at n = 2**27 in the grader's harness (2026-11-29): 0.391 ms
    (4.12 TB/s), 0.406 with 8 blocks per SM, against 0.420 for 4 floats in flight and 0.439
    for the plain grid-stride loop with one float per step (bench/run.py, bench/variants.py)."""
    n = out.size
    if n % 2 == 0:
        x, y, out = (v.view(np.complex64) for v in (x, y, out))
    blocks = max(1, min((out.size + 1023) // 1024, 132 * 16))
    _saxpy_4_in_flight[blocks, 256](x, y, out, alpha)
