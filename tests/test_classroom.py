"""Grading a class: one row per student and exercise, right verdicts for good and bad
submissions mixed together, and a grader killed mid-run loses and duplicates nothing."""

import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.classroom.grading import Task, discover, grade_class, pending
from grader.exercises import ROOT
from grader.classroom.gradebook import NOT_SUBMITTED, Gradebook
from grader.result import CheckResult, Speed

CHEATS = ROOT / "tests" / "cheats"
CLASS = {
    # student: (file copied as vector_add.py, expected verdict)
    "ada": (ROOT / "solutions/vector_add.py", "passed"),
    "bob": (ROOT / "exercises/vector_add.py", "unwritten_output"),
    "cy": (CHEATS / "fork_bomb.py", "forbidden"),
    "dee": (ROOT / "solutions/vector_add.py", "passed"),
    "eve": (CHEATS / "replays_cached_output.py", "wrong_result"),
    "fay": (CHEATS / "recursion_bomb.py", "exception"),
    "gus": (CHEATS / "writes_outside_output.py", "out_of_bounds"),
    "hal": (ROOT / "tests/submissions/vector_add/no_bounds_guard.py", "out_of_bounds"),
    "ivy": (CHEATS / "hard_coded_public_seed.py", "wrong_result"),
    "jo": (ROOT / "solutions/vector_add.py", "passed"),
    "kim": (None, NOT_SUBMITTED),
}


@pytest.fixture
def class_dir(tmp_path):
    for student, (source, _) in CLASS.items():
        folder = tmp_path / "class" / student
        folder.mkdir(parents=True)
        if source:
            shutil.copy(source, folder / "vector_add.py")
    return tmp_path / "class"


def rows(db):
    with sqlite3.connect(db) as conn:
        try:
            return conn.execute("SELECT student, exercise, verdict, score, graded_at FROM results").fetchall()
        except sqlite3.OperationalError:  # the grader has created the file, not its table yet
            return []


def grade(class_dir, db, env):
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "grader.cli",
            "grade",
            str(class_dir),
            "--db",
            str(db),
            "--workers",
            "2",
            "--timeout",
            "10",
            "--exercises",
            "vector_add",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def test_discover_gives_every_student_every_exercise(class_dir):
    tasks = discover(class_dir, ["vector_add", "saxpy"])
    assert len(tasks) == 2 * len(CLASS)
    assert Task("kim", "vector_add", None) in tasks


@pytest.mark.slow
def test_killed_grader_resumes_without_losing_or_duplicating(class_dir, tmp_path):
    db = tmp_path / "book.sqlite"
    env = {**os.environ, "ZEROGPU_SECRET": "class-secret"}
    proc = grade(class_dir, db, env)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not db.exists() or len(rows(db)) < 3):
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)  # the grader and its children, mid-run
    proc.wait()
    before = {(s, e): t for s, e, _, _, t in rows(db)}
    assert 3 <= len(before) < len(CLASS), "the kill should land mid-run"

    proc = grade(class_dir, db, env)
    output = proc.communicate(timeout=300)[0].decode()
    assert proc.returncode == 0, output
    after = rows(db)
    assert len(after) == len(CLASS), "exactly one row per student and exercise"
    for student, exercise, verdict, score, graded_at in after:
        assert verdict == CLASS[student][1], (student, verdict)
        if (student, exercise) in before:
            assert graded_at == before[(student, exercise)], f"{student} was graded twice"
        if verdict == "passed":
            assert score == 10.0
    assert pending(discover(class_dir, ["vector_add"]), Gradebook(db)) == []


def test_a_changed_submission_is_graded_again(class_dir, tmp_path):
    """Resuming skips finished work only while the file is unchanged."""
    book = Gradebook(tmp_path / "b.sqlite")
    tasks = discover(class_dir, ["vector_add"])
    done = CheckResult("vector_add", "t", "simulator", "passed", "", "", (), Speed(False), 10.0, 10.0, None)
    for t in tasks:
        book.record(t.student, t.exercise, t.sha256, done if t.source else None)
    assert pending(tasks, book) == []
    (class_dir / "ada" / "vector_add.py").write_text("# changed\n")
    assert [t.student for t in pending(discover(class_dir, ["vector_add"]), book)] == ["ada"]


