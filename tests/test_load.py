"""Loading a submission: every way a file can fail to load becomes a verdict."""

import pytest

from grader.exercises import exercise
from grader.steps.load import SubmissionError, load_launch

SPEC = exercise("vector_add").spec


def load(source):
    return load_launch(SPEC, source, "<test>")


def test_syntax_error_names_the_line():
    with pytest.raises(SubmissionError) as err:
        load("def launch(a, b, c)\n    pass\n")
    assert err.value.verdict == "syntax_error" and err.value.line == 1


def test_missing_launch():
    with pytest.raises(SubmissionError) as err:
        load("x = 1\n")
    assert err.value.verdict == "exception" and "launch(a, b, c)" in err.value.message


def test_wrong_parameter_names_are_explained():
    with pytest.raises(SubmissionError) as err:
        load("def launch(x, y, z):\n    pass\n")
    assert "(a, b, c)" in err.value.message and "(x, y, z)" in err.value.message


def test_error_at_import_is_an_exception_verdict():
    with pytest.raises(SubmissionError) as err:
        load("import numpy\nraise ValueError('boom')\n")
    assert err.value.verdict == "exception" and "boom" in err.value.message and err.value.line == 2


def test_parameter_order_does_not_matter():
    """The grader passes arguments by name."""
    assert callable(load("def launch(c, a, b):\n    pass\n"))


def test_policy_refuses_before_running_and_names_the_line():
    with pytest.raises(SubmissionError) as err:
        load("import os\nos.system('echo hi')\ndef launch(a, b, c):\n    pass\n")
    assert err.value.verdict == "forbidden" and err.value.line == 1
    assert "only numba, numpy, math" in err.value.message


def test_policy_can_be_skipped_for_trusted_code():
    launch = load_launch(SPEC, "import os\ndef launch(a, b, c):\n    pass\n", "<t>", policy=False)
    assert callable(launch)


@pytest.mark.parametrize("shape", ["(TILE, TILE + 1)", "BM // 4", "TILE * 2"])
def test_shapes_a_gpu_cannot_compile_are_caught_on_the_simulator(shape):
    """The simulator runs `cuda.shared.array(TILE + 1, ...)`; a real GPU refuses it."""
    source = (
        "from numba import cuda, float32\nTILE = 16\n@cuda.jit\ndef k(a, n):\n"
        f"    s = cuda.shared.array({shape}, float32)\n"
        "def launch(a, b, c):\n    pass\n"
    )
    with pytest.raises(SubmissionError) as err:
        load(source)
    assert err.value.verdict == "exception" and err.value.line == 5
    assert "real GPU" in err.value.message


def test_constant_shapes_are_fine():
    source = (
        "from numba import cuda, float32\nTILE = 16\nPADDED = TILE + 1\n@cuda.jit\ndef k(a):\n"
        "    s = cuda.shared.array((TILE, PADDED), float32)\n    t = cuda.local.array(8, float32)\n"
        "def launch(a, b, c):\n    pass\n"
    )
    assert callable(load(source))


@pytest.mark.parametrize(
    "raw, line, byte",
    [
        (b"# caf\xe9\ndef launch(a, b, c):\n    pass\n", 1, 6),
        (b"def launch(a, b, c):\n    pass\n\nNAME = '\xff\xfe'\n", 4, 9),
        (b"def launch(a, b, c):\n    x = 1  # \xe2\x82\n", 2, 14),
    ],
    ids=["latin-1 comment", "stray bytes in a string", "cut multi-byte character"],
)
def test_a_file_that_is_not_utf8_is_a_syntax_error_naming_line_and_byte(raw, line, byte):
    """A file saved in another encoding: a `syntax_error` at its line and byte, never a crash."""
    with pytest.raises(SubmissionError) as err:
        load_launch(SPEC, raw, "<test>")
    assert err.value.verdict == "syntax_error" and err.value.line == line
    assert f"not valid UTF-8 at line {line}, byte {byte}" in err.value.message


def test_a_file_that_declares_its_encoding_is_read_in_it():
    """Python honours a `# coding:` line (PEP 263); so does the grader."""
    raw = "# -*- coding: latin-1 -*-\n# café\ndef launch(a, b, c):\n    pass\n".encode("latin-1")
    assert callable(load_launch(SPEC, raw, "<test>"))
