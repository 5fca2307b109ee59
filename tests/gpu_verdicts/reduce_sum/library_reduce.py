# expect: forbidden
# gpu: same on a GPU (the policy runs before any engine)
# defect: `@cuda.reduce` builds the reduction kernel; the learner wrote none
from numba import cuda


@cuda.reduce
def add(a, b):
    return a + b


def launch(x, out):
    add(x, res=out)
