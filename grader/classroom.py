"""Grade a whole class: every (student, exercise) is one pure task run in its own child
process; a pool of workers (CPU cores on the simulator, one per GPU on a GPU host) runs them,
the coordinating thread records each result as it arrives, and a restart skips what is done."""
from __future__ import annotations

import hashlib
import os
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

from grader.exercises import LADDER
from grader.gradebook import Gradebook


@dataclass(frozen=True)
class Task:
    student: str
    exercise: str
    path: Path | None
    """None: the student handed nothing in for this exercise."""

    @property
    def sha256(self) -> str | None:
        return hashlib.sha256(self.path.read_bytes()).hexdigest() if self.path else None


def discover(class_dir: Path, exercises=None) -> list[Task]:
    """CLASS_DIR/<student>/<exercise>.py; every student gets a task for every exercise."""
    class_dir = Path(class_dir)
    students = sorted(p.name for p in class_dir.iterdir() if p.is_dir() and not p.name.startswith("."))
    if exercises is None:
        found = {f.stem for s in students for f in (class_dir / s).glob("*.py")}
        exercises = [e for e in LADDER if e in found]
    tasks = []
    for student in students:
        for exercise_id in exercises:
            path = class_dir / student / f"{exercise_id}.py"
            tasks.append(Task(student, exercise_id, path if path.is_file() else None))
    return tasks


def pending(tasks: list[Task], book: Gradebook) -> list[Task]:
    """Tasks not yet graded for this exact submission."""
    done = book.graded_hashes()
    return [t for t in tasks if (t.student, t.exercise) not in done or done[(t.student, t.exercise)] != t.sha256]


def default_workers(backend: str) -> int:
    if backend == "gpu":  # asked of the driver alone: the grading process holds no CUDA context
        from grader.backend import gpu_count

        return max(gpu_count(), 1)
    return max(os.cpu_count() or 1, 1)


def grade_class(tasks: list[Task], book: Gradebook, *, workers: int, case_timeout: float,
                backend: str, on_done=None, private=()) -> int:
    """Grade `tasks` (graded mode), recording each; returns how many were graded. `private`:
    folders no submission may read (the class folder: other students' work, the gradebook)."""
    from grader.check import check_file
    from grader.isolate import keep_warm

    free_devices = list(range(workers)) if backend == "gpu" else []

    def run(task: Task, device):
        if task.path is None:
            return None
        return check_file(task.exercise, task.path, graded=True, case_timeout=case_timeout,
                          device=device, private=private)

    graded = 0
    queue = list(tasks)
    with keep_warm(), ThreadPoolExecutor(max_workers=workers) as pool:
        running = {}
        while queue or running:
            while queue and len(running) < workers:
                task = queue.pop(0)
                device = free_devices.pop(0) if free_devices else None
                running[pool.submit(run, task, device)] = (task, device)
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                task, device = running.pop(future)
                if device is not None:
                    free_devices.append(device)
                result = future.result()
                book.record(task.student, task.exercise, task.sha256, result)
                graded += 1
                if on_done:
                    on_done(task, result)
    return graded
