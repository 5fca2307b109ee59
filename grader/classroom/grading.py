"""Grade a whole class: every (student, exercise) is one pure task run in its own child
process; workers (CPU cores on the simulator, `CHECKS_PER_GPU` per GPU on a GPU host) run them,
the coordinating thread records each result as it arrives, and a restart skips what is done.

On a GPU host several workers share each GPU: they record on every core while the GPU's one
replayer replays and times one check at a time (grader/children/replayers.py). Tasks are handed
out exercise by exercise, so that spare children, kept per exercise, serve the next ones.

No grading run may stall, whatever a submission does: the coordinator gives every task a
wall-clock deadline from the moment it hands it out (`time_limit`), and a task that misses it
is ended from here: its child processes are killed (grader/children/processes.py `TaskProcesses`), the task
is recorded as `timeout`, its worker slot (its GPU) goes to the next task, and whatever the old
worker thread still returns is dropped."""

from __future__ import annotations

import difflib
import hashlib
import os
import queue
import socket
import stat
import tempfile
import threading
import time
import uuid
from collections import Counter, deque
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

from grader.backend import gpu_count
from grader.children.processes import TaskProcesses, tracked
from grader.children.spares import keep_warm
from grader.checking.check import check_file
from grader.checking.verdicts import stopped_by_grader, time_limit
from grader.children.replayers import replayers
from grader.classroom.gradebook import Gradebook
from grader.classroom.handins import NBGRADER_FILES, Refused, entries, opened, not_read, read_file
from grader.exercises import LADDER, exercise
from grader.gpu.ceilings import identity
from grader.settings import CheckOptions
from grader.steps.cases import benchmark_secret, load_secret, new_seed, task_secret
from grader.textsafe import unsurrogate


@dataclass(frozen=True)
class Task:
    student: str
    """The student's folder's name as stored and shown: a name that is not UTF-8 (a lone
    surrogate) as its escape (`textsafe.unsurrogate`); the folder itself was read by `scan`."""
    exercise: str
    source: bytes | None = field(default=None, repr=False)
    """The hand-in's bytes, read once (grader/classroom/handins.py); None: nothing to grade."""
    note: str = field(default="", compare=False)
    """Why nothing is graded when `source` is None, beyond nothing handed in: a file under
    another name, a link or a FIFO refused, a notebook that is not JSON, no exercise cell (the
    gradebook keeps it as a note, grader/classroom/gradebook.py)."""
    autograder_cells: str = field(default="", compare=False)
    """nbgrader courses: which of this exercise's autograder cells the hand-in edited or
    deleted ("" when none); grading never runs them, nbgrader puts them back."""
    untouched: bool = field(default=False, compare=False)
    """The hand-in is the starter as given out, unchanged: graded, but counted as not attempted."""

    def __post_init__(self):
        object.__setattr__(self, "student", unsurrogate(self.student))

    @cached_property
    def sha256(self) -> str | None:
        return hashlib.sha256(self.source).hexdigest() if self.source is not None else None


@dataclass(frozen=True)
class ClassFolder:
    """What `scan` found in a class folder."""

    tasks: list
    """One Task per student and exercise."""
    strays: list
    """(student, name, why) of everything in a student's folder that is not graded: a file no
    exercise reads, a link or a FIFO (never read)."""
    not_students: list = field(default_factory=list)
    """(name, why) of each entry of the class folder that is no student: a link (to another
    student's folder: a copy?), a folder that could not be read, a name another folder's takes
    once made printable. Never a row, never in students.csv; the report lists them."""


GRADER_FOLDERS = ("report",)
"""Folder names of the grader's own outputs in a class folder (`zerogpu report`'s default)."""
REPORT_FILES = ("report.html", "students.csv", "exercises.csv", "submissions.csv", "similarity.csv")
"""What `zerogpu report` writes: a folder holding one is the grader's, wherever --out put it."""


