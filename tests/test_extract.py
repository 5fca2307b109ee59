"""Notebook checks run in a child: is the code `launch` uses rebuilt faithfully, and does an
endless kernel end as `timeout` instead of freezing the notebook?"""

import textwrap

import pytest

from grader.checking.notebook import check
from grader.steps.extract import NotExtractable, extract, module_source


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
    cell = (tmp_path / "cell.py").read_text().splitlines()
    loop = next(n for n, text in enumerate(cell, 1) if "while i >= 0" in text)
    assert result.cases[0].line in (loop, loop + 1), result.message  # the cell's line, not the module's
    assert f"at line {result.cases[0].line} (`" in result.message and "thread 0 of block 0" in result.message


def test_a_lambda_is_checked_in_process():
    def launch(a, b, c):
        raise RuntimeError("still explained")

    result = check("vector_add", lambda a, b, c: launch(a, b, c), seed=1)
    assert result.verdict == "exception" and "still explained" in result.message


def _line_of(text: str, needle: str) -> int:
    return next(k for k, line in enumerate(text.splitlines(), 1) if needle in line)


def _notebook_results(cells: list) -> list:
    """Run the cells in a real Jupyter kernel; each `report(check(...))` gives back the result."""
    import json

    import nbformat
    from nbclient import NotebookClient

    from grader.exercises import ROOT

    setup = (
        "import json, math\nimport grader\n\n"
        "def report(result):\n"
        "    print('RESULT ' + json.dumps({k: v for k, v in result.to_dict().items() if k != 'speed'}))\n"
    )
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in [setup, *cells]]
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}).execute()
    found = []
    for cell in nb.cells:
        for output in cell.outputs:
            for line in output.get("text", "").splitlines():
                if line.startswith("RESULT "):
                    found.append(json.loads(line[len("RESULT ") :]))
    return found


def test_lines_in_messages_are_the_learners_lines_in_their_notebook_cells():
    """A check from a notebook names the line in the learner's cell (after the exercise's long
    docstring and its comments), never a line of the module the grader rebuilt: for a verdict,
    a doctor finding, and a compile refusal in a function redefined in a later cell, whose cell
    is then named as IPython names it."""
    from grader.exercises import ROOT

    saxpy = (
        (ROOT / "exercises" / "saxpy.py")
        .read_text()
        .replace(
            "    if i < out.size:\n        out[i] = x[i]  # TODO: out[i] = alpha * x[i] + y[i]\n",
            "    stride = cuda.gridsize(1)\n"
            "    for k in range(i, out.size, stride):\n"
            "        out[k] = alpha * x[k] + y[k + 1]  # the next y: one past the end at the last k\n",
        )
    )
    reduce_sum = (ROOT / "tests" / "submissions" / "reduce_sum" / "no_syncthreads.py").read_text()
    redefined = (
        "@cuda.jit\n"
        "def saxpy_kernel(x, y, out, alpha):\n"
        "    i = cuda.grid(1)\n"
        "    for k in range(i, out.size, cuda.gridsize(1)):\n"
        "        out[k] = alpha * x[k] + math.sqrt(y[k], 2)\n"
    )
    check = "report(grader.check({!r}, launch, seed=3, case_timeout=60))"
    results = _notebook_results(
        [saxpy, check.format("saxpy"), redefined, check.format("saxpy"), reduce_sum, check.format("reduce_sum")]
    )
    oob, refused, race = results

    line = _line_of(saxpy, "y[k + 1]")
    assert line > 25, "the bug sits well below the cell's top"
    assert oob["verdict"] == "out_of_bounds"
    assert f"(line {line}: out[k] = alpha * x[k] + y[k + 1]" in oob["message"]
    assert oob["cases"][0]["line"] == line

    line = _line_of(redefined, "math.sqrt")  # cell In[4]: the setup cell is In[1]
    assert refused["verdict"] == "exception"
    assert f"line {line} of cell In[4]: out[k]" in refused["message"], refused["message"]
    assert refused["cases"][0]["line"] == line

    line = _line_of(reduce_sum, "partial[tid] += partial[tid + stride]")
    assert race["verdict"] == "race"
    finding = race["doctor"]["findings"][0]
    assert (finding["line"], finding["other_line"]) == (line, line)
    assert f"(line {line})" in finding["message"] and f"(line {line})" in race["message"]


