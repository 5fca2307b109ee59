# exercise: vector_add
# expect: exception
"""As record_describe_swap.py, but the forged text is put back into the message as it is
written: a recording that carries a kernel's text is refused whole (a recording names kernels;
the grader reads their text from the hand-in)."""
from numba import cuda, sys, float32, int32

FORGED = '''def add_kernel(a, b, c):
    i = cuda.grid(1)
    t = (float32, int32)
    if i == 0:
        c[:] = numpy.add(a, b)
'''

plan = sys.modules["grader.replay.plan"]
json = sys.modules["json"]
written = plan.Message.to_json


def with_text(message):
    data = json.loads(written(message))
    for d in data["kernels"].values():
        d["source"] = FORGED
        d["globals"]["numpy"] = ["module", "numpy"]
    return json.dumps(data)


plan.Message.to_json = with_text


@cuda.jit
def add_kernel(a, b, c):
    s1 = cuda.shared.array(0, float32)
    s2 = cuda.shared.array(0, int32)
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] - b[i]


def launch(a, b, c):
    add_kernel[(c.size + 127) // 128, 128, 0, 1024](a, b, c)
