"""Candidate matmul_tiled targets: register-tiled SGEMMs, each aimed at something the Numba code
of the current target (kernels/matmul_tiled.py: 25.0 TFLOP/s at 4096³ on an H200, 47-49% of
cuBLAS) spends its issue slots or its stalls on.

    python3 bench/variants.py --only matmul_tiled --candidates bench/candidates_matmul.py
    python3 bench/candidates_matmul.py   # each candidate against NumPy at awkward sizes

What the current target compiles to (Numba's PTX for sm_90, `ptxas -arch=sm_90 -v` 12.9, the
SASS read back with nvdisasm): 128 registers, no spills, 8.3 KB of shared memory, so two blocks
of 256 threads a multiprocessor. NVVM leaves the 8-step loop over a k-slice rolled (its body,
64 FMAs, is over the unrolling threshold), so every step recomputes its shared addresses in
64-bit arithmetic: 109 instructions for 64 FFMAs. B's 8 values, 16 columns apart, are 8
scalar LDS (ptxas merges A's 8 into 2 LDS.128), and each step's loads are used in that same
step, with nothing from the warp itself to cover their latency.

Every candidate keeps the target's outline (a block tile 128 rows high, A's slice stored
transposed and padded, the next k-slice's global loads issued into registers before the
current slice's arithmetic, edge tiles read as zeros) and adds:

- the k-slice unrolled: a force-inlined device function per step, called with constant step
  numbers, so each shared address is a base register plus an immediate, and ptxas fetches
  step s+1's fragments while step s's FFMAs issue;
- fragments in runs of 4: a thread's 8 columns are two runs of 4 (at tc·4 and tc·4 + BN/2),
  not 8 columns 16 apart, and the shared arrays are declared 16-byte aligned: 2 + 2
  ld.shared.v4.f32 (LDS.128) a step instead of 2 + 8 loads. Thread and block indices are masked
  (tid & 1023, ...) and split with & and >>: Numba reads them as signed int32 and NVVM does not
  know them non-negative, so every index otherwise carries a wraparound test (add the extent
  if negative) that costs instructions and stops LLVM's load vectoriser;
- a fast path for interior tiles: their global loads carry no bounds tests.

They then differ in the bottleneck they go after:

  unroll_128x128_bk8        only the above: 128×128 tile, 256 threads of 8×8, BK = 8, one
                            shared stage (store, sync, compute, sync), plain LDG.32 loads.
  dbuf_128x128_bk8          two shared stages: the prefetched slice is stored into the other
                            stage after the arithmetic, one barrier a k-slice instead of two.
  vec4_unroll_128x128_bk16  16-byte global loads (inline PTX ld.global.nc.v4.f32, LDG.128: one
                            A and one B load a thread per 8 k instead of 4 + 4 LDG.32; B's
                            shared store one STS.128) and BK = 16: half the k-slices, barriers
                            and loop overhead, twice the bytes in flight. Capped at 128
                            registers to keep two blocks a multiprocessor. The wide loads are
                            taken where A's and B's rows start on 16 bytes (k and n multiples of
                            4, as at 4096³, and arrays on 16 bytes: a device allocation starts
                            on 256); guarded scalar loads elsewhere.
  vec4_warptile_128x128_bk8 the 16-byte loads with two stages, each warp on a 32×64 sub-tile
                            (lanes 4×8, each thread two 4-row by two 4-column sub-blocks): a
                            warp's A fragment is 64 contiguous bytes and its B fragment 128, one
                            shared wavefront per LDS.128, 4 a step instead of 6.
  vec4_dbuf_128x256_bk8     16-byte loads, two stages, a 128×256 tile: 256 threads of 8×16 (four
                            runs of 4 columns), a third more FMAs per shared load, one block
                            (8 warps) a multiprocessor at 227 registers.
  vec4_unroll_128x256_bk16  16-byte loads, one stage, BK = 16, the 128×256 tile.

Compiled for sm_90 (ptxas 12.9 -v; per k-slice on the fast path, from the SASS):

  kernel                     regs  spills       smem     a k-slice, fast path
  current target             128   0          8.3 KB   64 FFMA + 2 LDS.128 + 8 LDS per step,
                                                       the step a loop; 8 LDG.32, 8 STS, 2 BAR
  unroll_128x128_bk8         127   0          8.3 KB   512 FFMA, 32 LDS.128, 8 LDG.32, 8 STS, 2 BAR
  dbuf_128x128_bk8           127   0         16.6 KB   512 FFMA, 32 LDS.128, 8 LDG.32, 8 STS, 1 BAR
  vec4_unroll_128x128_bk16   128   24 B (*)  16.6 KB   1024 FFMA, 64 LDS.128, 4 LDG.128,
                                                       8 STS + 2 STS.128, 2 BAR
  vec4_warptile_128x128_bk8  127   0         16.6 KB   512 FFMA, 32 LDS.128, 2 LDG.128,
                                                       4 STS + 1 STS.128, 1 BAR
  vec4_dbuf_128x256_bk8      227   0         24.8 KB   1024 FFMA, 48 LDS.128, 3 LDG.128,
                                                       4 STS + 2 STS.128, 1 BAR
  vec4_unroll_128x256_bk16   231   0         24.8 KB   2048 FFMA, 96 LDS.128, 6 LDG.128,
                                                       8 STS + 4 STS.128, 2 BAR
  (*) the spills (6 STL, 6 LDL) are address registers of the guarded edge path: none in the
  fast path's loop. No kernel has any other local memory (no ld/st.local in the PTX).

Measured on an H200, 4096³, bench/variants.py (median of interleaved launches, L2 not flushed,
two runs on 2026-12-01: target 5.495 and 5.501 ms; CuPy's cuBLAS SGEMM 2.780 ms = 49.4 TFLOP/s
in the first, docs/BENCHMARKS.md's figure 2.676 ms = 51.3):

  candidate                    ms     TFLOP/s  of cuBLAS 51.3
  vec4_unroll_128x256_bk16     2.976  46.2     90%
  vec4_unroll_128x256_bk8      2.988  46.0     90%   (sgemm(128, 256, 8, 8, 16, vec=True, stages=1))
  vec4_unroll_128x128_bk16     3.049  45.1     88%
  vec4_unroll_256x128_bk16     3.062  44.9     88%   (16×8 a thread)
  vec4_dbuf_128x256_bk8        3.081  44.6     87%   (3.084 in the second run)
  vec4_dbuf_256x128_bk8        3.092  44.5     87%
  vec4_unroll_128x256_bk16 at 512 threads of 8×8, 128 registers: 3.112 ms, 44.2
  vec4_dbuf_128x128_bk16       3.142  43.7     85%   (3.151 at 149 registers, one block/SM)
  vec4_warptile_128x128_bk8    3.335  41.2     80%
  dbuf_128x256_bk8             3.353  41.0     80%   (LDG.32 loads)
  unroll_128x128_bk8           3.374  40.7     79%   (3.382 in the second run)
  vec4_dbuf_128x128_bk8        3.391  40.5     79%   (3.543 at 145 registers, one block/SM)
  unroll_128x256_bk8           3.472  39.6     77%
  dbuf_128x128_bk16            3.474  39.6     77%   (128 registers, 16 B of edge-path spills)
  dbuf_128x128_bk8             3.505  39.2     76%
  warptile_128x128_bk8         3.610  38.1     74%   (LDG.32 loads)

What that says: the unrolled k-slice with 128-bit shared fragments (and the index masks that
let NVVM form them) is most of it, 25.0 → 40.7 TFLOP/s. 16-byte global loads add 3% at BK = 8
on 128×128 and 9-11% once a thread has several (BK = 16, or the 256-wide tile). A second shared
stage loses 3-4% against the register prefetch with two barriers in three pairs (its registers
and address arithmetic cost more than a barrier the other resident block covers) and wins 3.5%
in one (128×256 with LDG.32 loads). Warp tiling: +2% with 16-byte loads, -3% without. Past 128
registers at 128×128 (one block a multiprocessor instead of two): 0-4% slower. The 128×256
tile is fastest, at one block of 8 warps.
"""

