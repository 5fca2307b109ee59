# exercise: reduce_sum
# expect: forbidden
"""Computes the answer on the host from the arrays launch is given, through names the policy
does not know (NumPy reached through sys.modules, a loop, an element read): while the grader
records launch they hold no data, and the message says to compute it in a kernel."""
from numba import cuda, sys

host = sys.modules["numpy"]


def launch(x, out):
    try:
        total = host.asarray(x).sum()
    except Exception:
        try:
            total = 0.0
            for v in x:
                total += v
        except Exception:
            total = x[0] + x[1]
    out[:] = total
