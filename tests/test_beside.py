"""The kernel doctor beside a GPU (grader/checking/beside.py): on a GPU host the doctor replays
a check's smallest cases in a CPU child, and a race or an out-of-bounds access it finds fails
the check there too. What runs on the CPU here is the doctor's side; tests/test_gpu.py runs the
whole on a GPU."""

from pathlib import Path

from grader.checking import beside
from grader.checking.check import plans_wanted
from grader.children.recording import record_in_child
from grader.children.task import ReplayTask
from grader.exercises import exercise
from grader.replay.sources import hand_in_of
from grader.steps.cases import prepare

VERDICTS = Path(__file__).parent / "gpu_verdicts"


def doctors_verdict(exercise_id: str, path: Path):
    ex = exercise(exercise_id)
    prepared = prepare(ex, 7)
    hand_in = hand_in_of(path)
    message = record_in_child(ex, hand_in, plans_wanted(ex, prepared), 30)
    cases = beside.smallest(prepared)
    future = beside.start(ReplayTask(ex, hand_in, message, tuple(cases), 30.0, backend="simulator"))
    return beside.doctors_failure(ex, cases, future), beside.doctors_report(future)


def test_the_smallest_cases_include_one_of_several_blocks():
    """Are the edges (one element, a partial block) and a case of several blocks among those run?"""
    for exercise_id in ("vector_add", "reduce_sum", "matmul_tiled"):
        picked = beside.smallest(prepare(exercise(exercise_id), 1))
        sizes = [p.case.dims for p in picked]
        assert len(picked) == 3 and len({tuple(d.items()) for d in sizes}) == 3, sizes
        assert min(max(d.values()) for d in sizes) == 1


def test_a_race_a_gpu_may_pass_is_the_doctors_failure():
    """A barrier inside an `if` (a GPU passed it by luck): the doctor's run says `race`, with
    the line, as a laptop's check does."""
    found, report = doctors_verdict("reduce_sum", VERDICTS / "reduce_sum" / "barrier_inside_if.py")
    assert found is not None and found.verdict == "race", found
    assert "syncthreads" in found.message and found.line
    assert report is not None and report.ran_on_doctor


def test_a_correct_kernel_gives_the_doctor_nothing_to_add():
    found, _ = doctors_verdict("vector_add", exercise("vector_add").solution_file)
    assert found is None
