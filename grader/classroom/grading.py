"""Grade a whole class: every (student, exercise) is one pure task run in its own child
process; workers (CPU cores on the simulator, one per GPU on a GPU host unless asked for more)
run them, the coordinating thread records each result as it arrives, and a restart skips what
is done.

On a GPU host asked for more workers than it has GPUs, several checks share each GPU at once,
taking GPU turns (grader/gpu/turns.py): only their timed rounds have the GPU alone, everything
else overlaps. Tasks are handed out exercise by exercise, so that spare children, kept per
exercise, serve the next ones.

No grading run may stall, whatever a submission does: the coordinator gives every task a
wall-clock deadline from the moment it hands it out (`time_limit`), and a task that misses it
is ended from here: its child processes are killed (grader/checking/isolate.py `TaskProcesses`), the task
is recorded as `timeout`, its worker slot (its GPU) goes to the next task, and whatever the old
worker thread still returns is dropped."""

from __future__ import annotations

import hashlib
import os
import queue
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from grader.steps.cases import load_secret
from grader.exercises import LADDER, exercise
from grader.classroom.gradebook import Gradebook


@dataclass(frozen=True)
class Task:
    student: str
    exercise: str
    path: Path | None
    """None: the student handed nothing in for this exercise."""
    note: str = field(default="", compare=False)
    """Why nothing is graded when `path` is None, beyond nothing handed in: a file under
    another name, a notebook that is not JSON, no exercise cell (the gradebook keeps it as a
    note, grader/classroom/gradebook.py)."""
    autograder_cells: str = field(default="", compare=False)
    """nbgrader courses: which of this exercise's autograder cells the hand-in edited or
    deleted ("" when none); grading never runs them, nbgrader puts them back."""

    @property
    def sha256(self) -> str | None:
        return hashlib.sha256(self.path.read_bytes()).hexdigest() if self.path else None


def discover(class_dir: Path, exercises=None) -> list[Task]:
    """CLASS_DIR/<student>/<exercise>.py; every student gets a task for every exercise. A
    missing file's task says so, and names a file that looks meant for it (SAXPY.py)."""
    class_dir = Path(class_dir)
    students = sorted(p.name for p in class_dir.iterdir() if p.is_dir() and not p.name.startswith("."))
    if exercises is None:
        found = {f.stem for s in students for f in (class_dir / s).glob("*.py")}
        exercises = [e for e in LADDER if e in found]
    misnamed: dict = {}
    for path, reason in unrecognised(class_dir, exercises):
        meant = _meant_for(path.stem)
        if meant:
            misnamed.setdefault((path.parent.name, meant), []).append(path.name)
    tasks = []
    for student in students:
        for exercise_id in exercises:
            path = class_dir / student / f"{exercise_id}.py"
            if path.is_file():
                tasks.append(Task(student, exercise_id, path))
                continue
            others = misnamed.get((student, exercise_id))
            note = (
                f"no {exercise_id}.py, but {', '.join(others)} was handed in: rename it {exercise_id}.py to grade it"
                if others
                else ""
            )
            tasks.append(Task(student, exercise_id, None, note))
    return tasks


def _meant_for(stem: str) -> str | None:
    """The exercise id a file name seems meant for (same letters in another case, or close)."""
    import difflib

    close = [e for e in LADDER if e.lower() == stem.lower()] or difflib.get_close_matches(
        stem.lower(), LADDER, n=1, cutoff=0.7
    )
    return close[0] if close else None


def unrecognised(class_dir: Path, exercises=None) -> list[tuple[Path, str]]:
    """Files in CLASS_DIR/<student>/ that `discover` does not grade, each with the reason:
    a name that is no exercise id (closest id suggested), or an exercise left out."""
    class_dir = Path(class_dir)
    found = []
    for student in sorted(p for p in class_dir.iterdir() if p.is_dir() and not p.name.startswith(".")):
        for f in sorted(student.iterdir()):
            if f.name.startswith(".") or f.is_dir():
                continue
            if f.suffix != ".py":
                reason = "not a .py file"
            elif f.stem in LADDER:
                if exercises is None or f.stem in exercises:
                    continue
                reason = NOT_THIS_RUN
            else:
                close = _meant_for(f.stem)
                reason = f"not an exercise id: rename it {close}.py to grade it" if close else "not an exercise id"
            found.append((f, reason))
    return found


