"""A replayer: one checking child that serves a GPU for a whole grading run (grader/children/replayers.py).

On a GPU host `replayers()` routes graded checks to it; here (no GPU) the tests drive a
Replayer directly on a CPU engine, which exercises the same task protocol: one process, many
tasks, each in a folder of its own, a timeout or crash that stops it and a new one after.
"""

import textwrap
import threading

import pytest

from grader.children import replayers
from grader.checking.verdicts import all_passed
from grader.checking.check import plans_wanted
from grader.children.recording import record_in_child
from grader.children.task import Hooks, ReplayTask
from grader.replay.sources import hand_in_of
from grader.exercises import exercise
from grader.steps.cases import prepare
from grader.steps.judge import judge_case

ENDLESS = textwrap.dedent(
    """
    from numba import cuda

    @cuda.jit
    def add(a, b, c):
        i = cuda.grid(1)
        while i < c.size:
            c[i] = a[i] + b[i]

    def launch(a, b, c):
        add[(c.size + 127) // 128, 128](a, b, c)
    """
)


def replay(replayer, path, prepared, timeout=30.0):
    ex = exercise("vector_add")
    message = record_in_child(ex, hand_in_of(path), plans_wanted(ex, prepared), timeout)
    return replayer.run(ReplayTask(ex, hand_in_of(path), message, tuple(prepared), timeout))


def verdicts(prepared, run):
    ex = exercise("vector_add")
    return [
        judge_case(ex.spec, p.case, run.outcomes[p.index], p.expected, p.tolerance, p.inputs).verdict
        for p in prepared
        if p.index in run.outcomes
    ]


@pytest.fixture
def replayer():
    from grader.backend import current

    serving = replayers.Replayer(None, False, (), backend=current())
    yield serving
    serving.stop()


def test_one_replayer_serves_check_after_check(replayer, tmp_path):
    """Several submissions, right and wrong, replayed by the same process, each judged as a
    child of its own would judge it; the task folders are gone after each."""
    ex = exercise("vector_add")
    prepared = prepare(ex, 3)[:3]
    wrong = tmp_path / "wrong.py"
    wrong.write_text(ex.solution_file.read_text().replace("a[i] + b[i]", "a[i] - b[i]"))
    first = replay(replayer, ex.solution_file, prepared)
    pid = replayer.proc.pid
    second = replay(replayer, wrong, prepared)
    third = replay(replayer, ex.solution_file, prepared)
    assert replayer.proc.pid == pid, "the same process replayed all three"
    assert all_passed(ex, prepared, first.outcomes) and all_passed(ex, prepared, third.outcomes)
    assert set(verdicts(prepared, second)) == {"wrong_result"}
    assert [p.name for p in replayer_inbox(replayer).iterdir() if p.name.startswith("task_")] == []


def replayer_inbox(replayer):
    from pathlib import Path

    return Path(replayer._inbox.name)


def test_a_replayer_that_ran_out_of_time_is_replaced(replayer, tmp_path):
    """A kernel that never ends: its check times out, the replayer is stopped, and the next
    check gets a new one that grades it right."""
    ex = exercise("vector_add")
    prepared = prepare(ex, 3)[:1]
    endless = tmp_path / "endless.py"
    endless.write_text(ENDLESS)
    stuck = replay(replayer, endless, prepared, timeout=3.0)
    assert stuck.stopped == "timeout"
    assert replayer.proc is None, "stopped"
    after = replay(replayer, ex.solution_file, prepared)
    assert all_passed(ex, prepared, after.outcomes)


def test_a_replayer_gone_before_it_began_a_check_is_replaced_and_the_check_handed_over(replayer):
    """A replayer that ended between two checks (unseen when the next was handed over) never
    began that check, so nothing of the submission's ran: the check goes to a new replayer
    and passes, rather than being marked crashed."""
    import os
    import signal

    ex = exercise("vector_add")
    prepared = prepare(ex, 3)[:1]
    replay(replayer, ex.solution_file, prepared)
    gone = replayer.proc
    os.killpg(gone.pid, signal.SIGKILL)
    gone.wait()
    real_poll, lies = gone.poll, [True]
    gone.poll = lambda: None if lies and lies.pop() else real_poll()  # looked alive at hand-over
    after = replay(replayer, ex.solution_file, prepared)
    assert after.stopped is None and all_passed(ex, prepared, after.outcomes)
    assert replayer.proc is not None and replayer.proc.pid != gone.pid


@pytest.mark.parametrize(
    "began, status, outcomes, again",
    [
        (False, None, {}, True),  # gone before it began the task
        (True, 0, {}, True),  # exit 0: its names ended or the grader went, never a submission's doing
        (True, -9, {}, False),  # killed: the submission's to answer for (memory, a cap)
        (True, 0, {0: "an outcome"}, False),  # had answered for a case: the crash is reported
    ],
)
def test_only_a_replayers_end_no_submission_can_cause_hands_the_check_over(tmp_path, began, status, outcomes, again):
    from types import SimpleNamespace

    from grader.children.follow import ChildRun

    if began:
        (tmp_path / "imported").touch()
    proc = SimpleNamespace(poll=lambda: status)
    assert replayers._not_the_submissions(ChildRun(outcomes, "crashed"), proc, tmp_path) is again


