# expect: wrong_result
"""The fixed-point shortcut (77·R + 150·G + 29·B) >> 8 with integer arithmetic: fast on old
hardware, but an integer that is off by up to a whole gray level."""
from numba import cuda


@cuda.jit
def gray_kernel(image, gray):
    col, row = cuda.grid(2)
    if row < gray.shape[0] and col < gray.shape[1]:
        r = int(image[row, col, 0])
        g = int(image[row, col, 1])
        b = int(image[row, col, 2])
        gray[row, col] = (77 * r + 150 * g + 29 * b) >> 8


def launch(image, gray):
    h, w = gray.shape
    threads = (32, 8)
    blocks = ((w + 31) // 32, (h + 7) // 8)
    gray_kernel[blocks, threads](image, gray)
