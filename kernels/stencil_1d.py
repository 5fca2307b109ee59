"""stencil_1d — out[i] = Σ_{k=0..6} weights[k]·x[i+k-3], with x = 0 outside [0, n), float32:
shared-memory tiles with halos.

Tolerance: each output is a dot product of 7 float32 terms; in any order, with or without
fused multiply-adds, it is within γ_7·Σ_k |weights[k]·x[i+k-3]| ≈ 7·u·Σ|terms| of the exact
value; we allow twice that: |out[i] - exact| <= few_ops(7, Σ_k |weights[k]·x[i+k-3]|)
(grader/authoring/tolerance.py), with out-of-range x counted as 0.

Speed: on an H200 the L1 cache serves the naive kernel's 7-fold reuse, and a shared-memory
tile with one output per thread does not beat it (0.82x the baseline, measured: one load in
flight per thread, and the block waits at the barrier). The lesson's solution therefore
makes 4 outputs per thread (1.07-1.09x the baseline, measured) and the target also keeps
the weights in registers.
"""

import numpy as np
from numba import cuda, float32

from grader.authoring import bulk_random
from grader.authoring.spec import Array, Benchmark, Case, Spec
from grader.authoring.tolerance import few_ops

RADIUS = 3
WIDTH = 2 * RADIUS + 1


def make_inputs(dims, rng):
    n = dims["n"]
    return {
        "x": bulk_random.normal(rng, n),
        # no symmetry: a stencil applied backwards (weights[6 - k]) gives other numbers
        "weights": rng.uniform(-1.0, 1.0, WIDTH).astype(np.float32),
    }


CHUNK = 1 << 20


def _weighted_sums(x, weights, absolute: bool = False):
    """Σ_k w[k]·x[i+k-3] in float64 (x = 0 outside), or Σ_k |w[k]·x[i+k-3]| with `absolute`.
    Chunk by chunk on a thread pool: at the benchmark size (2**27) the whole-array version
    took 11 s on the H200's host, and the grading process waits for it."""
    n = x.size
    w = np.abs(weights.astype(np.float64)) if absolute else weights.astype(np.float64)
    out = np.empty(n)

    def chunk(start, stop):
        lo, hi = max(start - RADIUS, 0), min(stop + RADIUS, n)
        padded = np.zeros(stop - start + 2 * RADIUS)
        padded[lo - (start - RADIUS) : hi - (start - RADIUS)] = x[lo:hi]
        if absolute:
            np.abs(padded, out=padded)
        acc = w[0] * padded[: stop - start]
        for k in range(1, WIDTH):
            acc += w[k] * padded[k : k + stop - start]
        out[start:stop] = acc

    bulk_random.over_chunks(n, chunk, CHUNK)
    return out


def oracle(x, weights):
    return _weighted_sums(x, weights)


def tolerance(inputs, expected):
    return few_ops(WIDTH, _weighted_sums(inputs["x"], inputs["weights"], absolute=True))


SPEC = Spec(
    id="stencil_1d",
    stage=6,
    title="1-D stencil",
    lesson="Shared-memory tiles with halos: load each input once per block, then read neighbours from shared memory",
    params=(
        Array("x", "float32", ("n",)),
        Array("weights", "float32", (WIDTH,)),
        Array("out", "float32", ("n",), role="out"),
    ),
    make_inputs=make_inputs,
    cases=(
        Case("one element (both halos outside x)", {"n": 1}),
        Case("one short of a block", {"n": 255}),
        Case("one past a block", {"n": 257}),
        Case("prime length, several blocks", {"n": 521}),
        Case("many blocks", {"n": 1200}),
    ),
    tolerance=tolerance,
    hints={
        "wrong_result": "Look at where the first wrong element is. At the edges of a block "
        "(i near a multiple of the block's slice, 1024)? Then the halo is missing: load the 3 "
        "elements before and after the block's slice too. At i < 3 or i > n - 4? Then x outside "
        "[0, n) must count as 0 — and a negative index does not fail in Numba, it silently "
        "wraps around to the end of x. Everywhere? Check that out[i] uses weights[k] with "
        "x[i + k - 3], in that direction.",
        "out_of_bounds": "Guard every read of x and the write of out: the halo of the last "
        "block reaches past the end of x, and the first block's reaches before its start.",
        "race": "A thread read the shared tile before its neighbours had filled it: put a "
        "cuda.syncthreads() between loading the tile (halo included) and computing.",
    },
    benchmark=Benchmark(
        dims={"n": 1 << 27},
        bound="memory",
        bytes_moved=lambda d: 8.0 * d["n"],
        # On an H200 the L1 cache already serves the 7-fold reuse of the naive kernel: the
        # solution (a tile, 4 outputs per thread) ran at 1.074-1.080x the baseline in five
        # gradings (2026-11-29), 1.091-1.093x once the launch's dispatch was no longer timed,
        # so the default 1.2x would fail it; 1.04x passes it and fails
        # the baseline and a one-output tile (0.80x). See BENCHMARKS-LOG.md.
        required_speedup=1.04,
    ),
)