def test_a_cancelled_task_stops_its_replayer_only_while_it_serves_it(replayer, tmp_path):
    """The class's deadline ends a task: its replayer is stopped if it is still on that task,
    and left alone once it has moved on to another."""
    ex = exercise("vector_add")
    prepared = prepare(ex, 3)[:1]
    replay(replayer, ex.solution_file, prepared)
    pid = replayer.proc.pid
    replayer.abandon("task_0")  # finished already: nothing happens
    assert replayer.proc is not None and replayer.proc.pid == pid
    replayer._serving = "task_7"
    replayer.abandon("task_7")
    assert replayer.proc is None


def test_a_sandboxed_replayer_serves_from_its_inbox(tmp_path):
    """In bubblewrap (graded mode) the replayer sees its inbox as its task folder and every
    exercise's reference kernels, and nothing of the class's folders; it outlives the task
    thread that started it (bubblewrap ends a sandbox with the thread that started it)."""
    from grader.backend import current
    from grader.containment import sandbox

    if sandbox.unavailable() is not None:
        pytest.skip("bubblewrap is not installed")
    ex = exercise("vector_add")
    serving = replayers.Replayer(None, True, (str(tmp_path),), backend=current())

    def check(path):
        ex = exercise(path.stem)
        prepared = prepare(ex, 3)[:2]
        message = record_in_child(ex, hand_in_of(path), plans_wanted(ex, prepared), 30)
        run = serving.run(ReplayTask(ex, hand_in_of(path), message, tuple(prepared), 30))
        assert all_passed(ex, prepared, run.outcomes), (run.stopped, run.detail)

    try:
        first = threading.Thread(target=check, args=(ex.solution_file,))
        first.start()
        first.join()  # the thread that started the replayer has ended
        pid = serving.proc.pid
        check(exercise("saxpy").solution_file)
        assert serving.proc.pid == pid
    finally:
        serving.stop()


def test_replayers_serve_only_on_a_gpu_host():
    """On the CPU engines the kernel doctor runs kernels as Python: every check keeps a child
    of its own, inside `replayers()` too."""
    from grader.children.run import run_in_child

    with replayers.replayers():
        assert replayers.runner(None, True, ()) is run_in_child


def test_a_check_whose_kernels_compiled_ahead_cannot_be_written_is_replayed_as_before(replayer, monkeypatch):
    """A full disk where the compiled kernels go: the check still runs, its kernels compiled by
    the replayer (grader/children/compiling.py)."""
    from pathlib import Path

    from grader.children.folder import COMPILED

    real = Path.write_text

    def full(self, *args, **kwargs):
        if self.name == COMPILED:
            raise OSError(28, "No space left on device")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", full)
    ex = exercise("vector_add")
    prepared = prepare(ex, 3)[:2]
    message = record_in_child(ex, hand_in_of(ex.solution_file), plans_wanted(ex, prepared), 30.0)
    task = ReplayTask(ex, hand_in_of(ex.solution_file), message, tuple(prepared), 30.0)
    run = replayer.run(task, compiled={"k0_add": [{}]})
    assert run.stopped is None and all_passed(ex, prepared, run.outcomes)


WRONG_ADD = textwrap.dedent(
    """
    from numba import cuda

    @cuda.jit
    def add(a, b, c):
        i = cuda.grid(1)
        if i < c.size:
            c[i] = a[i] - b[i]

    def launch(a, b, c):
        add[(c.size + 127) // 128, 128](a, b, c)
    """
)


@pytest.mark.slow
def test_a_class_on_two_gpus_gives_each_its_replayer_every_row_and_the_verdicts_of_one(monkeypatch, tmp_path):
    """Two GPUs without two GPUs: the coordinator grades as on a host of two (`gpu_total` 2,
    its workers' slots on devices 0 and 1), each device's replayer a CPU-engine replayer. Every
    check goes to its slot's device's replayer, both serve, every row is there with the verdicts
    a one-device run gives, and both replayers have stopped when the run ends."""
    from grader.backend import current
    from grader.classroom import grading
    from grader.classroom.gradebook import Gradebook
    from grader.classroom.grading import Task, grade_class

    served: dict = {}
    started = []

    class OnTheCpu(replayers.Replayer):
        def __init__(self, device, sandboxed, private, backend="gpu"):
            super().__init__(device, sandboxed, private, backend=current())
            started.append(self)

        def run(self, task, hooks=Hooks(), compiled=None):
            served[self.device] = served.get(self.device, 0) + 1
            return super().run(task, hooks)

    monkeypatch.setattr(grading, "gpu_total", lambda: 2)
    monkeypatch.setattr(replayers, "child_backend", lambda: "gpu")
    monkeypatch.setattr(replayers, "Replayer", OnTheCpu)
    monkeypatch.setattr(replayers, "compiled_ahead", lambda *args, **kwargs: {})  # no GPU to compile for
    solution = exercise("vector_add").solution_file.read_bytes()
    hand_ins = {"ada": solution, "bo": WRONG_ADD.encode(), "cy": solution, "di": WRONG_ADD.encode()}
    tasks = [Task(student, "vector_add", source) for student, source in hand_ins.items()]

    def graded(workers: int, backend: str) -> dict:
        book = Gradebook(tmp_path / f"{backend}-{workers}.sqlite")
        grade_class(tasks, book, workers=workers, backend=backend, case_timeout=30, unsandboxed=True)
        return {row.student: row.verdict for row in book.rows()}

    two = graded(2, "gpu")
    assert two == {"ada": "passed", "bo": "wrong_result", "cy": "passed", "di": "wrong_result"}
    assert sorted(served) == [0, 1] and sum(served.values()) >= len(tasks), served
    assert {r.device for r in started} == {0, 1}
    assert all(r.proc is None for r in started), "every replayer stopped with the run"
    assert graded(1, "simulator") == two, "the verdicts of a one-device run"
