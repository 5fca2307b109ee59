"""The child process per submission, started on demand or ahead of time (spare children)."""

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from grader.children import follow
from grader.children import spares as pool
from grader.children.capture import CappedOutput
from grader.checking.check import check_file
from grader.containment import sandbox
from grader.exercises import ROOT, exercise

CHEATS = Path(__file__).parent / "cheats"


def live_spares():
    return [s for _, s in pool.waiting_spares() if s.proc.poll() is None]


def test_a_spare_child_grades_exactly_like_a_fresh_one():
    path = exercise("saxpy").solution_file
    cold = check_file("saxpy", path, seed=5)
    with pool.keep_warm():
        first = check_file("saxpy", path, seed=5)
        spares = live_spares()
        assert len(spares) == 1, "a spare waits for the next check"
        second = check_file("saxpy", path, seed=5)  # served by that spare
        assert spares[0].proc.poll() is not None, "the spare ran the second check and exited"
    for result in (first, second):
        assert (result.verdict, result.score, [c.verdict for c in result.cases]) == (
            cold.verdict,
            cold.score,
            [c.verdict for c in cold.cases],
        )
    assert all(s.proc.poll() is not None for s in spares) and not live_spares()


@pytest.mark.skipif(sandbox.unavailable() is not None, reason=str(sandbox.unavailable()))
def test_graded_checks_are_served_by_sandboxed_spares(monkeypatch, tmp_path):
    monkeypatch.setenv("ZEROGPU_SECRET", "test-secret")
    monkeypatch.delenv("ZEROGPU_UNSANDBOXED", raising=False)
    broken = tmp_path / "vector_add.py"
    broken.write_text(exercise("vector_add").solution_file.read_text().replace("a[i] + b[i]", "a[i] - b[i]"))
    served = []
    take = pool.SPARES.take

    def take_and_note(key):
        spare = take(key)
        served.append(spare is not None)
        return spare

    monkeypatch.setattr(pool.SPARES, "take", take_and_note)
    with pool.keep_warm():
        first = check_file("vector_add", exercise("vector_add").solution_file, graded=True)
        spares = live_spares()
        assert len(spares) == 1 and spares[0].proc.args[0] in ("bwrap", "/bin/sh"), "a spare inside the sandbox"
        second = check_file("vector_add", broken, graded=True)  # served by that spare
        third = check_file("saxpy", exercise("saxpy").solution_file, graded=True)  # other mounts: no spare yet
    assert served[:2] == [False, True] and served[-1] is False  # a wrong result may be run again, in a spare
    assert first.passed and not first.unsandboxed and third.passed
    assert second.verdict == "wrong_result" and not second.unsandboxed
    assert not live_spares()


@pytest.mark.skipif(sandbox.unavailable() is not None, reason=str(sandbox.unavailable()))
def test_a_sandboxed_spare_outlives_the_task_thread_that_started_it(monkeypatch):
    """bwrap's --die-with-parent follows the starting thread: class grading runs each task on a
    thread of its own, which ends before the next task takes the spare."""
    monkeypatch.setenv("ZEROGPU_SECRET", "test-secret")
    monkeypatch.delenv("ZEROGPU_UNSANDBOXED", raising=False)
    with pool.keep_warm():
        task = threading.Thread(
            target=check_file, args=("vector_add", exercise("vector_add").solution_file), kwargs={"graded": True}
        )
        task.start()
        task.join()
        time.sleep(1.0)
        assert live_spares(), "the spare died with the task's thread"


GRADER_THAT_DIES = """
import sys, time
from grader.checking.check import check_file
from grader.children import spares
from grader.exercises import exercise
with spares.keep_warm():
    check_file("vector_add", exercise("vector_add").solution_file, graded=sys.argv[1] == "graded")
    print(*[s.task_dir for _, s in spares.waiting_spares()], flush=True)
    time.sleep(600)
"""