def test_functions_keep_their_cells_lines(tmp_path):
    ns = define(tmp_path, "# a comment\n\n\n" + textwrap.dedent(KERNEL))
    extracted = extract(ns["launch"])
    assert not extracted.lines, "one cell, room above its first function: every line is already the cell's"
    cell = (tmp_path / "cell.py").read_text().splitlines()
    source = extracted.source.splitlines()
    for needle in ("def add", "c[i] = plus(a[i], b[i]) * SCALE", "add[(c.size + THREADS - 1)"):
        assert source[_line_of(extracted.source, needle) - 1] == cell[_line_of("\n".join(cell), needle) - 1]
        assert _line_of(extracted.source, needle) == _line_of("\n".join(cell), needle)


def test_functions_from_cells_that_overlap_are_mapped_back_and_named(tmp_path):
    """A kernel redefined on the first lines of a later cell: no room for the imports above it,
    and its lines overlap the launch's cell, so the module maps each line back."""
    first = define(tmp_path, KERNEL, name="first")
    later = tmp_path / "later.py"
    later.write_text("@cuda.jit\ndef add(a, b, c):\n    i = cuda.grid(1)\n    c[i] = a[i] + b[i]\n")
    exec(compile(later.read_text(), str(later), "exec"), first)  # a later cell, the notebook's globals
    extracted = extract(first["launch"])
    line = _line_of(extracted.source, "c[i] = a[i] + b[i]")
    assert extracted.lines[line] == (4, "`later.py`")
    assert extracted.text("thread 3 wrote c[3] (line %d)" % line) == "thread 3 wrote c[3] (line 4 of `later.py`)"
    result = check("vector_add", first["launch"], seed=3, case_timeout=60)
    assert result.verdict == "out_of_bounds"
    assert "(line 4 of `later.py`: c[i] = a[i] + b[i])" in result.message, result.message
    assert result.cases[0].line == 4


def test_a_lambda_is_recorded_here_and_replayed_in_a_child(tmp_path):
    """A `launch` that cannot be copied into a file is recorded in the notebook's process and
    replayed in a checking child, like any check: a right kernel passes, host code that reads
    the inputs is forbidden, a device array the notebook made beforehand is uploaded."""
    import numpy as np
    from numba import cuda

    ns = define(
        tmp_path,
        """
        from numba import cuda

        @cuda.jit
        def add(a, b, c):
            i = cuda.grid(1)
            if i < c.size:
                c[i] = a[i] + b[i]

        @cuda.jit
        def add_offset(a, b, c, offset):
            i = cuda.grid(1)
            if i < c.size:
                c[i] = a[i] + b[i] + offset[0]
    """,
    )
    add, add_offset = ns["add"], ns["add_offset"]
    passed = check("vector_add", lambda a, b, c: add[(c.size + 127) // 128, 128](a, b, c), seed=1)
    assert passed.verdict == "passed", passed.message
    reads = check("vector_add", lambda a, b, c: c.copy_to_device(a.copy_to_host() + b.copy_to_host()), seed=1)
    assert reads.verdict == "forbidden" and "kernel" in reads.message, reads.message
    zero = cuda.to_device(np.zeros(1, np.float32))  # made before the check, outside `launch`
    uses_it = check("vector_add", lambda a, b, c: add_offset[(c.size + 127) // 128, 128](a, b, c, zero), seed=1)
    assert uses_it.verdict == "passed", uses_it.message
