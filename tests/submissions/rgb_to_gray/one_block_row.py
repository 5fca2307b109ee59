# expect: unwritten_output
"""Covers the width but launches a single block in y: only the first 8 rows are written."""
from numba import cuda


@cuda.jit
def gray_kernel(image, gray):
    col, row = cuda.grid(2)
    if row < gray.shape[0] and col < gray.shape[1]:
        gray[row, col] = (0.299 * image[row, col, 0] + 0.587 * image[row, col, 1]
                          + 0.114 * image[row, col, 2])


def launch(image, gray):
    h, w = gray.shape
    threads = (32, 8)
    blocks = ((w + 31) // 32, 1)
    gray_kernel[blocks, threads](image, gray)