@cuda.jit
def _stencil_global(x, weights, out):
    i = cuda.grid(1)
    n = x.size
    if i < n:
        acc = float32(0.0)
        for k in range(WIDTH):
            j = i + k - RADIUS
            if j >= 0 and j < n:
                acc += weights[k] * x[j]
        out[i] = acc


def baseline(x, weights, out):
    """One thread per output, all 7 neighbours and the weights read from global memory."""
    threads = 256
    _stencil_global[(x.size + threads - 1) // threads, threads](x, weights, out)


@cuda.jit
def _stencil_4_per_thread(x, weights, out):
    n = x.size
    w0 = weights[0]  # the 7 weights live in registers
    w1 = weights[1]
    w2 = weights[2]
    w3 = weights[3]
    w4 = weights[4]
    w5 = weights[5]
    w6 = weights[6]
    for q in range(cuda.grid(1), (n + 3) // 4, cuda.gridsize(1)):
        i = 4 * q
        if i >= RADIUS and i + 4 + RADIUS <= n:  # all 10 inputs inside x: no guards
            a0 = x[i - 3]
            a1 = x[i - 2]
            a2 = x[i - 1]
            a3 = x[i]
            a4 = x[i + 1]
            a5 = x[i + 2]
            a6 = x[i + 3]
            a7 = x[i + 4]
            a8 = x[i + 5]
            a9 = x[i + 6]
            out[i] = w0 * a0 + w1 * a1 + w2 * a2 + w3 * a3 + w4 * a4 + w5 * a5 + w6 * a6
            out[i + 1] = w0 * a1 + w1 * a2 + w2 * a3 + w3 * a4 + w4 * a5 + w5 * a6 + w6 * a7
            out[i + 2] = w0 * a2 + w1 * a3 + w2 * a4 + w3 * a5 + w4 * a6 + w5 * a7 + w6 * a8
            out[i + 3] = w0 * a3 + w1 * a4 + w2 * a5 + w3 * a6 + w4 * a7 + w5 * a8 + w6 * a9
        else:  # the ends of x
            for o in range(i, min(i + 4, n)):
                acc = float32(0.0)
                for k in range(WIDTH):
                    j = o + k - RADIUS
                    if j >= 0 and j < n:
                        acc += weights[k] * x[j]
                out[o] = acc


def target(x, weights, out):
    """No shared memory: each thread makes 4 neighbouring outputs from 10 loads held in
    registers (the L1 cache serves the 6 inputs neighbouring threads also read), one group
    of 4 per thread, blocks of 256. (The kernel's grid-stride loop keeps it right for any
    grid; one step per thread measured fastest.)

    Measured on an H200 at n = 2**27 in the grader's harness (2026-11-29): 0.310 ms
    (3.47 TB/s), against 0.320 / 0.326 / 0.332 / 0.340 ms for grids capped at 128 / 64 / 32
    / 16 blocks per SM, 0.339 reading float pairs as complex64, 0.517 for 8 outputs per
    thread, 0.362 for the lesson's tile (4 outputs per thread) in a grid-stride loop that
    loads the next tile early, 0.417 for that tile one block per tile and 0.488 for the
    naive baseline (bench/variants.py). The lesson teaches the tile because it makes the
    reuse explicit; on this GPU the L1 cache does the same job for a small 1-D stencil."""
    _stencil_4_per_thread[max(1, (x.size + 1023) // 1024), 256](x, weights, out)
