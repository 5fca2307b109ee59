"""matmul_tiled — C = A @ B, float32, through shared-memory tiles: data reuse.

Tolerance: each c[i, j] is a float32 sum of k products a[i, kk]·b[kk, j], added in any
order, so |c - exact| <= summed(k, (|A| @ |B|)[i, j]) per element: λ·√k·u·Σ|a·b| plus a
few roundings (grader/authoring/tolerance.py); inputs, oracle and tolerance are matmul_naive's. Any tile shape, any summation order and either
accumulator precision passes; the zeros that pad partial tiles add nothing.
"""

from numba import cuda, float32

from grader.authoring.references import reference
from grader.authoring.spec import Array, Benchmark, Case, Spec

# The same problem as matmul_naive: the same inputs, oracle and tolerance.
_naive = reference("matmul_naive")
make_inputs, oracle, tolerance = _naive.make_inputs, _naive.oracle, _naive.tolerance


SPEC = Spec(
    id="matmul_tiled",
    stage=9,
    title="Matrix multiply with shared-memory tiles",
    lesson="tiling and data reuse: each number loaded from global memory into a shared "
    "tile is used 16 times; syncthreads around every tile",
    params=(
        Array("a", "float32", ("m", "k")),
        Array("b", "float32", ("k", "n")),
        Array("c", "float32", ("m", "n"), role="out"),
    ),
    make_inputs=make_inputs,
    # Small on purpose: the simulator runs every CUDA thread as a Python thread, and each
    # syncthreads is a rendezvous of all 256 of them.
    cases=(
        Case("1×1 times 1×1", {"m": 1, "k": 1, "n": 1}),
        Case("prime sizes", {"m": 17, "k": 13, "n": 19}),
        Case("tile size ± 1", {"m": 15, "k": 16, "n": 17}),
        Case("two tiles and one more row", {"m": 33, "k": 31, "n": 17}),
        Case("three tiles along k, the last partial", {"m": 9, "k": 40, "n": 23}),
    ),
    tolerance=tolerance,
    hints={
        "out_of_bounds": "When m, n or k is not a multiple of the tile, the tiles at the edges "
        "stick out of A and B. Guard every load (`if row < m and t * TILE + tx < k:`) and "
        "store 0.0 in the shared tile otherwise: a zero adds nothing to the dot product. "
        "Guard the store to C as well.",
        "wrong_result": "Check the order of one tile step: load both tiles, "
        "cuda.syncthreads(), multiply-accumulate sa[ty, i] * sb[i, tx] over the tile, "
        "cuda.syncthreads() again before the next load overwrites the tiles. Loop over "
        "ceil(k / TILE) tiles (the last one partial, padded with zeros), and load "
        "sa[ty, tx] = a[row, t*TILE + tx] and sb[ty, tx] = b[t*TILE + ty, col].",
        "unwritten_output": "Cover all of C: blocks = (ceil(n / TILE), ceil(m / TILE)), x for "
        "columns and y for rows. Every thread must also reach every cuda.syncthreads(), so "
        "do not return early: guard only the loads and the final store.",
        "race": "Threads read a tile that others were still writing, or overwrote a tile still "
        "in use: cuda.syncthreads() after loading the tiles and again after using them.",
    },
    benchmark=Benchmark(
        dims={"m": 4096, "k": 4096, "n": 4096},
        bound="compute",
        bytes_moved=lambda d: 4.0 * (d["m"] * d["k"] + d["k"] * d["n"] + d["m"] * d["n"]),
        flops=lambda d: 2.0 * d["m"] * d["n"] * d["k"],
        # The baseline is the best untiled kernel (matmul_naive's target, coalesced): the
        # 16×16-tile solution ran 5.6× it on an H200 (17.8 vs 100.6 ms at 4096³); asking for
        # 2.5× leaves the solution a wide margin and fails any kernel that does not reuse
        # data from shared memory.
        required_speedup=2.5,
    ),
)


baseline = _naive.target
"""The coalesced naive kernel of the previous exercise: what tiling must beat (1.4 TFLOP/s on
an H200 at 4096³; the 16×16-tile solution 7.8, cuBLAS 51)."""