NOT_THIS_RUN = "an exercise not being graded (--exercises)"
"""The reason `unrecognised` gives for an exercise's file left out of this run (not kept as a note)."""


def pending(tasks: list[Task], book: Gradebook) -> list[Task]:
    """Tasks not yet graded for this exact submission."""
    done = book.graded_hashes()
    return [t for t in tasks if (t.student, t.exercise) not in done or done[(t.student, t.exercise)] != t.sha256]


CHECKS_PER_GPU = 1
"""The most checks one GPU runs at once by default. One: checks sharing a GPU by turns grade
about twice as fast, but one solution's speedup then moves between students (measured on an
H200: reduce_sum's 235.9x or 248.8x, max/min 1.055, scan's 1.37; 1.003 one check per GPU;
docs/BENCHMARKS.md, "Several checks per GPU"). `--workers` asks for more, with `sharing_warning`'s warning."""


def gpu_total() -> int:
    """GPUs on this host, asked of the driver alone: the grading process holds no CUDA context."""
    from grader.backend import gpu_count

    return max(gpu_count(), 1)


def default_workers(backend: str) -> int:
    """On a GPU host, `CHECKS_PER_GPU` checks per GPU (at most one per CPU core); with several,
    while one check's timed rounds have the GPU alone, the others start, load, run their cases,
    copy inputs and compile. Without a GPU, one per CPU core."""
    cores = max(os.cpu_count() or 1, 1)
    if backend == "gpu":
        gpus = gpu_total()
        return gpus * max(1, min(CHECKS_PER_GPU, cores // gpus))
    return cores


def sharing_warning(backend: str, workers: int) -> str | None:
    """What an instructor must know before grading with more checks than GPUs, else None."""
    gpus = gpu_total() if backend == "gpu" else 0
    if not gpus or workers <= gpus:
        return None
    return (
        f"{workers} checks will share {gpus} GPU(s), their timed rounds taking turns. Verdicts are "
        "judged as always, but speed figures move from one student to the next: on an H200, the "
        "same reduce_sum solution timed 235.9x or 248.8x its baseline (max/min 1.003 with one "
        "check per GPU; docs/BENCHMARKS.md, \"Several checks per GPU\"). For speed grades, leave "
        "--workers out: one check per GPU."
    )


def device_slots(backend: str, workers: int) -> list:
    """The device each worker slot grades on: GPUs in turn on a GPU host (so several workers
    share each GPU), None without one."""
    if backend != "gpu":
        return [None] * workers
    gpus = gpu_total()
    return [k % gpus for k in range(workers)]


def in_exercise_order(tasks: list) -> list:
    """The same tasks, exercise by exercise (the ladder's order), students in their order
    within each: consecutive checks of one exercise are what spare children are kept for."""
    rank = {e: k for k, e in enumerate(LADDER)}
    return sorted(tasks, key=lambda t: rank.get(t.exercise, len(rank)))


def machine_name(backend: str) -> str:
    """What ran a check, for the gradebook's graded_on: "NVIDIA H200 on node3", or
    "simulator on laptop". The GPU's model comes from the driver alone (no CUDA context)."""
    import socket

    engine = backend
    if backend == "gpu":
        from grader.gpu.ceilings import identity

        try:
            engine = identity()["name"]
        except RuntimeError:
            engine = "an unnamed GPU"
    return f"{engine} on {socket.gethostname()}"


def grade_task(
    task: Task, device, *, case_timeout: float, private, secret: int | None = None, unsandboxed: bool = False
):
    """One task in graded mode: a CheckResult, or None for a missing file. `secret`: the
    task's own (distributed.py), else the host's."""
    from grader.checking.pipeline import check_file

    if task.path is None:
        return None
    return check_file(
        task.exercise,
        task.path,
        graded=True,
        case_timeout=case_timeout,
        device=device,
        private=private,
        secret=secret,
        unsandboxed=unsandboxed,
    )


def timed_out(task: Task, backend: str, limit: float):
    """The result of a task ended at its deadline."""
    from grader.checking.pipeline import stopped_by_grader

    return stopped_by_grader(
        exercise(task.exercise),
        backend,
        "timeout",
        (
            f"The grader stopped this submission: no result within {limit:.0f} s of "
            "starting it. Look for an endless loop, or work that never finishes."
        ),
    )


def grade_before_deadline(task: Task, device, backend: str, limit: float, **options):
    """One task in a thread of its own, ended as `timeout` (its children killed) if it has no
    result within `limit` seconds: what a grading worker on another machine runs."""
    from grader.checking.isolate import TaskProcesses

    processes, results = TaskProcesses(), queue.Queue()
    _start_work(task, device, processes, results, backend, options)
    try:
        return results.get(timeout=limit)[1]
    except queue.Empty:
        processes.cancel()
        return timed_out(task, backend, limit)


def _start_work(task: Task, device, processes, results: queue.Queue, backend: str, options: dict) -> None:
    """A daemon thread for one task: one that never returns cannot hold up the run or its exit."""
    threading.Thread(
        target=_work,
        name=f"zerogpu-grade-{task.student}-{task.exercise}",
        args=(task, device, processes, results, backend),
        kwargs=options,
        daemon=True,
    ).start()


def _work(task: Task, device, processes, results: queue.Queue, backend: str, **options) -> None:
    """A worker thread: grade one task, its children tracked, and hand the result back."""
    from grader.checking.pipeline import stopped_by_grader
    from grader.checking.isolate import tracked

    try:
        with tracked(processes):
            result = grade_task(task, device, **options)
    except Exception as exc:  # noqa: BLE001 - the grader's failure costs this task only
        result = stopped_by_grader(
            exercise(task.exercise),
            backend,
            "crashed",
            (
                f"The grader failed on this submission ({type(exc).__name__}: {exc}); it is not your "
                "kernel's fault. Please report it with the file."
            ),
        )
    results.put((task, result))


def uses_turns(backend: str, sharing: int) -> bool:
    """Checks take GPU turns (grader/gpu/turns.py) on a GPU that several checks share at once:
    the CPU engines share nothing whose timing matters, and a check alone on its GPU has nothing
    to take turns with (it grades as it did before turns, the way the figures of
    docs/BENCHMARKS.md were measured)."""
    return backend == "gpu" and sharing > 1


@dataclass
class _Running:
    device: int | None
    deadline: float
    limit: float
    processes: object


def grade_class(
    tasks: list[Task],
    book: Gradebook,
    *,
    workers: int,
    case_timeout: float,
    backend: str,
    on_done=None,
    private=(),
    task_timeout: float | None = None,
    unsandboxed: bool = False,
) -> int:
    """Grade `tasks` (graded mode), recording each; returns how many were graded. `private`:
    folders no submission may read (the class folder: other students' work, the gradebook).
    `task_timeout`: seconds a task may take from hand-out (default: `check.time_limit`)."""
    from contextlib import nullcontext

    from grader.checking.pipeline import time_limit
    from grader.checking.isolate import TaskProcesses, gpu_turns, keep_warm

    load_secret()  # made here once, before any worker could race to create it
    slots = device_slots(backend, workers)
    sharing = max(slots.count(d) for d in set(slots)) if slots else 1  # checks at once on one device
    todo, running, results, graded = deque(in_exercise_order(tasks)), {}, queue.Queue(), 0
    options = {"case_timeout": case_timeout, "private": private, "unsandboxed": unsandboxed}
    here = machine_name(backend)

    def finish(task: Task, result) -> None:
        nonlocal graded
        slots.append(running.pop(task).device)
        book.record(task.student, task.exercise, task.sha256, result, graded_on=here)
        graded += 1
        if on_done:
            on_done(task, result)

    # On a GPU shared by several checks, every child takes turns on its device; spares: as many
    # per exercise as checks run at once on a device
    turns = gpu_turns() if uses_turns(backend, sharing) else nullcontext()
    with turns, keep_warm(spares=sharing if backend == "gpu" else 1):
        while todo or running:
            while todo and slots:
                task = todo.popleft()
                limit = task_timeout or time_limit(exercise(task.exercise), case_timeout)
                running[task] = _Running(slots.pop(0), time.monotonic() + limit, limit, TaskProcesses())
                _start_work(task, running[task].device, running[task].processes, results, backend, options)
            wait = min(r.deadline for r in running.values()) - time.monotonic()
            try:
                task, result = results.get(timeout=min(max(wait, 0.0), 1.0))
                if task in running:  # else: a late answer for a task already ended as timeout
                    finish(task, result)
            except queue.Empty:
                pass
            now = time.monotonic()
            for task in [t for t, r in running.items() if now > r.deadline]:
                state = running[task]
                state.processes.cancel()
                finish(task, timed_out(task, backend, state.limit))
    return graded
