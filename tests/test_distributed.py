"""Class grading on a Dask cluster (grader/classroom/distributed.py): the verdicts of the
in-process pool, from a LocalCluster and from workers started with Dask's own command line;
a worker or the coordinator killed mid-run loses nothing and records nothing twice."""

import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.classroom.distributed import RemoteTask, dask_client, grade_class_on, remote_task
from grader.classroom.gradebook import NOT_SUBMITTED, WORKER_LOST, Gradebook
from grader.classroom.grading import discover, grade_class
from grader.exercises import ROOT
from grader.settings import CheckOptions

DASK = [sys.executable, "-m", "dask"]
"""Dask's command line, run by this interpreter (never another one a script's first line names)."""
WRONG = ROOT / "tests" / "submissions"
CLASS = {  # student: {exercise: (file handed in, verdict)}
    "ada": {
        "vector_add": (ROOT / "solutions/vector_add.py", "passed"),
        "thread_ids": (ROOT / "solutions/thread_ids.py", "passed"),
    },
    "bob": {
        "vector_add": (ROOT / "exercises/vector_add.py", "unwritten_output"),
        "thread_ids": (WRONG / "thread_ids/no_bounds_guard.py", "out_of_bounds"),
    },
    "cy": {
        "vector_add": (WRONG / "vector_add/ignores_block_index.py", "unwritten_output"),
        "thread_ids": (None, NOT_SUBMITTED),
    },
    "dee": {
        "vector_add": (ROOT / "solutions/vector_add.py", "passed"),
        "thread_ids": (WRONG / "thread_ids/guard_off_by_one.py", "out_of_bounds"),
    },
}
EXPECTED = {(s, e): verdict for s, hand_in in CLASS.items() for e, (_, verdict) in hand_in.items()}
EXERCISES = ["vector_add", "thread_ids"]


@pytest.fixture
def class_dir(tmp_path):
    for student, hand_in in CLASS.items():
        folder = tmp_path / "class" / student
        folder.mkdir(parents=True)
        for exercise_id, (source, _) in hand_in.items():
            if source:
                shutil.copy(source, folder / f"{exercise_id}.py")
    return tmp_path / "class"


@pytest.fixture
def secret(monkeypatch):
    monkeypatch.setenv("ZEROGPU_SECRET", "class-secret")


def verdicts(db) -> dict:
    with sqlite3.connect(db) as conn:
        found = conn.execute("SELECT student, exercise, verdict FROM results").fetchall()
    assert len(found) == len({(s, e) for s, e, _ in found}), "a row recorded twice"
    return {(s, e): v for s, e, v in found}


def graded_at(db) -> dict:
    with sqlite3.connect(db) as conn:
        return {(s, e): t for s, e, t in conn.execute("SELECT student, exercise, graded_at FROM results")}


def test_a_task_carries_its_own_secret_never_the_hosts(class_dir, secret):
    """Does a worker receive a secret that differs per task and is not the host's?"""
    from grader.steps.cases import load_secret

    tasks = [t for t in discover(class_dir, EXERCISES) if t.source]
    jobs = [remote_task(t, load_secret(), CheckOptions(case_timeout=30)) for t in tasks]
    on_disk = [(class_dir / t.student / f"{t.exercise}.py").read_bytes() for t in tasks]
    assert all(isinstance(j, RemoteTask) and j.source == b for j, b in zip(jobs, on_disk))
    assert len({j.options.secret for j in jobs}) == len(jobs)
    assert load_secret() not in {j.options.secret for j in jobs}


