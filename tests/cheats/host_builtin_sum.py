# exercise: reduce_sum
# expect: forbidden
"""sum() over a device array, then the total written as a fill."""


def launch(x, out):
    total = sum(x)
    out[:] = total
