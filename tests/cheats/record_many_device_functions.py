# exercise: vector_add
# expect: exception
"""Writes its own message whose kernel description nests device functions, eight to a level:
hundreds of functions to build and type (and a DAG shared in memory, written out as a tree, is
exponential). The grader counts every described function before building any (128 at most in
a message) and refuses the rest."""
from numba import sys

os = sys.modules["os"]
json = sys.modules["json"]
fd = int(sys.argv[sys.argv.index("--record-fd") + 1])


def tree(depth):
    node = {"name": "launch", "filename": "x.py", "firstline": 28, "globals": {}, "options": {}}
    if depth < 8:
        child = tree(depth + 1)
        node["globals"] = {f"f{k}": ["device", child] for k in range(8)}
    return node


kernel = tree(0)
steps = [{"op": "param", "id": 0, "name": "a"}, {"op": "param", "id": 1, "name": "b"},
         {"op": "param", "id": 2, "name": "c"},
         {"op": "launch", "kernel": "k0_launch", "grid": [1, 1, 1], "block": [1, 1, 1], "shared": 0,
          "args": [{"ref": 0}, {"ref": 1}, {"ref": 2}], "line": 28}]
plans = {str(k): {"steps": steps} for k in range(12)}
text = json.dumps({"load_failure": None, "plans": plans, "kernels": {"k0_launch": tree(5)}})  # 585 functions
os.write(fd, text.encode())
os.abort()


def launch(a, b, c):
    pass
