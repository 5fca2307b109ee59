# exercise: vector_add
# expect: wrong_result
"""Writes its own message just under the grader's 4 MiB cap: the most steps and arguments the
schema allows, every plan a fill of the output (valid, and wrong). A recording at the cap is
read, checked and replayed within seconds, in bounded memory (bench/recording_cap.py)."""
from numba import sys

os = sys.modules["os"]
json = sys.modules["json"]
fd = int(sys.argv[sys.argv.index("--record-fd") + 1])
head = [{"op": "param", "id": 0, "name": "a"}, {"op": "param", "id": 1, "name": "b"},
        {"op": "param", "id": 2, "name": "c"}]
views = [{"op": "view", "id": 3 + k, "source": 0, "key": [{"slice": [0, 1, 1]}]} for k in range(2400)]
steps = head + views + [{"op": "fill", "target": 2, "value": 1.0}]
plans = {str(k): {"steps": steps} for k in range(12)}
text = json.dumps({"load_failure": None, "plans": plans, "kernels": {}})
os.write(fd, text.encode())
os.abort()


def launch(a, b, c):
    pass
