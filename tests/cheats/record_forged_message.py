# exercise: vector_add
# expect: wrong_result
"""Writes its own message on the recording pipe (the descriptor number is on its command line):
a plan that fills the output with a constant and says nothing failed, then leaves before the
grader's own answer. The plan is replayed like any other, on the real inputs, and is wrong."""
from numba import sys

os = sys.modules["os"]

argv = sys.argv
fd = int(argv[argv.index("--record-fd") + 1])
steps = [{"op": "param", "id": 0, "name": "a"}, {"op": "param", "id": 1, "name": "b"}, {"op": "param", "id": 2, "name": "c"},
         {"op": "fill", "target": 2, "value": 1.0}]
plans = {str(k): {"steps": steps} for k in range(12)}
os.write(fd, sys.modules["json"].dumps({"load_failure": None, "plans": plans, "kernels": {}}).encode())
os.abort()  # before the grader's own answer


def launch(a, b, c):
    pass
