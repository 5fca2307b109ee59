"""Grade a class on Dask workers (`zerogpu grade DIR --scheduler tcp://HOST:8786` or `local`):
the same pure tasks as grading.py, for classes that outgrow one machine (docs/CLUSTER.md).

What travels to a worker is the task alone: the submission's bytes, the exercise id, the
limits, and a secret derived for that task (`task_secret`), never the host secret, so a
worker needs no shared folder and a compromised worker opens the inputs of the tasks it ran
and of no other. The worker writes the bytes to a temporary file of its own and checks it
in a child process as on one machine; the child sees only derived values, as always.

Only this, the coordinating process, writes the gradebook, one transaction per finished
task, in the order they finish; a restart grades only what `pending` lists. A worker that
dies mid-task has it rescheduled elsewhere by the scheduler; each task's future is read
once, and a row is keyed by (student, exercise), so nothing is recorded twice. The deadline
is kept where the task's children live: the worker ends a task that overruns it and returns
`timeout`, as the local coordinator does. Dask is imported only here, only when asked for."""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from grader.classroom.gradebook import Gradebook
from grader.classroom.grading import Task, grade_before_deadline, machine_name
from grader.exercises import exercise
from grader.steps.cases import load_secret, task_secret

RETRIES = 2
"""Times a task that raised on a worker is tried again (Dask's `retries=`). A worker that
dies is different: the scheduler moves its tasks to another worker by itself, up to
`distributed.scheduler.allowed-failures` times (3 by default), then the task is `crashed`."""


@dataclass(frozen=True)
class RemoteTask:
    """Everything a worker needs for one task; nothing that opens any other task."""

    student: str
    exercise: str
    source: bytes
    sha256: str
    secret: int
    """sha256(host secret, student, exercise): this task's inputs only."""
    case_timeout: float
    limit: float
    """Seconds the task may take once a worker starts it (grading.py's deadline)."""
    private: tuple
    """Folders no submission may read, where they exist on the worker (a LocalCluster's
    workers share the coordinator's disk: the class folder and the gradebook)."""
    unsandboxed: bool = False
    """Graded without bubblewrap (`--unsandboxed`); every result says so."""


def remote_task(
    task: Task, secret: int, *, case_timeout: float, task_timeout: float | None, private=(), unsandboxed: bool = False
) -> RemoteTask:
    from grader.checking.pipeline import time_limit

    source = task.path.read_bytes()
    return RemoteTask(
        task.student,
        task.exercise,
        source,
        hashlib.sha256(source).hexdigest(),
        task_secret(secret, task.student, task.exercise),
        case_timeout,
        task_timeout or time_limit(exercise(task.exercise), case_timeout),
        tuple(str(p) for p in private),
        unsandboxed,
    )


_worker_lock = threading.Lock()
_worker_ready: dict = {}


def _prepare_worker() -> str:
    """Once per worker process: choose the back end before numba loads, measure a GPU's
    ceilings (in a child) before the first deadline starts, and keep a spare child warm for
    the next task (spares exit with the worker)."""
    from grader.backend import activate

    with _worker_lock:
        if "backend" not in _worker_ready:
            backend = activate()
            if backend == "gpu":
                from grader.gpu.ceilings import ceilings

                ceilings()
            from grader.checking.isolate import keep_warm

            _worker_ready["warm"] = keep_warm()
            _worker_ready["warm"].__enter__()
            _worker_ready["backend"] = backend
        return _worker_ready["backend"]


def submission_file(job: RemoteTask) -> Path:
    """The worker's copy of a submission, named by its content: the compile cache keys a
    kernel by its file's path too, so a regrade or an identical hand-in (the starter, a shared
    solution) compiles nothing again. Kept under a folder only this user can enter."""
    folder = Path(tempfile.gettempdir()) / f"zerogpu-tasks-{os.getuid()}" / job.sha256
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(folder.parent, 0o700)
    path = folder / f"{job.exercise}.py"
    if not path.is_file():
        partial = folder / f".{uuid.uuid4().hex}"
        partial.write_bytes(job.source)
        os.replace(partial, path)  # whole or not at all: another worker may read it now
    return path


def grade_on_worker(job: RemoteTask):
    """What a Dask worker runs: (CheckResult, the machine and GPU that ran it)."""
    backend = _prepare_worker()
    path = submission_file(job)
    private = (*job.private, str(path.parent.parent))  # other hand-ins copied to this worker
    result = grade_before_deadline(
        Task(job.student, job.exercise, path),
        None,
        backend,
        job.limit,
        case_timeout=job.case_timeout,
        private=private,
        secret=job.secret,
        unsandboxed=job.unsandboxed,
    )
    return result, machine_name(backend)


def grade_class_on(
    client,
    tasks: list[Task],
    book: Gradebook,
    *,
    case_timeout: float,
    backend: str,
    on_done=None,
    private=(),
    task_timeout: float | None = None,
    unsandboxed: bool = False,
) -> int:
    """grading.grade_class on a Dask cluster: the same rows, written here only, as tasks
    finish. `backend` names results the workers could not give (a task lost for good)."""
    from distributed import as_completed

    from grader.checking.pipeline import stopped_by_grader

    secret = load_secret()
    graded, futures = 0, {}

    def finish(task: Task, sha256, result, graded_on) -> None:
        nonlocal graded
        book.record(task.student, task.exercise, sha256, result, graded_on=graded_on)
        graded += 1
        if on_done:
            on_done(task, result)

    for task in tasks:
        if task.path is None:
            finish(task, None, None, None)
            continue
        job = remote_task(
            task, secret, case_timeout=case_timeout, task_timeout=task_timeout, private=private, unsandboxed=unsandboxed
        )
        key = f"zerogpu-grade-{task.student}-{task.exercise}-{uuid.uuid4().hex[:8]}"
        futures[client.submit(grade_on_worker, job, key=key, pure=False, retries=RETRIES)] = (task, job)
    for future in as_completed(futures):
        task, job = futures.pop(future)
        try:
            result, graded_on = future.result()
        except Exception as exc:  # noqa: BLE001 - e.g. KilledWorker: this task only
            result, graded_on = (
                stopped_by_grader(
                    exercise(task.exercise),
                    backend,
                    "crashed",
                    (
                        f"The grading cluster could not finish this submission ({type(exc).__name__}: "
                        f"{exc}); it is not your kernel's fault. Grade it again."
                    ),
                ),
                None,
            )
        finish(task, job.sha256, result, graded_on)
    return graded


def default_local_workers() -> int:
    return max(os.cpu_count() or 1, 1)


@contextmanager
def dask_client(scheduler: str, workers: int | None, backend: str):
    """A Dask client: `local` starts a cluster on this machine for the run (processes, one
    thread each: one per CPU core, or dask-cuda's one per GPU on a GPU host); anything else
    is a running scheduler's address (tcp://HOST:8786)."""
    from distributed import Client, LocalCluster

    if scheduler != "local":
        with Client(scheduler, timeout="30s") as client:
            yield client
        return
    if backend == "gpu":  # a worker per GPU, each seeing its own as device 0
        from dask_cuda import LocalCUDACluster

        cluster = LocalCUDACluster(n_workers=workers, threads_per_worker=1, dashboard_address=None)
    else:
        cluster = LocalCluster(
            n_workers=workers or default_local_workers(), threads_per_worker=1, processes=True, dashboard_address=None
        )
    with cluster, Client(cluster) as client:
        yield client


def worker_count(client) -> int:
    return len(client.scheduler_info().get("workers", {}))