def test_reading_files_in_class_grading_is_refused(class_dir, tmp_path):
    """Class grading refuses file access up front; the guard also denies the class folder (test_sandbox)."""
    (class_dir / "zed").mkdir()
    (class_dir / "zed" / "vector_add.py").write_text(
        "from numba import cuda\n"
        "import numpy as np\n"
        "COPIED = np.fromfile  # the policy refuses this before anything runs\n"
        "def launch(a, b, c):\n    pass\n"
    )
    book = Gradebook(tmp_path / "b.sqlite")
    tasks = [t for t in discover(class_dir, ["vector_add"]) if t.student == "zed"]
    grade_class(tasks, book, workers=1, case_timeout=10, backend="simulator", private=[class_dir])
    assert book.rows()[0].verdict == "forbidden"


FRESH_CLASS_SIZE = 4
"""One task per worker: the four start together, each the first to want the secret."""


def small_class(root, students=FRESH_CLASS_SIZE, source=ROOT / "solutions/vector_add.py"):
    for k in range(students):
        (root / f"s{k}").mkdir(parents=True)
        shutil.copy(source, root / f"s{k}" / "vector_add.py")
    return root


@pytest.mark.slow
def test_first_grading_on_a_fresh_data_dir_makes_one_secret(tmp_path, monkeypatch):
    """With no secret yet, do 4 workers grade 4 students cleanly, 3 times in a row, every
    student's inputs drawn from a secret derived from the one secret file?"""
    import hashlib
    import importlib

    from grader.steps import cases

    pipeline = importlib.import_module("grader.checking.check")  # the module, not grader's check()
    class_dir = small_class(tmp_path / "class")
    monkeypatch.delenv("ZEROGPU_SECRET", raising=False)
    monkeypatch.setattr(cases, "_SECRET_FROM_ENV", None)  # as in a process started without one
    seen = []
    real_prepare = pipeline.prepare

    def recording_prepare(ex, seed, secret=None):
        seen.append(secret)
        return real_prepare(ex, seed, secret)

    monkeypatch.setattr(pipeline, "prepare", recording_prepare)
    for attempt in range(3):
        home = tmp_path / f"home-{attempt}"
        monkeypatch.setenv("ZEROGPU_HOME", str(home))
        seen.clear()
        book = Gradebook(tmp_path / f"book-{attempt}.sqlite")
        graded = grade_class(discover(class_dir, ["vector_add"]), book, workers=4, case_timeout=30, backend="simulator")
        assert graded == FRESH_CLASS_SIZE
        assert [(r.student, r.verdict) for r in book.rows() if r.verdict != "passed"] == [], [
            r.result.message for r in book.rows() if r.verdict != "passed"
        ]
        text = (home / "grading-secret").read_text().strip()
        assert [p.name for p in home.iterdir()] == ["grading-secret"]
        secret = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
        per_task = {cases.task_secret(secret, f"s{k}", "vector_add") for k in range(FRESH_CLASS_SIZE)}
        assert sorted(seen) == sorted(per_task)  # each task's own, derived from the one file's


def test_a_class_run_times_every_student_of_an_exercise_on_the_same_benchmark_inputs(monkeypatch):
    """Each task's correctness inputs come from its own secret, but the benchmark's base inputs
    from one per exercise: a GPU's replayer then keeps them, their buffers and the references'
    times for the whole exercise, here and on a cluster's workers alike."""
    from grader.classroom import distributed, grading
    from grader.settings import CheckOptions

    seen = []
    monkeypatch.setenv("ZEROGPU_SECRET", "one host")
    monkeypatch.setattr(grading, "check_file", lambda exercise_id, path, options: seen.append(options))
    source = (ROOT / "solutions/vector_add.py").read_bytes()
    tasks = [Task(f"s{k}", e, source) for k in range(3) for e in ("vector_add", "saxpy")]
    for task in tasks:
        grading.grade_task(task, CheckOptions())
    remote = [distributed.remote_task(t, 1234, CheckOptions()).options for t in tasks]
    for options in (seen, remote):
        bench = {(t.exercise, o.bench_secret) for t, o in zip(tasks, options)}
        assert len(bench) == 2 and len({b for _, b in bench}) == 2, "one per exercise, the same for every student"
        assert len({o.secret for o in options}) == len(tasks), "correctness inputs still each task's own"
        assert not {o.secret for o in options} & {b for _, b in bench}


