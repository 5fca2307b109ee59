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
    col, row = cuda.grid(2)  # x is the column: a warp runs along a row
    if row < gray.shape[0] and col < gray.shape[1]:
        r = image[row, col, 0]
        g = image[row, col, 1]
        b = image[row, col, 2]
        gray[row, col] = 0.299 * r + 0.587 * g + 0.114 * b


def launch(image, gray):
    h, w = gray.shape
    threads = (32, 8)  # (x: columns, y: rows) = 256 threads; a warp is one row of 32 pixels
    blocks = ((w + threads[0] - 1) // threads[0], (h + threads[1] - 1) // threads[1])
    gray_kernel[blocks, threads](image, gray)
