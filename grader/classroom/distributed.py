"""Grade a class on Dask workers (`zerogpu grade DIR --scheduler tcp://HOST:8786` or `local`):
the same pure tasks as grading.py, for classes that outgrow one machine (docs/CLUSTER.md).

What travels to a worker is the task alone: the submission's bytes, the exercise id, the
limits, a secret derived for that task (`task_secret`) and one for the exercise's benchmark
(`benchmark_secret`, the same for every student), never the host secret, so a worker needs no
shared folder and a compromised worker opens the inputs of the tasks it ran, and the base
benchmark inputs every submission of the exercise is timed on, and no other. The worker
writes the bytes to a temporary file of its own and checks it in a child process as on one
machine; the child sees only derived values, as always.

Only this, the coordinating process, writes the gradebook, one transaction per finished
task, in the order they finish; a restart grades only what `pending` lists. A worker that
dies mid-task has it rescheduled elsewhere by the scheduler; each task's future is read
once, and a row is keyed by (student, exercise), so nothing is recorded twice; each start of a
task on a worker is logged as a Dask event, so a task started on a worker that was lost gets a
note saying so (`WORKER_LOST`). The deadline is kept where the task's children live: the
worker ends a task that overruns it and returns `timeout`, as the local coordinator does. When
the grade ends, every worker lets its spare children go (`release_spares`). Dask is imported
only here, only when asked for."""

from __future__ import annotations

import hashlib
import os
import threading
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, replace

from grader.backend import activate
from grader.children.spares import keep_warm, waiting_spares
from grader.checking.verdicts import stopped_by_grader, time_limit
from grader.children.replayers import replayers
from grader.classroom.gradebook import WORKER_LOST, Gradebook
from grader.classroom.grading import Task, grade_before_deadline, machine_name, seed_for
from grader.exercises import exercise
from grader.gpu.ceilings import ceilings
from grader.settings import CheckOptions
from grader.steps.cases import benchmark_secret, load_secret, task_secret

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
    options: CheckOptions
    """How it is checked: its `secret` is sha256(host secret, student, exercise), this task's
    inputs only; its `seed`, drawn by the coordinator and stored in the gradebook, so a task
    Dask runs again draws the same inputs; its `private` folders exist on the worker only
    where it shares the coordinator's disk (a LocalCluster: the class folder, the gradebook)."""
    limit: float
    """Seconds the task may take once a worker starts it (grading.py's deadline)."""
    run: str = ""
    """This grading run's id, in the events the worker logs (`STARTED`)."""


STARTED = "zerogpu-task-started"
"""The Dask event topic a worker logs each task start under: {run, student, exercise, worker}."""


def remote_task(task: Task, secret: int, options: CheckOptions, run: str = "") -> RemoteTask:
    """What travels to a worker for `task`: `options` with the task's own secret (from the
    host's `secret`)."""
    return RemoteTask(
        task.student,
        task.exercise,
        task.source,
        hashlib.sha256(task.source).hexdigest(),
        replace(
            options,
            secret=task_secret(secret, task.student, task.exercise),
            bench_secret=benchmark_secret(secret, task.exercise),
            private=tuple(str(p) for p in options.private),
        ),
        options.task_timeout or time_limit(exercise(task.exercise), options.case_timeout),
        run,
    )


_worker_lock = threading.Lock()
_worker_ready: dict = {}


def _prepare_worker() -> str:
    """Once per worker process: choose the back end before numba loads and measure a GPU's
    ceilings (in a child) before the first deadline starts; once per grade, keep a spare child
    warm for the next task, or on a GPU the GPU's replayer (until `release_spares`; both exit
    with the worker too)."""
    with _worker_lock:
        if "backend" not in _worker_ready:
            backend = activate()
            if backend == "gpu":
                ceilings()
            _worker_ready["backend"] = backend
        if "warm" not in _worker_ready:  # on a GPU: the worker's GPU replayer (grader/children/replayers.py)
            _worker_ready["warm"] = replayers() if _worker_ready["backend"] == "gpu" else keep_warm()
            _worker_ready["warm"].__enter__()
        return _worker_ready["backend"]