from __future__ import annotations

if __name__ == "__main__":  # run as a script: the grader chooses the back end before numba loads
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import grader  # noqa: F401

from numba import config, cuda, float32  # noqa: E402

if config.ENABLE_CUDASIM:
    ALIGN = None  # the simulator refuses an alignment; its arrays are NumPy's anyway
    INLINE = {}  # nor does its jit take forceinline or max_registers

    @cuda.jit(device=True)
    def load4(arr, row, col):
        """arr[row, col:col + 4] as four float32 values."""
        return arr[row, col], arr[row, col + 1], arr[row, col + 2], arr[row, col + 3]

    @cuda.jit(device=True)
    def aligned16(arr):
        """Does arr's element 0 start on 16 bytes? (always, on the simulator)"""
        return True

else:
    from llvmlite import ir
    from numba import types
    from numba.core import cgutils
    from numba.cuda.extending import intrinsic

    ALIGN = 16  # shared tiles on 16 bytes: their 4-float runs become ld.shared.v4.f32
    INLINE = {"forceinline": True}  # LLVM's alwaysinline: constant step numbers fold

    _F32 = ir.FloatType()

    @intrinsic
    def load4(typingctx, arr, row, col):
        """arr[row, col:col + 4] of a C-contiguous float32 matrix as one ld.global.nc.v4.f32
        (Numba has no 16-byte float vector). The run must start on 16 bytes: the caller
        checks that rows are contiguous, 16-byte multiples apart, and that aligned16(arr). The .nc path
        assumes arr is not written while the kernel runs (A and B are inputs)."""
        sig = types.UniTuple(types.float32, 4)(arr, row, col)

        def codegen(context, builder, sig, args):
            aryty = sig.args[0]
            ary = context.make_array(aryty)(context, builder, value=args[0])
            inds = [context.cast(builder, args[i], sig.args[i], types.intp) for i in (1, 2)]
            ptr = cgutils.get_item_pointer2(
                context,
                builder,
                data=ary.data,
                shape=cgutils.unpack_tuple(builder, ary.shape),
                strides=cgutils.unpack_tuple(builder, ary.strides),
                layout=aryty.layout,
                inds=inds,
                wraparound=False,
            )
            asm = ir.InlineAsm(
                ir.FunctionType(ir.LiteralStructType([_F32] * 4), [ptr.type]),
                "ld.global.nc.v4.f32 {$0, $1, $2, $3}, [$4];",
                "=f,=f,=f,=f,l",
            )
            four = builder.call(asm, [ptr])
            return context.make_tuple(builder, sig.return_type, [builder.extract_value(four, q) for q in range(4)])

        return sig, codegen

    @intrinsic
    def aligned16(typingctx, arr):
        """Does arr's element 0 start on 16 bytes?"""
        sig = types.boolean(arr)

        def codegen(context, builder, sig, args):
            ary = context.make_array(sig.args[0])(context, builder, value=args[0])
            address = builder.ptrtoint(ary.data, ir.IntType(64))
            low = builder.and_(address, ir.Constant(ir.IntType(64), 15))
            return builder.icmp_unsigned("==", low, ir.Constant(ir.IntType(64), 0))

        return sig, codegen