# Register tiling. A block of 256 threads computes a BM×BN = 128×128 tile of C; each thread
# computes TM×TN = 8×8 of it, in 64 registers. Per step of BK = 8 along k, the block stages a
# 128×8 slice of A (stored transposed: sa[kk, r]) and an 8×128 slice of B in shared memory;
# each thread then loads 8 values of A and 8 of B into registers and does 8·8 = 64 FMAs with
# them (the 16×16 kernel does 1 FMA per 2 shared loads). Thread (tr, tc) owns the 8
# consecutive rows tr·8 .. tr·8+7 (the transposed A tile makes them one contiguous run the
# compiler can fetch with wide loads, broadcast across the warp) and the 8 strided columns tc + 16·j
# (neighbouring threads read neighbouring words of the B tile, free of bank conflicts, and
# write neighbouring columns of C). The next slice's global loads are issued into registers
# before this slice's arithmetic, so their latency hides behind it.
# Measured on an H200 at 4096³: 25 TFLOP/s (cuBLAS 51; the 16×16 kernel 7.8; the same design
# with 64×128 tiles and 4×8 per thread 20.4, with 64×64 and 4×4 16.9).
BM, BN, BK = 128, 128, 8
TM, TN = 8, 8
RT = BM // TM  # 16 thread rows
CT = BN // TN  # 16 thread columns
NT = RT * CT  # 256 threads
A_ROWS_PER_PASS = NT // BK  # 32 rows of the A slice loaded per pass
B_ROWS_PER_PASS = NT // BN  # 2 rows of the B slice loaded per pass
A_LOADS = BM // A_ROWS_PER_PASS  # 4 A elements per thread per slice
B_LOADS = BK // B_ROWS_PER_PASS  # 4 B elements per thread per slice
PAD = 4  # pads the transposed A tile's rows so the transposing stores don't conflict on banks
SA_COLS = BM + PAD
# (Numba wants array shapes as plain names or literals, not arithmetic.)


@cuda.jit
def _sgemm_128x128(a, b, c):
    sa = cuda.shared.array((BK, SA_COLS), float32)  # sa[kk, r] = A[row0 + r, k0 + kk]
    sb = cuda.shared.array((BK, BN), float32)  # sb[kk, j] = B[k0 + kk, col0 + j]
    acc = cuda.local.array((TM, TN), float32)
    ra = cuda.local.array(TM, float32)
    rb = cuda.local.array(TN, float32)
    pa = cuda.local.array(A_LOADS, float32)  # the next A slice, in flight
    pb = cuda.local.array(B_LOADS, float32)  # the next B slice, in flight

    m, k = a.shape
    n = b.shape[1]
    tid = cuda.threadIdx.x
    tr = tid // CT
    tc = tid % CT
    row0 = cuda.blockIdx.y * BM
    col0 = cuda.blockIdx.x * BN
    a_r = tid // BK  # the A row this thread loads (plus 32·p)
    a_k = tid % BK  # and the k within the slice
    b_k = tid // BN  # the B row of the slice this thread loads (plus 2·p)
    b_c = tid % BN  # and the column

    for i in range(TM):
        for j in range(TN):
            acc[i, j] = float32(0.0)

    # The first slice, into registers (guarded: zeros outside A and B).
    for p in range(A_LOADS):
        gr = row0 + a_r + p * A_ROWS_PER_PASS
        pa[p] = a[gr, a_k] if gr < m and a_k < k else float32(0.0)
    for p in range(B_LOADS):
        gk = b_k + p * B_ROWS_PER_PASS
        gc = col0 + b_c
        pb[p] = b[gk, gc] if gk < k and gc < n else float32(0.0)

    for k0 in range(0, k, BK):
        for p in range(A_LOADS):
            sa[a_k, a_r + p * A_ROWS_PER_PASS] = pa[p]
        for p in range(B_LOADS):
            sb[b_k + p * B_ROWS_PER_PASS, b_c] = pb[p]
        cuda.syncthreads()

        k1 = k0 + BK  # issue the next slice's loads now; they land while we compute
        if k1 < k:
            for p in range(A_LOADS):
                gr = row0 + a_r + p * A_ROWS_PER_PASS
                gk = k1 + a_k
                pa[p] = a[gr, gk] if gr < m and gk < k else float32(0.0)
            for p in range(B_LOADS):
                gk = k1 + b_k + p * B_ROWS_PER_PASS
                gc = col0 + b_c
                pb[p] = b[gk, gc] if gk < k and gc < n else float32(0.0)

        for kk in range(BK):
            for i in range(TM):
                ra[i] = sa[kk, tr * TM + i]
            for j in range(TN):
                rb[j] = sb[kk, tc + j * CT]
            for i in range(TM):
                for j in range(TN):
                    acc[i, j] += ra[i] * rb[j]
        cuda.syncthreads()

    for i in range(TM):
        gr = row0 + tr * TM + i
        if gr < m:
            for j in range(TN):
                gc = col0 + tc + j * CT
                if gc < n:
                    c[gr, gc] = acc[i, j]


def target(a, b, c):
    """Register-tiled SGEMM: 128×128 block tiles, BK = 8, 8×8 outputs per thread, register
    prefetch of the next slice. No warp shuffles, so it also runs on the simulator."""
    m, n = c.shape
    blocks = ((n + BN - 1) // BN, (m + BM - 1) // BM)
    _sgemm_128x128[blocks, NT](a, b, c)
