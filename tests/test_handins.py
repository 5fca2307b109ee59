"""Class folders as hostile input: links (made here) into and out of the class folder, a FIFO, a
socket, a huge file and the grader's own report are never read or graded as hand-ins; the
gradebook keeps every seed, replays a row on its inputs, takes one run at a time, survives a
kill -9 and a full disk, and says each failure in one line."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from grader.classroom.gradebook import NOT_SUBMITTED, UNTOUCHED, Gradebook, GradebookError
from grader.classroom.grading import discover, grade_class, scan
from grader.exercises import ROOT

SOLUTION, STARTER = ROOT / "solutions/vector_add.py", ROOT / "exercises/vector_add.py"
SECRET_TEXT = "class-secret-never-shown"


def hostile_class(root: Path, secret_file: Path) -> Path:
    """ann hands in a solution, ivy the starter; everyone else a link, a FIFO, a socket or a
    huge file where the exercise should be; zed's folder is a link to /etc; report/ is the
    grader's own."""
    class_dir = root / "class"
    for student in ("ann", "bob", "cy", "dee", "eve", "fay", "gus", "hal", "ivy", "jo"):
        (class_dir / student).mkdir(parents=True)
    shutil.copy(SOLUTION, class_dir / "ann" / "vector_add.py")
    shutil.copy(STARTER, class_dir / "ivy" / "vector_add.py")
    (class_dir / "zed").symlink_to("/etc")
    (class_dir / "bob" / "vector_add.py").symlink_to("/etc/passwd")
    (class_dir / "cy" / "vector_add.py").symlink_to(SOLUTION)  # the bundled solution
    (class_dir / "dee" / "vector_add.py").symlink_to("../ann/vector_add.py")  # another student's
    (class_dir / "eve" / "vector_add.py").symlink_to(secret_file)
    os.mkfifo(class_dir / "fay" / "vector_add.py")
    (class_dir / "gus" / "vector_add.py").write_text("#" * (2 << 20))  # 2 MiB
    (class_dir / "hal" / "notes.py").symlink_to("/etc/hostname")
    (class_dir / "hal" / "etc").symlink_to("/etc")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(class_dir / "jo" / "vector_add.py"))
    server.close()
    (class_dir / "report").mkdir()
    (class_dir / "report" / "report.html").write_text("<html></html>")
    return class_dir


@pytest.fixture
def secret_file(tmp_path):
    path = tmp_path / "grading-secret"
    path.write_text(SECRET_TEXT)
    return path


def test_links_fifos_sockets_and_huge_files_are_refused_and_never_read(tmp_path, secret_file):
    """Is every hand-in that is not a regular file of a real student folder refused with what it
    is, without blocking on the FIFO, following a link or showing what a link points at?"""
    class_dir = hostile_class(tmp_path, secret_file)
    found = []
    scanning = threading.Thread(target=lambda: found.append(scan(class_dir)), daemon=True)
    scanning.start()
    scanning.join(30)
    assert found, "scanning blocked (on the FIFO?)"
    tasks = {t.student: t for t in found[0].tasks}
    assert sorted(tasks) == ["ann", "bob", "cy", "dee", "eve", "fay", "gus", "hal", "ivy", "jo"]  # no zed, no report
    assert tasks["ann"].source == SOLUTION.read_bytes() and not tasks["ann"].untouched
    assert tasks["ivy"].source == STARTER.read_bytes() and tasks["ivy"].untouched
    for student in ("bob", "cy", "dee", "eve"):
        assert tasks[student].source is None
        assert tasks[student].note == (
            "vector_add.py is a symbolic link, which is never followed: not read (hand in the file itself)"
        )
    assert "FIFO" in tasks["fay"].note and tasks["fay"].source is None
    assert "socket" in tasks["jo"].note and tasks["jo"].source is None
    assert "2.0 MiB, over the 1.0 MiB" in tasks["gus"].note and tasks["gus"].source is None
    assert found[0].not_students == [
        (
            "zed",
            "zed is a symbolic link to a place outside the student folders, not a student: never followed, "
            "nothing in it was read",
        )
    ]
    strays = {(s, name): why for s, name, why in found[0].strays}
    assert strays == {
        ("hal", "notes.py"): "notes.py is a symbolic link, which is never followed: not read (hand in the file itself)",
        ("hal", "etc"): "etc is a symbolic link, which is never followed: not read (hand in the file itself)",
    }
    said = repr(found[0])
    assert "/etc" not in said and "root:" not in said and SECRET_TEXT not in said


