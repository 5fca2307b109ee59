# exercise: vector_add
# expect: exception
"""Floods the recording pipe with 40 MiB: the grading process stops reading at its cap."""
from numba import sys

os = sys.modules["os"]

fd = int(sys.argv[sys.argv.index("--record-fd") + 1])
chunk = b" " * (1 << 20)
for _ in range(40):
    os.write(fd, chunk)
os.abort()  # before the grader's own answer


def launch(a, b, c):
    pass