@pytest.mark.slow
def test_a_local_cluster_gives_the_verdicts_of_the_in_process_pool(class_dir, tmp_path, secret, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the workers' copies of hand-ins
    tasks = discover(class_dir, EXERCISES)
    pool = Gradebook(tmp_path / "pool.sqlite")
    grade_class(tasks, pool, workers=2, case_timeout=30, backend="simulator", private=[class_dir])
    cluster = Gradebook(tmp_path / "cluster.sqlite")
    with dask_client("local", 2, "simulator") as client:
        graded = grade_class_on(client, tasks, cluster, case_timeout=30, backend="simulator", private=[class_dir])
    assert graded == len(tasks) == len(EXPECTED)
    assert verdicts(pool.path) == verdicts(cluster.path) == EXPECTED
    where = {r.graded_on for r in cluster.rows() if r.verdict != NOT_SUBMITTED}
    assert where == {f"simulator on {socket.gethostname()}"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (a worker's grading children run in sessions of their own)."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    found, frontier = [], [pid]
    while frontier:
        below = [p for p, parent in parents.items() if parent in frontier]
        found += below
        frontier = below
    return found


def stop(proc: subprocess.Popen) -> None:
    """End a process started here, its group and everything it started."""
    for pid in descendants(proc.pid) + [proc.pid]:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=30)


class Cluster:
    """A scheduler and workers started with Dask's command line, on 127.0.0.1 only."""

    def __init__(self, log_dir: Path):
        self.port, self.log_dir, self.workers = free_port(), log_dir, []
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.scheduler = self._start(
            "scheduler", "scheduler", "--host", "127.0.0.1", "--port", str(self.port), "--no-dashboard"
        )

    def _start(self, name: str, *args) -> subprocess.Popen:
        log = open(self.log_dir / f"{name}.log", "wb")
        (self.log_dir / "tmp").mkdir(exist_ok=True)  # the workers' copies of hand-ins go here
        return subprocess.Popen(
            [*DASK, *args],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, "TMPDIR": str(self.log_dir / "tmp")},
        )

    def add_worker(self) -> subprocess.Popen:
        worker = self._start(
            f"worker-{len(self.workers)}",
            "worker",
            self.address,
            "--nworkers",
            "1",
            "--nthreads",
            "1",
            "--host",
            "127.0.0.1",
            "--no-dashboard",
        )
        self.workers.append(worker)
        return worker

    def wait_for_workers(self, count: int) -> None:
        from distributed import Client

        with Client(self.address, timeout="60s") as client:
            client.wait_for_workers(count, timeout=120)

    def worker_grading(self, db) -> tuple[subprocess.Popen, tuple]:
        """The `dask worker` process grading a task right now, and that task's (student,
        exercise), from the start events workers log."""
        from distributed import Client

        from grader.classroom.distributed import STARTED

        with Client(self.address, timeout="30s") as client:
            pid_of = client.run(os.getpid)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                busy = {address for address, keys in client.processing().items() if keys}
                for _, event in client.get_events(STARTED):
                    task = (event["student"], event["exercise"])
                    if task in verdicts(db) or event["worker"] not in busy or event["worker"] not in pid_of:
                        continue
                    for worker in self.workers:
                        if pid_of[event["worker"]] in {worker.pid, *descendants(worker.pid)}:
                            return worker, task
                time.sleep(0.05)
        raise AssertionError("no worker was grading")

    def spares(self) -> list[int]:
        """Spare children kept warm under the workers now."""
        found = []
        for worker in self.workers:
            for pid in descendants(worker.pid):
                try:
                    if b"--role\0spare" in Path(f"/proc/{pid}/cmdline").read_bytes():
                        found.append(pid)
                except OSError:
                    pass
        return found

    def stop(self) -> None:
        for proc in [*self.workers, self.scheduler]:
            stop(proc)


@pytest.fixture
def cluster(tmp_path):
    started = Cluster(tmp_path)
    try:
        started.add_worker()
        started.add_worker()
        started.wait_for_workers(2)
        yield started
    finally:
        started.stop()


def grade(class_dir, db, scheduler) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "grader.cli",
            "grade",
            str(class_dir),
            "--db",
            str(db),
            "--timeout",
            "30",
            "--exercises",
            ",".join(EXERCISES),
            "--scheduler",
            scheduler,
        ],
        cwd=ROOT,
        env={**os.environ, "ZEROGPU_SECRET": "class-secret"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def wait_for_rows(db, count: int, proc) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if db.exists() and len(verdicts(db)) >= count:
                return
        except sqlite3.OperationalError:  # the grader has created the file, not its table yet
            pass
        time.sleep(0.1)
    raise AssertionError(f"fewer than {count} rows arrived")


@pytest.mark.thorough
def test_workers_started_with_the_dask_command_line_give_the_same_verdicts(class_dir, tmp_path, cluster):
    db = tmp_path / "book.sqlite"
    proc = grade(class_dir, db, cluster.address)
    try:
        output = proc.communicate(timeout=300)[0].decode()
    finally:
        stop(proc)
    assert proc.returncode == 0, output
    assert f"on the Dask cluster at {cluster.address} with 2 worker(s)" in output
    assert verdicts(db) == EXPECTED
    deadline = time.monotonic() + 20
    while cluster.spares() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert cluster.spares() == [], "no idle checker is kept once the grade has ended"


@pytest.mark.slow
def test_a_worker_killed_mid_run_loses_and_duplicates_nothing(class_dir, tmp_path, cluster):
    db = tmp_path / "book.sqlite"
    proc = grade(class_dir, db, cluster.address)
    try:
        wait_for_rows(db, 2, proc)  # the missing file's row, and one graded task
        worker, _ = cluster.worker_grading(db)
        stop(worker)  # its nanny, the worker, and the children it grades with
        assert len(verdicts(db)) < len(EXPECTED), "the kill should land mid-run"
        output = proc.communicate(timeout=300)[0].decode()
    finally:
        stop(proc)
    assert proc.returncode == 0, output
    assert len(re.findall(r"^\[\d+/\d+\] ", output, re.M)) == len(EXPECTED), "each task finished once"
    assert verdicts(db) == EXPECTED
    # every task the killed worker had started is noted (the one it was grading, and any it had
    # started besides when the kill landed), each once, with where it was graded again
    lost = {(n["student"], n["about"]): n["text"] for n in Gradebook(db).notes() if n["kind"] == WORKER_LOST}
    assert lost and all("which did not finish it; graded again on tcp://" in text for text in lost.values()), lost
    for student, exercise_id in lost:
        assert f"note: {student}/{exercise_id} started on Dask worker(s)" in output


@pytest.mark.slow
def test_a_coordinator_killed_mid_run_resumes_without_grading_again(class_dir, tmp_path, cluster):
    db = tmp_path / "book.sqlite"
    proc = grade(class_dir, db, cluster.address)
    try:
        wait_for_rows(db, 3, proc)
    finally:
        stop(proc)  # the coordinator only: the cluster keeps running
    before = graded_at(db)
    assert 3 <= len(before) < len(EXPECTED), "the kill should land mid-run"

    proc = grade(class_dir, db, cluster.address)
    try:
        output = proc.communicate(timeout=300)[0].decode()
    finally:
        stop(proc)
    assert proc.returncode == 0, output
    assert f"{len(before)} already graded" in output
    assert verdicts(db) == EXPECTED
    after = graded_at(db)
    assert all(after[key] == when for key, when in before.items()), "a finished row was graded again"


@pytest.mark.thorough
def test_a_task_past_its_deadline_on_a_worker_is_a_timeout(tmp_path, cluster):
    """Does a worker end an endless loop at the task deadline, record `timeout`, and go on?"""
    class_dir = tmp_path / "class"
    for student in ("ann", "ben"):
        (class_dir / student).mkdir(parents=True)
    shutil.copy(ROOT / "solutions/vector_add.py", class_dir / "ann" / "vector_add.py")
    (class_dir / "ben" / "vector_add.py").write_text(
        "from numba import cuda\n\n\ndef launch(a, b, c):\n    while True:\n        pass\n"
    )
    db = tmp_path / "book.sqlite"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "grader.cli",
            "grade",
            str(class_dir),
            "--db",
            str(db),
            "--timeout",
            "600",
            "--task-timeout",
            "10",
            "--scheduler",
            cluster.address,
        ],
        cwd=ROOT,
        env={**os.environ, "ZEROGPU_SECRET": "class-secret"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        output = proc.communicate(timeout=300)[0].decode()
    finally:
        stop(proc)
    assert proc.returncode == 0, output
    rows = {r.student: r for r in Gradebook(db).rows()}
    assert (rows["ann"].verdict, rows["ben"].verdict) == ("passed", "timeout")
    assert "no result within 10 s" in rows["ben"].result.message


def test_a_worker_keeps_one_copy_per_submission_content(class_dir, secret, tmp_path, monkeypatch):
    """Is a hand-in written once, by content, where only this user can look (the compile cache
    keys kernels by path, so a regrade or an identical hand-in compiles nothing again)?"""
    from grader.classroom.grading import submission_file

    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    ada, dee = (next(t for t in discover(class_dir, ["vector_add"]) if t.student == s) for s in ("ada", "dee"))
    paths = [submission_file(t.source, t.exercise) for t in (ada, dee)]
    assert paths[0] == paths[1] and paths[0].read_bytes() == (class_dir / "ada" / "vector_add.py").read_bytes()
    assert paths[0].name == "vector_add.py"
    assert (paths[0].parent.parent.stat().st_mode & 0o777) == 0o700
