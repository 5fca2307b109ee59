# expect: passed
# gpu: passed, reasoned from numba-cuda 0.30.4's source, not yet measured on a GPU (iterating over an array is device code numba-cuda compiles: getiter/iternext on a 1-D view)
# defect: the doctor left `for` over an array as Python, and the anti-cheat check read it as host access (forbidden)
from numba import cuda

WEIGHTS = (0.299, 0.587, 0.114)


@cuda.jit
def gray_kernel(image, gray):
    col, row = cuda.grid(2)
    if row < gray.shape[0] and col < gray.shape[1]:
        value = 0.0
        for weight, channel in zip(WEIGHTS, image[row, col]):
            value += weight * channel
        gray[row, col] = value


def launch(image, gray):
    h, w = gray.shape
    gray_kernel[((w + 31) // 32, (h + 7) // 8), (32, 8)](image, gray)
