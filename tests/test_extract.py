"""Notebook checks run in a child: is the code `launch` uses rebuilt faithfully, and does an
endless kernel end as `timeout` instead of freezing the notebook?"""

import textwrap

import pytest

from grader.checking.pipeline import check
from grader.steps.extract import NotExtractable, module_source


def define(tmp_path, body, name="cell"):
    """Define functions as a notebook cell would (source findable by inspect)."""
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(body))
    namespace = {"__name__": name}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace


KERNEL = """
    import numpy as np
    from numba import cuda, float32
    THREADS = 64
    SCALE = 1.0

    @cuda.jit(device=True)
    def plus(x, y):
        return x + y

    @cuda.jit
    def add(a, b, c):
        i = cuda.grid(1)
        if i < c.size:
            c[i] = plus(a[i], b[i]) * SCALE

    def launch(a, b, c):
        add[(c.size + THREADS - 1) // THREADS, THREADS](a, b, c)
"""


def test_source_carries_kernels_device_functions_constants_and_imports(tmp_path):
    source = module_source(define(tmp_path, KERNEL)["launch"])
    for line in ("from numba import cuda", "THREADS = 64", "SCALE = 1.0", "def plus", "def add", "def launch"):
        assert line in source
    assert "numpy" not in source, "only what launch uses is copied"


def test_extracted_launch_passes_in_a_child(tmp_path):
    result = check("vector_add", define(tmp_path, KERNEL)["launch"], seed=3)
    assert result.verdict == "passed", result.message


def test_a_global_array_cannot_be_copied(tmp_path):
    ns = define(tmp_path, KERNEL.replace("SCALE = 1.0", "import numpy\n    SCALE = numpy.ones(3)"))
    with pytest.raises(NotExtractable):
        module_source(ns["launch"])


def test_endless_kernel_in_a_notebook_ends_as_timeout(tmp_path):
    ns = define(
        tmp_path,
        """
        from numba import cuda

        @cuda.jit
        def spin(c):
            i = 0
            while i >= 0:
                i = (i + 1) % 7

        def launch(a, b, c):
            spin[1, 1](c)
    """,
    )
    result = check("vector_add", ns["launch"], case_timeout=3)
    assert result.verdict == "timeout"


def test_a_lambda_is_checked_in_process():
    def launch(a, b, c):
        raise RuntimeError("still explained")

    result = check("vector_add", lambda a, b, c: launch(a, b, c), seed=1)
    assert result.verdict == "exception" and "still explained" in result.message
