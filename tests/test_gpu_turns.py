"""Several checks sharing one GPU, taking turns (grader/gpu/turns.py), on a real GPU: the figures
of a check that shared the GPU are those of a check graded alone. Run on a GPU host:
ZEROGPU_BACKEND=gpu pytest -m gpu tests/test_gpu_turns.py

Not met today: on an H200 (2026-12-01) reduce_sum and transpose failed the equality test, as
sharing moves speedups (docs/BENCHMARKS.md, "Several checks per GPU"), which is why one check
per GPU is the default. These tests are the bar for making sharing the default."""

import threading

import pytest

pytestmark = pytest.mark.gpu

import grader  # noqa: E402
from grader.checking import isolate  # noqa: E402
from grader.checking.pipeline import check_file  # noqa: E402
from grader.containment import sandbox  # noqa: E402
from grader.exercises import exercise  # noqa: E402

SAME_WITHIN = 0.01
"""The speed-grading issue's bar: the same solution graded again gives speedups within 1%."""


@pytest.fixture(autouse=True)
def needs_gpu():
    if grader.BACKEND != "gpu":
        pytest.skip("needs a real GPU (ZEROGPU_BACKEND=gpu on a machine with one)")


def speedup(result) -> float:
    assert result.passed and result.speed.measured, result.message
    return result.speed.details.speedup_vs_baseline.median


def together(exercise_id: str, checks: int, graded: bool = False) -> list:
    """`checks` checks of the solution started at once on GPU 0, sharing it by turns."""
    path = exercise(exercise_id).solution_file
    results = [None] * checks

    def one(k):
        results[k] = check_file(exercise_id, path, graded=graded, device=0)

    with isolate.gpu_turns(), isolate.keep_warm(spares=checks):
        threads = [threading.Thread(target=one, args=(k,)) for k in range(checks)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(600)
    return results


@pytest.mark.parametrize("exercise_id", ["vector_add", "matmul_tiled", "reduce_sum", "histogram", "transpose"])
def test_checks_sharing_the_gpu_get_the_speedups_of_a_check_alone(exercise_id):
    """Memory-bound, compute-bound and atomic-bound solutions: two checks at once on one GPU,
    then two more, against checks graded alone before and after."""
    path = exercise(exercise_id).solution_file
    alone = [speedup(check_file(exercise_id, path, device=0)) for _ in range(2)]
    shared = [speedup(r) for r in together(exercise_id, 2) + together(exercise_id, 2)]
    alone += [speedup(check_file(exercise_id, path, device=0))]
    reference = sorted(alone)[1]
    assert max(alone) / min(alone) <= 1 + SAME_WITHIN, ("alone", alone)
    assert all(abs(s / reference - 1) <= SAME_WITHIN for s in shared), (exercise_id, alone, shared)


@pytest.mark.skipif(sandbox.unavailable() is not None, reason="graded checks need the sandbox")
def test_graded_checks_started_cold_or_by_a_spare_time_the_histogram_alike(monkeypatch):
    """In class grading a check is served by a spare or, when none is ready, starts cold; both
    must allocate GPU memory in the same order. The histogram's solution, bound by atomics on
    one bin, takes one of two speeds depending on where that bin lands (12.25x or 19.0x on an
    H200): spares that launched the baseline and target ahead gave it the other one."""
    monkeypatch.delenv("ZEROGPU_UNSANDBOXED", raising=False)
    path = exercise("histogram").solution_file
    alone = speedup(check_file("histogram", path, graded=True, device=0))
    with isolate.gpu_turns(), isolate.keep_warm(spares=2):
        first = check_file("histogram", path, graded=True, device=0)  # cold: no spare yet
        assert isolate.waiting_spares(), "a spare waits for the next check"
        by_spares = [check_file("histogram", path, graded=True, device=0) for _ in range(2)]
    for result in [first, *by_spares]:
        assert abs(speedup(result) / alone - 1) <= SAME_WITHIN, (alone, [speedup(r) for r in [first, *by_spares]])


def test_a_check_sharing_the_gpu_says_so_and_what_it_waited():
    results = together("vector_add", 3, graded=True)
    for result in results:
        d = result.speed.details
        assert result.passed, result.message
        assert "held it alone" in d.method
        phases = d.phase_seconds
        for phase in (
            "child: waiting for the GPU",
            "waiting for the GPU: inputs and warm-ups",
            "waiting for the GPU: timed rounds",
        ):
            assert phase in phases and phases[phase] >= 0, phases
    # three checks, one GPU: all but the first to time waited for another's timed rounds
    waits = sorted(r.speed.details.phase_seconds["waiting for the GPU: timed rounds"] for r in results)
    assert waits[-1] > 0.01, waits


def test_four_workers_on_one_gpu_grade_every_row_once(tmp_path, monkeypatch):
    """Four workers share one GPU (`zerogpu grade --workers 4` on a one-GPU host): every row arrives
    once, every check timed under turns."""
    import shutil

    import grader.classroom.grading as classroom
    from grader.classroom.gradebook import Gradebook

    monkeypatch.setattr(classroom, "gpu_total", lambda: 1)
    for k in range(6):
        (tmp_path / "class" / f"s{k}").mkdir(parents=True)
        for exercise_id in ("vector_add", "saxpy"):
            shutil.copy(exercise(exercise_id).solution_file, tmp_path / "class" / f"s{k}" / f"{exercise_id}.py")
    book = Gradebook(tmp_path / "book.sqlite")
    tasks = classroom.discover(tmp_path / "class")
    graded = classroom.grade_class(tasks, book, workers=4, case_timeout=60, backend="gpu", private=[tmp_path / "class"])
    assert graded == len(tasks) == 12
    rows = book.rows()
    assert sorted((r["student"], r["exercise"]) for r in rows) == sorted((t.student, t.exercise) for t in tasks)
    assert all(r["verdict"] == "passed" for r in rows), [r["result"]["message"] for r in rows]
    assert all("held it alone" in r["result"]["speed"]["details"]["method"] for r in rows)
