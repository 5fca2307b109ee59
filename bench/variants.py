"""Candidate target kernels, timed against the current target by the grader's own harness.

    python bench/variants.py [--only rgb_to_gray,transpose] [--out variants.json]

Where a bundled target misses its goal (docs/BENCHMARKS.md), new ideas are written here
first, checked against the oracle at a modest size, then timed interleaved with the
current target at the benchmark size (L2 flushed, fresh inputs each round). A winner moves
into kernels/<id>.py; this file keeps the record of what was tried. Entries named probe_*
are not correct kernels: they are timed without the check, to find what bounds a target
(a plain copy of the same bytes, a histogram without its atomics).

Most ideas are about *bytes in flight*: an H200 needs roughly 16 KB of outstanding loads per
SM to stream at full bandwidth, and a thread that loads 3 bytes (a pixel) or one float
before using it cannot supply that with 2048 threads per SM.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("ZEROGPU_BACKEND", "gpu")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import grader  # noqa: E402,F401
import numpy as np  # noqa: E402
from numba import config, cuda, float32, int32, uint32, uint64  # noqa: E402

from grader import timing  # noqa: E402
from grader.cases import case_rng, expected_and_tolerance  # noqa: E402
from grader.exercises import exercise, reference_module  # noqa: E402
from grader.gpu_timing import measure  # noqa: E402
from grader.judge import judge_case  # noqa: E402
from grader.run import execute  # noqa: E402
from grader.spec import Case  # noqa: E402
from grader.load import load_launch  # noqa: E402
from grader.occupancy import one_wave  # noqa: E402
from grader.ptx import load_pair  # noqa: E402
from grader.speed import benchmark_inputs  # noqa: E402

SMS = 132

# Tried and dropped (H200, 2026-11-29, bench/variants.py): rgb_to_gray staged through shared
# memory as uint32 words (0.41-0.43 ms, against 0.28 for the target); transpose with one
# block per 32×32 or 64×64 tile and 8 or 16 thread rows (0.93-1.11 ms, target 0.78), the
# target's grid-stride loop with 8 or 16 blocks per SM (0.83, 0.81 ms), with 64×64 tiles
# (1.06-1.20 ms) or 32 × 4 threads (0.83 ms);
# stencil_1d with 8 outputs per thread (0.57 ms, target 0.49); softmax with warp-shuffle
# reductions and 16 or 64 values per thread (0.22, 0.26 ms; 32 per thread 0.21 = the target).
# Later the same day: rgb_to_gray from uint64 words, 8 pixels per step (0.551 ms, target
# 0.225), 2 groups of 4 pixels per thread (0.228); transpose's grid-stride loop with
# 32 × 16 threads (1.25 ms, target 0.77) or 32 blocks per SM (0.78); transpose as uint64 pairs
# with 8 or 32 blocks per SM (0.840, 0.772 ms; 16 per SM, 0.759, became the target).
# With the hold (start event queued behind a sleeping kernel): rgb_to_gray with 3 coalesced
# word loads per warp, bytes moved to their pixel's lane by shfl_sync and coalesced stores
# (0.167-0.169 ms, target 0.125); histogram with per-thread 16-bit counters in shared
# memory and no atomics while counting (0.394 ms, target 0.130).
# histogram with 8, 16 or 32 lane-interleaved padded copies per block (0.34-0.36 ms, target
# 0.289).
# Third session (2026-11-29, copy ceiling 4.24-4.27 TB/s): rgb_to_gray from uint64 words
# split into uint32 halves (0.475 ms, target 0.125), 8 pixels per step (0.329), grays stored
# as complex64 pairs (0.125, no gain); softmax with each block looping over rows and loading
# the next row early (0.435 ms; with 16 or 8 values per thread it failed to launch: too many
# registers for 512 or 1024 threads), 8, 4 or 32 pairs per thread (0.178, 0.208, 0.160;
# 16 pairs, 0.151, became the target); histogram merging a word's equal bytes before the
# atomics (0.288 ms, target 0.130), each warp's histogram split in 2 or 4 copies by lane
# (0.130, 0.131), the block's most frequent value (found after one word per thread) counted in
# a register instead of with atomics (0.226-0.317 ms, 0.188 with 8 loads in flight: the
# branch per byte cost more than the contention it saved); 8 loads in flight per thread
# (0.098) became the target.
# Fifth session (2026-11-29, H200 of the same kind): transpose's pair tile visiting the tiles
# 4, 16 or 64 tile-rows at a time, down the columns of a group (0.620-0.700 ms, target
# 0.596-0.599; the idea was DRAM page locality), 64 × 64 pair tiles (0.650, 0.670 grouped),
# 128 × 32 pair tiles with 8 loads per thread (0.818 at 8 or 16 blocks per SM), the target's
# tile with 8 blocks per SM (0.677); the floor is a plain copy of the same 2 GiB (probe_copy,
# 0.548-0.550 ms with the ceiling's copy kernel; cudaMemcpy 0.502-0.505). Histogram: the
# block's most frequent value (from each thread's first word) counted without atomics by a
# zero-byte test and popc, only the other bytes to the histogram (0.182 ms, target 0.098: the
# branch per byte costs more than the hot bin's queue); the target's 8 loads as 8 named
# variables instead of a local array (0.099: the array is not the problem); 4 or 16 blocks
# per SM (0.103, 0.098). Probes of the uint32 loop: every lane on its own address (0.143) or
# its own bank (0.142) is slower than the real input, whose hot bin lanes share one address;
# without atomics 0.089-0.090. With uint64 words (4 per step) the loop without atomics takes
# 0.074 and the histogram 0.094: the new target. Over uint64 words every lane on its own bank
# is faster (probe_u64_banks 0.080-0.081 ms, 78%), but a real layout for that, one histogram
# column per lane shared by the block's warps (hist[v, lane], 32 KB a block), was slower:
# 0.106 ms with 6 blocks of 256 per SM, 0.104 with 4, 0.110 with 8, 0.095 with 4 blocks of
# 512 (per-warp histograms beside it 0.094): every warp's lane L now queues on the hot bin's
# one address in column L.

# ---------------------------------------------------------------- streams: thread_ids, vector_add, saxpy
# thread_ids' target is a grid-stride loop with one element per step; vector_add's and saxpy's
# keep 4 per thread in flight, over complex64 pairs. Here: 4 in flight over float32, and the
# pairs with 8 blocks per SM instead of the targets' 16.


@cuda.jit
def _ids_x4(out):
    stride = cuda.gridsize(1)
    n = out.size
    i = cuda.grid(1)
    while i + 3 * stride < n:
        out[i] = i
        out[i + stride] = i + stride
        out[i + 2 * stride] = i + 2 * stride
        out[i + 3 * stride] = i + 3 * stride
        i += 4 * stride
    while i < n:
        out[i] = i
        i += stride


# The vector_add and saxpy targets' kernels (4 elements per step, all loads before any store)
_add_x4 = reference_module("vector_add")._add_4_in_flight
_saxpy_x4 = reference_module("saxpy")._saxpy_4_in_flight


def _stream_grid(size, blocks_per_sm):
    """Blocks of 256 threads, 4 elements each per step, at most blocks_per_sm per SM."""
    return max(1, min((size + 1023) // 1024, SMS * blocks_per_sm)), 256


def ids_x4_8(out):
    _ids_x4[_stream_grid(out.size, 8)](out)


def ids_x4_16(out):
    _ids_x4[_stream_grid(out.size, 16)](out)


def add_x4_8(a, b, c):
    _add_x4[_stream_grid(c.size, 8)](a, b, c)


def add_x4_16(a, b, c):
    _add_x4[_stream_grid(c.size, 16)](a, b, c)


def saxpy_x4_8(x, y, out, alpha):
    _saxpy_x4[_stream_grid(out.size, 8)](x, y, out, alpha)


def saxpy_x4_16(x, y, out, alpha):
    _saxpy_x4[_stream_grid(out.size, 16)](x, y, out, alpha)


# The same loops over 8-byte elements: a float32 pair viewed as one complex64, so each load
# brings 8 bytes (complex addition and a real scale act on each half alone, with the same
# roundings as the float32 kernels).


def _add_c64(blocks_per_sm):
    def launch(a, b, c):
        if c.size % 2:
            return add_x4_8(a, b, c)
        pairs = [v.view(np.complex64) for v in (a, b, c)]
        _add_x4[_stream_grid(c.size // 2, blocks_per_sm)](*pairs)
    return launch


def saxpy_c64_x4_8(x, y, out, alpha):
    if out.size % 2:
        return saxpy_x4_8(x, y, out, alpha)
    pairs = [v.view(np.complex64) for v in (x, y, out)]
    _saxpy_x4[_stream_grid(out.size // 2, 8)](*pairs, alpha)


add_c64_x4_8 = _add_c64(8)
# _add_c64(16) is now the target (vector_add and saxpy alike).

# ---------------------------------------------------------------- rgb_to_gray


@cuda.jit
def _gray_flat4(img, g):
    """4 pixels per thread, a block's pixels contiguous; all 12 byte loads before any store."""
    n = g.size
    s = cuda.blockDim.x
    p0 = cuda.blockIdx.x * s * 4 + cuda.threadIdx.x
    p1 = p0 + s
    p2 = p1 + s
    p3 = p2 + s
    if p3 < n:
        r0 = float32(img[3 * p0]); g0 = float32(img[3 * p0 + 1]); b0 = float32(img[3 * p0 + 2])  # noqa: E702
        r1 = float32(img[3 * p1]); g1 = float32(img[3 * p1 + 1]); b1 = float32(img[3 * p1 + 2])  # noqa: E702
        r2 = float32(img[3 * p2]); g2 = float32(img[3 * p2 + 1]); b2 = float32(img[3 * p2 + 2])  # noqa: E702
        r3 = float32(img[3 * p3]); g3 = float32(img[3 * p3 + 1]); b3 = float32(img[3 * p3 + 2])  # noqa: E702
        g[p0] = float32(0.299) * r0 + float32(0.587) * g0 + float32(0.114) * b0
        g[p1] = float32(0.299) * r1 + float32(0.587) * g1 + float32(0.114) * b1
        g[p2] = float32(0.299) * r2 + float32(0.587) * g2 + float32(0.114) * b2
        g[p3] = float32(0.299) * r3 + float32(0.587) * g3 + float32(0.114) * b3
    else:
        for p in range(p0, min(p3 + 1, n), s):
            g[p] = (float32(0.299) * float32(img[3 * p]) + float32(0.587) * float32(img[3 * p + 1])
                    + float32(0.114) * float32(img[3 * p + 2]))


