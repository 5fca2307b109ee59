# exercise: vector_add
# expect: exception
"""Writes its own message with a correct-looking plan whose launch claims a line ten million
lines down (compiling a line that far once cost the replay seconds per launch) and a kernel at
a line the file does not have: refused within a second."""
from numba import sys

os = sys.modules["os"]
json = sys.modules["json"]
fd = int(sys.argv[sys.argv.index("--record-fd") + 1])
kernel = {"name": "add", "filename": "x.py", "firstline": 9999999, "globals": {}, "options": {}}
steps = [{"op": "param", "id": 0, "name": "a"}, {"op": "param", "id": 1, "name": "b"},
         {"op": "param", "id": 2, "name": "c"}]
steps += [{"op": "launch", "kernel": "k0_add", "grid": [1, 1, 1], "block": [1, 1, 1], "shared": 0,
           "args": [{"ref": 0}], "line": 10**7 - k} for k in range(1000)]
plans = {str(k): {"steps": steps} for k in range(12)}
os.write(fd, json.dumps({"load_failure": None, "plans": plans, "kernels": {"k0_add": kernel}}).encode())
os.abort()


def launch(a, b, c):
    pass
