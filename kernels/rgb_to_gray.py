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
def _gray_naive(image, gray):
    col, row = cuda.grid(2)
    if row < gray.shape[0] and col < gray.shape[1]:
        gray[row, col] = (0.299 * image[row, col, 0] + 0.587 * image[row, col, 1]
                          + 0.114 * image[row, col, 2])


def baseline(image, gray):
    """One thread per pixel, 16 × 16 blocks."""
    h, w = gray.shape
    threads = (16, 16)
    blocks = ((w + 15) // 16, (h + 15) // 16)
    _gray_naive[blocks, threads](image, gray)


@cuda.jit
def _gray_grid_stride(rgb, gray):
    # Both arrays seen flat (they are C-contiguous): pixel p is gray[p] and rgb[3p : 3p + 3].
    # Consecutive threads take consecutive pixels, so a warp reads 96 contiguous bytes and
    # writes 128; float32 arithmetic keeps the math off the critical path.
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for p in range(start, gray.size, stride):
        r = rgb[3 * p]
        g = rgb[3 * p + 1]
        b = rgb[3 * p + 2]
        gray[p] = (np.float32(0.299) * np.float32(r) + np.float32(0.587) * np.float32(g)
                   + np.float32(0.114) * np.float32(b))


def target(image, gray):
    """The pixels as one flat run: a 1-D grid-stride loop, 256-thread blocks, at most
    132 SMs × 32 blocks."""
    h, w = gray.shape
    threads = 256
    blocks = max(1, min((h * w + threads - 1) // threads, 132 * 32))
    _gray_grid_stride[blocks, threads](image.reshape(h * w * 3), gray.reshape(h * w))