def scan(class_dir: Path, exercises=None) -> ClassFolder:
    """CLASS_DIR/<student>/<exercise>.py, every file read once as a regular file without
    following links; every student gets a task for every exercise. A missing file's task says
    why when it can: a file that looks meant for it (SAXPY.py), a link, a FIFO, a huge file.
    Names are kept as `textsafe.unsurrogate` makes them (any name a file system allows)."""
    listings, found, not_students = _student_folders(Path(class_dir), exercises)
    if exercises is None:
        named = {n[: -len(".py")] for listing in listings.values() for n, _ in listing if n.endswith(".py")}
        exercises = [e for e in LADDER if e in named]
    strays, misnamed = [], {}
    for student, listing in listings.items():
        for name, mode, reason in _strays_of(listing, exercises):
            strays.append((student, unsurrogate(name), unsurrogate(reason)))
            meant = _meant_for(Path(name).stem) if stat.S_ISREG(mode) else None
            if meant:
                misnamed.setdefault((student, meant), []).append(unsurrogate(name))
    starters = {e: exercise(e).starter_file.read_bytes() for e in exercises if exercise(e).starter_file.is_file()}
    tasks = []
    for student in sorted(listings):
        for exercise_id in exercises:
            read = found[student].get(exercise_id)
            if isinstance(read, bytes):
                tasks.append(Task(student, exercise_id, read, untouched=read == starters.get(exercise_id)))
                continue
            others = misnamed.get((student, exercise_id))
            note = read or (
                f"no {exercise_id}.py, but {', '.join(others)} was handed in: rename it {exercise_id}.py to grade it"
                if others
                else ""
            )
            tasks.append(Task(student, exercise_id, None, note))
    return ClassFolder(tasks, strays, not_students)


def _student_folders(class_dir: Path, exercises) -> tuple[dict, dict, list]:
    """({student: listing}, {student: exercise files read}, ClassFolder.not_students) of the
    class folder's entries: real folders are students, links and the unreadable are not."""
    listings, found, not_students = {}, {}, []
    with opened(class_dir) as top:
        listed = [(n, m) for n, m in entries(top) if not n.startswith(".") and not _grader_output(class_dir, n, m)]
        shown = Counter(unsurrogate(n) for n, m in listed if stat.S_ISDIR(m))
        for name, mode in listed:
            student = unsurrogate(name)
            if stat.S_ISLNK(mode):
                not_students.append((student, linked_folder(top, name, class_dir, set(shown))))
            elif stat.S_ISDIR(mode) and shown[student] > 1 and student != name:
                not_students.append(
                    (
                        student,
                        f"{student} reads as another folder's name once made printable "
                        "(its name is not UTF-8): rename it; nothing in it was read",
                    )
                )
            elif stat.S_ISDIR(mode):
                try:
                    with opened(class_dir, [name]) as folder:
                        listings[student] = entries(folder)
                        found[student] = _read_exercise_files(folder, listings[student], exercises)
                except Refused as why:
                    not_students.append((student, unsurrogate(str(why))))
    return listings, found, not_students


def linked_folder(top: int, name: str, class_dir: Path, folders: set) -> str:
    """Why a link in the class folder is no student, saying whose folder it points to when it
    is another student's (a copy?); a target outside the class folder is never shown."""
    shown = unsurrogate(name)
    try:
        target = os.readlink(name, dir_fd=top)  # the link itself, never followed
    except OSError:
        target = None
    for base in {os.path.abspath(class_dir), os.path.realpath(class_dir)}:
        if target is None:
            break
        inside = os.path.relpath(os.path.normpath(os.path.join(base, target)), base)
        first = unsurrogate(inside.split(os.sep)[0])
        if not inside.startswith("..") and first in folders and first != shown:
            below = "" if os.sep not in inside else f" ({unsurrogate(inside)})"
            return (
                f"{shown} is a symbolic link to {first}'s folder{below}, not a student: nothing in it was "
                f"read or graded. The same work as {first}'s: a copy?"
            )
    return (
        f"{shown} is a symbolic link to a place outside the student folders, not a student: never "
        "followed, nothing in it was read"
    )


def _grader_output(class_dir: Path, name: str, mode: int) -> bool:
    """A folder the grader wrote (its report), never a student."""
    if not stat.S_ISDIR(mode):
        return False
    if name in GRADER_FOLDERS:
        return True
    try:
        with opened(class_dir, [name]) as folder:
            return any(n in REPORT_FILES for n, _ in entries(folder))
    except Refused:
        return False


