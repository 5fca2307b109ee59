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
from numba import cuda

from grader.spec import Array, Benchmark, Case, Spec
from grader.tolerance import U32, few_ops

WEIGHTS = (0.299, 0.587, 0.114)


def make_inputs(dims, rng):
    h, w = dims["h"], dims["w"]
    return {"image": rng.integers(0, 256, size=(h, w, 3), dtype=np.uint8)}


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
    benchmark=Benchmark(
        dims={"h": 8192, "w": 8192}, bound="memory",
        bytes_moved=lambda d: (3.0 + 4.0) * d["h"] * d["w"],  # 3 uint8 in, 1 float32 out
    ),
)


@cuda.jit
def _gray_crossed(image, gray):
    row, col = cuda.grid(2)  # x down the rows: a warp touches 32 rows, w pixels apart
    if row < gray.shape[0] and col < gray.shape[1]:
        gray[row, col] = (0.299 * image[row, col, 0] + 0.587 * image[row, col, 1]
                          + 0.114 * image[row, col, 2])


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
        gray[row, col] = (0.299 * image[row, col, 0] + 0.587 * image[row, col, 1]
                          + 0.114 * image[row, col, 2])


def target(image, gray):
    """One thread per pixel, 32 × 8 blocks with x along the rows (the coalesced solution).

    Measured on an H200 at 8192 × 8192 (CUDA events, median of 30): 291 µs, 1.6 TB/s — ahead
    of everything else we tried: a 1-D grid-stride loop over the flat pixels (≈ 340 µs, any
    grid cap), 4 pixels per thread from 3 uint32 loads (≈ 320 µs), 16 × 16 blocks (300 µs);
    the crossed baseline takes 1299 µs."""
    h, w = gray.shape
    blocks = ((w + 31) // 32, (h + 7) // 8)
    _gray_coalesced[blocks, (32, 8)](image, gray)
