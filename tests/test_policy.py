"""The static policy: is each trick refused with its rule, and is ordinary kernel code left alone?"""

import pytest

from grader.exercises import LADDER, exercise
from grader.containment.policy import violations


def rules(source):
    return {v.rule for v in violations(source)}


@pytest.mark.parametrize(
    "source, rule",
    [
        ("import subprocess", "import"),
        ("import os.path", "import"),
        ("from grader import check", "import"),
        ("from . import x", "import"),
        ("import cupy", "library"),
        ("from numpy import *", "import"),
        ("exec('1')", "builtin"),
        ("eval('1')", "builtin"),
        ("x = open('solutions/vector_add.py').read()", "builtin"),
        ("f = __import__('os')", "builtin"),
        ("getattr(x, 'copy_to_host')()", "host"),
        ("x = ().__class__.__subclasses__()", "dunder"),
        ("import numpy as np\nc = np.dot(a, b)", "numpy"),
        ("import numpy as np\nc = np.matmul(a, b)", "numpy"),
        ("import numpy\nnumpy.allclose = lambda *a, **k: True", "numpy"),
        ("from numpy import einsum", "numpy"),
        ("c = a @ b", "host"),
        ("h = a.copy_to_host()", "host"),
        ("from numba import cuda\ne = cuda.event()", "cuda"),
        ("from numba import cuda\ne = cuda.event()", "cuda"),
        ("from numba.cuda import external_stream", "cuda"),
        ("def f():\n    global cache", "state"),
        ("exit(0)", "builtin"),
        ("import numpy.linalg as la", "numpy"),
        ("from numpy.linalg import solve", "numpy"),
        ("import numpy\nx = numpy.linalg.solve(a, b)", "numpy"),
        ("import numba\ne = numba.cuda.event()", "cuda"),
        ("import numba.cuda as gpu\ne = gpu.event()", "cuda"),
        ("from numba import cuda\nraw = cuda.devicearray.device_array(4)", "numba"),
        ("from numba.cuda import devicearray", "numba"),
    ],
)
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


@pytest.mark.parametrize(
    "source",
    [
        "def launch(input, out):\n    out[0] = input[0]\n",
        "def k(a):\n    max = a[0]\n    min = a[1]\n    a[2] = max - min\n",
        "def f(input):\n    def g():\n        return input\n    return g\n",
        "def launch(a, out):\n    stream = getattr(a, 'stream', 0)\n",
    ],
)
def test_learner_names_that_shadow_builtins_are_theirs(source):
    """Is a parameter or local named like a builtin (`input`), or getattr of a constant
    attribute name, left alone (numba-cuda's own transpose example uses both)?"""
    assert violations(source) == []


@pytest.mark.parametrize(
    "source",
    [
        "def k(a):\n    x = input()\n",
        "def f(a, name):\n    return getattr(a, name)\n",
        "def f(a):\n    return getattr(a, '__class__')\n",
    ],
)
def test_the_builtins_themselves_are_still_refused(source):
    """Are the builtin `input`, getattr of a computed name and getattr of a dunder refused?"""
    assert violations(source)


@pytest.mark.parametrize(
    "source, call",
    [
        ("from numba import cuda\n@cuda.reduce\ndef total(a, b):\n    return a + b\n", "cuda.reduce"),
        ("import numba.cuda\nr = numba.cuda.reduce(lambda a, b: a + b)\n", "cuda.reduce"),
        ("from numba import vectorize\n", "vectorize"),
        ("import numba\n@numba.vectorize(['float32(float32)'], target='cuda')\ndef f(x):\n    return x\n", "vectorize"),
        ("from numba import guvectorize\n", "guvectorize"),
        ("import cupy as cp\n", "cupy"),
        ("import torch\n", "torch"),
    ],
)
def test_library_calls_doing_the_work_are_forbidden_unless_the_spec_allows(source, call):
    """Is a library call that does the exercise's work refused under the `library` rule,
    and allowed when the exercise's Spec lists it?"""
    found = violations(source)
    assert found and found[0].rule == "library" and "rule:" in found[0].message
    assert not [
        v for v in violations(source, ("numba", "numpy", "math", "cupy", "torch"), (call,)) if v.rule == "library"
    ]


@pytest.mark.parametrize(
    "source",
    [
        "from numba import cuda\n@cuda.jit\ndef __add(a, b, c):\n    c[0] = a[0]\ndef launch(a, b, c):\n    __add[1, 1](a, b, c)\n",
        "def __helper(n):\n    return n + 1\nclass __Tiles:\n    pass\nx = __helper(1)\ny = __Tiles\n",
        "__SIZE = 128\ndef f():\n    return __SIZE\n",
    ],
    ids=["kernel", "function and class", "constant"],
)
def test_names_the_file_gives_itself_may_begin_with_two_underscores(source):
    """A kernel called `__add` (a GPU compiles it) is the learner's name, not Python's machinery."""
    assert violations(source) == []


@pytest.mark.parametrize(
    "source",
    [
        "import numpy as np\ndef k(a: np.ndarray, out: np.ndarray) -> None:\n    out[0] = a[0]\n",
        "from numba import float32\ndef k(a: float32[:], n: int, out: 'np.ndarray'):\n    out[0] = a[0]\n",
        "import numpy as np\ndef k(a):\n    total: np.float32 = a[0]\n    return total\n",
        "import numpy as np\ndef k(a: 'np.ndarray[np.float32]', out: np.ndarray | None = None):\n    pass\n",
    ],
    ids=["np.ndarray", "numba type and string", "annotated local", "subscript and union"],
)
def test_plain_annotations_are_not_host_work(source):
    """`np.ndarray` on a kernel's parameter names a type; nothing runs on the host with it."""
    assert violations(source) == []


@pytest.mark.parametrize(
    "source, rule",
    [
        ("def k(a: open('x').read()):\n    pass\n", "builtin"),
        ("import numpy as np\ndef k(a: np.dot(1, 2)):\n    pass\n", "numpy"),
        ("def k(a: ().__class__):\n    pass\n", "dunder"),
        ("x = __builtins__\n", "dunder"),
        ("x = __loader__\n", "dunder"),
        ("def f():\n    return __undefined_helper\n", "dunder"),
    ],
)
def test_what_an_annotation_or_a_dunder_name_runs_is_still_checked(source, rule):
    """An annotation runs when its `def` does: one that calls or reaches into Python's
    machinery is checked like any other code, and so are Python's own `__names__`."""
    assert rule in rules(source)