def _log2(x: int) -> int:
    assert x > 0 and x & (x - 1) == 0, x
    return x.bit_length() - 1


def sgemm(BM, BN, BK, TM, TN, *, stages=2, vec=False, warp=None, max_registers=None):
    """A launch(a, b, c) for C = A·B, any m, k, n: a block of (BM/TM)·(BN/TN) threads computes
    a BM×BN tile of C, each thread TM×TN of it in registers, through BK-wide k-slices of A
    (stored transposed, sa[kk, r]) and B (sb[kk, j]) in shared memory, `stages` of them (1: the
    target's scheme, store/sync/compute/sync; 2: compute one stage while the next slice goes
    into the other, one sync). `vec`: 16-byte global loads for interior tiles. `warp`: (WM, WN),
    the sub-tile of one warp; None lays threads out row-major over the block tile.

    A thread's rows are TM/4 runs of 4 and its columns TN/4 runs of 4: with warp=None, rows
    r0 .. r0+TM-1 in one run (r0 = tr·TM) and column runs at c0 + g·(BN·4/TN) (c0 = tc·4);
    with a warp tile, runs at r0 + g·WM/2 and c0 + g·WN/2 inside the warp's sub-tile."""
    assert TM % 4 == 0 and TN % 4 == 0 and BK % 4 == 0 and BK in (8, 16) and stages in (1, 2)
    RT, CT = BM // TM, BN // TN
    NT = RT * CT
    RG, CG = TM // 4, TN // 4  # runs of 4 rows, of 4 columns
    SA = BM + 4  # transposed A rows padded: conflict-free transposing stores, rows on 16 bytes
    if warp is None:
        WARP, WM, WN = 0, BM, BN  # WM, WN unused
        RSTEP, CSTEP = 4, BN // CG
    else:
        WARP, (WM, WN) = 1, warp
        assert (WM // TM) * (WN // TN) == 32 and BM % WM == 0 and BN % WN == 0
        RSTEP, CSTEP = WM // RG, WN // CG
    WARPS_N, LANES_N = BN // WN, WN // TN
    WN_SHIFT, LN_SHIFT = _log2(WARPS_N), _log2(LANES_N)
    CT_SHIFT, CT_MASK = _log2(CT), CT - 1
    VEC = 1 if vec else 0
    # vec: each thread loads runs of 4 along A's rows and B's rows; else single words,
    # neighbouring threads neighbouring words.
    W = 4 if vec else 1  # words a load
    A_PER_ROW, B_PER_ROW = BK // W, BN // W  # loads per row of each slice
    A_SHIFT, A_MASK = _log2(A_PER_ROW), A_PER_ROW - 1
    B_SHIFT, B_MASK = _log2(B_PER_ROW), B_PER_ROW - 1
    A_PASSES = BM * BK // (W * NT)
    B_PASSES = BK * BN // (W * NT)
    A_STRIDE, B_STRIDE = NT // A_PER_ROW, NT // B_PER_ROW  # rows of the slice a pass covers
    assert A_PASSES * A_STRIDE == BM and B_PASSES * B_STRIDE == BK
    NA, NB = W * A_PASSES, W * B_PASSES
    S = stages

    @cuda.jit(device=True, **INLINE)
    def step(sa, sb, s, kk, r0, c0, acc):
        """One k of the slice: TM + TN values from shared memory, TM·TN FMAs."""
        ra = cuda.local.array(TM, float32)
        rb = cuda.local.array(TN, float32)
        for g in range(RG):
            for i in range(4):
                ra[g * 4 + i] = sa[s, kk, r0 + g * RSTEP + i]
        for g in range(CG):
            for j in range(4):
                rb[g * 4 + j] = sb[s, kk, c0 + g * CSTEP + j]
        for i in range(TM):
            for j in range(TN):
                acc[i, j] += ra[i] * rb[j]

    @cuda.jit(device=True, **INLINE)
    def compute(sa, sb, s, r0, c0, acc):
        """The whole k-slice, unrolled by hand: NVVM leaves a loop of this size rolled."""
        step(sa, sb, s, 0, r0, c0, acc)
        step(sa, sb, s, 1, r0, c0, acc)
        step(sa, sb, s, 2, r0, c0, acc)
        step(sa, sb, s, 3, r0, c0, acc)
        step(sa, sb, s, 4, r0, c0, acc)
        step(sa, sb, s, 5, r0, c0, acc)
        step(sa, sb, s, 6, r0, c0, acc)
        step(sa, sb, s, 7, r0, c0, acc)
        if BK == 16:
            step(sa, sb, s, 8, r0, c0, acc)
            step(sa, sb, s, 9, r0, c0, acc)
            step(sa, sb, s, 10, r0, c0, acc)
            step(sa, sb, s, 11, r0, c0, acc)
            step(sa, sb, s, 12, r0, c0, acc)
            step(sa, sb, s, 13, r0, c0, acc)
            step(sa, sb, s, 14, r0, c0, acc)
            step(sa, sb, s, 15, r0, c0, acc)

    @cuda.jit(device=True, **INLINE)
    def fetch(a, b, pa, pb, k0, fast, m, n, k, row0, col0, tid):
        """The slice at k0 into registers: A[row0:+BM, k0:+BK] and B[k0:+BK, col0:+BN], zeros
        outside the matrices."""
        if VEC:
            a_r = tid >> A_SHIFT
            a_k = (tid & A_MASK) * 4
            b_k = tid >> B_SHIFT
            b_c = (tid & B_MASK) * 4
            if fast and k0 + BK <= k:
                for p in range(A_PASSES):
                    v0, v1, v2, v3 = load4(a, row0 + a_r + p * A_STRIDE, k0 + a_k)
                    pa[4 * p] = v0
                    pa[4 * p + 1] = v1
                    pa[4 * p + 2] = v2
                    pa[4 * p + 3] = v3
                for p in range(B_PASSES):
                    v0, v1, v2, v3 = load4(b, k0 + b_k + p * B_STRIDE, col0 + b_c)
                    pb[4 * p] = v0
                    pb[4 * p + 1] = v1
                    pb[4 * p + 2] = v2
                    pb[4 * p + 3] = v3
            else:
                for p in range(A_PASSES):
                    gr = row0 + a_r + p * A_STRIDE
                    for q in range(4):
                        gk = k0 + a_k + q
                        pa[4 * p + q] = a[gr, gk] if gr < m and gk < k else float32(0.0)
                for p in range(B_PASSES):
                    gk = k0 + b_k + p * B_STRIDE
                    for q in range(4):
                        gc = col0 + b_c + q
                        pb[4 * p + q] = b[gk, gc] if gk < k and gc < n else float32(0.0)
        else:
            a_r = tid >> A_SHIFT
            a_k = tid & A_MASK
            b_k = tid >> B_SHIFT
            b_c = tid & B_MASK
            if fast and k0 + BK <= k:
                for p in range(A_PASSES):
                    pa[p] = a[row0 + a_r + p * A_STRIDE, k0 + a_k]
                for p in range(B_PASSES):
                    pb[p] = b[k0 + b_k + p * B_STRIDE, col0 + b_c]
            else:
                for p in range(A_PASSES):
                    gr = row0 + a_r + p * A_STRIDE
                    gk = k0 + a_k
                    pa[p] = a[gr, gk] if gr < m and gk < k else float32(0.0)
                for p in range(B_PASSES):
                    gk = k0 + b_k + p * B_STRIDE
                    gc = col0 + b_c
                    pb[p] = b[gk, gc] if gk < k and gc < n else float32(0.0)

    @cuda.jit(device=True, **INLINE)
    def stash(sa, sb, s, pa, pb, tid):
        """The registers of fetch into shared stage s (A transposed)."""
        if VEC:
            a_r = tid >> A_SHIFT
            a_k = (tid & A_MASK) * 4
            b_k = tid >> B_SHIFT
            b_c = (tid & B_MASK) * 4
            for p in range(A_PASSES):
                for q in range(4):
                    sa[s, a_k + q, a_r + p * A_STRIDE] = pa[4 * p + q]
            for p in range(B_PASSES):
                for q in range(4):
                    sb[s, b_k + p * B_STRIDE, b_c + q] = pb[4 * p + q]
        else:
            a_r = tid >> A_SHIFT
            a_k = tid & A_MASK
            b_k = tid >> B_SHIFT
            b_c = tid & B_MASK
            for p in range(A_PASSES):
                sa[s, a_k, a_r + p * A_STRIDE] = pa[p]
            for p in range(B_PASSES):
                sb[s, b_k + p * B_STRIDE, b_c] = pb[p]

    options = {} if max_registers is None or config.ENABLE_CUDASIM else {"max_registers": max_registers}

    @cuda.jit(**options)
    def kernel(a, b, c):
        sa = cuda.shared.array((S, BK, SA), float32, ALIGN)
        sb = cuda.shared.array((S, BK, BN), float32, ALIGN)
        acc = cuda.local.array((TM, TN), float32)
        pa = cuda.local.array(NA, float32)
        pb = cuda.local.array(NB, float32)
        m = a.shape[0]
        k = a.shape[1]
        n = b.shape[1]
        # Numba reads the indices as signed int32, and NVVM does not know them non-negative:
        # every array index then carries a wraparound test (add the extent if negative) that
        # costs instructions and stops the vectoriser. The masks change no value.
        tid = cuda.threadIdx.x & 1023
        row0 = (cuda.blockIdx.y & 0xFFFF) * BM
        col0 = (cuda.blockIdx.x & 0x7FFFFFFF) * BN
        if WARP == 0:
            r0 = (tid >> CT_SHIFT) * TM
            c0 = (tid & CT_MASK) * 4
        else:
            w = tid >> 5
            lane = tid & 31
            r0 = (w >> WN_SHIFT) * WM + (lane >> LN_SHIFT) * 4
            c0 = (w & (WARPS_N - 1)) * WN + (lane & (LANES_N - 1)) * 4
        fast = row0 + BM <= m and col0 + BN <= n
        if VEC:  # 16-byte runs: rows of whole words, each row starting on 16 bytes
            fast = fast and a.strides[1] == 4 and b.strides[1] == 4 and a.strides[0] % 16 == 0
            fast = fast and b.strides[0] % 16 == 0 and aligned16(a) and aligned16(b)
        for i in range(TM):
            for j in range(TN):
                acc[i, j] = float32(0.0)

        tiles = (k + BK - 1) // BK
        fetch(a, b, pa, pb, 0, fast, m, n, k, row0, col0, tid)
        if S == 2:
            stash(sa, sb, 0, pa, pb, tid)
            cuda.syncthreads()
            for t in range(tiles):
                s = t & 1
                if t + 1 < tiles:  # the next slice's loads fly while this one is computed
                    fetch(a, b, pa, pb, (t + 1) * BK, fast, m, n, k, row0, col0, tid)
                compute(sa, sb, s, r0, c0, acc)
                if t + 1 < tiles:  # into the stage everyone finished reading a slice ago
                    stash(sa, sb, 1 - s, pa, pb, tid)
                cuda.syncthreads()
        else:
            for t in range(tiles):
                stash(sa, sb, 0, pa, pb, tid)
                cuda.syncthreads()
                if t + 1 < tiles:
                    fetch(a, b, pa, pb, (t + 1) * BK, fast, m, n, k, row0, col0, tid)
                compute(sa, sb, 0, r0, c0, acc)
                cuda.syncthreads()

        for gi in range(RG):
            for i in range(4):
                gr = row0 + r0 + gi * RSTEP + i
                if gr < m:
                    for gj in range(CG):
                        for j in range(4):
                            gc = col0 + c0 + gj * CSTEP + j
                            if gc < n:
                                c[gr, gc] = acc[gi * 4 + i, gj * 4 + j]

    def launch(a, b, c):
        m, n = c.shape
        kernel[((n + BN - 1) // BN, (m + BM - 1) // BM), NT](a, b, c)

    launch.kernel = kernel
    return launch


CANDIDATES = {
    "unroll_128x128_bk8": sgemm(128, 128, 8, 8, 8, stages=1),
    "dbuf_128x128_bk8": sgemm(128, 128, 8, 8, 8),
    "vec4_unroll_128x128_bk16": sgemm(128, 128, 16, 8, 8, vec=True, stages=1, max_registers=128),
    "vec4_warptile_128x128_bk8": sgemm(128, 128, 8, 8, 8, vec=True, warp=(32, 64), max_registers=128),
    "vec4_dbuf_128x256_bk8": sgemm(128, 256, 8, 8, 16, vec=True),
    "vec4_unroll_128x256_bk16": sgemm(128, 256, 16, 8, 16, vec=True, stages=1),
}

VARIANTS = {"matmul_tiled": CANDIDATES}


def _check(sizes):
    """Each candidate against NumPy (float64) at `sizes`, within a float32 tolerance."""
    import numpy as np

    rng = np.random.default_rng(7)
    bad = 0
    for m, k, n in sizes:
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        exact = a.astype(np.float64) @ b.astype(np.float64)
        bound = 8 * np.sqrt(k) * np.finfo(np.float32).eps * (np.abs(a).astype(np.float64) @ np.abs(b)) + 1e-30
        for name, launch in CANDIDATES.items():
            c = cuda.to_device(np.full((m, n), np.nan, np.float32))
            launch(cuda.to_device(a), cuda.to_device(b), c)
            err = np.abs(c.copy_to_host() - exact)
            ok = bool(np.all(err <= bound))
            bad += not ok
            print(
                f"{m}x{k}x{n} {name:<24} {'ok' if ok else 'WRONG'}  max err/bound {np.nanmax(err / bound):.3f}",
                flush=True,
            )
    return bad


if __name__ == "__main__":
    if config.ENABLE_CUDASIM:  # every CUDA thread a Python thread: small sizes only
        sizes = [(33, 20, 17), (130, 9, 129), (128, 24, 256)]
    else:  # edge tiles, interior fast paths, a row length not a multiple of 4
        sizes = [(33, 20, 17), (130, 9, 129), (257, 300, 129), (1024, 1024, 1024), (640, 516, 1028), (2048, 4096, 2048)]
    sys.exit(1 if _check([tuple(s) for s in sizes]) else 0)