def gray_flat4(image, gray):
    n = gray.size
    threads = 256
    _gray_flat4[(n + 4 * threads - 1) // (4 * threads), threads](image.reshape(image.size), gray.reshape(n))


@cuda.jit(device=True)
def _grays_of_words(a, b, c):
    """4 grays from 12 bytes R0 G0 B0 R1 | G1 B1 R2 G2 | B2 R3 G3 B3 (uint32, little-endian)."""
    y0 = (float32(0.299) * float32(a & 0xFF) + float32(0.587) * float32((a >> 8) & 0xFF)
          + float32(0.114) * float32((a >> 16) & 0xFF))
    y1 = (float32(0.299) * float32(a >> 24) + float32(0.587) * float32(b & 0xFF)
          + float32(0.114) * float32((b >> 8) & 0xFF))
    y2 = (float32(0.299) * float32((b >> 16) & 0xFF) + float32(0.587) * float32(b >> 24)
          + float32(0.114) * float32(c & 0xFF))
    y3 = (float32(0.299) * float32((c >> 8) & 0xFF) + float32(0.587) * float32((c >> 16) & 0xFF)
          + float32(0.114) * float32(c >> 24))
    return y0, y1, y2, y3


def _gray_words_kernel(groups):
    """The image as uint32 words: 4 pixels = 3 words; each thread takes `groups` groups of 4
    pixels, a grid-stride apart, all loads issued before any store."""

    @cuda.jit
    def kernel(words, g):
        n_groups = g.size // 4
        stride = cuda.gridsize(1)
        for q0 in range(cuda.grid(1), n_groups, stride * groups):
            w = cuda.local.array((groups, 3), uint32)
            for k in range(groups):
                q = q0 + k * stride
                if q < n_groups:
                    w[k, 0] = words[3 * q]
                    w[k, 1] = words[3 * q + 1]
                    w[k, 2] = words[3 * q + 2]
            for k in range(groups):
                q = q0 + k * stride
                if q < n_groups:
                    y0, y1, y2, y3 = _grays_of_words(w[k, 0], w[k, 1], w[k, 2])
                    g[4 * q] = y0
                    g[4 * q + 1] = y1
                    g[4 * q + 2] = y2
                    g[4 * q + 3] = y3

    return kernel


_gray_words1 = _gray_words_kernel(1)


def _gray_launch(kernel, blocks_per_sm, pixels=4, words=np.uint32, pairs=False):
    """A launch for a kernel taking `pixels` pixels per step from the image as `words`,
    writing grays as floats or (pairs) complex64; other pixel counts take gray_flat4."""
    def launch(image, gray):
        n = gray.size
        if n % pixels:
            return gray_flat4(image, gray)
        blocks = max(1, min((n // pixels + 255) // 256, SMS * blocks_per_sm))
        kernel[blocks, 256](image.reshape(image.size).view(words),
                            gray.reshape(n).view(np.complex64) if pairs else gray.reshape(n))
    return launch


gray_words1 = _gray_launch(_gray_words1, 1 << 20)  # one group per thread, no loop


@cuda.jit
def _gray_words_pair_stores(words, g2):
    """The target's loop, its 4 grays stored as 2 complex64 (8-byte) stores, not 4 floats."""
    for q in range(cuda.grid(1), g2.size // 2, cuda.gridsize(1)):
        y0, y1, y2, y3 = _grays_of_words(words[3 * q], words[3 * q + 1], words[3 * q + 2])
        g2[2 * q] = complex(y0, y1)
        g2[2 * q + 1] = complex(y2, y3)


gray_pair_stores_16 = _gray_launch(_gray_words_pair_stores, 16, pairs=True)
gray_pair_stores_8 = _gray_launch(_gray_words_pair_stores, 8, pairs=True)


@cuda.jit
def _gray_u64(words, g2):
    """8 pixels = 24 bytes = 3 uint64 loads per step, split into uint32 halves at once (no
    64-bit shifts per byte); 4 complex64 stores."""
    for q in range(cuda.grid(1), g2.size // 4, cuda.gridsize(1)):
        d0 = words[3 * q]
        d1 = words[3 * q + 1]
        d2 = words[3 * q + 2]
        w0 = uint32(d0 & uint64(0xFFFFFFFF))
        w1 = uint32(d0 >> uint64(32))
        w2 = uint32(d1 & uint64(0xFFFFFFFF))
        w3 = uint32(d1 >> uint64(32))
        w4 = uint32(d2 & uint64(0xFFFFFFFF))
        w5 = uint32(d2 >> uint64(32))
        y0, y1, y2, y3 = _grays_of_words(w0, w1, w2)
        y4, y5, y6, y7 = _grays_of_words(w3, w4, w5)
        g2[4 * q] = complex(y0, y1)
        g2[4 * q + 1] = complex(y2, y3)
        g2[4 * q + 2] = complex(y4, y5)
        g2[4 * q + 3] = complex(y6, y7)


gray_u64_16 = _gray_launch(_gray_u64, 16, pixels=8, words=np.uint64, pairs=True)
gray_u64_8 = _gray_launch(_gray_u64, 8, pixels=8, words=np.uint64, pairs=True)


@cuda.jit
def _gray_8px(words, g):
    """8 pixels = 6 uint32 words per step, all 6 loads before any of the 8 stores."""
    for q in range(cuda.grid(1), g.size // 8, cuda.gridsize(1)):
        w0 = words[6 * q]
        w1 = words[6 * q + 1]
        w2 = words[6 * q + 2]
        w3 = words[6 * q + 3]
        w4 = words[6 * q + 4]
        w5 = words[6 * q + 5]
        y0, y1, y2, y3 = _grays_of_words(w0, w1, w2)
        y4, y5, y6, y7 = _grays_of_words(w3, w4, w5)
        g[8 * q] = y0
        g[8 * q + 1] = y1
        g[8 * q + 2] = y2
        g[8 * q + 3] = y3
        g[8 * q + 4] = y4
        g[8 * q + 5] = y5
        g[8 * q + 6] = y6
        g[8 * q + 7] = y7


gray_8px_16 = _gray_launch(_gray_8px, 16, pixels=8)
gray_8px_64 = _gray_launch(_gray_8px, 64, pixels=8)
gray_words_16 = _gray_launch(_gray_words1, 16)  # the target until 2026-11-29
gray_words_32 = _gray_launch(_gray_words1, 32)
# _gray_launch(_gray_words1, 64), one group per step of a grid-stride loop, is now the target.

# ---------------------------------------------------------------- transpose


def _transpose_stride_kernel(tile, rows, blocks_per_sm):
    """The target's grid-stride loop over tiles, with other tile shapes and grid sizes."""
    padded = tile + 1

    @cuda.jit
    def kernel(a, out):
        buf = cuda.shared.array((tile, padded), float32)
        m, n = a.shape
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        across = (n + tile - 1) // tile
        tiles = across * ((m + tile - 1) // tile)
        for t in range(cuda.blockIdx.x, tiles, cuda.gridDim.x):
            col0 = (t % across) * tile
            row0 = (t // across) * tile
            for c in range(0, tile, 32):
                col = col0 + tx + c
                for k in range(0, tile, rows):
                    row = row0 + ty + k
                    if row < m and col < n:
                        buf[ty + k, tx + c] = a[row, col]
            cuda.syncthreads()
            for c in range(0, tile, 32):
                col = row0 + tx + c
                for k in range(0, tile, rows):
                    row = col0 + ty + k
                    if row < n and col < m:
                        out[row, col] = buf[tx + c, ty + k]
            cuda.syncthreads()

    def launch(a, out):
        m, n = a.shape
        tiles = ((n + tile - 1) // tile) * ((m + tile - 1) // tile)
        kernel[max(1, min(tiles, SMS * blocks_per_sm)), (32, rows)](a, out)

    return launch


def transpose_four_byte_tiles(a, out):
    """The target's path for odd shapes (its whole self before the pairs), on any shape."""
    m, n = a.shape
    tiles = ((n + 31) // 32) * ((m + 31) // 32)
    reference_module("transpose")._transpose_tiled_grid_stride[min(tiles, SMS * 64), (32, 8)](a, out)


transpose_stride_32_r8_x128 = _transpose_stride_kernel(32, 8, 128)

T_PAIR_PADDED = 65  # 64 rows of `a` + 1, as the target's PAIR_TILE_PADDED

# Sixth session (2026-11-29, five H200s): ncu showed the pair kernel's 39 registers a thread
# fit 6 blocks of 256 per SM, so the target's 16 per SM ran 2.67 waves. In one wave (6 per SM)
# 0.583-0.584 ms against 0.597-0.600; 12 per SM 0.584, 18 per SM 0.588-0.592: one wave
# (grader.occupancy) became the target (until the seventh session, below).
# Slower or no better: two shared tiles used in turn with one barrier per tile (0.705 ms at
# 8 or 16 blocks per SM, 0.883 with 128 threads); `out` written with evict-first stores,
# cuda.stcs (0.604 at 16 per SM, 0.588 in one wave); 16-byte loads and stores through inline
# PTX (ld/st.global.v2.u64 via numba.cuda.extending.intrinsic; SASS LDG.E.128, STG.E.128), a
# 64 × 32 tile of 4-float chunks (0.582-0.586; the plain copy with them 0.543 against 0.552
# with 8 bytes): not worth inline PTX in a course's reference kernel. The target with its
# tile load and store moved into device functions (for candidates to share) ran 0.650-0.651
# against 0.600, so the target keeps its body. With the body as it is, in one wave: tiles
# taken 2, 16 or 64 tile-rows at a time or all down the columns of `a` (0.604, 0.615, 0.611,
# 0.610 ms against 0.584); the pipelined kernel, pipelined_wave (0.608-0.612). No Numba copy
# of the same 2 GiB beat the ceiling's copy kernel (0.549 ms; cudaMemcpy 0.503): one wave
# with 4 or 8 words in flight (0.549, 0.547), evict-first loads and stores (0.562-0.564),
# each block copying a contiguous stretch of its own instead of a grid-stride loop
# (0.785-0.799). The 90% goal (0.559 ms at 4.27 TB/s) is within 2% of that copy, which
# transposes nothing. Other pair tiles in one wave (the kernel's loops generalised to rows ×
# columns of `a`; the target's 64 × 32 written that way ran 0.584, as the target): 64 × 64
# 0.605 ms, 128 × 32 0.745, 64 × 128 0.709, 128 × 64 0.698. Histogram: see its section.


# Seventh session (2026-11-29), first with the 64 × 32 target (0.583-0.584 ms), the comments
# up to here being about that kernel: other pair tiles in one wave on 1-D
# blocks (_transpose_pair_tiles; 64 × 32 on 256 threads 0.583-0.585, as the target): 32 × 64
# 0.618-0.620, 64 × 64 on 512 threads 0.599-0.609, 64 × 32 on 128 threads 0.682-0.688, 32 × 32
# on 128 threads 0.644-0.646; the target's kernel compiled for 8 or 7 blocks per SM (launch
# bounds, 32 registers) 0.689-0.698; its grid at 4 or 5 blocks per SM 0.640, 0.593. PyTorch's
# own transpose copy (out.copy_(a.t())) 1.837-1.859 ms, CuPy's a.T copy 1.858 (bench/run.py).
# Hopper's bulk copies (TMA: cp.async.bulk with an mbarrier, through inline PTX intrinsics in
# a scratch script, not kept): the same 2 GiB copied in 16 KB bulk copies, 4, 8 or 12 blocks
# per SM, 0.541-0.546 ms, no faster than SM loads and stores (0.549; 16-byte 0.543), so no
# SM-issued copy tried comes near cudaMemcpy's 0.502; transposes whose tile rows go in and
# out by bulk copies (one thread issuing a 128-512 byte copy per row of 32 × 64, 64 × 64,
# 32 × 128 or 64 × 32 tiles, transposed in shared memory between them) 0.98-1.29 ms. Cache
# hints on the target's loads (_hinted_load, inline PTX): .L2::256B, the L2 fetching the
# neighbouring tile's 128 bytes of the row with each, 0.578 ms (x1.009 against the target's
# 0.584, the best transpose yet, still 87%); .nc.L2::256B 0.580; .L2::128B 0.583; .nc 0.584.
# The same .L2::256B hint made the plain copy slower (0.553 against 0.546).
# Then the new target: the 64 × 64 pair tile on 256 threads stepping from tile to tile
# (_transpose_pair_tiles(64, 64, 256, stepped=True), now kernels/transpose.py and timed as
# "target", not as an entry of its own) 0.547 ms in two calls, as fast as the plain copy
# (0.547-0.550), against 0.583-0.584 for the 64 × 32 tile in the same calls. Around it: the
# same tile dividing each tile's number 0.552; the 64 × 32 tile stepping 0.617-0.622 (slower
# than dividing); 64 × 64 on 512 threads 0.579-0.609; with the .L2::256B hint 0.557-0.558;
# tiles taken 2 or 4 tile-rows at a time (with the hint, in a build whose extra index
# arithmetic alone cost 2%) 0.599, 0.618 against 0.590.


def _pair_launch(kernel, blocks_per_sm, rows=64, cols=32, block=(16, 16)):
    """A launch of a kernel over pair tiles of `rows` × `cols` of `a` (by default 64 × 32 on
    16 × 16 threads, the target until the seventh session), odd shapes to the 4-byte tiles;
    blocks_per_sm=None: one wave (grader.occupancy), as the target."""
    threads = math.prod(block) if isinstance(block, tuple) else block

    def launch(a, out):
        m, n = a.shape
        if m % 2 or n % 2:
            return transpose_four_byte_tiles(a, out)
        tiles = ((n + cols - 1) // cols) * ((m + rows - 1) // rows)
        args = reference_module("transpose").pair_views(a, out)
        grid = one_wave(kernel, args, threads) if blocks_per_sm is None else SMS * blocks_per_sm
        kernel[max(1, min(tiles, grid)), block](*args)

    return launch


def _hinted_load(qualifier):
    """load(array, index) as one `ld.global<qualifier>` of a 64-bit element (inline PTX), e.g.
    ".L2::256B": the L2 fetches the whole 256-byte block around it from DRAM. A plain load on
    the simulator."""
    if config.ENABLE_CUDASIM:
        @cuda.jit(device=True)
        def load(array, index):
            return array[index]

        return load

    from llvmlite import ir
    from numba.cuda.cache_hints import _get_element_pointer
    from numba.cuda.extending import intrinsic

    @intrinsic
    def load(typingctx, array, index):
        def codegen(context, builder, sig, args):
            ptr = _get_element_pointer(context, builder, sig.args[1], args[1], sig.args[0], args[0])
            value = context.get_value_type(sig.args[0].dtype)
            asm = ir.InlineAsm(ir.FunctionType(value, [ptr.type]), f"ld.global{qualifier}.b64 $0, [$1];", "=l,l")
            return builder.call(asm, [ptr])

        return array.dtype(array, index), codegen

    return load


@cuda.jit(device=True)
def _plain_load(array, index):
    return array[index]


def _transpose_pair_tiles(rows, cols, threads, load=_plain_load, stepped=False):
    """The pair kernel generalised to tiles of `rows` × `cols` of `a` on a 1-D block of
    `threads`, in one wave: (64, 32, 256) is the target until the seventh session, thread for
    thread; (64, 64, 256, stepped=True) the target's kernel now.
    `load(a64, (r, q))` reads a pair (_hinted_load for cache hints). stepped: the next tile's
    row and column found by adding the grid's step, not by dividing its number (two 64-bit
    divisions a tile)."""
    across_in = cols // 2  # threads along a tile row of `a` (one pair each)
    across_out = rows // 2  # threads along a tile row of `out`
    rows_in = threads // across_in  # rows of `a` per pass
    rows_out = threads // across_out  # rows of `out` per pass
    shape = (cols, rows + 1)  # tile[column of a, row of a], rows padded by one word

    @cuda.jit
    def kernel(a64, out64):
        tile = cuda.shared.array(shape, uint32)
        m = a64.shape[0]
        n = out64.shape[0]
        t = cuda.threadIdx.x
        q = t % across_in
        ty = t // across_in
        px = t % across_out
        oy = t // across_out
        across = (n + cols - 1) // cols
        down = (m + rows - 1) // rows
        tiles = across * down
        tile_col = cuda.blockIdx.x % across
        tile_row = cuda.blockIdx.x // across
        step_cols = cuda.gridDim.x % across
        step_rows = cuda.gridDim.x // across
        for k0 in range(cuda.blockIdx.x, tiles, cuda.gridDim.x):
            if stepped:
                c0 = tile_col * cols
                r0 = tile_row * rows
                tile_col += step_cols
                tile_row += step_rows
                if tile_col >= across:
                    tile_col -= across
                    tile_row += 1
            else:
                c0 = (k0 % across) * cols
                r0 = (k0 // across) * rows
            for k in range(rows // rows_in):
                r = r0 + ty + rows_in * k
                qq = c0 // 2 + q
                if r < m and 2 * qq < n:
                    pair = load(a64, (r, qq))
                    tile[2 * q, ty + rows_in * k] = uint32(pair & 0xFFFFFFFF)
                    tile[2 * q + 1, ty + rows_in * k] = uint32(pair >> 32)
            cuda.syncthreads()
            for k in range(cols // rows_out):
                c = c0 + oy + rows_out * k
                p = r0 // 2 + px
                if c < n and 2 * p < m:
                    lo = uint64(tile[oy + rows_out * k, 2 * px])
                    hi = uint64(tile[oy + rows_out * k, 2 * px + 1])
                    out64[c, p] = lo | (hi << uint64(32))
            cuda.syncthreads()

    return _pair_launch(kernel, None, rows, cols, threads)


def _transpose_pairs_pipelined(blocks_per_sm):
    """The 64 × 32 uint64-pair tile (the target until the seventh session), software-
    pipelined: the next tile's 4 pairs per thread are loaded into registers before the
    current tile is stored from shared memory, so a block's loads and stores overlap instead
    of alternating."""

    @cuda.jit(device=True)
    def pair(a64, k0, across, tx, ty, k):
        """This thread's k-th pair of tile k0 (0 past the edges)."""
        r = (k0 // across) * 64 + ty + 16 * k
        q = (k0 % across) * 16 + tx
        return a64[r, q] if r < a64.shape[0] and q < a64.shape[1] else uint64(0)

    @cuda.jit
    def kernel(a64, out64):
        tile = cuda.shared.array((32, T_PAIR_PADDED), uint32)
        nxt = cuda.local.array(4, uint64)
        m = a64.shape[0]
        n = out64.shape[0]
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        t = ty * 16 + tx
        px = t % 32
        oy = t // 32
        across = (n + 31) // 32
        tiles = across * ((m + 63) // 64)
        k0 = cuda.blockIdx.x
        if k0 < tiles:
            for k in range(4):
                nxt[k] = pair(a64, k0, across, tx, ty, k)
        while k0 < tiles:
            c0 = (k0 % across) * 32
            r0 = (k0 // across) * 64
            for k in range(4):
                both = nxt[k]
                tile[2 * tx, ty + 16 * k] = uint32(both & uint64(0xFFFFFFFF))
                tile[2 * tx + 1, ty + 16 * k] = uint32(both >> uint64(32))
            cuda.syncthreads()
            k1 = k0 + cuda.gridDim.x
            if k1 < tiles:  # the next tile's loads, in flight while this one is stored
                for k in range(4):
                    nxt[k] = pair(a64, k1, across, tx, ty, k)
            for k in range(4):
                c = c0 + oy + 8 * k
                p = r0 // 2 + px
                if c < n and 2 * p < m:
                    lo = uint64(tile[oy + 8 * k, 2 * px])
                    hi = uint64(tile[oy + 8 * k, 2 * px + 1])
                    out64[c, p] = lo | (hi << uint64(32))
            cuda.syncthreads()
            k0 = k1

    return _pair_launch(kernel, blocks_per_sm)


transpose_pipelined_wave = _transpose_pairs_pipelined(None)  # one wave (grader.occupancy)
transpose_pipelined_8 = _transpose_pairs_pipelined(8)
transpose_pipelined_16 = _transpose_pairs_pipelined(16)


def transpose_probe_copy(a, out):
    """Not a transpose: `a` copied flat into `out` by the ceiling's 8-byte copy kernel, the
    floor any transpose of these bytes is measured against."""
    from grader.device import _copy_kernel

    global _COPY8
    if _COPY8 is None:
        _COPY8 = _copy_kernel()
    src, dst = a.reshape(a.size).view(np.uint64), out.reshape(out.size).view(np.uint64)
    _COPY8[SMS * 8, 256](src, dst)  # as grader/device.py launches it


def transpose_probe_memcpy(a, out):
    """Not a transpose: the driver's device-to-device copy of the same bytes."""
    out.reshape(out.size).copy_to_device(a.reshape(a.size))


_COPY8 = None

# ---------------------------------------------------------------- stencil_1d


@cuda.jit
def _stencil_thread_per_output(x, w, out):
    n = x.size
    i = cuda.grid(1)
    w0 = w[0]; w1 = w[1]; w2 = w[2]; w3 = w[3]; w4 = w[4]; w5 = w[5]; w6 = w[6]  # noqa: E702
    if i >= 3 and i + 3 < n:
        out[i] = (w0 * x[i - 3] + w1 * x[i - 2] + w2 * x[i - 1] + w3 * x[i]
                  + w4 * x[i + 1] + w5 * x[i + 2] + w6 * x[i + 3])
    elif i < n:
        acc = float32(0.0)
        for k in range(7):
            j = i + k - 3
            if j >= 0 and j < n:
                acc += w[k] * x[j]
        out[i] = acc


def stencil_thread_per_output(x, weights, out):
    _stencil_thread_per_output[(x.size + 255) // 256, 256](x, weights, out)


@cuda.jit(device=True)
def _halo(tile, x, start, span, t):
    """Threads 0-2 load the 3 elements on each side of the tile x[start:start + span]."""
    if t < 3:
        j = start - 3 + t
        tile[t] = x[j] if j >= 0 else float32(0.0)
        j = start + span + t
        tile[span + 3 + t] = x[j] if j < x.size else float32(0.0)


@cuda.jit(device=True)
def _from_tile(tile, q, w0, w1, w2, w3, w4, w5, w6):
    """The 7-point stencil at tile position q + 3 (the weights held in registers)."""
    return (w0 * tile[q] + w1 * tile[q + 1] + w2 * tile[q + 2] + w3 * tile[q + 3]
            + w4 * tile[q + 4] + w5 * tile[q + 5] + w6 * tile[q + 6])


def _stencil_tile_kernel(per_thread, threads=256):
    """A block of `threads` threads makes threads·per_thread outputs from a shared tile loaded
    with per_thread coalesced loads each (+ a 3-element halo on each side)."""
    span = threads * per_thread
    tile_size = span + 6  # Numba wants a plain name for a shared array's size

    @cuda.jit
    def kernel(x, w, out):
        tile = cuda.shared.array(tile_size, float32)
        n = x.size
        t = cuda.threadIdx.x
        start = cuda.blockIdx.x * span
        for k in range(per_thread):
            j = start + t + k * threads
            tile[t + k * threads + 3] = x[j] if j < n else float32(0.0)
        _halo(tile, x, start, span, t)
        cuda.syncthreads()
        w0 = w[0]; w1 = w[1]; w2 = w[2]; w3 = w[3]; w4 = w[4]; w5 = w[5]; w6 = w[6]  # noqa: E702
        for k in range(per_thread):
            q = t + k * threads
            i = start + q
            if i < n:
                out[i] = _from_tile(tile, q, w0, w1, w2, w3, w4, w5, w6)

    def launch(x, weights, out):
        kernel[(x.size + span - 1) // span, threads](x, weights, out)

    return launch


stencil_tile2 = _stencil_tile_kernel(2)
stencil_tile4 = _stencil_tile_kernel(4)  # the target until 2026-11-29 (the lesson's tile)

def _stencil_persistent(blocks_per_sm, threads=256, per_thread=4):
    """The target's tile, in a grid-stride loop over tiles by a grid that fits on the GPU at
    once, with the next tile's loads issued before the current tile is used: the loads of
    one tile are in flight while the block computes and stores the one before."""
    span = threads * per_thread
    tile_size = span + 6

    @cuda.jit
    def kernel(x, w, out):
        tile = cuda.shared.array(tile_size, float32)
        nxt = cuda.local.array(per_thread, float32)
        n = x.size
        t = cuda.threadIdx.x
        w0 = w[0]; w1 = w[1]; w2 = w[2]; w3 = w[3]; w4 = w[4]; w5 = w[5]; w6 = w[6]  # noqa: E702
        tiles = (n + span - 1) // span
        b = cuda.blockIdx.x
        for k in range(per_thread):
            j = b * span + t + k * threads
            nxt[k] = x[j] if j < n else float32(0.0)
        while b < tiles:
            start = b * span
            for k in range(per_thread):
                tile[t + k * threads + 3] = nxt[k]
            _halo(tile, x, start, span, t)
            cuda.syncthreads()
            b2 = b + cuda.gridDim.x
            for k in range(per_thread):  # the next tile's loads, in flight during the stores
                j = b2 * span + t + k * threads
                nxt[k] = x[j] if j < n else float32(0.0)
            for k in range(per_thread):
                q = t + k * threads
                i = start + q
                if i < n:
                    out[i] = _from_tile(tile, q, w0, w1, w2, w3, w4, w5, w6)
            cuda.syncthreads()
            b = b2

    def launch(x, weights, out):
        tiles = (x.size + span - 1) // span
        kernel[max(1, min(tiles, SMS * blocks_per_sm)), threads](x, weights, out)

    return launch


stencil_persistent_8 = _stencil_persistent(8)
stencil_persistent_4 = _stencil_persistent(4)


def _stencil_registers4_launch(blocks_per_sm):
    """The target's kernel (4 outputs per thread from 10 loads in registers), its grid capped
    at blocks_per_sm per SM: the target has one step per thread."""
    kernel = reference_module("stencil_1d")._stencil_4_per_thread

    def launch(x, weights, out):
        kernel[max(1, min((x.size + 1023) // 1024, SMS * blocks_per_sm)), 256](x, weights, out)
    return launch


stencil_registers4 = _stencil_registers4_launch(16)
stencil_registers4_8 = _stencil_registers4_launch(8)
stencil_registers4_64 = _stencil_registers4_launch(64)
stencil_registers4_128 = _stencil_registers4_launch(128)
stencil_registers4_32 = _stencil_registers4_launch(32)
# One step per thread (no cap on the grid) is now the target. 8 outputs per thread from 14
# loads, 32 or 64 blocks per SM: 0.522, 0.517 ms (2026-11-29), dropped.


@cuda.jit
def _stencil_pairs4(x, xp, w, outp):
    """registers4 with 8-byte accesses: outputs 4q..4q+3 from the pairs 2q-2 .. 2q+3
    (elements 4q-4 .. 4q+7) as complex64, stored as 2 complex64."""
    n = x.size
    w0 = w[0]; w1 = w[1]; w2 = w[2]; w3 = w[3]; w4 = w[4]; w5 = w[5]; w6 = w[6]  # noqa: E702
    for q in range(cuda.grid(1), (n + 3) // 4, cuda.gridsize(1)):
        i = 4 * q
        if i >= 4 and i + 8 <= n:
            p0 = xp[2 * q - 2]; p1 = xp[2 * q - 1]; p2 = xp[2 * q]  # noqa: E702
            p3 = xp[2 * q + 1]; p4 = xp[2 * q + 2]; p5 = xp[2 * q + 3]  # noqa: E702
            a0 = p0.imag; a1 = p1.real; a2 = p1.imag; a3 = p2.real; a4 = p2.imag  # noqa: E702
            a5 = p3.real; a6 = p3.imag; a7 = p4.real; a8 = p4.imag; a9 = p5.real  # noqa: E702
            o0 = w0 * a0 + w1 * a1 + w2 * a2 + w3 * a3 + w4 * a4 + w5 * a5 + w6 * a6
            o1 = w0 * a1 + w1 * a2 + w2 * a3 + w3 * a4 + w4 * a5 + w5 * a6 + w6 * a7
            o2 = w0 * a2 + w1 * a3 + w2 * a4 + w3 * a5 + w4 * a6 + w5 * a7 + w6 * a8
            o3 = w0 * a3 + w1 * a4 + w2 * a5 + w3 * a6 + w4 * a7 + w5 * a8 + w6 * a9
            outp[2 * q] = complex(o0, o1)
            outp[2 * q + 1] = complex(o2, o3)
        else:
            for o in range(i, min(i + 4, n)):
                acc = float32(0.0)
                for k in range(7):
                    j = o + k - 3
                    if j >= 0 and j < n:
                        acc += w[k] * x[j]
                if o % 2 == 0:
                    outp[o // 2] = complex(acc, outp[o // 2].imag)
                else:
                    outp[o // 2] = complex(outp[o // 2].real, acc)


def _stencil_pairs4_launch(blocks_per_sm):
    def launch(x, weights, out):
        n = x.size
        if n % 2:
            return stencil_registers4(x, weights, out)
        grid = max(1, min((n + 1023) // 1024, SMS * blocks_per_sm))
        _stencil_pairs4[grid, 256](x, x.view(np.complex64), weights, out.view(np.complex64))
    return launch


stencil_pairs4_16 = _stencil_pairs4_launch(16)
stencil_tile4_t128 = _stencil_tile_kernel(4, 128)
stencil_tile4_t512 = _stencil_tile_kernel(4, 512)

# ---------------------------------------------------------------- reduce_sum


def _sum_kernel(accumulators, blocks_per_sm):
    """The target's design with `accumulators` independent sums per thread: that many loads
    in flight per loop step instead of one."""

    @cuda.jit
    def kernel(x, out):
        partial = cuda.shared.array(256, float32)
        tid = cuda.threadIdx.x
        acc = cuda.local.array(accumulators, float32)
        for k in range(accumulators):
            acc[k] = float32(0.0)
        stride = cuda.gridsize(1)
        n = x.size
        i = cuda.grid(1)
        while i + (accumulators - 1) * stride < n:
            for k in range(accumulators):
                acc[k] += x[i + k * stride]
            i += accumulators * stride
        while i < n:
            acc[0] += x[i]
            i += stride
        total = float32(0.0)
        for k in range(accumulators):
            total += acc[k]
        partial[tid] = total
        cuda.syncthreads()
        s = 128
        while s > 0:
            if tid < s:
                partial[tid] += partial[tid + s]
            cuda.syncthreads()
            s //= 2
        if tid == 0:
            cuda.atomic.add(out, 0, partial[0])

    def launch(x, out):
        kernel[max(1, min((x.size + 255) // 256, SMS * blocks_per_sm)), 256](x, out)

    return launch


sum_acc4_x8 = _sum_kernel(4, 8)
sum_acc4_x16 = _sum_kernel(4, 16)
# _sum_kernel(8, 8) is now the target.
sum_acc2_x16 = _sum_kernel(2, 16)

# ---------------------------------------------------------------- softmax_fused


@cuda.jit(device=True)
def _warp_max(v):
    for offset in (16, 8, 4, 2, 1):
        v = max(v, cuda.shfl_xor_sync(0xFFFFFFFF, v, offset))
    return v


@cuda.jit(device=True)
def _warp_sum(v):
    for offset in (16, 8, 4, 2, 1):
        v += cuda.shfl_xor_sync(0xFFFFFFFF, v, offset)
    return v


def _softmax_shuffle_kernel(items):
    """One block per row, `items` values per thread in registers, warp-shuffle reductions
    (two barriers per reduction instead of log2(threads))."""

    @cuda.jit
    def kernel(x, out):
        shared = cuda.shared.array(32, float32)
        vals = cuda.local.array(items, float32)
        row = cuda.blockIdx.x
        tid = cuda.threadIdx.x
        lane = tid % 32
        warp = tid // 32
        warps = cuda.blockDim.x // 32
        step = cuda.blockDim.x
        cols = x.shape[1]
        m = float32(-math.inf)
        for j in range(items):
            c = tid + j * step
            v = float32(-math.inf)
            if c < cols:
                v = x[row, c]
            vals[j] = v
            m = max(m, v)
        m = _warp_max(m)
        if lane == 0:
            shared[warp] = m
        cuda.syncthreads()
        m = shared[lane] if lane < warps else float32(-math.inf)
        m = _warp_max(m)
        cuda.syncthreads()
        s = float32(0.0)
        for j in range(items):
            e = float32(math.exp(vals[j] - m))
            vals[j] = e
            s += e
        s = _warp_sum(s)
        if lane == 0:
            shared[warp] = s
        cuda.syncthreads()
        s = shared[lane] if lane < warps else float32(0.0)
        inv = float32(1.0) / _warp_sum(s)
        for j in range(items):
            c = tid + j * step
            if c < cols:
                out[row, c] = vals[j] * inv

    def launch(x, out):
        rows, cols = x.shape
        threads = 32
        while threads * items < cols and threads < 1024:
            threads *= 2
        kernel[rows, threads](x, out)

    return launch


softmax_shuffle32 = _softmax_shuffle_kernel(32)


def _softmax_persistent_kernel(items, blocks_per_sm):
    """A grid that fits on the GPU at once loops over the rows; each block issues the loads of
    its next row before reducing and storing the current one, so memory stays busy through
    the reductions (the target's block reductions, `items` values per thread in registers)."""
    target = reference_module("softmax_fused")
    block_max, block_sum, max_threads = target._block_max, target._block_sum, target.MAX_THREADS

    @cuda.jit
    def kernel(x, out):
        shared = cuda.shared.array(max_threads, float32)
        vals = cuda.local.array(items, float32)
        nxt = cuda.local.array(items, float32)
        tid = cuda.threadIdx.x
        step = cuda.blockDim.x
        rows, cols = x.shape
        row = cuda.blockIdx.x
        for j in range(items):
            c = tid + j * step
            nxt[j] = x[row, c] if row < rows and c < cols else float32(-math.inf)
        while row < rows:
            m = float32(-math.inf)
            for j in range(items):
                vals[j] = nxt[j]
                m = max(m, nxt[j])
            after = row + cuda.gridDim.x
            for j in range(items):  # the next row's loads, in flight during this row's work
                c = tid + j * step
                nxt[j] = x[after, c] if after < rows and c < cols else float32(-math.inf)
            m = block_max(shared, m)
            s = float32(0.0)
            for j in range(items):
                e = float32(math.exp(vals[j] - m))
                vals[j] = e
                s += e
            inv = float32(1.0) / block_sum(shared, s)
            for j in range(items):
                c = tid + j * step
                if c < cols:
                    out[row, c] = vals[j] * inv
            row = after

    def launch(x, out):
        rows, cols = x.shape
        threads = 32
        while threads * items < cols and threads < 1024:
            threads *= 2
        kernel[max(1, min(rows, SMS * blocks_per_sm)), threads](x, out)

    return launch


# 16 or 8 per thread (512, 1024 threads) failed to launch: too many registers per block.
softmax_persistent32_x2 = _softmax_persistent_kernel(32, 2)


def _softmax_pairs(pairs):
    """The target's pair kernel (rows as complex64 pairs) with `pairs` pairs per thread."""
    target = reference_module("softmax_fused")
    kernel = target._pairs_kernel(pairs)

    def launch(x, out):
        rows, cols = x.shape
        if cols % 2:
            return target.target(x, out)
        kernel[rows, target._threads_for(cols // 2, pairs)](x.view(np.complex64), out.view(np.complex64))

    return launch


# 16 pairs per thread is the target.
softmax_pairs32 = _softmax_pairs(32)
softmax_pairs8 = _softmax_pairs(8)
softmax_pairs4 = _softmax_pairs(4)


def softmax_floats32(x, out):
    """The target until 2026-11-29: 32 floats per thread (its path for odd rows)."""
    target = reference_module("softmax_fused")
    target._softmax_registers[x.shape[0], target._threads_for(x.shape[1], target.TARGET_ITEMS)](x, out)

# ---------------------------------------------------------------- histogram


HIST_WARPS = 8


PROBE_SPREAD, PROBE_BANKS, PROBE_NO_ATOMICS, PROBE_BANKS_ADD, PROBE_BANKS_PACKED = 1, 2, 3, 4, 5


def _histogram_in_flight(loads, blocks_per_sm, splits=1, word_bytes=8, probe=0):
    """Per-warp histograms (the target until the eighth session) with `loads` loads of
    `word_bytes` bytes per step (a grid-stride apart, all loads before any atomic; 16 bytes =
    two uint64 words by one ld.global.v2.u64). `splits` > 1: each warp's histogram split into copies taken by lanes
    in turn, rows padded by one word (a hot bin's lanes queue on `splits` addresses).
    `probe`: no longer a histogram, to find what bounds the loop: PROBE_SPREAD, each lane
    adds to bin value ^ lane (equal values in a warp hit 32 different addresses);
    PROBE_BANKS, each lane adds 1 to a bin in its own bank; PROBE_BANKS_ADD, the same with
    a 1 the compiler cannot see (an ATOMS.ADD of a register, not ATOMS.POPC.INC);
    PROBE_BANKS_PACKED, 1 or 65536 by the value's low bit, as 16-bit counters two to a
    word would add; PROBE_NO_ATOMICS, the loads and byte unpacking only."""
    copies = HIST_WARPS * splits
    row = 257 if splits > 1 else 256
    word_type = uint32 if word_bytes == 4 else uint64
    per_load = 2 if word_bytes == 16 else 1  # words per load
    word_size = min(word_bytes, 8)  # bytes per word
    held = loads * per_load  # words held per step (a local array's size must be a constant)

    @cuda.jit(device=True)
    def count(hist, mine, v, lane, one):
        if probe == PROBE_SPREAD:
            cuda.atomic.add(hist, (mine, v ^ lane), 1)
        elif probe == PROBE_BANKS:
            cuda.atomic.add(hist, (mine, (v & 0xE0) | lane), 1)
        elif probe == PROBE_BANKS_ADD:
            cuda.atomic.add(hist, (mine, (v & 0xE0) | lane), one)
        elif probe == PROBE_BANKS_PACKED:
            cuda.atomic.add(hist, (mine, (v & 0xE0) | lane), one << ((v & 1) * 16))
        elif probe == PROBE_NO_ATOMICS:
            return v
        else:
            cuda.atomic.add(hist, (mine, v), 1)
        return 0

    @cuda.jit
    def kernel(words, values, bins):
        hist = cuda.shared.array((copies, row), int32)
        got = cuda.local.array(held, word_type)
        t = cuda.threadIdx.x
        lane = t % 32
        mine = (t // 32) * splits + lane % splits
        for c in range(copies):
            hist[c, t] = 0
        cuda.syncthreads()
        stride = cuda.gridsize(1)
        n = words.size // per_load
        i = cuda.grid(1)
        acc = 0
        one = int32(bins.size // 256)  # 1, unknown to the compiler
        while i + (loads - 1) * stride < n:
            for k in range(loads):
                if per_load == 2:
                    got[2 * k], got[2 * k + 1] = load_pair(words, i + k * stride)
                else:
                    got[k] = words[i + k * stride]
            for k in range(held):
                word = got[k]
                for b in range(word_size):
                    acc += count(hist, mine, int32((word >> (8 * b)) & 0xFF), lane, one)
            i += loads * stride
        while i < n:
            for h in range(per_load):
                word = words[per_load * i + h]
                for b in range(word_size):
                    acc += count(hist, mine, int32((word >> (8 * b)) & 0xFF), lane, one)
            i += stride
        tail = values.size - word_bytes * n
        if cuda.blockIdx.x == 0 and t < tail:
            cuda.atomic.add(hist, (0, int32(values[word_bytes * n + t])), 1)
        if acc == 0x5EED5EED:  # a probe's sum must look used
            hist[0, t] = 1
        cuda.syncthreads()
        total = 0
        for c in range(copies):
            total += hist[c, t]
        if total > 0:
            cuda.atomic.add(bins, t, total)

    def launch(values, bins):
        n = values.size
        words = values[: n - n % word_bytes].view(np.uint32 if word_bytes == 4 else np.uint64)
        blocks = max(1, min(words.size // (256 * loads * per_load), SMS * blocks_per_sm))
        kernel[blocks, 256](words, values, bins)

    return launch


def _histogram_lane_columns(warps, share, loads, bits=16):
    """Every lane counts in a column of its own, written into the kernel's body (no device
    functions) and read 16 bytes at a time: bits=16, 16-bit counters two bins to a word
    (word 32 * (v // 2) + lane of its table, 16 KB a table); bits=32, one int32 counter a
    bin (word 32 * v + lane, 32 KB a table). A warp's atomics always fall in 32 different
    banks. `share` warps of a block use one table (fewer tables, more warps per SM; their
    lanes L meet on the hot bin). `loads` 16-byte loads per step. No 16-bit counter may
    pass 65535: the grid grows with n so that a column's `share` lanes count at most 65535
    bytes together."""
    threads = 32 * warps
    tables = warps // share
    rows = 128 if bits == 16 else 256  # words of a lane's column
    table_words = tables * rows * 32
    held = 2 * loads
    lane_bytes = (65535 // share) // 16 * 16 if bits == 16 else 1 << 40  # before a counter fills

    @cuda.jit
    def kernel(words, values, bins):
        table = cuda.shared.array(table_words, uint32)
        total = cuda.shared.array(256, int32)
        got = cuda.local.array(held, uint64)
        t = cuda.threadIdx.x
        col = int32((t // 32) // share * (rows * 32) + t % 32)
        for w in range(t, table_words, threads):
            table[w] = 0
        for v in range(t, 256, threads):
            total[v] = 0
        cuda.syncthreads()
        stride = cuda.gridsize(1)
        n = words.size // 2
        i = cuda.grid(1)
        while i + (loads - 1) * stride < n:
            for k in range(loads):
                got[2 * k], got[2 * k + 1] = load_pair(words, i + k * stride)
            for k in range(held):
                word = got[k]
                for b in range(8):
                    v = int32((word >> (8 * b)) & 0xFF)
                    if bits == 16:
                        cuda.atomic.add(table, col + (v >> 1) * 32, uint32(1 << ((v & 1) * 16)))
                    else:
                        cuda.atomic.add(table, col + v * 32, uint32(1))
            i += loads * stride
        while i < n:
            for h in range(2):
                word = words[2 * i + h]
                for b in range(8):
                    v = int32((word >> (8 * b)) & 0xFF)
                    if bits == 16:
                        cuda.atomic.add(table, col + (v >> 1) * 32, uint32(1 << ((v & 1) * 16)))
                    else:
                        cuda.atomic.add(table, col + v * 32, uint32(1))
            i += stride
        tail = values.size - 16 * n
        if cuda.blockIdx.x == 0 and t < tail:
            cuda.atomic.add(total, int32(values[16 * n + t]), 1)
        cuda.syncthreads()
        for job in range(t, tables * rows, threads):  # a row of one table: 2 bins or 1
            at = job * 32
            low = 0
            high = 0
            for j in range(32):
                w = table[at + (j + job) % 32]  # lanes start on different banks
                if bits == 16:
                    low += w & 0xFFFF
                    high += w >> 16
                else:
                    low += w
            r = job % rows
            if bits == 16:
                cuda.atomic.add(total, 2 * r, low)
                cuda.atomic.add(total, 2 * r + 1, high)
            else:
                cuda.atomic.add(total, r, low)
        cuda.syncthreads()
        for v in range(t, 256, threads):
            if total[v] > 0:
                cuda.atomic.add(bins, v, total[v])

    def launch(values, bins):
        n = values.size
        words = values[: n - n % 16].view(np.uint64)
        pairs = words.size // 2
        lanes_needed = (16 * pairs + lane_bytes - 1) // lane_bytes  # so no counter fills
        grid = max(one_wave(kernel, (words, values, bins), threads), (lanes_needed + threads - 1) // threads)
        kernel[max(1, min(grid, (pairs + threads * loads - 1) // (threads * loads))), threads](words, values, bins)

    return launch


# Seventh session (2026-11-29, H200, copy ceiling 4.26-4.27 TB/s; target 0.094 ms): 16-byte
# loads (load_pair, one ld.global.v2.u64) make the loop without atomics 0.065-0.066 ms (95-97%,
# against 0.075 over uint64 words) and every lane on its own bank 0.070-0.072 (88-90%, against
# 0.081), but the real per-warp histograms over them gain little (2 or 4 loads per step,
# 0.092-0.093; u128_x4): the bank conflicts of a warp's ~16 distinct bins per atomic bound it,
# not the loads. Correct layouts without conflicts were all slower: every lane's own column of
# 16-bit counters, two bins to a word (16 KB a warp), 0.31-0.33 ms through a device function
# over uint64 words, 0.19-0.21 ms written inline over 16-byte loads with a table per warp or per
# 2 warps, 0.172-0.179 with one table shared by 4 or 8 warps (SASS: each count is an ATOMS.ADD
# of 1 or 65536 after ~10 integer instructions, against ATOMS.POPC.INC after 5). Probes over
# 16-byte loads, every lane in its own bank: adding a 1 the compiler cannot see (ATOMS.ADD of a
# register) 0.072 ms, as fast as ATOMS.POPC.INC (0.071); adding 1 or 65536 by the value's low
# bit, as packed 16-bit counters must, 0.101. One int32 column per lane (32 KB a table,
# ATOMS.POPC.INC): a table per warp (one warp a block, 6 warps an SM) 0.364-0.366 ms, per 2
# warps 0.203, per 8 warps 0.141.
# Eighth session (2026-11-29, H200): the lane columns were bound by the instructions that
# address them, not by their layout. ncu on a table addressed in Numba (then one red.shared a
# byte): SM 94% busy, 76.7 M instructions issued against the per-warp target's 52 M, L1 38%.
# Counted through grader/ptx.py's count_bytes (a shift, a mask, an add, the red: ~4.4
# instructions a byte, half on the FMA pipe), one table shared by all the block's warps:
# 1024 threads 0.068-0.069 ms (91-92%, 42 M instructions, DRAM 81%: the new target), 512 0.072, 256
# with 4 loads a step 0.081. Slower: the block's dominant value (the most common of 32
# sampled bytes) XORed to 0 and counted in a word per thread instead of its shared row, a
# select a byte: 0.074-0.076 ms with 1024 threads, 0.083-0.089 with fewer; the same select
# addressed in Numba 0.119-0.142, through cuda.atomic.add 0.180-0.189; the dominant value's
# atomics predicated off instead (ptxas turns `@p red.shared` into a branch a byte)
# 0.145-0.167, in Numba 0.164-0.199; half of every load to per-warp tables, half to lane
# columns, 0.104-0.123; cuda.atomic.add on the lane columns (cols32 below) at 6 to 64 warps an
# SM 0.130-0.357, and 0.473 with 16 loads a step (its 32 words went to local memory).

# ---------------------------------------------------------------- the table

VARIANTS = {
    "thread_ids": {"x4_8": ids_x4_8, "x4_16": ids_x4_16},
    "vector_add": {"x4_8": add_x4_8, "x4_16": add_x4_16, "c64_x4_8": add_c64_x4_8},
    "saxpy": {"x4_8": saxpy_x4_8, "x4_16": saxpy_x4_16, "c64_x4_8": saxpy_c64_x4_8},
    "rgb_to_gray": {"flat4": gray_flat4, "words1": gray_words1, "pair_stores_16": gray_pair_stores_16,
                    "pair_stores_8": gray_pair_stores_8, "u64_16": gray_u64_16, "u64_8": gray_u64_8, "8px_16": gray_8px_16,
                    "8px_64": gray_8px_64, "words_16": gray_words_16, "words_32": gray_words_32},
    "transpose": {"four_byte_tiles": transpose_four_byte_tiles, "stride_32_r8_x128": transpose_stride_32_r8_x128,
                  "pipelined_8": transpose_pipelined_8, "pipelined_16": transpose_pipelined_16,
                  "pipelined_wave": transpose_pipelined_wave,
                  "probe_copy": transpose_probe_copy, "probe_memcpy": transpose_probe_memcpy,
                  "torch a.T copy": "peer", "tiles_64x64_t512": _transpose_pair_tiles(64, 64, 512),
                  "tiles_64x32": _transpose_pair_tiles(64, 32, 256),  # the target until the seventh session
                  "tiles_l2_256": _transpose_pair_tiles(64, 32, 256, _hinted_load(".L2::256B")),
                  "stepped_64x32": _transpose_pair_tiles(64, 32, 256, stepped=True),
                  "tiles_64x64": _transpose_pair_tiles(64, 64, 256),
                  "stepped_64x64_l2_256": _transpose_pair_tiles(64, 64, 256, _hinted_load(".L2::256B"), stepped=True),
                  "stepped_64x64_t512": _transpose_pair_tiles(64, 64, 512, stepped=True)},
    "stencil_1d": {"baseline": exercise("stencil_1d").baseline, "solution": None,
                   "thread_per_output": stencil_thread_per_output, "tile2": stencil_tile2,
                   "tile4_t128": stencil_tile4_t128, "tile4_t512": stencil_tile4_t512,
                   "persistent_8": stencil_persistent_8, "persistent_4": stencil_persistent_4,
                   "tile4": stencil_tile4, "registers4": stencil_registers4,
                   "registers4_8": stencil_registers4_8, "registers4_64": stencil_registers4_64,
                   "registers4_32": stencil_registers4_32, "registers4_128": stencil_registers4_128,
                   "pairs4_16": stencil_pairs4_16},
    "reduce_sum": {"acc2_x16": sum_acc2_x16, "acc4_x8": sum_acc4_x8, "acc4_x16": sum_acc4_x16,
                   "cupy.sum": "peer"},
    "matmul_tiled": {"baseline": exercise("matmul_tiled").baseline, "solution": None},
    "softmax_fused": {"shuffle32": softmax_shuffle32, "persistent32_x2": softmax_persistent32_x2,
                      "floats32": softmax_floats32,
                      "pairs32": softmax_pairs32, "pairs8": softmax_pairs8, "pairs4": softmax_pairs4},
    "histogram": {"per_warp_u64_x4": _histogram_in_flight(4, 8),  # the target until the eighth session
                  "per_warp_u128_x4": _histogram_in_flight(4, 8, word_bytes=16),
                  "cols32_w16_x2": _histogram_lane_columns(16, 16, 2, bits=32),  # the target's table, Numba-indexed
                  "probe_u128_no_atomics": _histogram_in_flight(2, 8, word_bytes=16, probe=PROBE_NO_ATOMICS),
                  "probe_u128_banks": _histogram_in_flight(2, 8, word_bytes=16, probe=PROBE_BANKS)},
}


def correct(ex, launch, dims, seed=3) -> str:
    """'ok' or what went wrong, at `dims`: one run judged exactly as a grading case is."""
    inputs = ex.spec.make_inputs(dims, case_rng(seed, 0))
    outcome = execute(ex.spec, launch, inputs, dims)
    result = judge_case(ex.spec, Case("candidate", dims), outcome, *expected_and_tolerance(ex, inputs))
    return "ok" if result.passed else f"{result.verdict}: {result.message}"[:200]


def run_exercise(exercise_id, check_dims, ceil):
    ex = exercise(exercise_id)
    bench = ex.spec.benchmark
    dims = dict(bench.dims)
    rows = []
    candidates = {"target": ex.target}
    for name, launch in VARIANTS[exercise_id].items():
        if launch is None:  # the bundled solution
            launch = load_launch(ex.spec, ex.solution_file.read_text(), str(ex.solution_file))
        if launch == "peer":  # timed beside the others in the same harness
            launch = library_peer(name)
            if launch is None:
                continue
        if name.startswith("probe_"):  # timing only: computes something else on purpose
            candidates[name] = launch
            continue
        verdict = correct(ex, launch, check_dims)
        print(f"  {exercise_id}/{name}: {verdict}", flush=True)
        if verdict == "ok":
            candidates[name] = launch
        else:
            rows.append({"exercise": exercise_id, "variant": name, "error": verdict})
    if not check_on_gpu():
        return rows
    samples = measure(ex.spec, candidates, benchmark_inputs(ex, 1), flush=bench.bound == "memory",
                      cap_seconds=4.0)
    bytes_moved, flops = bench.bytes_moved(dims), bench.flops(dims)
    for name, secs in samples.seconds.items():
        ms = float(np.median(secs)) * 1e3
        rate = timing.throughput(bench.bound, bytes_moved, flops, ms / 1e3, ceil)
        vs = timing.paired_ratio(secs, samples.seconds["target"])  # >1: faster than the target
        rows.append({"exercise": exercise_id, "variant": name, "ms": ms, "rate": rate["achieved"],
                     "unit": rate["unit"], "of_ceiling": rate["fraction_of_ceiling"],
                     "speed_vs_target": vs.median})
    return rows


def library_peer(name):
    """A library call with the exercise's signature, by its variant name, or None without the
    library: "cupy.sum" (reduce_sum), "torch a.T copy" (transpose, PyTorch's own kernel)."""
    try:
        if name == "cupy.sum":
            import cupy

            def peer(x, out):
                cupy.sum(cupy.asarray(x), out=cupy.asarray(out).reshape(()))
            return peer
        if name == "torch a.T copy":
            import torch

            def peer(a, out):  # both on the legacy default stream, as Numba's launches
                torch.as_tensor(out, device="cuda").copy_(torch.as_tensor(a, device="cuda").t())
            return peer
    except ImportError:
        return None
    raise ValueError(f"no library peer called {name!r}")


def check_on_gpu() -> bool:
    return grader.BACKEND == "gpu"


# Even sizes where a candidate needs them (word views), never multiples of a block or tile;
# the histogram's large enough for the grid-stride loops of its candidates to take many steps.
SMALL = {"thread_ids": {"n": 5003}, "vector_add": {"n": 5003}, "saxpy": {"n": 5003},
         "rgb_to_gray": {"h": 36, "w": 130}, "transpose": {"m": 70, "n": 130},
         "stencil_1d": {"n": 3000}, "softmax_fused": {"rows": 5, "cols": 3000},
         "histogram": {"n": 4099}, "reduce_sum": {"n": 5000}, "matmul_tiled": {"m": 33, "k": 20, "n": 17}}
LARGE = {"thread_ids": {"n": 1_000_003}, "vector_add": {"n": 1_000_003}, "saxpy": {"n": 1_000_003},
         "rgb_to_gray": {"h": 1030, "w": 2052}, "transpose": {"m": 1030, "n": 2050},
         "stencil_1d": {"n": 1_000_003}, "softmax_fused": {"rows": 67, "cols": 8192},
         "histogram": {"n": 20_000_003}, "reduce_sum": {"n": 1_000_003}, "matmul_tiled": {"m": 257, "k": 300, "n": 129}}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", default="")
    parser.add_argument("--out", default="bench/results/variants.json")
    args = parser.parse_args()
    ids = args.only.split(",") if args.only else list(VARIANTS)
    ceil = {}
    if check_on_gpu():
        from grader.device import ceilings

        ceil = ceilings()
    rows = []
    for exercise_id in ids:
        t0 = time.perf_counter()
        rows += run_exercise(exercise_id, (LARGE if check_on_gpu() else SMALL)[exercise_id], ceil)
        print(f"{exercise_id}: {time.perf_counter() - t0:.1f} s", flush=True)
    for r in rows:
        if "error" in r:
            print(f"{r['exercise']:<14}{r['variant']:<20} FAILED {r['error']}")
        else:
            print(f"{r['exercise']:<14}{r['variant']:<20}{r['ms']:9.3f} ms {r['rate']:9.1f} {r['unit']:<8}"
                  f"{(r['of_ceiling'] or 0):6.0%}  x{r['speed_vs_target']:.3f} vs target")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"date": time.strftime("%Y-%m-%d"), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