@pytest.mark.parametrize("graded", ["graded", "plain"])
def test_children_end_when_their_grader_is_killed(graded, monkeypatch):
    """A grader killed outright runs no clean-up: its spare (in the sandbox or not) still goes."""
    if graded == "graded" and sandbox.unavailable():
        pytest.skip(str(sandbox.unavailable()))
    monkeypatch.setenv("ZEROGPU_SECRET", "test-secret")
    monkeypatch.delenv("ZEROGPU_UNSANDBOXED", raising=False)
    grader = subprocess.Popen(
        [sys.executable, "-c", GRADER_THAT_DIES, graded], stdout=subprocess.PIPE, text=True, cwd=ROOT
    )
    folder = grader.stdout.readline().strip()
    assert folder, "a spare was waiting"

    def spare_processes():
        found = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                if folder.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                    found.append(pid)
            except OSError:
                pass
        return found

    assert spare_processes()
    grader.kill()
    grader.wait()
    deadline = time.monotonic() + 10
    while spare_processes() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not spare_processes(), "the spare outlived its grader"


ENDLESS_CHECK = """
import sys
from grader.checking.check import check_file
check_file("saxpy", sys.argv[1], graded=sys.argv[2] == "graded", case_timeout=600)
"""


@pytest.mark.parametrize("graded", ["graded", "plain"])
def test_a_child_running_an_endless_kernel_ends_when_its_grader_is_killed(graded, monkeypatch):
    """The child is in a session of its own (a terminal's Ctrl-C must not reach it): when its
    grader is killed outright it must still end, not spin until its CPU limit."""
    if graded == "graded" and sandbox.unavailable():
        pytest.skip(str(sandbox.unavailable()))
    monkeypatch.setenv("ZEROGPU_SECRET", "test-secret")
    monkeypatch.delenv("ZEROGPU_UNSANDBOXED", raising=False)
    endless = Path(__file__).parent / "submissions" / "saxpy" / "forgets_stride.py"
    grader = subprocess.Popen([sys.executable, "-c", ENDLESS_CHECK, str(endless), graded], cwd=ROOT)
    children = []
    deadline = time.monotonic() + 60
    while not children and time.monotonic() < deadline:
        time.sleep(0.5)
        children = [pid for pid in filter(str.isdigit, os.listdir("/proc")) if _parent_of(pid) == grader.pid]
    assert children, "the check started its child (bwrap's, when graded)"
    time.sleep(2)  # the kernel is spinning now
    grader.kill()
    grader.wait()
    deadline = time.monotonic() + 10
    while _alive(children) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(children), "the child outlived its grader"


def _parent_of(pid) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return int(stat[stat.rindex(")") + 2 :].split()[1])
    except (OSError, ValueError):
        return 0


def _alive(pids) -> list:
    """Those of `pids` still running (not gone, not a zombie)."""
    alive = []
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        if stat[stat.rindex(")") + 2 :].split()[0] != "Z":
            alive.append(pid)
    return alive


def test_leaving_keep_warm_stops_the_spare_and_removes_its_folder():
    with pool.keep_warm():
        check_file("thread_ids", exercise("thread_ids").solution_file, seed=1)
        spare = live_spares()[0]
    assert spare.proc.poll() is not None
    assert not spare.task_dir.exists()


def runtime_cheats():
    """Cheats that get past the static policy: the process limits must hold in a spare too."""
    for path in sorted(CHEATS.glob("*.py")):
        exercise_id, expected = (
            re.fullmatch(r"# \w+: (\w+)", line).group(1) for line in path.read_text().splitlines()[:2]
        )
        if expected != "forbidden":
            yield exercise_id, path, expected


@pytest.mark.parametrize(
    "family",
    [
        pytest.param("process", marks=pytest.mark.slow),  # exits, bombs, endless loops, host reads
        pytest.param("record_", marks=pytest.mark.thorough),  # forged recordings (test_cheats grades each)
    ],
)
def test_hostile_submissions_in_spares_get_their_verdicts(family, monkeypatch):
    monkeypatch.setenv("ZEROGPU_SECRET", "test-secret")
    cheats = [c for c in runtime_cheats() if c[1].stem.startswith("record_") == (family == "record_")]
    assert len(cheats) >= 5
    wrong = []
    with pool.keep_warm():
        check_file("thread_ids", exercise("thread_ids").solution_file, case_timeout=5)  # leaves a spare
        for exercise_id, path, expected in cheats:  # each runs in the spare the one before left
            result = check_file(exercise_id, path, graded=True, case_timeout=5)
            if result.verdict != expected:
                wrong.append(f"{path.stem}: {result.verdict} ({result.message})")
    assert not wrong


