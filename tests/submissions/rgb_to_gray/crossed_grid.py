# expect: unwritten_output
"""The kernel takes x as the row, but the grid's x blocks are sized for the width: on a
non-square image part of the pixels get no thread."""
from numba import cuda


@cuda.jit
def gray_kernel(image, gray):
    row, col = cuda.grid(2)
    if row < gray.shape[0] and col < gray.shape[1]:
        gray[row, col] = (0.299 * image[row, col, 0] + 0.587 * image[row, col, 1]
                          + 0.114 * image[row, col, 2])


def launch(image, gray):
    h, w = gray.shape
    threads = (32, 8)
    blocks = ((w + 31) // 32, (h + 7) // 8)
    gray_kernel[blocks, threads](image, gray)
