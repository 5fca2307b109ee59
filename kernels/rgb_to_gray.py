"""rgb_to_gray — gray = 0.299·R + 0.587·G + 0.114·B per pixel, from a uint8 h×w×3 image.

Tolerance, with S = 0.299·R + 0.587·G + 0.114·B (every term is ≥ 0, so S is also the sum of
|terms|) and u = 2**-24:
- arithmetic: converting a uint8 to float is exact; a term then meets at most 3 roundings
  (its product and the two additions), and one more when the sum is computed in float64
  and stored as float32: at most 4 roundings, few_ops(4, S) = 2·4·u·S with the usual factor 2;
- coefficients: a learner may write them as float32 (np.float32(0.299)) instead of float64;
  each is then off by at most u relative, so the result by at most u·S, and we allow 2·u·S.
Together |gray - exact| <= 10·u·S (≈ 1.5e-4 for a white pixel). Any wrong weight or channel
is off by far more (≥ 1e-3·S).
"""

import numpy as np
from numba import cuda, float32

from grader.authoring import bulk_random
from grader.authoring.spec import Array, Benchmark, Case, Spec
from grader.authoring.tolerance import U32, few_ops

WEIGHTS = (0.299, 0.587, 0.114)


def make_inputs(dims, rng):
    h, w = dims["h"], dims["w"]
    return {"image": bulk_random.integers(rng, 0, 256, (h, w, 3), np.uint8)}


def oracle(image):
    rgb = image.astype(np.float64)
    return WEIGHTS[0] * rgb[..., 0] + WEIGHTS[1] * rgb[..., 1] + WEIGHTS[2] * rgb[..., 2]


def tolerance(inputs, expected):
    terms = np.abs(expected)  # the sum of |terms|: every weight and channel is ≥ 0
    return few_ops(4, terms) + 2.0 * U32 * terms


SPEC = Spec(
    id="rgb_to_gray",
    stage=3,
    title="Colour image to gray",
    lesson="2-D grids and blocks: x runs along a row (columns), y down the rows; coalescing",
    params=(
        Array("image", "uint8", ("h", "w", 3)),
        Array("gray", "float32", ("h", "w"), role="out"),
    ),
    make_inputs=make_inputs,
    cases=(
        Case("one pixel", {"h": 1, "w": 1}),
        Case("prime sizes", {"h": 13, "w": 29}),
        Case("one short of a block", {"h": 15, "w": 31}),
        Case("one past a block", {"h": 17, "w": 33}),
        Case("wide", {"h": 5, "w": 70}),
        Case("tall", {"h": 67, "w": 3}),
        Case("a multiple of 4 pixels", {"h": 6, "w": 10}),
    ),
    tolerance=tolerance,
    hints={
        "out_of_bounds": "Guard both directions: `if row < h and col < w:` with h, w = "
        "gray.shape. If x is your column, it is compared with the width w and used as the "
        "second index: gray[row, col].",
        "unwritten_output": "Cover the image in both directions: with threads = (tx, ty), "
        "blocks = (ceil(w / tx), ceil(h / ty)) — x counts columns (the width), y counts rows "
        "(the height). If x is used as the row, the grid and the image are crossed.",
        "too_slow": "Correct, but are your warps coalesced? The 32 threads of a warp have "
        "consecutive x: with col = x they read and write one contiguous stretch of a row; "
        "with row = x they touch 32 rows, a whole row apart, and every access becomes its own "
        "memory transaction. Use `col, row = cuda.grid(2)` and blocks of 32 (or more) in x.",
        "wrong_result": "gray = 0.299·R + 0.587·G + 0.114·B with R = image[row, col, 0], "
        "G = image[row, col, 1], B = image[row, col, 2]. Check the channel order and that "
        "the value is not truncated to an integer.",
    },
    pointwise=True,  # out[i] from the inputs at i: a timed output's oracle runs at the judged elements
    benchmark=Benchmark(
        dims={"h": 8192, "w": 8192},
        bound="memory",
        bytes_moved=lambda d: (3.0 + 4.0) * d["h"] * d["w"],  # 3 uint8 in, 1 float32 out
    ),
)


