"""Candidate targets for reduce_sum (beside cupy.sum) and matmul_tiled (beside cuBLAS):
`python bench/variants.py --only reduce_sum,matmul_tiled --candidates bench/candidates_targets.py`.

reduce_sum: the same lesson (registers, a shared-memory tree, one atomic per block), with wider
loads and a grid of one wave: 8-byte pairs, or 16-byte runs of 4 (load4 on an (n/4, 4) view).
matmul_tiled: the target with its shared tiles double-buffered, one barrier per k-slice in place
of two (BK = 16: 48 KiB of shared memory with unpadded A rows, 49.7 KiB padded)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from numba import cuda, float32  # noqa: E402

from grader.authoring.occupancy import one_wave  # noqa: E402
from grader.authoring.pairs import load_f32, pair_view  # noqa: E402
from grader.authoring.ptx import aligned16, load4, store4  # noqa: E402
from grader.exercises import exercise  # noqa: E402

THREADS = 256
ACC = 8


@cuda.jit(device=True)
def _block_total(partial, total, out):
    tid = cuda.threadIdx.x
    partial[tid] = total
    cuda.syncthreads()
    step = THREADS // 2
    while step > 0:
        if tid < step:
            partial[tid] += partial[tid + step]
        cuda.syncthreads()
        step //= 2
    if tid == 0:
        cuda.atomic.add(out, 0, partial[0])


@cuda.jit
def _sum_pairs(x, x2, out):
    partial = cuda.shared.array(THREADS, float32)
    acc = cuda.local.array(ACC, float32)
    for k in range(ACC):
        acc[k] = float32(0.0)
    stride = cuda.gridsize(1)
    n = x.size // 2
    i = cuda.grid(1)
    while i + (ACC - 1) * stride < n:
        for k in range(ACC):
            lo, hi = load_f32(x2, i + k * stride)
            acc[k] += lo + hi
        i += ACC * stride
    while i < n:
        lo, hi = load_f32(x2, i)
        acc[0] += lo + hi
        i += stride
    total = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))
    if cuda.grid(1) == 0 and x.size % 2 == 1:
        total += x[x.size - 1]
    _block_total(partial, total, out)


def sum_pairs(x, out):
    x2 = pair_view(x, x.size // 2)
    blocks = one_wave(_sum_pairs, (x, x2, out), THREADS)
    blocks = max(1, min(blocks, (x.size // 2 + THREADS - 1) // THREADS))
    _sum_pairs[blocks, THREADS](x, x2, out)


def _runs_of_4(inflight):
    @cuda.jit
    def kernel(x, x4, out):
        partial = cuda.shared.array(THREADS, float32)
        acc = cuda.local.array(4, float32)
        for k in range(4):
            acc[k] = float32(0.0)
        stride = cuda.gridsize(1)
        n = x4.shape[0]
        i = cuda.grid(1)
        while i + (inflight - 1) * stride < n:
            for k in range(inflight):
                v0, v1, v2, v3 = load4(x4, i + k * stride, 0)
                acc[k & 3] += (v0 + v1) + (v2 + v3)
            i += inflight * stride
        while i < n:
            v0, v1, v2, v3 = load4(x4, i, 0)
            acc[0] += (v0 + v1) + (v2 + v3)
            i += stride
        total = (acc[0] + acc[1]) + (acc[2] + acc[3])
        t = cuda.grid(1)
        if t < x.size - 4 * n:  # the last x.size % 4 elements
            total += x[4 * n + t]
        _block_total(partial, total, out)

    def launch(x, out):
        n4 = x.size // 4
        x4 = x[: 4 * n4].reshape(n4, 4)
        blocks = one_wave(kernel, (x, x4, out), THREADS)
        blocks = max(1, min(blocks, (n4 + THREADS - 1) // THREADS))
        kernel[blocks, THREADS](x, x4, out)

    return launch


# -- matmul_tiled: the target, double-buffered --------------------------------------------------
def _double_buffered(pad: int):
    target = exercise("matmul_tiled").target
    module = sys.modules[target.__module__]
    BM, BN, BK, TM, TN, NT = module.BM, module.BN, module.BK, module.TM, module.TN, module.NT
    CT_SHIFT, CT_MASK, CSTEP, NA, NB = module.CT_SHIFT, module.CT_MASK, module.CSTEP, module.NA, module.NB
    _fetch, _runs, _step = module._fetch, module._runs, module._step
    SA = BM + pad
    BK2 = 2 * BK
    A_PASSES, A_STRIDE, B_PASSES, B_STRIDE = module.A_PASSES, module.A_STRIDE, module.B_PASSES, module.B_STRIDE
    BK_SHIFT, BK_MASK, BN_MASK = module.BK_SHIFT, module.BK_MASK, module.BN_MASK
    ALIGN, INLINE = module.ALIGN, module.INLINE

    @cuda.jit(device=True, **INLINE)
    def _stash_at(sa, sb, pa, pb, tid, vec, base):
        if vec:
            a_r, a_k, b_k, b_c = _runs(tid)
            for p in range(A_PASSES):
                for q in range(4):
                    sa[base + a_k + q, a_r + p * A_STRIDE] = pa[4 * p + q]
            for p in range(B_PASSES):
                store4(sb, base + b_k + p * B_STRIDE, b_c, pb[4 * p], pb[4 * p + 1], pb[4 * p + 2], pb[4 * p + 3])
        else:
            for p in range(NA):
                sa[base + (tid & BK_MASK), (tid >> BK_SHIFT) + p * (NT // BK)] = pa[p]
            for p in range(NB):
                sb[base + p, tid & BN_MASK] = pb[p]

    @cuda.jit(device=True, **INLINE)
    def _compute_at(sa, sb, r0, c0, acc, base):  # unrolled by hand, as the target's _compute
        _step(sa, sb, base + 0, r0, c0, acc)
        _step(sa, sb, base + 1, r0, c0, acc)
        _step(sa, sb, base + 2, r0, c0, acc)
        _step(sa, sb, base + 3, r0, c0, acc)
        _step(sa, sb, base + 4, r0, c0, acc)
        _step(sa, sb, base + 5, r0, c0, acc)
        _step(sa, sb, base + 6, r0, c0, acc)
        _step(sa, sb, base + 7, r0, c0, acc)
        _step(sa, sb, base + 8, r0, c0, acc)
        _step(sa, sb, base + 9, r0, c0, acc)
        _step(sa, sb, base + 10, r0, c0, acc)
        _step(sa, sb, base + 11, r0, c0, acc)
        _step(sa, sb, base + 12, r0, c0, acc)
        _step(sa, sb, base + 13, r0, c0, acc)
        _step(sa, sb, base + 14, r0, c0, acc)
        _step(sa, sb, base + 15, r0, c0, acc)

    @cuda.jit
    def kernel(a, b, c):
        sa = cuda.shared.array((BK2, SA), float32, ALIGN)
        sb = cuda.shared.array((BK2, BN), float32, ALIGN)
        acc = cuda.local.array((TM, TN), float32)
        pa = cuda.local.array(NA, float32)
        pb = cuda.local.array(NB, float32)
        m = a.shape[0]
        k = a.shape[1]
        n = b.shape[1]
        tid = cuda.threadIdx.x & 1023
        row0 = (cuda.blockIdx.y & 0xFFFF) * BM
        col0 = (cuda.blockIdx.x & 0x7FFFFFFF) * BN
        r0 = (tid >> CT_SHIFT) * TM
        c0 = (tid & CT_MASK) * 4
        fast = row0 + BM <= m and col0 + BN <= n
        fast = fast and a.strides[1] == 4 and b.strides[1] == 4 and a.strides[0] % 16 == 0
        fast = fast and b.strides[0] % 16 == 0 and aligned16(a) and aligned16(b)
        for i in range(TM):
            for j in range(TN):
                acc[i, j] = float32(0.0)
        tiles = (k + BK - 1) // BK
        vec = fast and BK <= k
        _fetch(a, b, pa, pb, 0, vec, m, n, k, row0, col0, tid)
        _stash_at(sa, sb, pa, pb, tid, vec, 0)
        cuda.syncthreads()
        for t in range(tiles):
            base = (t & 1) * BK
            if t + 1 < tiles:
                vec = fast and (t + 2) * BK <= k
                _fetch(a, b, pa, pb, (t + 1) * BK, vec, m, n, k, row0, col0, tid)
            _compute_at(sa, sb, r0, c0, acc, base)
            if t + 1 < tiles:
                _stash_at(sa, sb, pa, pb, tid, vec, BK - base)
            cuda.syncthreads()
        for i in range(TM):
            gr = row0 + r0 + i
            if gr < m:
                for g in range(TN // 4):
                    gc = col0 + c0 + g * CSTEP
                    if gc < n:
                        c[gr, gc] = acc[i, 4 * g]
                    if gc + 1 < n:
                        c[gr, gc + 1] = acc[i, 4 * g + 1]
                    if gc + 2 < n:
                        c[gr, gc + 2] = acc[i, 4 * g + 2]
                    if gc + 3 < n:
                        c[gr, gc + 3] = acc[i, 4 * g + 3]

    def launch(a, b, c):
        m, n = c.shape
        kernel[((n + BN - 1) // BN, (m + BM - 1) // BM), NT](a, b, c)

    return launch


VARIANTS = {
    "reduce_sum": {
        "cupy.sum": "peer",
        "pairs_one_wave": sum_pairs,
        "runs4_one_wave_4": _runs_of_4(4),
        "runs4_one_wave_8": _runs_of_4(8),
    },
    "matmul_tiled": {
        "cupy.matmul": "peer",
        "double_buffered_pad0": _double_buffered(0),
        "double_buffered_pad4": _double_buffered(4),
    },
}