@pytest.mark.slow
def test_two_graders_started_together_on_a_fresh_data_dir(tmp_path):
    """Do two `zerogpu grade` commands started at once on one new data dir both finish?"""
    env = {k: v for k, v in os.environ.items() if k != "ZEROGPU_SECRET"}
    env["ZEROGPU_HOME"] = str(tmp_path / "home")
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "grader.cli",
                "grade",
                str(small_class(tmp_path / f"class-{k}", students=2)),
                "--workers",
                "2",
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        for k in range(2)
    ]
    outputs = [p.communicate(timeout=300)[0].decode() for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    assert all("Traceback" not in out for out in outputs)
    assert [p.name for p in (tmp_path / "home").iterdir()] == ["grading-secret"]
    for k in range(2):
        assert [r[2] for r in rows(tmp_path / f"class-{k}" / "gradebook.sqlite")] == ["passed", "passed"]


def _children_of_this_process() -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid() and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


@pytest.mark.slow
def test_a_child_that_stops_answering_is_ended_by_the_coordinator(tmp_path):
    """With a per-case limit far away, does the task deadline still end an endless loop as
    `timeout`, kill its child and let the rest of the class be graded?"""
    class_dir = small_class(tmp_path / "class", students=2)
    (class_dir / "s1" / "vector_add.py").write_text(
        "from numba import cuda\n\n\ndef launch(a, b, c):\n    while True:\n        pass\n"
    )
    book = Gradebook(tmp_path / "b.sqlite")
    before = set(_children_of_this_process())  # helpers earlier tests started (a compile server)
    started = time.monotonic()
    grade_class(
        discover(class_dir, ["vector_add"]), book, workers=2, case_timeout=600, backend="simulator", task_timeout=20
    )
    assert time.monotonic() - started < 120
    verdicts = {r.student: r for r in book.rows()}
    assert verdicts["s0"].verdict == "passed"
    assert verdicts["s1"].verdict == "timeout"
    assert "no result within 20 s" in verdicts["s1"].result.message
    deadline = time.monotonic() + 15
    while set(_children_of_this_process()) - before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert set(_children_of_this_process()) - before == set(), "no child outlives the grading run"


@pytest.mark.slow
def test_a_worker_stuck_outside_any_child_does_not_stall_the_run(tmp_path, monkeypatch):
    """If a worker thread hangs where no child can be killed (as a Popen that never returns
    would), is its task recorded as `timeout` and the run finished all the same?"""
    import threading

    import grader.classroom.grading as classroom

    class_dir = small_class(tmp_path / "class", students=3)
    real = classroom.grade_task
    never = threading.Event()

    def sometimes_stuck(task, options):
        if task.student == "s1":
            never.wait()  # the thread is abandoned; it never returns
        return real(task, options)

    monkeypatch.setattr(classroom, "grade_task", sometimes_stuck)
    book = Gradebook(tmp_path / "b.sqlite")
    grade_class(
        discover(class_dir, ["vector_add"]), book, workers=2, case_timeout=30, backend="simulator", task_timeout=15
    )
    assert [(r.student, r.verdict) for r in book.rows()] == [
        ("s0", "passed"),
        ("s1", "timeout"),
        ("s2", "passed"),
    ]


def test_grade_names_files_it_does_not_grade_and_logs_plain_lines(tmp_path):
    """Is SAXPY.py (a wrong case) or notes.py reported with the reason instead of silently
    skipped, and does output that is no terminal get one plain line per task, no progress bar?"""
    from grader.classroom.grading import scan

    folder = tmp_path / "class" / "ann"
    folder.mkdir(parents=True)
    shutil.copy(ROOT / "solutions/vector_add.py", folder / "vector_add.py")
    shutil.copy(ROOT / "solutions/saxpy.py", folder / "SAXPY.py")
    (folder / "notes.py").write_text("# my notes\n")
    found = {name: reason for _, name, reason in scan(tmp_path / "class").strays}
    assert found == {"SAXPY.py": "not an exercise id: rename it saxpy.py to grade it", "notes.py": "not an exercise id"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader.cli",
            "grade",
            str(tmp_path / "class"),
            "--db",
            str(tmp_path / "book.sqlite"),
            "--workers",
            "1",
            "--timeout",
            "30",
        ],
        cwd=ROOT,
        env={**os.environ, "ZEROGPU_SECRET": "class-secret"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "not graded: ann/SAXPY.py — not an exercise id: rename it saxpy.py to grade it" in proc.stdout
    assert "not graded: ann/notes.py — not an exercise id" in proc.stdout
    assert "[1/1] ann/vector_add: passed" in proc.stdout
    assert "\r" not in proc.stdout and "━" not in proc.stdout


@pytest.mark.slow
def test_several_workers_sharing_one_device_grade_every_row_once(class_dir, tmp_path, monkeypatch):
    """As on a GPU host, where a few workers share each GPU: three workers on one device slot,
    each (student, exercise) recorded once with its verdict."""
    import grader.classroom.grading as classroom

    monkeypatch.setenv("ZEROGPU_SECRET", "class-secret")
    monkeypatch.setattr(classroom, "device_slots", lambda backend, workers: [0] * workers)
    tasks = discover(class_dir, ["vector_add"])
    book = Gradebook(tmp_path / "b.sqlite")
    recorded = []
    graded = grade_class(
        tasks,
        book,
        workers=3,
        case_timeout=30,
        backend="simulator",
        private=[class_dir],
        on_done=lambda task, result: recorded.append((task.student, task.exercise)),
    )
    assert graded == len(tasks) == len(recorded) == len(set(recorded))
    assert sorted((r.student, r.verdict) for r in book.rows()) == sorted(
        (student, verdict) for student, (_, verdict) in CLASS.items()
    )


@pytest.mark.parametrize(
    "gpus, cores, workers, slots",
    [
        (1, 16, 6, [0] * 6),  # an H200 host: six checks share the GPU
        (2, 32, 12, [0, 1] * 6),
        (4, 8, 8, [0, 1, 2, 3, 0, 1, 2, 3]),  # two cores per GPU: two checks each
        (2, 2, 2, [0, 1]),  # never fewer than one per GPU
    ],
)
def test_a_gpu_host_records_a_few_checks_per_gpu(monkeypatch, gpus, cores, workers, slots):
    """Six checks per GPU by default, as cores allow: they record and compile on the CPU while
    the GPU's replayer replays one at a time."""
    import grader.classroom.grading as classroom

    monkeypatch.setattr(classroom, "gpu_total", lambda: gpus)
    monkeypatch.setattr(classroom.os, "cpu_count", lambda: cores)
    assert classroom.default_workers("gpu") == workers
    assert classroom.device_slots("gpu", workers) == slots
    assert classroom.default_workers("simulator") == cores
    assert classroom.device_slots("simulator", 3) == [None] * 3


def test_tasks_are_handed_out_exercise_by_exercise(class_dir):
    """Spare children are kept per exercise: consecutive checks of one exercise use them."""
    from grader.classroom.grading import in_exercise_order

    tasks = discover(class_dir, ["saxpy", "vector_add"])
    ordered = in_exercise_order(tasks)
    assert sorted(ordered, key=str) == sorted(tasks, key=str)
    assert [t.exercise for t in ordered] == ["vector_add"] * len(CLASS) + ["saxpy"] * len(CLASS)
    assert [t.student for t in ordered[: len(CLASS)]] == sorted(CLASS)


class Heard:
    """A grading run's Listener that keeps what it was told."""

    def __init__(self):
        self.strays, self.starts, self.finished = [], [], []

    def not_graded(self, what, why):
        self.strays.append((what, why))

    def starting(self, heading, total):
        self.starts.append((heading, total))

    def done(self, task, result):
        self.finished.append((task.student, task.exercise, result.verdict if result else None))


def test_grade_folder_is_a_library_call_that_tells_its_listener_and_prints_nothing(tmp_path, monkeypatch, capsys):
    """Does grading a class folder without the command grade every task, tell a Listener what
    it leaves out, how many it grades and each result, print nothing itself, and skip on a
    second run what is graded already?"""
    from grader.classroom.run import GradeRequest, grade_folder
    from grader.settings import CheckOptions

    monkeypatch.setenv("ZEROGPU_SECRET", "class-secret")
    for student, source in (("ann", ROOT / "solutions/vector_add.py"), ("ben", ROOT / "exercises/vector_add.py")):
        (tmp_path / "class" / student).mkdir(parents=True)
        shutil.copy(source, tmp_path / "class" / student / "vector_add.py")
    (tmp_path / "class" / "ann" / "notes.txt").write_text("hi")
    request = GradeRequest(
        check=CheckOptions(case_timeout=30, unsandboxed=True), workers=2, db=str(tmp_path / "b.sqlite")
    )
    heard = Heard()
    run = grade_folder(tmp_path / "class", request, heard)
    assert heard.strays == [("ann/notes.txt", "not a .py file")]
    assert heard.starts[0][1] == 2 and heard.starts[0][0].startswith("2 tasks, 0 already graded, 2 to grade on the")
    assert sorted(heard.finished) == [("ann", "vector_add", "passed"), ("ben", "vector_add", "unwritten_output")]
    assert (run.rows, run.book, run.regraded, run.lost) == (2, tmp_path / "b.sqlite", [], [])
    assert capsys.readouterr().out == ""
    again = Heard()
    grade_folder(tmp_path / "class", request, again)
    assert again.starts[0][1] == 0 and again.finished == []


@pytest.mark.parametrize(
    ("make", "regrade", "says"),
    [
        (lambda tmp: tmp / "nowhere", None, "no such folder"),
        (lambda tmp: tmp, "zed/vector_add", "no hand-in 'zed/vector_add' here"),
        (lambda tmp: tmp, "ann/vector_add", "has no stored seed to replay"),
    ],
    ids=["missing folder", "unknown row", "never graded"],
)
def test_a_run_that_cannot_start_raises_one_line_and_grades_nothing(tmp_path, make, regrade, says):
    """Is a run refused before anything is graded (GradingError, one line that says what to
    do), whether the folder is missing or the row to regrade cannot be replayed?"""
    from grader.classroom.run import GradeRequest, GradingError, grade_folder
    from grader.settings import CheckOptions

    (tmp_path / "ann").mkdir()
    shutil.copy(ROOT / "solutions/vector_add.py", tmp_path / "ann" / "vector_add.py")
    heard = Heard()
    request = GradeRequest(
        check=CheckOptions(unsandboxed=True), regrade=(regrade,) if regrade else (), db=str(tmp_path / "b.sqlite")
    )
    with pytest.raises(GradingError, match=says) as raised:
        grade_folder(make(tmp_path), request, heard)
    assert "\n" not in str(raised.value) and heard.starts == heard.finished == []


def test_gradebook_rows_read_back_typed_whoever_stored_them(tmp_path):
    """Does every gradebook row read back as a `ClassRow` with a typed result and regrade: a row
    an earlier grader stored (fewer fields, one regrade before), a hand-in never made, a row
    graded now; and does regrading a regraded row store what it replaced, chain kept?"""
    import json

    from test_result import OLDER_ROW, a_result

    from grader.result.row import ClassRow, Regraded

    book = Gradebook(tmp_path / "gradebook.sqlite")
    older = {k: v for k, v in OLDER_ROW.items() if k not in ("result", "regraded_from")}
    with sqlite3.connect(book.path) as db:
        db.execute(
            f"INSERT INTO results ({', '.join(older)}, result_json, regraded_from) VALUES ({', '.join('?' * (len(older) + 2))})",
            (*older.values(), json.dumps(OLDER_ROW["result"]), json.dumps(OLDER_ROW["regraded_from"])),
        )
    book.record("bo", "vector_add", None, None)
    book.record("cy", "vector_add", "sha", a_result("wrong_result"), graded_on="simulator on n1", seed=7)
    ada, bo, cy = book.rows()
    assert all(isinstance(row, ClassRow) for row in (ada, bo, cy))
    assert ada.result.speed.details.speedup_vs_baseline.median == 1.5 and ada.regraded_from.verdict == "wrong_result"
    assert bo.verdict == NOT_SUBMITTED and bo.result is None and bo.regraded_from is None
    assert cy.result.cases[1].mismatches[0].index == (3,) and (cy.seed, cy.graded_on) == (7, "simulator on n1")
    assert book.by_task("cy") == {("cy", "vector_add"): cy} and book.row("cy", "saxpy") is None

    book.record("ada", "vector_add", "abc", a_result("passed", score=10.0), seed=3, regrade_of=ada)
    again = book.row("ada", "vector_add")
    assert again.regraded_from == Regraded("passed", 11.0, 13.0, 1.0e9, None, None, Regraded("wrong_result", 0.0, 10.0))
    with sqlite3.connect(book.path) as db:
        (stored,) = db.execute("SELECT regraded_from FROM results WHERE student = 'ada'").fetchone()
    assert set(json.loads(stored)) == {
        "verdict",
        "score",
        "max_score",
        "graded_at",
        "graded_on",
        "seed",
        "regraded_from",
    }
    assert "regraded_from" not in json.loads(stored)["regraded_from"], "the end of the chain, stored as before"


def test_a_folders_kind_is_decided_by_what_is_there(tmp_path):
    """A leftover nbgrader_config.py beside student folders is a class (with a note); nbgrader's
    folders make a course; both at once is refused in one line naming --kind; --kind decides."""
    from grader.classroom.kind import FolderKindError, kind_of

    shutil.copy(ROOT / "solutions/vector_add.py", (tmp_path / "ann").mkdir() or tmp_path / "ann" / "vector_add.py")
    assert kind_of(tmp_path) == kind_of(tmp_path, "class")
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\n")
    leftover = kind_of(tmp_path)
    assert leftover.kind == "class" and "1 student folder holding exercise files" in leftover.note
    assert "--kind course" in leftover.note
    (tmp_path / "source" / "warmup").mkdir(parents=True)
    with pytest.raises(FolderKindError, match="--kind course or --kind class") as raised:
        kind_of(tmp_path)
    assert "source/" in str(raised.value) and "\n" not in str(raised.value)
    assert kind_of(tmp_path, "course").kind == "course"
    shutil.rmtree(tmp_path / "ann")
    assert kind_of(tmp_path).kind == "course"
    (tmp_path / "source").rename(tmp_path / "sauce")
    assert kind_of(tmp_path).kind == "course", "a course not set up yet: the course's own errors say what is missing"
    with pytest.raises(FolderKindError):
        kind_of(tmp_path, "lab")


def test_regrades_select_named_rows_globs_and_every_failed_row(tmp_path):
    """Does --regrade take several STUDENT/EXERCISE patterns (globs), and --failed every row that
    did not pass: rows replayable on their seed are replayed, a globbed or failed row whose file
    changed is graded on new inputs, nothing handed in is skipped, and a bad pattern refused?"""
    from test_result import a_result

    from grader.classroom.regrade import RegradeError, select

    tasks = [
        Task("ann", "vector_add", b"a"),
        Task("ann", "saxpy", b"b"),
        Task("bob", "vector_add", b"c"),
        Task("bob", "saxpy", b"changed"),
        Task("cy", "vector_add", None),
    ]
    book = Gradebook(tmp_path / "gradebook.sqlite")
    for task, verdict in zip(tasks, ("passed", "wrong_result", "timeout", "race")):
        book.record(task.student, task.exercise, task.sha256, a_result(verdict), seed=11)
    book.record("bob", "saxpy", "old-sha", a_result("race"), seed=12)
    book.record("cy", "vector_add", None, None)

    def keys(found):
        todo, replaying = found
        return sorted((t.student, t.exercise) for t in todo), sorted(replaying)

    assert keys(select(tasks, book, ("ann/vector_add", "bob/vector_add"))) == (
        [("ann", "vector_add"), ("bob", "vector_add")],
        [("ann", "vector_add"), ("bob", "vector_add")],
    )
    assert keys(select(tasks, book, ("*/saxpy",))) == ([("ann", "saxpy"), ("bob", "saxpy")], [("ann", "saxpy")])
    assert keys(select(tasks, book, failed=True)) == (
        [("ann", "saxpy"), ("bob", "saxpy"), ("bob", "vector_add")],
        [("ann", "saxpy"), ("bob", "vector_add")],
    )
    for bad, says in (("zed/*", "no hand-in matches"), ("ann*", "write STUDENT/EXERCISE"), ("bob/saxpy", "changed")):
        with pytest.raises(RegradeError, match=says):
            select(tasks, book, (bad,))


@pytest.mark.slow
def test_a_real_class_day_grades_reports_and_regrades_without_a_traceback(tmp_path):
    """A class with a non-UTF-8 folder and file name, a leftover nbgrader_config.py, nbgrader's
    own files, a linked student folder, two students with one kernel under other names and an
    endless loop: `zerogpu grade` exits 0 with a closing summary, the link is no student, the
    copies are paired in similarity.csv, every student has a feedback page, and `--failed`
    regrades the rows that did not pass."""
    import csv

    from test_report import DISTINCT, renamed

    class_dir = tmp_path / "class"
    solution = (ROOT / "solutions/vector_add.py").read_text()
    endless = solution.replace("    if i < c.size:", "    while i >= 0:\n        i += 0\n    if i < c.size:")
    assert endless != solution
    work = {b"ann": DISTINCT, b"bob": renamed(DISTINCT), b"jos\xe9": solution, b"cy": solution, b"dee": endless}
    for name, source in work.items():
        folder = os.path.join(os.fsencode(class_dir), name)
        os.makedirs(folder)
        with open(os.path.join(folder, b"vector_add.py"), "w") as f:
            f.write(source)
        for extra in (b"timestamp.txt", b"submission_secret.txt", b"notes-\xff.txt"):
            with open(os.path.join(folder, extra), "w") as f:
                f.write("x")
    (class_dir / "ann-copy").symlink_to("ann")
    (class_dir / "nbgrader_config.py").write_text("c = get_config()\n")
    env = {**os.environ, "ZEROGPU_SECRET": "class-secret", "ZEROGPU_HOME": str(tmp_path / "home")}

    def zerogpu(*args):
        done = subprocess.run(
            [sys.executable, "-m", "grader.cli", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
        return done.stdout

    graded = zerogpu("grade", str(class_dir), "--workers", "2", "--timeout", "5")
    assert "note: nbgrader_config.py is here but no nbgrader folder" in graded
    assert "not a student: ann-copy is a symbolic link to ann's folder" in graded
    assert "timestamp.txt" not in graded and "notes-\\udcff.txt" in graded
    summary = graded.strip().splitlines()[-1]
    assert re.fullmatch(r"graded 5 in .*: 4 passed, 1 timeout; 6 need a look \(zerogpu report .*\)", summary), summary
    book = Gradebook(class_dir / "gradebook.sqlite")
    assert {r.student: r.verdict for r in book.rows()} == {
        "ann": "passed",
        "bob": "passed",
        "cy": "passed",
        "dee": "timeout",
        "jos\\udce9": "passed",
    }
    zerogpu("report", str(class_dir))
    out = class_dir / "report"
    students = [r["student"] for r in csv.DictReader(open(out / "students.csv", encoding="utf-8"))]
    assert sorted(students) == ["ann", "bob", "cy", "dee", "jos\\udce9"]
    pairs = [r for r in csv.reader(open(out / "similarity.csv", encoding="utf-8"))][1:]
    assert [p[:3] for p in pairs] == [["vector_add", "ann", "bob"]]
    assert len(list((out / "feedback").iterdir())) == 5
    regraded = zerogpu("grade", str(class_dir), "--failed", "--timeout", "5")
    assert "dee/vector_add, regraded on its stored seed" in regraded
    assert book.row("dee", "vector_add").regraded_from.verdict == "timeout"