def _read_exercise_files(folder: int, listing: list, exercises) -> dict:
    """Exercise id -> the bytes of its file in a student's folder, or why it was not read."""
    read = {}
    for name, _ in listing:
        stem = name[: -len(".py")] if name.endswith(".py") else None
        if stem in LADDER and (exercises is None or stem in exercises):
            try:
                read[stem] = read_file(folder, name)
            except Refused as why:
                read[stem] = str(why)
    return read


def _strays_of(listing: list, exercises) -> list:
    """(name, mode, why) of the entries of a student's folder that are not graded."""
    found = []
    for name, mode in listing:
        if name.startswith(".") or stat.S_ISDIR(mode) or name in NBGRADER_FILES:
            continue
        stem, suffix = os.path.splitext(name)
        if not stat.S_ISREG(mode):
            if suffix == ".py" and stem in exercises:
                continue  # its task's note says why
            reason = not_read(name, mode)
        elif suffix != ".py":
            reason = "not a .py file"
        elif stem in LADDER:
            if stem in exercises:
                continue
            reason = NOT_THIS_RUN
        else:
            close = _meant_for(stem)
            reason = f"not an exercise id: rename it {close}.py to grade it" if close else "not an exercise id"
        found.append((name, mode, reason))
    return found


def discover(class_dir: Path, exercises=None) -> list[Task]:
    """`scan`'s tasks."""
    return scan(class_dir, exercises).tasks


def _meant_for(stem: str) -> str | None:
    """The exercise id a file name seems meant for (same letters in another case, or close)."""
    close = [e for e in LADDER if e.lower() == stem.lower()] or difflib.get_close_matches(
        stem.lower(), LADDER, n=1, cutoff=0.7
    )
    return close[0] if close else None


NOT_THIS_RUN = "an exercise not being graded (--exercises)"
"""The reason `scan` gives for an exercise's file left out of this run (not kept as a note)."""


def pending(tasks: list[Task], book: Gradebook) -> list[Task]:
    """Tasks not yet graded for this exact submission."""
    done = book.graded_hashes()
    return [t for t in tasks if (t.student, t.exercise) not in done or done[(t.student, t.exercise)] != t.sha256]


CHECKS_PER_GPU = 6
"""Checks under way at once per GPU by default: each records its submission on a core of its
own and has its kernels compiled ahead by a compiling child (grader/children/compiling.py) while
the GPU's one replayer replays them one at a time (grader/children/replayers.py), so every check
is still timed alone on its GPU, in the same buffers as the others. With the compiles moved off
the replayer, four no longer kept it busy: on an H200, 0.92 s a check with six against 1.01 with
four (docs/BENCHMARKS.md, "Class pace")."""


def gpu_total() -> int:
    """GPUs on this host, asked of the driver alone: the grading process holds no CUDA context."""
    return max(gpu_count(), 1)


