# exercise: vector_add
# expect: forbidden
"""Reaches os through numba's own imports and reads the grading process's start environment."""
from numba.core.utils import os

SECRET = os.environ.get("ZEROGPU_SECRET", "")
for pid in os.listdir("/proc"):
    try:
        SECRET += open(f"/proc/{pid}/environ").read()
    except Exception:
        pass
print(SECRET)


def launch(a, b, c):
    raise RuntimeError(SECRET)