def release_spares() -> int:
    """Run on every worker when a grade ends: the spare children kept warm exit, rather than
    wait idle for as long as the worker lives. Returns how many were waiting."""
    with _worker_lock:
        warm = _worker_ready.pop("warm", None)
        count = len(waiting_spares())
        if warm is not None:
            warm.__exit__(None, None, None)
        return count


def grade_on_worker(job: RemoteTask):
    """What a Dask worker runs: (CheckResult, the machine and GPU that ran it, the worker)."""
    from distributed import get_worker

    worker = get_worker()
    worker.log_event(
        STARTED, {"run": job.run, "student": job.student, "exercise": job.exercise, "worker": worker.address}
    )
    backend = _prepare_worker()
    result = grade_before_deadline(Task(job.student, job.exercise, job.source), backend, job.limit, job.options)
    return result, machine_name(backend), worker.address


def lost_workers(client, run: str, finished_on: dict) -> dict:
    """{(student, exercise): note} for each task of `run` started on a worker other than the one
    that finished it (`finished_on`: key -> that worker's address, None when none did): the
    scheduler moved it after its worker was lost (or after it raised, `RETRIES`)."""
    starts: dict = {}
    for _, event in client.get_events(STARTED):
        if isinstance(event, dict) and event.get("run") == run:
            starts.setdefault((event["student"], event["exercise"]), []).append(event["worker"])
    notes = {}
    for key, workers in starts.items():
        lost = [w for w in workers if w != finished_on.get(key)]
        if lost:
            again = f"; graded again on {finished_on[key]}" if finished_on.get(key) else ""
            notes[key] = f"started on Dask worker(s) {', '.join(dict.fromkeys(lost))}, which did not finish it{again}"
    return notes


def grade_class_on(
    client,
    tasks: list[Task],
    book: Gradebook,
    *,
    backend: str,
    options: CheckOptions = CheckOptions(),
    on_done=None,
    replaying: dict | None = None,
    **fields,
) -> int:
    """grading.grade_class on a Dask cluster: the same rows, written here only, as tasks
    finish. `backend` names results the workers could not give (a task lost for good). Tasks
    started on a worker that was lost get a WORKER_LOST note; spares go when it ends."""
    try:
        return _grade_on(client, tasks, book, backend, replace(options, **fields), on_done, replaying)
    finally:
        try:
            client.run(release_spares)
        except Exception:  # noqa: BLE001 - a worker gone meanwhile; its spares went with it
            pass


def _grade_on(client, tasks, book, backend, options, on_done, replaying) -> int:
    from distributed import as_completed

    secret, run = load_secret(), uuid.uuid4().hex
    graded, futures, finished_on = 0, {}, {}

    def finish(task: Task, job, result, graded_on) -> None:
        nonlocal graded
        key = (task.student, task.exercise)
        book.record(
            *key,
            job and job.sha256,
            result,
            graded_on=graded_on,
            seed=job and job.options.seed,
            regrade_of=(replaying or {}).get(key),
        )
        graded += 1
        if on_done:
            on_done(task, result)

    for task in tasks:
        if task.source is None:
            finish(task, None, None, None)
            continue
        job = remote_task(task, secret, replace(options, seed=seed_for(task, replaying)), run=run)
        key = f"zerogpu-grade-{task.student}-{task.exercise}-{uuid.uuid4().hex[:8]}"
        futures[client.submit(grade_on_worker, job, key=key, pure=False, retries=RETRIES)] = (task, job)
    for future in as_completed(futures):
        task, job = futures.pop(future)
        try:
            result, graded_on, finished_on[task.student, task.exercise] = future.result()
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
        finish(task, job, result, graded_on)
    notes = lost_workers(client, run, finished_on)
    book.set_notes(WORKER_LOST, {(t.student, t.exercise): notes.get((t.student, t.exercise), "") for t in tasks})
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