def test_a_folder_swapped_for_a_link_after_listing_is_not_followed(tmp_path):
    """The check and the read are one: a student folder or file replaced by a link between
    `zerogpu grade` listing it and reading it is refused, not followed."""
    from grader.classroom.handins import Refused, read_below

    (tmp_path / "ann").mkdir()
    (tmp_path / "ann" / "vector_add.py").write_text("x = 1\n")
    assert read_below(tmp_path, "ann", "vector_add.py") == b"x = 1\n"
    shutil.rmtree(tmp_path / "ann")
    (tmp_path / "ann").symlink_to("/etc")
    with pytest.raises(Refused, match="ann is a symbolic link"):
        read_below(tmp_path, "ann", "passwd")
    (tmp_path / "bob").mkdir()
    (tmp_path / "bob" / "vector_add.py").symlink_to("/etc/passwd")
    with pytest.raises(Refused, match="never followed"):
        read_below(tmp_path, "bob", "vector_add.py")


def zerogpu(*args, env=None, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader.cli", *args],
        cwd=ROOT,
        env=env or {**os.environ, "ZEROGPU_SECRET": SECRET_TEXT},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.slow
def test_grading_a_hostile_class_reads_nothing_outside_it_then_regrades_a_row(tmp_path, secret_file):
    """`zerogpu grade` on the hostile class: every row right, the refusals in its output and the
    notes, nothing of /etc, the solution or the secret anywhere; the report it writes is not a
    student next time; a row regraded on its stored seed is shown beside the stored one and
    marked in the gradebook and the report's data."""
    from grader.report.data import analyse

    class_dir = hostile_class(tmp_path, secret_file)
    env = {**os.environ, "ZEROGPU_SECRET_FILE": str(secret_file), "ZEROGPU_HOME": str(tmp_path / "home")}
    graded = zerogpu("grade", str(class_dir), "--workers", "2", "--timeout", "20", env=env)
    assert graded.returncode == 0, graded.stdout + graded.stderr
    assert "not a student: zed is a symbolic link to a place outside the student folders" in graded.stdout
    book = Gradebook(class_dir / "gradebook.sqlite")
    rows = {r.student: r for r in book.rows()}
    assert {s: r.verdict for s, r in rows.items()} == {
        "ann": "passed",
        "ivy": "unwritten_output",
        **{s: NOT_SUBMITTED for s in ("bob", "cy", "dee", "eve", "fay", "gus", "hal", "jo")},
    }
    assert all(isinstance(rows[s].seed, int) for s in ("ann", "ivy")), "graded rows keep their seed"
    assert rows["ann"].result.seed is None, "the learner's result still does not show it"
    notes = book.notes()
    everything = graded.stdout + graded.stderr + repr(book.rows()) + repr(notes)
    assert "root:" not in everything and SECRET_TEXT not in everything and "/etc/" not in everything
    assert [(n["student"], n["about"]) for n in notes if n["kind"] == UNTOUCHED] == [("ivy", "vector_add")]
    report = zerogpu("report", str(class_dir), env=env)
    assert report.returncode == 0, report.stdout + report.stderr
    assert (class_dir / "report" / "submissions.csv").is_file()
    again = zerogpu("grade", str(class_dir), "--timeout", "20", env=env)
    assert again.returncode == 0 and "report" not in {r.student for r in book.rows()}
    assert "10 tasks, 10 already graded, 0 to grade" in again.stdout
    data = analyse(book.rows(), notes=book.notes())
    assert data.not_attempted == {"vector_add": 1} and "report" not in {s.name for s in data.students}
    assert "root:" not in (class_dir / "report" / "report.html").read_text()

    before = book.row("ann", "vector_add")
    regraded = zerogpu("grade", str(class_dir), "--regrade", "ann/vector_add", "--timeout", "20", env=env)
    assert regraded.returncode == 0, regraded.stdout + regraded.stderr
    assert "ann/vector_add, regraded on its stored seed" in regraded.stdout and "stored" in regraded.stdout
    after = book.row("ann", "vector_add")
    assert after.seed == before.seed and after.graded_at > before.graded_at
    assert after.regraded_from.verdict == "passed" and after.regraded_from.seed == before.seed
    marks = {s.name: s.marks["vector_add"] for s in analyse(book.rows(), notes=book.notes()).students}
    assert marks["ann"].regraded == "was passed, 10/10" and marks["ivy"].regraded == ""
    for which, said in (
        ("nobody/vector_add", "no hand-in 'nobody/vector_add' here"),
        ("bob/vector_add", "no stored seed to replay"),
    ):
        refused = zerogpu("grade", str(class_dir), "--regrade", which, env=env)
        assert refused.returncode == 2 and said in refused.stderr and "Traceback" not in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    (class_dir / "ann" / "vector_add.py").write_text(SOLUTION.read_text() + "\n# changed\n")
    changed = zerogpu("grade", str(class_dir), "--regrade", "ann/vector_add", env=env)
    assert changed.returncode == 2 and "changed since it was graded" in changed.stderr


def test_a_regrade_draws_the_very_inputs_of_the_stored_row(tmp_path, monkeypatch):
    """Are a regrade's inputs drawn from the stored seed and the same per-task secret?"""
    import importlib

    pipeline = importlib.import_module("grader.checking.check")
    monkeypatch.setenv("ZEROGPU_SECRET", "class-secret")
    (tmp_path / "class" / "ann").mkdir(parents=True)
    shutil.copy(SOLUTION, tmp_path / "class" / "ann" / "vector_add.py")
    drawn = []
    real_prepare = pipeline.prepare
    monkeypatch.setattr(
        pipeline,
        "prepare",
        lambda ex, seed, secret=None: drawn.append((seed, secret)) or real_prepare(ex, seed, secret),
    )
    book = Gradebook(tmp_path / "book.sqlite")
    tasks = discover(tmp_path / "class", ["vector_add"])
    grade_class(tasks, book, workers=1, case_timeout=30, backend="simulator")
    row = book.row("ann", "vector_add")
    grade_class(tasks, book, workers=1, case_timeout=30, backend="simulator", replaying={("ann", "vector_add"): row})
    assert drawn[0] == drawn[1] and drawn[0][0] == row.seed
    grade_class(tasks, book, workers=1, case_timeout=30, backend="simulator")
    assert drawn[2][0] != row.seed, "a plain grade draws a new seed"


def rows_of(db: Path) -> dict:
    try:
        with sqlite3.connect(db) as conn:
            return {(s, e): t for s, e, t in conn.execute("SELECT student, exercise, graded_at FROM results")}
    except sqlite3.OperationalError:  # not made yet
        return {}


def small_class(root: Path, students: int) -> Path:
    for k in range(students):
        (root / f"s{k}").mkdir(parents=True)
        shutil.copy(SOLUTION, root / f"s{k}" / "vector_add.py")
    return root


@pytest.mark.slow
def test_one_run_per_gradebook_and_a_kill_9_loses_nothing(tmp_path):
    """A second `zerogpu grade` on a class being graded refuses in one line; the first, killed
    with -9, leaves the lock free, and the next run grades only what is missing, once."""
    class_dir, db = small_class(tmp_path / "class", 3), tmp_path / "book.sqlite"
    env = {**os.environ, "ZEROGPU_SECRET": SECRET_TEXT}
    command = [sys.executable, "-m", "grader.cli", "grade", str(class_dir), "--db", str(db), "--workers", "1"]
    first = subprocess.Popen(
        command + ["--timeout", "20"],
        cwd=ROOT,
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not rows_of(db):
        time.sleep(0.1)
    second = zerogpu("grade", str(class_dir), "--db", str(db), env=env)
    os.killpg(first.pid, signal.SIGKILL)  # the grader and its children, mid-run
    first.wait()
    assert second.returncode == 2, second.stdout + second.stderr
    assert second.stderr.strip().startswith("error: another zerogpu run (process ")
    assert "--db PATH" in second.stderr and len(second.stderr.strip().splitlines()) == 1
    before = rows_of(db)
    assert 1 <= len(before) < 3, "the kill should land mid-run"
    third = zerogpu("grade", str(class_dir), "--db", str(db), "--timeout", "20", env=env)
    assert third.returncode == 0, third.stdout + third.stderr
    after = rows_of(db)
    assert len(after) == 3 and all(after[key] == when for key, when in before.items()), "graded twice"


def test_a_full_gradebook_is_one_line_and_keeps_every_stored_row(tmp_path, monkeypatch):
    """SQLite's own "database or disk is full" (a page limit here) ends the run with one line
    naming --db; rows stored before stay, and nothing is half-written."""
    monkeypatch.setenv("ZEROGPU_SECRET", "class-secret")
    class_dir = small_class(tmp_path / "class", 2)
    book = Gradebook(tmp_path / "book.sqlite")
    book.record("s9", "vector_add", None, None)
    connect = Gradebook._connect

    def capped(self):
        db = connect(self)
        db.execute(f"PRAGMA max_page_count = {db.execute('PRAGMA page_count').fetchone()[0]}")
        return db

    monkeypatch.setattr(Gradebook, "_connect", capped)
    with pytest.raises(GradebookError) as caught:
        grade_class(discover(class_dir, ["vector_add"]), book, workers=1, case_timeout=30, backend="simulator")
    message = str(caught.value)
    assert "disk is full" in message and "--db PATH" in message and "\n" not in message
    monkeypatch.setattr(Gradebook, "_connect", connect)
    assert [r.student for r in book.rows()] == ["s9"]


BWRAP = shutil.which("bwrap")


@pytest.mark.skipif(BWRAP is None, reason="bubblewrap makes the small disk")
def test_a_full_disk_and_a_read_only_folder_name_the_flag_that_helps(tmp_path):
    """On a real full disk (a 1 MiB tmpfs) and a read-only class folder, `zerogpu grade` says
    one line naming --db, and the rows already on the full disk are all there once it has room."""
    class_dir, disk = small_class(tmp_path / "class", 2), tmp_path / "disk"
    disk.mkdir()
    script = tmp_path / "trial.sh"
    grade = f"{sys.executable} -m grader.cli grade {class_dir} --db {disk}/book.sqlite --timeout 20 --workers 1 --unsandboxed"
    script.write_text(
        "set -u\n"
        f"{grade} > /dev/null || exit 10\n"
        f"cat /dev/zero > {disk}/filler 2>/dev/null\n"  # fills the disk
        f"printf '\\n# changed\\n' >> {class_dir}/s0/vector_add.py\n"
        f"{grade} > {tmp_path}/out.txt 2> {tmp_path}/err.txt; echo $? > {tmp_path}/rc.txt\n"
        f"rm {disk}/filler\n"  # room again: what the gradebook holds can be read
        f"{sys.executable} -c \"import sqlite3; print(len(sqlite3.connect('{disk}/book.sqlite').execute('select * from results').fetchall()))\" > {tmp_path}/rows.txt\n"
    )
    env = {**os.environ, "ZEROGPU_SECRET": SECRET_TEXT}
    trial = subprocess.run(
        [BWRAP, "--dev-bind", "/", "/", "--size", str(1 << 20), "--tmpfs", str(disk), "sh", str(script)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert trial.returncode == 0, trial.stdout + trial.stderr
    err = (tmp_path / "err.txt").read_text()
    assert (tmp_path / "rc.txt").read_text().strip() == "2", err
    assert (
        "disk is full" in err and "--db PATH" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    )
    assert (tmp_path / "rows.txt").read_text().strip() == "2", "no row lost"

    read_only = subprocess.run(
        [
            BWRAP,
            "--dev-bind",
            "/",
            "/",
            "--ro-bind",
            str(class_dir),
            str(class_dir),
            sys.executable,
            "-m",
            "grader.cli",
            "grade",
            str(class_dir),
            "--unsandboxed",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert read_only.returncode == 2 and "--db PATH" in read_only.stderr and "ZEROGPU_HOME" not in read_only.stderr
    assert len(read_only.stderr.strip().splitlines()) == 1, read_only.stderr


def test_a_task_started_on_a_worker_that_did_not_finish_it_is_named():
    """From the start events the workers log: which task a lost worker had started, and where
    it was graded again; a task started and finished on one worker has no note."""
    from grader.classroom.distributed import STARTED, lost_workers

    def started(run, student, worker):
        return (0.0, {"run": run, "student": student, "exercise": "vector_add", "worker": worker})

    class Client:
        def get_events(self, topic):
            assert topic == STARTED
            return [
                started("this", "ann", "tcp://w1"),
                started("this", "ann", "tcp://w2"),
                started("this", "bob", "tcp://w2"),
                started("earlier", "cy", "tcp://w1"),
                started("this", "dee", "tcp://w1"),
            ]

    finished = {("ann", "vector_add"): "tcp://w2", ("bob", "vector_add"): "tcp://w2", ("cy", "vector_add"): "tcp://w2"}
    assert lost_workers(Client(), "this", finished) == {
        ("ann", "vector_add"): "started on Dask worker(s) tcp://w1, which did not finish it; graded again on tcp://w2",
        ("dee", "vector_add"): "started on Dask worker(s) tcp://w1, which did not finish it",
    }


def test_a_cell_handed_in_as_released_counts_as_not_attempted_in_the_report():
    """nbgrader's released cell is not exercises/<id>.py, so its hash alone cannot say it is
    untouched: the UNTOUCHED note that `zerogpu grade` keeps does."""
    from grader.report.data import NOT_ATTEMPTED, analyse
    from grader.result.row import ClassRow

    row = ClassRow.from_dict(
        {
            "student": "ada",
            "exercise": "vector_add",
            "submission_sha256": "0" * 64,
            "verdict": "unwritten_output",
            "score": 0.0,
            "max_score": 10.0,
            "backend": "simulator",
            "result": None,
            "graded_at": 1.0,
            "graded_on": None,
            "regraded_from": None,
        }
    )
    note = {"student": "ada", "about": "vector_add", "kind": UNTOUCHED, "text": "handed in as given out"}
    assert analyse([row]).students[0].verdicts["vector_add"] == "unwritten_output"
    report = analyse([row], notes=[note])
    assert report.students[0].verdicts["vector_add"] == NOT_ATTEMPTED and report.not_attempted == {"vector_add": 1}


ODD_NAMES = {
    "non-UTF-8": b"jos\xe9",
    "control": "ctl\x1b[2Jred".encode(),
    "bidi": "evil\u202egnp.py".encode(),
    "spaces": "Zoë Smith".encode(),
}
"""Student folder names a file system allows, as bytes (made with bytes paths)."""


def odd_class(root: Path) -> Path:
    """A class whose student folders and files carry every kind of odd name, nbgrader's own
    files, and a leftover nbgrader_config.py."""
    class_dir = root / "class"
    class_dir.mkdir()
    for raw in ODD_NAMES.values():
        folder = os.path.join(os.fsencode(class_dir), raw)
        os.mkdir(folder)
        shutil.copy(SOLUTION, os.path.join(folder, b"vector_add.py"))
        with open(os.path.join(folder, b"notes-\xff\x1b[31m\xe2\x80\xae.txt"), "wb") as f:
            f.write(b"x")
        for nbgrader_file in (b"timestamp.txt", b"submission_secret.txt"):
            with open(os.path.join(folder, nbgrader_file), "wb") as f:
                f.write(b"2026-12-07 10:00:00")
    (class_dir / "nbgrader_config.py").write_text("c = get_config()\n")
    return class_dir


def test_any_name_a_file_system_allows_is_scanned_stored_and_read_back(tmp_path):
    """Do student folders and files named with non-UTF-8 bytes, control and bidirectional
    characters scan into tasks, go into the gradebook (rows, notes, files not graded) without
    an encoder's error, and read back as the same printable-or-escaped names; are nbgrader's
    own files no strays?"""
    from test_result import a_result

    from grader.classroom.run import keep_notes

    found = scan(odd_class(tmp_path))
    students = sorted({t.student for t in found.tasks})
    assert students == sorted(["jos\\udce9", "ctl\x1b[2Jred", "evil\u202egnp.py", "Zoë Smith"])
    assert all(t.source == SOLUTION.read_bytes() for t in found.tasks)
    assert {name for _, name, _ in found.strays} == {"notes-\\udcff\x1b[31m\u202e.txt"}
    book = Gradebook(tmp_path / "gradebook.sqlite")
    keep_notes(book, found.tasks, {(s, n): why for s, n, why in found.strays}, "")
    for task in found.tasks:
        book.record(task.student, task.exercise, task.sha256, a_result("passed"), seed=1)
    book.record("raw\udcff", "vector_add", None, None)  # what a caller that never cleaned a name passes
    book.set_notes("not_graded", {("raw\udcff", "vector_add"): "why \udcfe"})
    assert sorted({r.student for r in book.rows()}) == sorted([*students, "raw\\udcff"])
    assert {n["text"] for n in book.notes() if n["student"] == "raw\\udcff"} == {"why \\udcfe"}
    assert book.row("raw\udcff", "vector_add").verdict == NOT_SUBMITTED
    assert not [t for t in found.tasks if t.note], "every hand-in was read"


def test_a_name_that_escapes_into_another_folders_name_is_refused(tmp_path):
    """Two folders that read alike once made printable (`jos\\udce9` and the bytes jos\\xe9)
    are never merged into one student: the undecodable one is refused, saying why."""
    (tmp_path / "jos\\udce9").mkdir()
    shutil.copy(SOLUTION, tmp_path / "jos\\udce9" / "vector_add.py")
    os.mkdir(os.path.join(os.fsencode(tmp_path), b"jos\xe9"))
    found = scan(tmp_path)
    assert [t.student for t in found.tasks] == ["jos\\udce9"]
    ((name, why),) = found.not_students
    assert name == "jos\\udce9" and "another folder's name" in why


def test_a_linked_student_folder_is_no_student_and_says_whose_it_is(tmp_path):
    """Is a student folder that is a link to another student's listed as no student, naming
    that student (a copy?), while a link elsewhere is named without its target; and does the
    report keep both out of its students?"""
    from grader.classroom.gradebook import NOT_A_STUDENT
    from grader.report.data import analyse
    from test_result import a_result

    (tmp_path / "ann").mkdir()
    shutil.copy(SOLUTION, tmp_path / "ann" / "vector_add.py")
    (tmp_path / "ann-copy").symlink_to("ann")
    (tmp_path / "abs-copy").symlink_to(tmp_path / "ann" / ".")
    (tmp_path / "out").symlink_to("/etc")
    found = scan(tmp_path)
    assert [t.student for t in found.tasks] == ["ann"]
    said = dict(found.not_students)
    assert said["ann-copy"].startswith("ann-copy is a symbolic link to ann's folder") and "a copy?" in said["ann-copy"]
    assert "ann's folder" in said["abs-copy"]
    assert "outside the student folders" in said["out"] and "/etc" not in said["out"]
    book = Gradebook(tmp_path / "gradebook.sqlite")
    book.record("ann", "vector_add", "sha", a_result("passed"))
    book.replace_notes(NOT_A_STUDENT, {(name, ""): why for name, why in found.not_students})
    report = analyse(book.rows(), notes=book.notes())
    assert [s.name for s in report.students] == ["ann"]
    assert [name for name, _ in report.not_students] == ["abs-copy", "ann-copy", "out"]
    book.replace_notes(NOT_A_STUDENT, {})
    assert analyse(book.rows(), notes=book.notes()).not_students == ()
