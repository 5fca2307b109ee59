"""Hints: does the hint of a failed check teach the fix of the mistake its message names — the
doctor's first finding when there is one, the verdict's default only when there is none?"""

from pathlib import Path

import pytest

from grader.checking.pipeline import check_file
from grader.result import DEFAULT_HINTS

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


def test_without_a_finding_the_verdicts_hint_stays():
    """A plain off-by-one has no doctor finding: the verdict's hint is the right one."""
    result = check_file("vector_add", SUBMISSIONS / "vector_add" / "no_bounds_guard.py", seed=7)
    assert result.verdict == "out_of_bounds"
    assert not any(f.fix for f in (result.doctor.findings if result.doctor else ()))
    assert "if i < n" in result.hint or result.hint == DEFAULT_HINTS["out_of_bounds"]
