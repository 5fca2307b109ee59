"""Learner-facing explanations of errors raised inside kernels."""

import re

import numpy as np
from numba import cuda

from grader.checking.notebook import check


@cuda.jit
def _no_guard(a, b, c):
    i = cuda.grid(1)
    c[i] = a[i] + b[i]


def _launch_no_guard(a, b, c):
    _no_guard[(c.size + 63) // 64, 64](a, b, c)


def test_out_of_range_names_thread_block_array_and_guard():
    """Is the simulator's IndexError turned into a sentence about the bounds guard?"""
    result = check("vector_add", _launch_no_guard, seed=1)
    assert result.verdict == "out_of_bounds"
    case = result.cases[0]
    assert case.name == "one element"
    assert re.search(r"thread \d+ of block 0 read `[ab]\[\d+\]`, but `[ab]` has 1 element", case.message)
    assert "bounds guard" in case.message
    assert case.source == "c[i] = a[i] + b[i]"


@cuda.jit
def _raises(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        if a[i] < 10.0:
            raise ValueError("a value below 10")
        c[i] = a[i] + b[i]


def test_exception_in_kernel_reports_line_and_type():
    """(An integer divided by 0 raises nothing in numba-cuda's kernels, whose error model is
    NumPy's: it gives 0, as the doctor now does; an explicit `raise` still raises.)"""
    result = check("vector_add", lambda a, b, c: _raises[1, 32](a, b, c), seed=1)
    assert result.verdict == "exception"
    assert "ValueError" in result.message
    assert 'raise ValueError("a value below 10")' in result.message


def test_check_never_raises_for_a_learner_bug():
    def launch(a, b, c):
        raise RuntimeError("my mistake")

    result = check("vector_add", launch, seed=1)
    assert result.verdict == "exception" and "my mistake" in result.message
    assert np.isclose(result.score, 0)


@cuda.jit
def _rows_unguarded(a, b, c):
    row, col = cuda.grid(2)
    if col < c.shape[1]:
        c[row, col] = a[row, 0]


def test_two_dimensional_overrun_names_rows_and_a_2d_guard():
    result = check("matmul_naive", lambda a, b, c: _rows_unguarded[(4, 4), (8, 8)](a, b, c), seed=1)
    assert result.verdict == "out_of_bounds"
    message = result.cases[0].message
    assert re.search(r"thread \(\d+, \d+\) of block \(\d+, \d+\)", message)
    assert "row" in message and "if row < rows and col < cols" in message


def test_misspelt_cuda_name_is_named_with_a_suggestion():
    """Does `cuda.threadidx` read 'cuda has no `threadidx`; did you mean `threadIdx`?', never the
    simulator's class names?"""
    from pathlib import Path

    from grader.checking.check import check_file

    path = Path(__file__).parent / "submissions" / "vector_add" / "lowercase_threadidx.py"
    result = check_file("vector_add", path, seed=7)
    assert result.verdict == "exception"
    assert "cuda has no `threadidx`; did you mean `threadIdx`?" in result.message
    assert "Fake" not in result.message and "object has no attribute" not in result.message
    assert "cuda.threadIdx" in result.hint and "case-sensitive" in result.hint


def test_other_missing_attributes_in_the_projects_words():
    from grader.steps.explain import explain_exception

    class FakeCUDAAtomic:  # the simulator's cuda.atomic, by name
        add = max = None

    try:
        FakeCUDAAtomic().ad
    except AttributeError as exc:
        info = explain_exception(exc)
    assert "cuda.atomic has no `ad`; did you mean `add`?" in info.message
    assert "Fake" not in info.message
    typing = Exception("Unknown attribute 'syncthread' of type Module(<module 'numba.cuda' from 'x.py'>)")
    info = explain_exception(typing)
    assert "cuda has no `syncthread`; did you mean `syncthreads`?" in info.message
    assert info.hint.startswith("Write `cuda.syncthreads`.")


def test_a_gpus_own_compile_error_reads_as_the_compile_check_does(tmp_path):
    """On a GPU the refusal comes from numba-cuda itself, coloured for a terminal: is it the
    same teaching message, at the learner's line, without the colour codes?"""
    from numba.core.errors import TypingError

    from grader.steps.explain import explain_exception

    path = tmp_path / "vector_add.py"
    path.write_text("from numba import cuda\n\n\n@cuda.jit\ndef add(a, b, c):\n    return c\n")
    error = TypingError(
        "\x1b[1mFailed in cuda mode pipeline (step: nopython frontend)\n"
        f'\x1b[1mCUDA kernel must have void return type but got array(float32, 1d, C)\n\nFile "{path}", line 6:\x1b[0m'
    )
    info = explain_exception(error, learner_files=(str(path),))
    assert info.verdict == "exception"
    assert info.message.startswith("A GPU would not compile your kernel: the kernel returns a value")
    assert "\x1b" not in info.message
    assert (info.line, info.source) == (6, "return c")


def test_a_launch_of_no_block_names_the_blocks_rounded_down():
    """Does a launch a GPU refuses for its 0 blocks (`n // threads` with n < threads) name the
    mistake its hint fixes ("unwritten_tail": blocks rounded down), one of too many threads
    none, and a refusal's own `learner_mistake` win?"""
    from grader.compiler.dispatch import LaunchRefused, check_launch
    from grader.steps.explain import explain_exception

    def refused(grid, block):
        try:
            check_launch("k", grid, block)
        except LaunchRefused as exc:
            return explain_exception(exc)
        raise AssertionError("not refused")

    none = refused((0, 1, 1), (128, 1, 1))
    assert (none.verdict, none.mistake) == ("exception", "unwritten_tail") and "Round the number" in none.hint
    assert refused((4, 1, 1), (2048, 1, 1)).mistake == ""
    own = LaunchRefused("the grid has 0 blocks along x", "hint")
    own.learner_mistake = "missing_barrier"
    assert explain_exception(own).mistake == "missing_barrier"
