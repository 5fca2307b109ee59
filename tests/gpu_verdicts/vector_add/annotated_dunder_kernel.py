# expect: passed
# gpu: passed, reasoned from numba-cuda 0.30.4's source, not yet measured on a GPU (annotations are dropped by numba's bytecode analysis; a name is a name)
# defect: the policy refused a kernel named `__add` and `np.ndarray` annotations
import numpy as np
from numba import cuda


@cuda.jit
def __add(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


def launch(a, b, c):
    __add[(c.size + 127) // 128, 128](a, b, c)
