"""rgb_to_gray — turn a colour image into a gray one, with a 2-D grid.

`image` is an h × w × 3 array of uint8 (0 … 255): image[row, col, 0] is the red, 1 the green
and 2 the blue of the pixel at (row, col). Write, for every pixel,

    gray[row, col] = 0.299 * R + 0.587 * G + 0.114 * B

as a float32 (no rounding to an integer).

An image is 2-D, so use a 2-D grid: `threads = (tx, ty)` and `blocks = (bx, by)` are pairs,
and `x, y = cuda.grid(2)` gives each thread its global (x, y). Which one is the column?
Memory is row-major: gray[row, col] and gray[row, col + 1] are neighbours. The 32 threads of
a warp have consecutive x, so make x the column: the warp then reads and writes one
contiguous stretch of a row (a coalesced access) instead of 32 rows far apart. Both give
the right answer, but on a GPU the crossed version is several times slower and the check
calls it too slow.

- `gray` is an h × w float32 device array that arrives filled with garbage: write every pixel.
- Cover the width with the x blocks and the height with the y blocks, and guard both:
  the threads of the last blocks can fall past the right or the bottom edge.
"""
from numba import cuda


@cuda.jit
def gray_kernel(image, gray):
    x, y = cuda.grid(2)
    # TODO: which of x and y is the column, which the row? (a warp should run along a row)
    # TODO: if the pixel is inside the image, store 0.299 * R + 0.587 * G + 0.114 * B
    #       in gray[row, col]


def launch(image, gray):
    h, w = gray.shape
    threads = (32, 8)  # (x, y): 256 threads per block
    blocks = (1, 1)  # TODO: enough blocks in x to cover the width, in y to cover the height
    gray_kernel[blocks, threads](image, gray)
