"""Every exercise: do the reference kernels and the solution pass, and does every starter and
every known-wrong submission fail with the verdict it should?"""

import re
from pathlib import Path

import pytest

from grader.checking.notebook import check
from grader.checking.check import check_file
from grader.exercises import LADDER, exercise
from grader.steps.load import load_launch
from grader.result import VERDICTS

SUBMISSIONS = Path(__file__).parent / "submissions"
STARTER_VERDICTS = {"wrong_result", "unwritten_output", "exception"}


def wrong_submissions(whole_check: bool = False):
    """Every wrong submission with its expected verdict. `whole_check`: for a test that runs the
    whole check (children, record, replay): one per exercise and every endless kernel in the
    default tier, the rest `thorough` (tests/test_doctor.py judges every one on the doctor)."""
    seen = set()
    for path in sorted(SUBMISSIONS.glob("*/*.py")):
        first = path.read_text().splitlines()[0]
        match = re.fullmatch(r"# expect: (\w+)", first)
        assert match, f"{path} must start with '# expect: <verdict>'"
        first_of_its_exercise = path.parent.name not in seen
        seen.add(path.parent.name)
        thorough = whole_check and not first_of_its_exercise and match.group(1) != "timeout"
        yield pytest.param(
            path.parent.name,
            path,
            match.group(1),
            id=f"{path.parent.name}/{path.stem}",
            marks=[pytest.mark.thorough] if thorough else [],
        )


@pytest.mark.parametrize("exercise_id", LADDER)
def test_all_three_files_exist(exercise_id):
    """Does every rung have its starter, solution and reference module?"""
    ex = exercise(exercise_id)
    for path in (ex.starter_file, ex.solution_file, ex.reference_file):
        assert path.is_file(), path


@pytest.mark.parametrize("exercise_id", LADDER)
def test_spec_has_the_required_cases(exercise_id):
    """At least five cases, one of them the smallest legal size."""
    spec = exercise(exercise_id).spec
    assert len(spec.cases) >= 5
    assert any(all(v == 1 for v in c.dims.values()) for c in spec.cases) or not spec.cases[0].dims


@pytest.mark.parametrize("exercise_id", LADDER)
def test_solution_passes(exercise_id):
    """Does the bundled solution pass every case, in a child process like the CLI?"""
    ex = exercise(exercise_id)
    result = check_file(exercise_id, ex.solution_file, seed=11)
    assert result.verdict == "passed", result.message
    assert result.score == result.max_score


def references():
    """(exercise, baseline or target); the histogram's target in the slow tier: its 1024
    threads a block are 1024 threads of the simulator (17-24 s on 2 cores)."""
    for exercise_id in LADDER:
        for which in ("baseline", "target"):
            slow = (pytest.mark.slow,) if (exercise_id, which) == ("histogram", "target") else ()
            yield pytest.param(exercise_id, which, id=f"{exercise_id}-{which}", marks=slow)


@pytest.mark.parametrize("exercise_id, which", list(references()))
def test_reference_kernels_pass(exercise_id, which):
    """Baseline and target are real kernels that pass the same check."""
    ex = exercise(exercise_id)
    result = check(exercise_id, getattr(ex, which), seed=23, isolate=False)
    assert result.verdict == "passed", result.message


@pytest.mark.parametrize("exercise_id", LADDER)
def test_starter_fails_helpfully(exercise_id):
    """Does the untouched starter run and fail, never pass?"""
    ex = exercise(exercise_id)
    result = check_file(exercise_id, ex.starter_file, seed=5)
    assert result.verdict in STARTER_VERDICTS, result.message
    assert result.score < result.max_score
    assert result.message and result.hint


@pytest.mark.parametrize("exercise_id, path, expected", list(wrong_submissions(whole_check=True)))
def test_wrong_submission_gets_its_verdict(exercise_id, path, expected):
    assert expected in VERDICTS
    # an endless kernel spends its case's time in full: a short one keeps the test quick
    result = check_file(exercise_id, path, seed=7, case_timeout=2 if expected == "timeout" else 20)
    assert result.verdict == expected, result.message
    assert not result.passed


@pytest.mark.parametrize("exercise_id", LADDER)
def test_at_least_three_wrong_submissions(exercise_id):
    assert len(list((SUBMISSIONS / exercise_id).glob("*.py"))) >= 3


@pytest.mark.parametrize("exercise_id", LADDER)
def test_starter_and_solution_share_the_contract(exercise_id):
    """Same docstring and same launch signature in starter and solution."""
    ex = exercise(exercise_id)
    starter, solution = ex.starter_file.read_text(), ex.solution_file.read_text()
    assert starter.split('"""')[1] == solution.split('"""')[1]
    for source, path in ((starter, ex.starter_file), (solution, ex.solution_file)):
        load_launch(ex.spec, source, str(path))  # raises when the signature is off


@pytest.mark.parametrize("exercise_id", LADDER)
@pytest.mark.parametrize("which", ["baseline", "target"])
def test_a_reference_launch_allocates_nothing_once_warmed_up(exercise_id, which, monkeypatch):
    """A reference's timed launches must not allocate: each allocation lands somewhere new and
    Numba's deferred frees synchronise the GPU, so the reference's time, and every speedup
    measured against it, would move from one check to the next (scan's baseline did: 24.9 to
    25.5 ms). Called twice at the benchmark's size (its kernels not run), the second call
    allocates no device memory."""
    import numpy as np
    from numba import cuda
    from numba.cuda.simulator.kernel import FakeCUDAKernel

    monkeypatch.setattr(FakeCUDAKernel, "__getitem__", lambda kernel, config: lambda *args: None)
    ex = exercise(exercise_id)
    dims = dict(ex.spec.benchmark.dims)
    arrays = {a.name: cuda.device_array(a.shape_for(dims), a.dtype) for a in (*ex.spec.inputs, *ex.spec.outputs)}
    scalars = {p.name: np.dtype(p.dtype).type(1) for p in ex.spec.scalars}
    launch = getattr(ex, which)
    launch(**arrays, **scalars)
    made = []
    for name in ("device_array", "device_array_like", "to_device", "pinned_array", "mapped_array"):
        real = getattr(cuda, name)
        monkeypatch.setattr(cuda, name, lambda *a, _real=real, _name=name, **k: made.append(_name) or _real(*a, **k))
    launch(**arrays, **scalars)
    assert made == []
