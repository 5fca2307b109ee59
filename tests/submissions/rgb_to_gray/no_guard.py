# expect: out_of_bounds
"""No bounds guard: the threads of the last blocks, past the right or bottom edge, write
outside the image."""
from numba import cuda


@cuda.jit
def gray_kernel(image, gray):
    col, row = cuda.grid(2)
    gray[row, col] = (0.299 * image[row, col, 0] + 0.587 * image[row, col, 1]
                      + 0.114 * image[row, col, 2])


def launch(image, gray):
    h, w = gray.shape
    threads = (32, 8)
    blocks = ((w + 31) // 32, (h + 7) // 8)
    gray_kernel[blocks, threads](image, gray)