def default_workers(backend: str) -> int:
    """On a GPU host, `CHECKS_PER_GPU` checks per GPU (at most one per CPU core); without a GPU,
    one per CPU core."""
    cores = max(os.cpu_count() or 1, 1)
    if backend == "gpu":
        gpus = gpu_total()
        return gpus * max(1, min(CHECKS_PER_GPU, cores // gpus))
    return cores


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
    engine = backend
    if backend == "gpu":
        try:
            engine = identity()["name"]
        except RuntimeError:
            engine = "an unnamed GPU"
    return f"{engine} on {socket.gethostname()}"


def grade_task(task: Task, options: CheckOptions):
    """One task in graded mode: a CheckResult, or None for a missing file. Its inputs are drawn
    from `options.seed` and the task's own secret (`options.secret`, else derived from the
    host's here, as a worker on another machine is given it), so the gradebook's seed replays them."""
    if task.source is None:
        return None
    path = submission_file(task.source, task.exercise)
    if options.secret is None:  # on this host: both secrets from the host's
        host = load_secret()
        options = replace(
            options,
            secret=task_secret(host, task.student, task.exercise),
            bench_secret=benchmark_secret(host, task.exercise),
        )
    private = (*options.private, str(path.parent.parent))  # other hand-ins copied beside it
    return check_file(task.exercise, path, options=replace(options, graded=True, private=private))


def submission_file(source: bytes, exercise_id: str) -> Path:
    """A private copy of a hand-in's bytes, the file a check reads: never the student's own
    path, which could be swapped for a link once read. Named by its content: the compile cache
    keys a kernel by its file's path too, so a regrade or an identical hand-in (the starter, a
    shared solution) compiles nothing again. Kept under a folder only this user can enter."""
    folder = Path(tempfile.gettempdir()) / f"zerogpu-tasks-{os.getuid()}" / hashlib.sha256(source).hexdigest()
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(folder.parent, 0o700)
    path = folder / f"{exercise_id}.py"
    if not path.is_file():
        partial = folder / f".{uuid.uuid4().hex}"
        partial.write_bytes(source)
        os.replace(partial, path)  # whole or not at all: another worker may read it now
    return path


def timed_out(task: Task, backend: str, limit: float):
    """The result of a task ended at its deadline."""
    return stopped_by_grader(
        exercise(task.exercise),
        backend,
        "timeout",
        (
            f"The grader stopped this submission: no result within {limit:.0f} s of "
            "starting it. Look for an endless loop, or work that never finishes."
        ),
    )


def grade_before_deadline(task: Task, backend: str, limit: float, options: CheckOptions):
    """One task in a thread of its own, ended as `timeout` (its children killed) if it has no
    result within `limit` seconds: what a grading worker on another machine runs."""
    processes, results = TaskProcesses(), queue.Queue()
    _start_work(task, processes, results, backend, options)
    try:
        return results.get(timeout=limit)[1]
    except queue.Empty:
        processes.cancel()
        return timed_out(task, backend, limit)


def _start_work(task: Task, processes, results: queue.Queue, backend: str, options: CheckOptions) -> None:
    """A daemon thread for one task: one that never returns cannot hold up the run or its exit."""
    threading.Thread(
        target=_work,
        name=f"zerogpu-grade-{task.student}-{task.exercise}",
        args=(task, processes, results, backend, options),
        daemon=True,
    ).start()


def _work(task: Task, processes, results: queue.Queue, backend: str, options: CheckOptions) -> None:
    """A worker thread: grade one task, its children tracked, and hand the result back."""
    try:
        with tracked(processes):
            result = grade_task(task, options)
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


@dataclass
class _Running:
    device: int | None
    deadline: float
    limit: float
    processes: object
    seed: int


def seed_for(task: Task, replaying: dict | None) -> int:
    """The seed a task's inputs are drawn from: a stored row's when it is regraded, else new."""
    row = (replaying or {}).get((task.student, task.exercise))
    return row.seed if row else new_seed()


def grade_class(
    tasks: list[Task],
    book: Gradebook,
    *,
    workers: int,
    backend: str,
    options: CheckOptions = CheckOptions(),
    on_done=None,
    replaying: dict | None = None,
    **fields,
) -> int:
    """Grade `tasks` (graded mode), recording each with its seed; returns how many were graded.
    `options` (any of its `fields` also by name): `case_timeout`, `unsandboxed`, and `private`:
    folders no submission may read (the class folder: other students' work, the gradebook).
    `task_timeout`: seconds a task may take from hand-out (default: `time_limit`).
    `replaying`: {(student, exercise): stored row} of tasks regraded with their stored seed,
    each new row marked as a regrade of that one."""
    load_secret()  # made here once, before any worker could race to create it
    slots = device_slots(backend, workers)
    todo, running, results, graded = deque(in_exercise_order(tasks)), {}, queue.Queue(), 0
    options = replace(options, **fields)
    here = machine_name(backend)

    def finish(task: Task, result) -> None:
        nonlocal graded
        state = running.pop(task)
        slots.append(state.device)
        key = (task.student, task.exercise)
        book.record(*key, task.sha256, result, graded_on=here, seed=state.seed, regrade_of=(replaying or {}).get(key))
        graded += 1
        if on_done:
            on_done(task, result)

    # On a GPU host each GPU's replayer replays one check at a time while the workers record
    # the next ones on every core (grader/children/replayers.py); elsewhere a spare child waits
    serving = replayers() if backend == "gpu" else keep_warm()
    with serving:
        while todo or running:
            while todo and slots:
                task = todo.popleft()
                limit = options.task_timeout or time_limit(exercise(task.exercise), options.case_timeout)
                state = _Running(
                    slots.pop(0), time.monotonic() + limit, limit, TaskProcesses(), seed_for(task, replaying)
                )
                running[task] = state
                _start_work(
                    task, state.processes, results, backend, replace(options, seed=state.seed, device=state.device)
                )
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
