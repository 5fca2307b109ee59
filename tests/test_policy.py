"""The static policy: is each trick refused with its rule, and is ordinary kernel code left alone?"""
import pytest

from grader.exercises import LADDER, exercise
from grader.containment.policy import violations


def rules(source):
    return {v.rule for v in violations(source)}


@pytest.mark.parametrize("source, rule", [
    ("import subprocess", "import"),
    ("import os.path", "import"),
    ("from grader import check", "import"),
    ("from . import x", "import"),
    ("import cupy", "import"),
    ("from numpy import *", "import"),
    ("exec('1')", "builtin"),
    ("eval('1')", "builtin"),
    ("x = open('solutions/vector_add.py').read()", "builtin"),
    ("f = __import__('os')", "builtin"),
    ("getattr(x, 'copy_to_host')()", "builtin"),
    ("x = ().__class__.__subclasses__()", "dunder"),
    ("import numpy as np\nc = np.dot(a, b)", "numpy"),
    ("import numpy as np\nc = np.matmul(a, b)", "numpy"),
    ("import numpy\nnumpy.allclose = lambda *a, **k: True", "numpy"),
    ("from numpy import einsum", "numpy"),
    ("c = a @ b", "host"),
    ("h = a.copy_to_host()", "host"),
    ("from numba import cuda\ns = cuda.stream()", "cuda"),
    ("from numba import cuda\ne = cuda.event()", "cuda"),
    ("from numba.cuda import external_stream", "cuda"),
    ("def f():\n    global cache", "state"),
    ("exit(0)", "builtin"),
    ("import numpy.linalg as la", "numpy"),
    ("from numpy.linalg import solve", "numpy"),
    ("import numpy\nx = numpy.linalg.solve(a, b)", "numpy"),
    ("import numba\ns = numba.cuda.stream()", "cuda"),
    ("import numba.cuda as gpu\ne = gpu.event()", "cuda"),
])
def test_tricks_are_refused(source, rule):
    assert rule in rules(source)


def test_ordinary_kernel_code_passes():
    source = (
        "import math\nimport numpy as np\nfrom numba import cuda, float32\n"
        "@cuda.jit\ndef k(x, out):\n    s = cuda.shared.array(256, float32)\n"
        "    i = cuda.grid(1)\n    if i < out.size:\n        out[i] = math.exp(x[i]) * np.float32(2)\n"
        "def launch(x, out):\n    w = cuda.to_device(np.arange(7, dtype=np.float32))\n    k[4, 256](x, out)\n"
    )
    assert violations(source) == []


@pytest.mark.parametrize("exercise_id", LADDER)
def test_bundled_solutions_and_starters_respect_the_policy(exercise_id):
    ex = exercise(exercise_id)
    for path in (ex.solution_file, ex.starter_file):
        assert violations(path.read_text()) == [], path
