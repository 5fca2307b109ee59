"""Hints: does the hint of a failed check teach the fix of the mistake its message names — the
doctor's first finding when there is one, the verdict's default only when there is none?"""

from pathlib import Path

import pytest

from grader.checking.pipeline import check_file

SUBMISSIONS = Path(__file__).parent / "submissions"


@pytest.mark.parametrize(
    "exercise_id, name, wanted, unwanted",
    [
        # `out[0] += partial[0]`: a missing atomic between blocks, not a missing barrier
        ("reduce_sum", "plain_add", "cuda.atomic.add(out", "syncthreads"),
        # `local[v] += 1` in shared memory: a missing atomic within a block
        ("histogram", "shared_plain_add", "cuda.atomic.add(local", "syncthreads"),
        # `out[0] = partial[0]`: blocks overwrite each other (a race)
        ("reduce_sum", "plain_store", "cuda.atomic.add(out", "syncthreads"),
        # a shared histogram never zeroed
        ("histogram", "shared_not_zeroed", "before any thread reads it", "atomic"),
    ],
)
def test_hint_is_the_first_findings_fix(exercise_id, name, wanted, unwanted):
    result = check_file(exercise_id, SUBMISSIONS / exercise_id / f"{name}.py", seed=7, case_timeout=30)
    assert not result.passed
    assert wanted in result.hint and unwanted not in result.hint, (result.message, result.hint)
    first = next(f for f in result.doctor.findings if f.fix)
    assert result.hint == first.fix


def test_an_index_past_the_end_gets_the_guards_fix():
    """An index outside an array has no doctor finding: its hint comes from where the index
    landed (one past the end: a `<=` guard, or none), not from the exercise's guess."""
    result = check_file("vector_add", SUBMISSIONS / "vector_add" / "no_bounds_guard.py", seed=7)
    assert result.verdict == "out_of_bounds"
    assert not any(f.fix for f in (result.doctor.findings if result.doctor else ()))
    assert "first one past the end" in result.hint and "`if i < n:`" in result.hint, result.hint


def test_a_guard_with_less_or_equal_is_told_why(tmp_path):
    """`if i <= out.size:` in a kernel with no loop: the hint names `<=` and the fix, where the
    exercise's own out-of-bounds hint talks about a grid-stride loop."""
    path = tmp_path / "saxpy.py"
    path.write_text(LESS_OR_EQUAL)
    result = check_file("saxpy", path, seed=7)
    assert result.verdict == "out_of_bounds"
    assert "`<=` instead of `<`" in result.hint and "`if i < n:`" in result.hint, result.hint


LESS_OR_EQUAL = """from numba import cuda


@cuda.jit
def saxpy_kernel(alpha, x, y, out):
    i = cuda.grid(1)
    if i <= out.size:
        out[i] = alpha * x[i] + y[i]


def launch(alpha, x, y, out):
    saxpy_kernel[(out.size + 255) // 256, 256](alpha, x, y, out)
"""
