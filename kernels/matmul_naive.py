"""matmul_naive — C = A @ B, float32: one thread per output element on a 2-D grid.

Tolerance: each c[i, j] is a float32 sum of k products a[i, kk]·b[kk, j], added in any
order, so |c - exact| <= summed(k, (|A| @ |B|)[i, j]) per element: λ·√k·u·Σ|a·b| plus a
few roundings (grader/authoring/tolerance.py). Any summation order passes: a sequential loop, a
split-k, a tree, float32 or float64 accumulators.
"""

import numpy as np
from numba import cuda, float32

from grader.authoring import bulk_random
from grader.authoring.spec import Array, Benchmark, Case, Spec
from grader.authoring.tolerance import summed


def make_inputs(dims, rng):
    m, k, n = dims["m"], dims["k"], dims["n"]
    return {
        "a": bulk_random.normal(rng, (m, k)),
        "b": bulk_random.normal(rng, (k, n)),
    }


def oracle(a, b):
    return a.astype(np.float64) @ b.astype(np.float64)


def tolerance(inputs, expected):
    a = np.abs(inputs["a"].astype(np.float64))
    b = np.abs(inputs["b"].astype(np.float64))
    return summed(a.shape[1], a @ b)


SPEC = Spec(
    id="matmul_naive",
    stage=8,
    title="Matrix multiply, one thread per output",
    lesson="2-D indexing (x walks columns, y walks rows) and arithmetic intensity: 2 flops for every 2 numbers loaded",
    params=(
        Array("a", "float32", ("m", "k")),
        Array("b", "float32", ("k", "n")),
        Array("c", "float32", ("m", "n"), role="out"),
    ),
    make_inputs=make_inputs,
    cases=(
        Case("1×1 times 1×1", {"m": 1, "k": 1, "n": 1}),
        Case("prime sizes", {"m": 17, "k": 13, "n": 19}),
        Case("block size ± 1", {"m": 15, "k": 16, "n": 17}),
        Case("two blocks and one more row", {"m": 33, "k": 31, "n": 17}),
        Case("wide and flat", {"m": 5, "k": 40, "n": 37}),
        Case("tall and thin", {"m": 45, "k": 7, "n": 3}),
    ),
    tolerance=tolerance,
    hints={
        "out_of_bounds": "The grid is rounded up to whole blocks, so the last blocks have "
        "threads outside C. Check `if row < m and col < n:` before reading A or B and "
        "before writing C (m = c.shape[0] rows, n = c.shape[1] columns).",
        "unwritten_output": "Cover all of C: x walks the n columns and y walks the m rows, so "
        "blocks = (ceil(n / threads_x), ceil(m / threads_y)). Swapping them, or rounding "
        "down, leaves a strip of C without threads.",
        "wrong_result": "c[row, col] = Σ over kk of a[row, kk] · b[kk, col]: the row indexes "
        "A's first axis, the column B's second, and kk runs over all k. Add every product "
        "into a local accumulator that starts at 0, then write c[row, col] once.",
    },
    benchmark=Benchmark(
        dims={"m": 4096, "k": 4096, "n": 4096},
        bound="compute",
        bytes_moved=lambda d: 4.0 * (d["m"] * d["k"] + d["k"] * d["n"] + d["m"] * d["n"]),
        flops=lambda d: 2.0 * d["m"] * d["n"] * d["k"],
    ),
)


@cuda.jit
def _matmul_rows_on_x(a, b, c):
    row, col = cuda.grid(2)  # threadIdx.x walks rows: a warp touches 32 different rows
    if row < c.shape[0] and col < c.shape[1]:
        acc = 0.0
        for kk in range(a.shape[1]):
            acc += a[row, kk] * b[kk, col]
        c[row, col] = acc


def baseline(a, b, c):
    """Naive, as a learner might first write it: x walks rows, so the warp's loads of b
    and stores to c are 32 scattered rows (uncoalesced); `acc = 0.0` accumulates in float64.
    About 1.0 TFLOP/s on an H200 at 4096³."""
    threads = (16, 16)
    blocks = ((c.shape[0] + 15) // 16, (c.shape[1] + 15) // 16)
    _matmul_rows_on_x[blocks, threads](a, b, c)


@cuda.jit
def _matmul_cols_on_x(a, b, c):
    col, row = cuda.grid(2)  # threadIdx.x walks columns: b[kk, col] and c[row, col] coalesce
    if row < c.shape[0] and col < c.shape[1]:
        acc = float32(0.0)
        for kk in range(a.shape[1]):
            acc += a[row, kk] * b[kk, col]
        c[row, col] = acc


def target(a, b, c):
    """Naive but coalesced: a warp is 32 neighbouring columns of one row, so a[row, kk] is one
    broadcast load, b[kk, col] one 128-byte load, and the float32 accumulator stays in a
    register. Still 2 flops per 8 bytes loaded: the next exercise (tiling) fixes that.
    About 1.4 TFLOP/s on an H200 at 4096³ (cuBLAS: 51)."""
    threads = (32, 8)
    blocks = ((c.shape[1] + 31) // 32, (c.shape[0] + 7) // 8)
    _matmul_cols_on_x[blocks, threads](a, b, c)
