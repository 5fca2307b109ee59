"""Compile before running (grader/compiler/): does every bundled kernel compile with Numba's
real CUDA compiler, to PTX where numba-cuda's [cu12] extra is installed (`make test` installs
it and sets ZEROGPU_REQUIRE_PTX=1, so CI proves the compiler pieces install from pip), and are
kernels a GPU refuses refused on the CPU with a message that teaches?"""

import os
from pathlib import Path

import numpy as np
import re

import pytest

from grader.steps.cases import prepare
from grader.doctor.execute import execute_or_simulate
from grader.exercises import LADDER, exercise
from grader.compiler import client
from grader.steps.load import load_launch

CORPUS = Path(__file__).parent / "compile_corpus"


@pytest.fixture(scope="module", autouse=True)
def fresh_cache(tmp_path_factory):
    """A cache of this run's own: every answer below comes from the compiler, not a file."""
    old = os.environ.get("ZEROGPU_COMPILE_CACHE")
    os.environ["ZEROGPU_COMPILE_CACHE"] = str(tmp_path_factory.mktemp("compiled"))
    client._MEMO.clear()
    yield
    client._MEMO.clear()
    if old is None:
        os.environ.pop("ZEROGPU_COMPILE_CACHE")
    else:
        os.environ["ZEROGPU_COMPILE_CACHE"] = old


def _answers_of(monkeypatch, spec, launch):
    """Every compile answer one small case of `launch` asked for (kernel name, answer)."""
    seen = []
    ask = client.compile_answer

    def recording(py_func, args, arg_types=None):
        answer = ask(py_func, args, arg_types)
        seen.append((py_func.__name__, answer))
        return answer

    monkeypatch.setattr(client, "compile_answer", recording)
    case = prepare(exercise(spec.id), seed=1)[1]
    outcome = execute_or_simulate(spec, launch, case.inputs, dict(case.case.dims))
    return seen, outcome


def _launches(exercise_id):
    ex = exercise(exercise_id)
    solution = ex.solution_file
    yield "solution", load_launch(ex.spec, solution.read_text(), str(solution))
    yield "baseline", ex.baseline
    yield "target", ex.target


@pytest.mark.parametrize("exercise_id", LADDER)
def test_every_bundled_kernel_compiles_for_a_gpu(exercise_id, monkeypatch):
    """Do the solution, baseline and target of every exercise compile with numba-cuda for
    their launches' types (to PTX, when the CUDA compiler libraries are installed)?"""
    ex = exercise(exercise_id)
    for role, launch in _launches(exercise_id):
        answers, outcome = _answers_of(monkeypatch, ex.spec, launch)
        assert answers, f"{role}: no kernel was compile-checked"
        for name, answer in answers:
            assert answer["status"] == "ok", f"{role} `{name}`: {answer}"
            if os.environ.get("ZEROGPU_REQUIRE_PTX") == "1":
                assert answer["ptx"], f"{role} `{name}` was typed but not lowered to PTX: {answer.get('why')}"
        assert outcome.error is None, f"{role}: {outcome.error}"


def corpus():
    for path in sorted((Path(__file__).parent / "gpu_verdicts").glob("*/*.py")):
        expected = path.read_text().splitlines()[0].removeprefix("# expect: ").strip()
        yield pytest.param(path.parent.name, path, expected, id=f"{path.parent.name}/{path.stem}")


@pytest.mark.slow  # 27 whole checks, about 90 s of a worker on 2 cores
@pytest.mark.parametrize("exercise_id, path, expected", list(corpus()))
def test_cpu_verdict_is_the_gpu_verdict(exercise_id, path, expected):
    """Does a real-world-style kernel get, without a GPU, the verdict a GPU gives it (each
    file says whether that verdict was measured on a GPU or still needs confirming there)?"""
    from grader.checking.check import check_file

    result = check_file(exercise_id, path, seed=7)
    assert result.verdict == expected, result.message
    if expected == "exception":  # what a GPU refuses, said as a GPU's refusal, at a line
        # a kernel no GPU compiles is refused before any case (its `def`'s line in the message)
        line = result.cases[0].line if result.cases else re.search(r"\(line \d+", result.message)
        assert "GPU" in result.message and line is not None, result.message


def test_a_fallback_failing_in_the_simulator_is_the_graders_failure():
    """When the simulator (run because the doctor could not) fails in its own code, does the
    result blame the grader, say how to report it, and not call it the learner's exception?"""
    from grader.doctor.fallback import blame_the_grader
    from grader.steps.explain import ErrorInfo

    ours = ErrorInfo(
        "exception",
        "thread 0 raised AttributeError: 'FakeCUDAModule' object has no attribute 'float16'",
        "AttributeError",
        8,
        "c[i] = cuda.float16(a[i])",
    )
    blamed = blame_the_grader(ours, "`cuda.float16`")
    assert blamed.verdict == "crashed" and "grader's failure" in blamed.message and "report" in blamed.message
    theirs = ErrorInfo("exception", "thread 3 raised ZeroDivisionError: division by zero", "ZeroDivisionError")
    assert blame_the_grader(theirs, "`cuda.float16`") is theirs


@pytest.mark.parametrize(
    "name, args, dtype",
    [
        ("exp", (np.float32(90),), np.float32),  # inf, as on a GPU
        ("exp", (np.float64(90),), np.float64),
        ("exp", (2,), np.float64),  # an int argument: float64
        ("atan2", (np.float32(1), np.float64(2)), np.float64),
        ("pow", (np.float32(3), np.int32(2)), np.float32),
        ("pow", (np.float32(3), 2), np.float64),  # the literal is an int64
        ("floor", (np.float32(2.5),), np.float32),  # the float type, not an int
        ("sqrt", (np.float32(-1),), np.float32),  # NaN, not ValueError
    ],
)
def test_math_in_a_kernel_follows_numbas_cuda_typing(name, args, dtype):
    """Does `math` in a doctor kernel return the type numba-cuda infers (measured with
    cuda.compile_ptx(..., device=True)) and IEEE inf/NaN instead of Python's errors?"""
    from grader.doctor.devicemath import DEVICE_MATH

    with np.errstate(all="ignore"):
        got = getattr(DEVICE_MATH, name)(*args)
    assert type(got) is dtype
    if name == "exp" and dtype is np.float32:
        assert np.isinf(got)
    if name == "sqrt":
        assert np.isnan(got)
