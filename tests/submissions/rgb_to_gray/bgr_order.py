# expect: wrong_result
"""Reads the channels in BGR order (OpenCV's habit): the red weight goes to blue."""
from numba import cuda


@cuda.jit
def gray_kernel(image, gray):
    col, row = cuda.grid(2)
    if row < gray.shape[0] and col < gray.shape[1]:
        b = image[row, col, 0]
        g = image[row, col, 1]
        r = image[row, col, 2]
        gray[row, col] = 0.299 * r + 0.587 * g + 0.114 * b


def launch(image, gray):
    h, w = gray.shape
    threads = (32, 8)
    blocks = ((w + 31) // 32, (h + 7) // 8)
    gray_kernel[blocks, threads](image, gray)
