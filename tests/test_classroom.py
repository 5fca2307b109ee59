"""Grading a class: one row per student and exercise, right verdicts for good and bad
submissions mixed together, and a grader killed mid-run loses and duplicates nothing."""
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.classroom import Task, discover, grade_class, pending
from grader.exercises import ROOT
from grader.gradebook import NOT_SUBMITTED, Gradebook
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
        return conn.execute("SELECT student, exercise, verdict, score, graded_at FROM results").fetchall()


def grade(class_dir, db, env):
    return subprocess.Popen(
        [sys.executable, "-m", "grader.cli", "grade", str(class_dir), "--db", str(db),
         "--workers", "2", "--timeout", "10", "--exercises", "vector_add"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)


def test_discover_gives_every_student_every_exercise(class_dir):
    tasks = discover(class_dir, ["vector_add", "saxpy"])
    assert len(tasks) == 2 * len(CLASS)
    assert Task("kim", "vector_add", None) in tasks


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
        book.record(t.student, t.exercise, t.sha256, done if t.path else None)
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
        "def launch(a, b, c):\n    pass\n")
    book = Gradebook(tmp_path / "b.sqlite")
    tasks = [t for t in discover(class_dir, ["vector_add"]) if t.student == "zed"]
    grade_class(tasks, book, workers=1, case_timeout=10, backend="simulator", private=[class_dir])
    assert book.rows()[0]["verdict"] == "forbidden"
