"""Many checks on one real GPU: several workers sharing it through its replayer, and checks in a
row served by spare children. Run on a GPU host:
ZEROGPU_BACKEND=gpu pytest -m gpu tests/test_gpu_many_checks.py"""

import pytest

pytestmark = pytest.mark.gpu

import grader  # noqa: E402
from grader.children import spares  # noqa: E402
from grader.checking.check import check_file  # noqa: E402
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


@pytest.mark.skipif(sandbox.unavailable() is not None, reason="graded checks need the sandbox")
def test_graded_checks_started_cold_or_by_a_spare_time_the_histogram_alike(monkeypatch):
    """Outside class grading (bench/trust.py) a check is served by a spare or, when none is
    ready, starts cold; both must allocate GPU memory in the same order. The histogram's
    solution, bound by atomics on one bin, takes one of two speeds depending on where that bin
    lands (12.25x or 19.0x on an H200): spares that launched the baseline and target ahead gave
    it the other one."""
    monkeypatch.delenv("ZEROGPU_UNSANDBOXED", raising=False)
    path = exercise("histogram").solution_file
    alone = speedup(check_file("histogram", path, graded=True, device=0))
    with spares.keep_warm(spares=2):
        first = check_file("histogram", path, graded=True, device=0)  # cold: no spare yet
        assert spares.waiting_spares(), "a spare waits for the next check"
        by_spares = [check_file("histogram", path, graded=True, device=0) for _ in range(2)]
    for result in [first, *by_spares]:
        assert abs(speedup(result) / alone - 1) <= SAME_WITHIN, (alone, [speedup(r) for r in [first, *by_spares]])


def test_the_default_workers_on_one_gpu_grade_every_row_once(tmp_path, monkeypatch):
    """The default workers share one GPU (`zerogpu grade`'s, CHECKS_PER_GPU): they record
    on every core while the GPU's replayer replays and times one check at a time; every row
    arrives once, passed and timed."""
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
    assert sorted((r.student, r.exercise) for r in rows) == sorted((t.student, t.exercise) for t in tasks)
    assert all(r.verdict == "passed" for r in rows), [r.result.message for r in rows]
    assert all(r.result.speed.measured for r in rows)
