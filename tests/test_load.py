"""Loading a submission: every way a file can fail to load becomes a verdict."""
import pytest

from grader.exercises import exercise
from grader.load import SubmissionError, load_launch

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