def test_the_task_lowers_a_spares_cpu_limit_and_never_raises_it():
    code = textwrap.dedent("""
        import resource
        from grader.children.roles.common import lower_cpu_limit as _lower_cpu_limit
        resource.setrlimit(resource.RLIMIT_CPU, (3600, 3605))
        _lower_cpu_limit(20)
        print(*resource.getrlimit(resource.RLIMIT_CPU))
        _lower_cpu_limit(100)
        print(*resource.getrlimit(resource.RLIMIT_CPU))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60).stdout
    lowered, kept = (tuple(map(int, line.split())) for line in out.splitlines())
    assert 21 <= lowered[0] <= 30 and lowered[1] == lowered[0] + 5
    assert kept == lowered


def test_a_spare_waits_while_its_parent_lives_and_exits_when_it_is_gone(tmp_path):
    # A parent starts a spare, as grader/children/spawn.py does (with a lifeline whose write end only the
    # parent holds), then dies (its stdin closes) without handing over a task.
    code = textwrap.dedent(f"""
        import os, subprocess, sys
        read, write = os.pipe()
        proc = subprocess.Popen([sys.executable, "-m", "grader.children", {str(tmp_path)!r}, "--role", "spare",
                                 "--lifeline", str(read)], pass_fds=(read,),
                                start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        print(proc.pid, flush=True)
        sys.stdin.read()
    """)
    parent = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT
    )
    pid = int(parent.stdout.readline())
    try:
        time.sleep(3)  # imports done: now only waiting
        assert alive(pid), "the spare must wait for its task while the parent lives"
        parent.stdin.close()
        parent.wait(timeout=30)
        for _ in range(300):
            if not alive(pid):
                break
            time.sleep(0.1)
        else:
            pytest.fail("the orphaned spare kept waiting")
    finally:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


def alive(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status")
    try:
        return "zombie" not in status.read_text().lower()
    except FileNotFoundError:
        return False


@pytest.mark.skipif(sandbox.unavailable() is not None, reason=str(sandbox.unavailable()))
def test_sandboxed_spares_per_exercise_are_bounded(monkeypatch):
    """A class graded in the sandbox keeps a spare per exercise: no more than a few wait at once."""
    monkeypatch.setenv("ZEROGPU_SECRET", "test-secret")
    monkeypatch.delenv("ZEROGPU_UNSANDBOXED", raising=False)
    monkeypatch.setattr(pool, "MAX_SPARES_PER_DEVICE", 2)
    with pool.keep_warm():
        for exercise_id in ("thread_ids", "vector_add", "saxpy"):
            assert check_file(exercise_id, exercise(exercise_id).solution_file, graded=True).passed
        waiting = live_spares()
        assert len(waiting) == 2, [s.task_dir for s in waiting]
        assert [k[2][0] for k, s in pool.waiting_spares()] == ["vector_add", "saxpy"]
    assert not live_spares()


OFF_BY_ONE_ADD = """from numba import cuda


@cuda.jit
def add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i] + 1


def launch(a, b, c):
    add[(c.size + 255) // 256, 256](a, b, c)
"""


def test_a_child_asked_to_time_a_failing_submission_is_told_not_to(tmp_path):
    """On a GPU a check's child times the submission after its cases. The grading process first
    judges every case's outcome, and a submission that failed one is not timed at all: its
    child ends without timing (here on a CPU engine, where timing at the benchmark's size would
    run into the speed step's time limit instead)."""
    from grader.checking.verdicts import all_passed
    from grader.steps.cases import prepare

    ex = exercise("vector_add")
    wrong = tmp_path / "wrong.py"
    wrong.write_text(OFF_BY_ONE_ADD)
    prepared = prepare(ex, 5)[:2]
    judged = []

    def worth_timing(outcomes):
        judged.append(sorted(outcomes))
        return all_passed(ex, prepared, outcomes)

    from grader.checking.check import plans_wanted
    from grader.children.recording import record_in_child
    from grader.children.run import run_in_child
    from grader.children.task import Hooks, ReplayTask, Timing
    from grader.replay.sources import hand_in_of

    message = record_in_child(ex, hand_in_of(wrong), plans_wanted(ex, prepared), 30)
    task = ReplayTask(ex, hand_in_of(wrong), message, tuple(prepared), 30, timing=Timing(7, 1234))
    run = run_in_child(task, Hooks(worth_timing=worth_timing))
    assert judged == [[p.index for p in prepared]], "judged once, with every case's outcome"
    assert run.stopped is None and run.samples is None, (run.stopped, run.detail, run.samples)


def test_the_word_on_timing_follows_the_judgement(tmp_path):
    """What the child reads is what the judgement said; a judge that fails says skip."""
    from grader.children.roles.replay import _parent_says_time

    passed, broken = tmp_path / "passed", tmp_path / "broken"
    for folder in (passed, broken):
        folder.mkdir()
    assert follow.tell_whether_to_time(passed, {}, lambda outcomes: True)
    assert _parent_says_time(passed)

    def judge_that_fails(outcomes):
        raise ValueError("an outcome the judge cannot read")

    assert not follow.tell_whether_to_time(broken, {}, judge_that_fails)
    assert not _parent_says_time(broken)


def test_a_recording_child_that_answered_and_exited_between_two_looks_is_heard(monkeypatch):
    """The grading process looks at the recording child's pipe, then at whether the child is
    still alive. A thread waiting for the GIL between the two (as a class run's oracle threads
    make it) can find a child that wrote its whole answer and exited meanwhile: that is an
    answer, not a crash ("exited with status 0 before finishing")."""
    from grader.children import recording

    read_end, write_end = os.pipe()
    proc = subprocess.Popen(
        [sys.executable, "-c", f"import os; os.write({write_end}, b'the plans'); os.close({write_end})"],
        pass_fds=(write_end,),
    )
    os.close(write_end)
    proc.wait()  # answered and gone before the grading process looks
    where_read, where_write = os.pipe()
    os.set_blocking(where_read, False)
    real_select, looks = recording.select.select, []

    def late_select(read, write, error, timeout):
        looks.append(timeout)
        return ([], [], []) if len(looks) == 1 else real_select(read, write, error, timeout)

    monkeypatch.setattr(recording.select, "select", late_select)
    try:
        data = recording._read_message(read_end, proc, time.monotonic() + 10, where_read, 10)
    finally:
        for fd in (read_end, where_read, where_write):
            os.close(fd)
    assert data == b"the plans" and len(looks) >= 2


def test_a_child_whose_file_failed_to_load_just_before_it_exited_gets_the_load_verdict(tmp_path):
    """A child writes load-error.json, then exits. Seen gone after the look for that file found
    none, it is looked for once more: the learner gets the error in their file, not a crash."""
    from grader.steps.load import SubmissionError

    (tmp_path / "load-error.json").write_text(
        '{"verdict": "exception", "message": "NameError in your file", "line": 3, "source": "x = y"}'
    )
    proc = subprocess.Popen([sys.executable, "-c", "pass"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    proc.wait()
    proc.output = CappedOutput(proc.stdout)
    finished = follow.Finished(proc, tmp_path, served=False)
    clock = follow.CaseClock(tmp_path, time.monotonic(), 10)
    real_exists, first = Path.exists, []

    def exists_late(path):  # the first look for the file comes before the child wrote it
        if path.name == "load-error.json" and not first:
            first.append(path)
            return False
        return real_exists(path)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Path, "exists", exists_late)
        with pytest.raises(SubmissionError, match="NameError in your file"):
            follow.follow_cases(proc, tmp_path, [0], {}, clock, finished, None)


def test_a_checking_child_is_told_what_its_cases_need_and_no_more():
    """A CPU engine's child (kernels run as Python there, once numba-cuda has compiled them) gets
    no seed, none derived from the secret, and no host path: the hand-in's name and text only.
    A timed check (a GPU, kernels on the device) gets the seeds its timing needs."""
    from grader.children.task import ReplayTask, Timing
    from grader.replay.sources import HandIn

    hand_in = HandIn("def launch(a, b, c):\n    pass\n", "vector_add.py")
    cpu = ReplayTask(exercise("vector_add"), hand_in, None, (), 10).fields()
    assert cpu["seed"] is None and cpu["base_seed"] is None and cpu["check"] == [0, 0]
    assert cpu["submission"] == "vector_add.py" and "/" not in json.dumps(cpu)
    assert cpu["source"] == hand_in.text
    gpu = ReplayTask(
        exercise("vector_add"),
        hand_in,
        None,
        (),
        10,
        timing=Timing(99, 1234, (1, 0, 77)),
        sandboxed=True,
        private=("/course",),
    )
    gpu = gpu.fields()
    assert gpu["private"] == [], "the sandbox shows no private folder: the child is not told of one"
    assert gpu["seed"] == 99 and gpu["base_seed"] == 1234 and gpu["check"] == [1, 0, 77]


def test_children_started_ahead_grade_exactly_like_fresh_ones_and_are_not_replaced():
    """A notebook's next check (grader/__init__.py): a recording child and a checking child
    started after a check, while the learner reads. Does the next check take both, give the
    result a fresh pair gives, and leave no new ones behind (the facade starts those)?"""
    from grader.children import recording

    path = exercise("saxpy").solution_file
    cold = check_file("saxpy", path, seed=5)
    recording.record_ahead()
    pool.spare_ahead()
    waiting = (recording._waiting[0][2], live_spares()[0].proc)
    warm = check_file("saxpy", path, seed=5)
    assert all(proc.poll() is not None for proc in waiting), "both recorded and ran this check, then exited"
    assert not recording._waiting and not live_spares()
    assert (warm.verdict, warm.score, [c.verdict for c in warm.cases]) == (
        cold.verdict,
        cold.score,
        [c.verdict for c in cold.cases],
    )


ENDLESS_LAUNCH = """
from numba import cuda


@cuda.jit
def add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


def launch(a, b, c):
    blocks = 0
    while blocks * 128 < c.size:  # never grows: an endless loop on the host
        blocks += 0
    add[blocks, 128](a, b, c)
"""


def test_a_recording_child_started_ahead_keeps_the_time_limit(tmp_path):
    """A recording child started ahead waited with a generous CPU allowance: does an endless
    `launch` in it still end as `timeout` at the check's limit, naming the loop?"""
    from grader.children import recording

    path = tmp_path / "endless.py"
    path.write_text(ENDLESS_LAUNCH)
    recording.record_ahead()
    started = time.monotonic()
    result = check_file("vector_add", path, seed=1, case_timeout=2)
    assert result.verdict == "timeout" and "line 14" in result.message, result.message
    assert time.monotonic() - started < 60
    assert not recording._waiting


def test_a_recording_child_that_died_waiting_is_not_used():
    from grader.children import recording

    recording.record_ahead()
    dead = recording._waiting[0][2]
    dead.kill()
    dead.wait()
    result = check_file("thread_ids", exercise("thread_ids").solution_file, seed=1)
    assert result.verdict == "passed", result.message


def test_a_notebook_check_leaves_the_next_checks_children_waiting():
    """grader.check (the notebook's facade) starts the next check's two children as it ends."""
    import grader
    from grader.children import recording
    from grader.steps.load import load_launch

    ex = exercise("thread_ids")
    launch = load_launch(ex.spec, ex.solution_file.read_text(), str(ex.solution_file))
    try:
        assert grader.check("thread_ids", launch, seed=1).passed
        assert len(recording._waiting) == 1 and recording._waiting[0][2].poll() is None
        assert len(live_spares()) == 1
    finally:
        for waiting in list(recording._waiting):
            recording._waiting.remove(waiting)
            recording._discard(waiting)
        pool.SPARES.discard_all()
        pool.SPARES.waiting.clear()