@cuda.jit
def _gray_crossed(image, gray):
    row, col = cuda.grid(2)  # x down the rows: a warp touches 32 rows, w pixels apart
    if row < gray.shape[0] and col < gray.shape[1]:
        gray[row, col] = 0.299 * image[row, col, 0] + 0.587 * image[row, col, 1] + 0.114 * image[row, col, 2]


def baseline(image, gray):
    """One thread per pixel, 32 × 8 blocks, with x down the rows: the mistake this lesson is
    about. Correct, but no warp access is coalesced."""
    h, w = gray.shape
    blocks = ((h + 31) // 32, (w + 7) // 8)
    _gray_crossed[blocks, (32, 8)](image, gray)


@cuda.jit
def _gray_coalesced(image, gray):
    col, row = cuda.grid(2)  # x along a row: a warp reads 96 contiguous bytes, writes 128
    if row < gray.shape[0] and col < gray.shape[1]:
        gray[row, col] = 0.299 * image[row, col, 0] + 0.587 * image[row, col, 1] + 0.114 * image[row, col, 2]


@cuda.jit
def _gray_words(words, gray):
    """4 pixels = 12 bytes = 3 uint32 words per step: three 4-byte loads instead of twelve
    1-byte ones keep enough bytes in flight to stream."""
    for q in range(cuda.grid(1), gray.size // 4, cuda.gridsize(1)):
        a = words[3 * q]  # bytes R0 G0 B0 R1 (little-endian)
        b = words[3 * q + 1]  # G1 B1 R2 G2
        c = words[3 * q + 2]  # B2 R3 G3 B3
        gray[4 * q] = (
            float32(0.299) * float32(a & 0xFF)
            + float32(0.587) * float32((a >> 8) & 0xFF)
            + float32(0.114) * float32((a >> 16) & 0xFF)
        )
        gray[4 * q + 1] = (
            float32(0.299) * float32(a >> 24)
            + float32(0.587) * float32(b & 0xFF)
            + float32(0.114) * float32((b >> 8) & 0xFF)
        )
        gray[4 * q + 2] = (
            float32(0.299) * float32((b >> 16) & 0xFF)
            + float32(0.587) * float32(b >> 24)
            + float32(0.114) * float32(c & 0xFF)
        )
        gray[4 * q + 3] = (
            float32(0.299) * float32((c >> 8) & 0xFF)
            + float32(0.587) * float32((c >> 16) & 0xFF)
            + float32(0.114) * float32(c >> 24)
        )


def target(image, gray):
    """The image read as uint32 words, 4 pixels per step of a grid-stride loop over a grid of
    132 SMs × 64 blocks of 256 threads; images whose pixel count is not a multiple of 4 take
    the plain coalesced kernel (one thread per pixel, 32 × 8 blocks, x along the rows).

    Measured on an H200 at 8192 × 8192 in the grader's harness (L2 flushed, 2026-11-29):
    0.119 ms (3.95 TB/s), against 0.122 / 0.125 ms with 32 / 16 blocks per SM, 0.128 with one
    step per thread, 0.125 storing the grays as complex64 pairs, 0.146 for 4 pixels per
    thread from 12 byte loads, 0.329 for 8 pixels per step and 0.475 from uint64 words
    (bench/variants.py); the crossed baseline took 1.25 ms."""
    h, w = gray.shape
    if (h * w) % 4:
        _gray_coalesced[((w + 31) // 32, (h + 7) // 8), (32, 8)](image, gray)
        return
    words = image.reshape(image.size).view(np.uint32)
    flat = gray.reshape(h * w)
    _gray_words[max(1, min((h * w // 4 + 255) // 256, 132 * 64)), 256](words, flat)
