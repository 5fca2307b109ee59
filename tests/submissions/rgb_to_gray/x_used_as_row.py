# expect: out_of_bounds
"""Guards x against the width but then uses it as the row: gray[x, y]. On a non-square
image x runs past the last row."""
from numba import cuda


@cuda.jit
def gray_kernel(image, gray):
    x, y = cuda.grid(2)
    if x < gray.shape[1] and y < gray.shape[0]:
        gray[x, y] = 0.299 * image[x, y, 0] + 0.587 * image[x, y, 1] + 0.114 * image[x, y, 2]


def launch(image, gray):
    h, w = gray.shape
    threads = (32, 8)
    blocks = ((w + 31) // 32, (h + 7) // 8)
    gray_kernel[blocks, threads](image, gray)
