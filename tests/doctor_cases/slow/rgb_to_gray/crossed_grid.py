# expect: slow_memory
"""The 2-D grid crossed: x (the warp's lanes) walks the rows, so the 32 threads of a warp read
the image and write the gray picture down a column, one row apart: right values, uncoalesced."""
from numba import cuda


@cuda.jit
def gray_kernel(image, gray):
    row, col = cuda.grid(2)  # crossed: x is the row
    if row < gray.shape[0] and col < gray.shape[1]:
        r = image[row, col, 0]
        g = image[row, col, 1]
        b = image[row, col, 2]
        gray[row, col] = 0.299 * r + 0.587 * g + 0.114 * b


def launch(image, gray):
    h, w = gray.shape
    threads = (32, 8)
    blocks = ((h + threads[0] - 1) // threads[0], (w + threads[1] - 1) // threads[1])
    gray_kernel[blocks, threads](image, gray)
