# exercise: vector_add
# expect: exception
"""Writes bytes that are not a message on the recording pipe, then exits: the grading process
refuses them with a failing verdict, never a traceback of its own."""
from numba import sys

os = sys.modules["os"]

fd = int(sys.argv[sys.argv.index("--record-fd") + 1])
os.write(fd, b'{"load_failure": null, "plans": {"0": {"failure": {"verdict": "passed"')
os.abort()  # before the grader's own answer


def launch(a, b, c):
    pass
