"""warp_reduce candidates of 2026-12-02: 16-byte words (complex128 loads split into four
floats; NVVM emits two 8-byte loads for each), true 8-byte words (uint64 loads), more threads
or accumulators. `python bench/variants.py --only warp_reduce --candidates
bench/candidates_loads.py`; the figures are in docs/BENCHMARKS-LOG.md (2026-12-02)."""

from numba import cuda, float32, int32, uint64
from numba.cuda import libdevice

from grader.authoring.occupancy import one_wave
from grader.authoring.pairs import load_f32, pair_view

FULL = 0xFFFFFFFF


@cuda.jit(device=True, inline=True)
def load4(x4, i):
    v = x4[uint64(i)]
    a = v.real
    b = v.imag
    return (
        libdevice.int_as_float(libdevice.double2loint(a)),
        libdevice.int_as_float(libdevice.double2hiint(a)),
        libdevice.int_as_float(libdevice.double2loint(b)),
        libdevice.int_as_float(libdevice.double2hiint(b)),
    )


@cuda.jit(device=True, inline=True)
def warp_sum(v):
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(FULL, v, off)
        off //= 2
    return v


def make_quad(threads, accs):
    warps = threads // 32

    @cuda.jit
    def k(x, x4, out):
        per_warp = cuda.shared.array(warps, float32)
        acc = cuda.local.array(accs, float32)
        for j in range(accs):
            acc[j] = float32(0.0)
        stride = cuda.gridsize(1)
        n = x.size // 4
        i = cuda.grid(1)
        while i + (accs - 1) * stride < n:
            for j in range(accs):
                a, b, c, d = load4(x4, i + j * stride)
                acc[j] += (a + b) + (c + d)
            i += accs * stride
        while i < n:
            a, b, c, d = load4(x4, i)
            acc[0] += (a + b) + (c + d)
            i += stride
        total = float32(0.0)
        for j in range(accs):
            total += acc[j]
        g = cuda.grid(1)
        if g < x.size % 4:
            total += x[4 * n + g]
        lane = cuda.threadIdx.x % 32
        w = cuda.threadIdx.x // 32
        total = warp_sum(total)
        if lane == 0:
            per_warp[w] = total
        cuda.syncthreads()
        if w == 0:
            total = float32(0.0)
            if lane < warps:
                total = per_warp[lane]
            total = warp_sum(total)
            if lane == 0:
                cuda.atomic.add(out, 0, total)

    def launch(x, out):
        x4 = x[: 4 * (x.size // 4)].view("complex128")
        blocks = one_wave(k, (x, x4, out), threads)
        blocks = max(1, min(blocks, (x.size // 4 + threads - 1) // threads))
        k[blocks, threads](x, x4, out)

    return launch


def make_pairs(threads, accs, waves=1):
    warps = threads // 32

    @cuda.jit
    def k(x, x2, out):
        per_warp = cuda.shared.array(warps, float32)
        acc = cuda.local.array(accs, float32)
        for j in range(accs):
            acc[j] = float32(0.0)
        stride = cuda.gridsize(1)
        n = x.size // 2
        i = cuda.grid(1)
        while i + (accs - 1) * stride < n:
            for j in range(accs):
                lo, hi = load_f32(x2, i + j * stride)
                acc[j] += lo + hi
            i += accs * stride
        while i < n:
            lo, hi = load_f32(x2, i)
            acc[0] += lo + hi
            i += stride
        total = float32(0.0)
        for j in range(accs):
            total += acc[j]
        if cuda.grid(1) == 0 and x.size % 2 == 1:
            total += x[x.size - 1]
        lane = cuda.threadIdx.x % 32
        w = cuda.threadIdx.x // 32
        total = warp_sum(total)
        if lane == 0:
            per_warp[w] = total
        cuda.syncthreads()
        if w == 0:
            total = float32(0.0)
            if lane < warps:
                total = per_warp[lane]
            total = warp_sum(total)
            if lane == 0:
                cuda.atomic.add(out, 0, total)

    def launch(x, out):
        x2 = pair_view(x, x.size // 2)
        blocks = waves * one_wave(k, (x, x2, out), threads)
        blocks = max(1, min(blocks, (x.size // 2 + threads - 1) // threads))
        k[blocks, threads](x, x2, out)

    return launch


LOW = 0xFFFFFFFF


@cuda.jit(device=True, inline=True)
def load_w(xw, i):
    w = xw[uint64(i)]
    return libdevice.int_as_float(int32(w & LOW)), libdevice.int_as_float(int32(w >> 32))


def make_words(threads, accs):
    warps = threads // 32

    @cuda.jit
    def k(x, xw, out):
        per_warp = cuda.shared.array(warps, float32)
        acc = cuda.local.array(accs, float32)
        for j in range(accs):
            acc[j] = float32(0.0)
        stride = cuda.gridsize(1)
        n = x.size // 2
        i = cuda.grid(1)
        while i + (accs - 1) * stride < n:
            for j in range(accs):
                lo, hi = load_w(xw, i + j * stride)
                acc[j] += lo + hi
            i += accs * stride
        while i < n:
            lo, hi = load_w(xw, i)
            acc[0] += lo + hi
            i += stride
        total = float32(0.0)
        for j in range(accs):
            total += acc[j]
        if cuda.grid(1) == 0 and x.size % 2 == 1:
            total += x[x.size - 1]
        lane = cuda.threadIdx.x % 32
        w = cuda.threadIdx.x // 32
        total = warp_sum(total)
        if lane == 0:
            per_warp[w] = total
        cuda.syncthreads()
        if w == 0:
            total = float32(0.0)
            if lane < warps:
                total = per_warp[lane]
            total = warp_sum(total)
            if lane == 0:
                cuda.atomic.add(out, 0, total)

    def launch(x, out):
        xw = x[: 2 * (x.size // 2)].view("uint64")
        blocks = one_wave(k, (x, xw, out), threads)
        blocks = max(1, min(blocks, (x.size // 2 + threads - 1) // threads))
        k[blocks, threads](x, xw, out)

    return launch


VARIANTS = {
    "warp_reduce": {
        "cupy.sum": "peer",
        "quad_256x4": make_quad(256, 4),
        "quad_256x8": make_quad(256, 8),
        "quad_512x4": make_quad(512, 4),
        "quad_128x8": make_quad(128, 8),
        "pairs_512x8": make_pairs(512, 8),
        "words_256x8": make_words(256, 8),
        "words_256x4": make_words(256, 4),
        "words_512x8": make_words(512, 8),
        "pairs_256x16": make_pairs(256, 16),
    }
}
