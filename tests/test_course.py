"""The nbgrader course: built from the curriculum, released through the exchange, submitted by
a class of 40-odd fake learners (solutions, starters, every wrong and cheating vector_add
submission we keep, a missing and a broken notebook, an edited and a deleted autograder cell, a
deleted exercise cell, an endless kernel), autograded by nbgrader (a subset) and by `zerogpu
grade` (everyone, killed mid-run and restarted), and exported; feedback shows our summaries but
not the hidden autograder code."""

from __future__ import annotations

import csv
import html
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from grader.course.build import answer_source, plan, released_source
from grader.course.grade_cell import MIME
from grader.course.scores import part_scores, speed_status
from grader.exercises import LADDER, ROOT, exercise
from grader.classroom.gradebook import NOT_SUBMITTED
from grader.course.solution_regions import STUB, annotate, released, without_markers
from grader.result import CheckResult

ASSIGNMENT = "warmup"
NB = {"thread_ids": "01-first-kernel-thread-ids", "vector_add": "02-vector-add-launch-and-timing"}
CLASS_SIZE = 32
"""Students in the class (a real class's size: the gradebook, the kill mid-run, the export)."""
CASE_TIMEOUT = "10"
"""Seconds per case: endless kernels stop soon, and the others finish on a busy 2-core host."""
SPIN = '''from numba import cuda


@cuda.jit
def spin(c):
    i = 0
    while i >= 0:
        i = (i + 1) % 7


def launch(a, b, c):
    spin[1, 1](c)
'''


def expected_verdict(path: Path) -> str:
    return re.search(r"# expect: (\w+)", path.read_text()).group(1)


def the_class() -> dict:
    """student -> {exercise: (what they hand in, expected verdict)}, plus a `tweak`."""
    sol = {e: ("solution", "passed") for e in NB}
    people = {
        "ada": dict(sol),
        "cy": {e: ("released", "unwritten_output") for e in NB},
        "dee": {e: ("starter", "unwritten_output") for e in NB},
        "gap": {"thread_ids": ("solution", "passed"), "vector_add": ("missing", NOT_SUBMITTED)},
        "jam": {"thread_ids": ("solution", "passed"), "vector_add": ("broken", NOT_SUBMITTED)},
        "cut": {"thread_ids": ("solution", "passed"), "vector_add": ("no exercise cell", NOT_SUBMITTED)},
        "spin": {"thread_ids": ("missing", NOT_SUBMITTED), "vector_add": (SPIN, "timeout")},
        # Claims full points in its (locked) correctness cell; the starter is graded anyway.
        "edit": {
            "thread_ids": ("missing", NOT_SUBMITTED),
            "vector_add": ("starter", "unwritten_output"),
            "tweak": "edit vector_add_correctness",
        },
        "del": {
            "thread_ids": ("solution", "passed"),
            "vector_add": ("missing", NOT_SUBMITTED),
            "tweak": "delete thread_ids autograder cells",
        },
    }
    wrong = {e: sorted((ROOT / "tests" / "submissions" / e).glob("*.py")) for e in NB}
    for k, (t, v) in enumerate(zip(wrong["thread_ids"], wrong["vector_add"])):
        people[f"wrong{k}"] = {"thread_ids": (t, expected_verdict(t)), "vector_add": (v, expected_verdict(v))}
    cheats = [
        p
        for p in sorted((ROOT / "tests" / "cheats").glob("*.py"))
        if p.read_text().startswith("# exercise: vector_add")
    ]
    # Cheats fill the class up to CLASS_SIZE, spread over the corpus (each is graded on its own,
    # file by file, in tests/test_cheats.py): a class's size, not the corpus's, sets this test's time.
    room = max(0, CLASS_SIZE - len(people))
    for path in cheats[:: max(1, len(cheats) // max(room, 1))][:room]:
        people[f"cheat_{path.stem}"] = {
            "thread_ids": ("missing", NOT_SUBMITTED),
            "vector_add": (path, expected_verdict(path)),
        }
    return people


CLASS = the_class()
AUTOGRADED = ["ada", "del", "edit", "spin"]
"""The subset `nbgrader autograde` grades (every student goes through `zerogpu grade`)."""


def cell_of(nb, grade_id):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def hand_in(release: Path, folder: Path, work: dict) -> None:
    """Write one student's notebooks, as `nbgrader collect` would leave them."""
    folder.mkdir(parents=True, exist_ok=True)
    for exercise_id, notebook in NB.items():
        what = work[exercise_id][0]
        target = folder / f"{notebook}.ipynb"
        if what == "missing":
            continue
        if what == "broken":
            target.write_text('{"cells": [ this is not JSON')
            continue
        nb = nbformat.read(release / f"{notebook}.ipynb", as_version=4)
        cell = cell_of(nb, exercise_id)
        if what == "no exercise cell":
            nb.cells.remove(cell)
        elif what in ("solution", "starter"):
            cell.source = (
                ROOT / ("solutions" if what == "solution" else "exercises") / f"{exercise_id}.py"
            ).read_text()
        elif isinstance(what, Path):
            cell.source = what.read_text()
        elif what != "released":
            cell.source = what
        tweak = work.get("tweak", "")
        if tweak == f"edit {exercise_id}_correctness":
            cell_of(nb, f"{exercise_id}_correctness").source = "10  # full marks, please"
        if tweak == f"delete {exercise_id} autograder cells":
            nb.cells = [
                c
                for c in nb.cells
                if not c.metadata.get("nbgrader", {}).get("grade_id", "").startswith(f"{exercise_id}_")
            ]
        nbformat.write(nb, target)
    (folder / "timestamp.txt").write_text("2025-03-01 12:00:00.000000 UTC")


def run(args, cwd, env, timeout=300):
    # nbgrader runs `alembic` by name; the venv need not be activated (as under `make test`)
    env = {**env, "PATH": os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])}
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{args}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def nbgrader(*args, cwd, env, timeout=300):
    return run([sys.executable, "-m", "nbgrader", *args], cwd, env, timeout)


def zerogpu(*args):
    return [sys.executable, "-m", "grader.cli", *args]


def our_rows(db: Path) -> dict:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT student, exercise, verdict, result_json, graded_at FROM results").fetchall()
    return {(s, e): (v, CheckResult.from_stored(json.loads(r) if r else None), t) for s, e, v, r, t in rows}


def nbgrader_grades(course: Path) -> dict:
    """(student, grade id) -> (auto_score, needs_manual_grade), straight from nbgrader's API."""
    from nbgrader.api import Gradebook

    found = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "zero-to-gpu") as gb:
        for submission in gb.assignment_submissions(ASSIGNMENT):
            for nb in submission.notebooks:
                for grade in nb.grades:
                    found[submission.student.id, grade.name] = (grade.auto_score, grade.needs_manual_grade)
    return found


def points(result: CheckResult | None, exercise_id: str) -> float:
    return part_scores(result, exercise(exercise_id).spec)["correctness"].points


@pytest.fixture
def env(tmp_path):
    return {
        **os.environ,
        "ZEROGPU_SECRET": "course-secret",
        "ZEROGPU_CASE_TIMEOUT": CASE_TIMEOUT,
        "ZEROGPU_BACKEND": "simulator",
    }


@pytest.mark.slow
def test_a_class_is_released_graded_restarted_and_exported(tmp_path, env):
    timings = {}
    course = tmp_path / "course"
    started = time.perf_counter()
    run(zerogpu("course", "init", str(course), "--assignments", f"{ASSIGNMENT}=thread_ids,vector_add"), ROOT, env)
    nbgrader("generate_assignment", ASSIGNMENT, cwd=course, env=env)
    release = course / "release" / ASSIGNMENT
    for exercise_id, notebook in NB.items():
        nb = nbformat.read(release / f"{notebook}.ipynb", as_version=4)
        text = nbformat.writes(nb)
        assert "grade_cell" not in text and "course-secret" not in text and "BEGIN SOLUTION" not in text
        assert cell_of(nb, exercise_id).source == released_source(answer_source(exercise_id))
    timings["init + generate_assignment"] = time.perf_counter() - started

    # Ben goes the learners' way: fetch from the exchange, work, submit; the instructor collects.
    started = time.perf_counter()
    nbgrader("release_assignment", ASSIGNMENT, cwd=course, env=env)
    learner = tmp_path / "ben"
    learner.mkdir()
    shutil.copy(course / "learner_nbgrader_config.py", learner / "nbgrader_config.py")
    learner_env = {**env, "HOME": str(tmp_path / "ben-home")}
    nbgrader("fetch_assignment", ASSIGNMENT, cwd=learner, env=learner_env)
    for exercise_id, notebook in NB.items():
        path = learner / ASSIGNMENT / f"{notebook}.ipynb"
        nb = nbformat.read(path, as_version=4)
        cell_of(nb, exercise_id).source = (ROOT / "solutions" / f"{exercise_id}.py").read_text()
        nbformat.write(nb, path)
    nbgrader("submit", ASSIGNMENT, "--student", "ben", cwd=learner, env=learner_env)
    nbgrader("collect", ASSIGNMENT, cwd=course, env=env)
    assert (course / "submitted" / "ben" / ASSIGNMENT / f"{NB['vector_add']}.ipynb").is_file()
    timings["release, fetch, submit, collect"] = time.perf_counter() - started
    everyone = {"ben": {e: ("solution", "passed") for e in NB}, **CLASS}
    for student, work in CLASS.items():
        hand_in(release, course / "submitted" / student / ASSIGNMENT, work)
    assert len(everyone) >= 30

    # nbgrader's own autograde, on a subset.
    started = time.perf_counter()
    others = ",".join(s for s in everyone if s not in AUTOGRADED)
    log = nbgrader("autograde", ASSIGNMENT, f"--CourseDirectory.student_id_exclude={others}", cwd=course, env=env)
    timings[f"nbgrader autograde, {len(AUTOGRADED)} students"] = time.perf_counter() - started
    # Honest hand-ins log no checksum warning (their autograder cells arrive without the hidden
    # line, which RestoreHiddenTests puts back); the edited cell is still warned about.
    assert re.findall(r"Attribute 'checksum' for cell (\w+) has changed", log.stderr) == ["vector_add_correctness"]
    assert re.findall(r"Missing grade cell (\w+)", log.stderr) == ["thread_ids_correctness", "thread_ids_speed"]
    book = course / "gradebook.sqlite"
    after_autograde = our_rows(book)
    grades = nbgrader_grades(course)
    for student in AUTOGRADED:
        for exercise_id in NB:
            verdict = CLASS[student][exercise_id][1]
            score, _ = grades[student, f"{exercise_id}_correctness"]
            speed, flagged = grades[student, f"{exercise_id}_speed"]
            assert score == (10.0 if verdict == "passed" else 0.0), (student, exercise_id, score)
            assert speed == 0.0 and flagged == (verdict == "passed"), (student, exercise_id, flagged)
            if verdict != NOT_SUBMITTED:
                assert after_autograde[student, exercise_id][0] == verdict, (student, exercise_id)
    autograded = course / "autograded"
    edited = nbformat.read(autograded / "edit" / ASSIGNMENT / f"{NB['vector_add']}.ipynb", as_version=4)
    assert "grade_cell(" in cell_of(edited, "vector_add_correctness").source, "the locked cell was restored"
    restored = nbformat.read(autograded / "del" / ASSIGNMENT / f"{NB['thread_ids']}.ipynb", as_version=4)
    assert "grade_cell(" in cell_of(restored, "thread_ids_speed").source, "the deleted cell was added back"
    assert_feedback_hides_the_autograder_code(course, env)

    # zerogpu grade on everyone: killed mid-run, then restarted.
    started = time.perf_counter()
    command = zerogpu("grade", str(course), ASSIGNMENT, "--workers", "2", "--timeout", CASE_TIMEOUT)
    proc = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(our_rows(book)) < len(after_autograde) + 6:
        assert proc.poll() is None, proc.stdout.read().decode()[-3000:]  # died instead of grading
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)  # the grader and its children, mid-run
    proc.wait()
    before = our_rows(book)
    total = 2 * len(everyone)
    assert len(after_autograde) + 6 <= len(before) < total, "the kill should land mid-run"
    output = run(command, ROOT, env, timeout=600).stdout
    timings["zerogpu grade, everyone (with the kill)"] = time.perf_counter() - started
    assert f"{ASSIGNMENT}: no GPU here, so speed was not graded: nbgrader's max score of 26 counts 6 speed" in output
    rows = our_rows(book)
    assert len(rows) == total, output
    for key, (verdict, _, graded_at) in before.items():
        assert rows[key][2] == graded_at, f"{key} was graded again"
    for student, work in everyone.items():
        for exercise_id in NB:
            assert rows[student, exercise_id][0] == work[exercise_id][1], (student, exercise_id, output)

    # nbgrader's gradebook holds every score; export sees them.
    grades = nbgrader_grades(course)
    for student in everyone:
        for exercise_id in NB:
            verdict, result, _ = rows[student, exercise_id]
            score, _ = grades[student, f"{exercise_id}_correctness"]
            speed, flagged = grades[student, f"{exercise_id}_speed"]
            assert score == points(result, exercise_id), (student, exercise_id)
            assert (score == 10.0) == (verdict == "passed"), (student, exercise_id, score)
            assert speed == 0.0 and flagged == (verdict == "passed")
            assert speed_status(result) == ("not graded: no GPU" if verdict == "passed" else "not reached")
    # Autograde after `zerogpu grade` (for feedback) shows the stored results, grades nothing again.
    nbgrader("autograde", ASSIGNMENT, "--student", "wrong0", cwd=course, env=env)
    again, grades = our_rows(book), nbgrader_grades(course)
    for exercise_id in NB:
        assert again["wrong0", exercise_id][2] == rows["wrong0", exercise_id][2], "graded again"
        assert grades["wrong0", f"{exercise_id}_correctness"][0] == points(rows["wrong0", exercise_id][1], exercise_id)
    nbgrader("export", "--to", str(tmp_path / "grades.csv"), cwd=course, env=env)
    with open(tmp_path / "grades.csv") as fh:
        exported = {row["student_id"]: row for row in csv.DictReader(fh) if row["assignment"] == ASSIGNMENT}
    assert set(exported) == set(everyone)
    for student in everyone:
        want = sum(points(rows[student, e][1], e) for e in NB)
        assert float(exported[student]["score"]) == pytest.approx(want), student
        assert float(exported[student]["max_score"]) == 26.0
    assert float(exported["ada"]["score"]) == 20.0 and float(exported["cy"]["score"]) == 0.0
    assert_the_report_names_what_was_not_graded(course, env)
    started = time.perf_counter()
    assert_regraded_feedback_says_it_is_out_of_date(course, env, command)
    timings["feedback out of date, refreshed"] = time.perf_counter() - started
    print("\n".join(f"{name}: {seconds:.1f} s" for name, seconds in timings.items()))


def assert_the_report_names_what_was_not_graded(course: Path, env: dict) -> None:
    """Does `zerogpu report` list, with the reason, the notebook that is not JSON, the deleted
    exercise cell and the edited or deleted autograder cells (and not a plain missing notebook)?"""
    from grader.classroom.gradebook import Gradebook
    from grader.report.data import analyse

    run(zerogpu("report", str(course)), ROOT, env)
    book = Gradebook(course / "gradebook.sqlite")
    report = analyse(book.rows(), notes=book.notes())
    not_graded = {(s, e): why for s, e, why in report.not_graded}
    assert set(not_graded) == {("jam", "vector_add"), ("cut", "vector_add")}, not_graded
    assert "is not valid JSON" in not_graded["jam", "vector_add"]
    assert "has no exercise cell for vector_add" in not_graded["cut", "vector_add"]
    assert set(report.edited_cells) == {
        ("edit", "vector_add", "vector_add_correctness edited"),
        ("del", "thread_ids", "thread_ids_correctness deleted; thread_ids_speed deleted"),
    }
    untouched = {s.name for s in report.students if s.verdicts.get("thread_ids") == "not_attempted"}
    assert untouched == {"cy", "dee"}, "the released cell and the starter file alike"
    page = (course / "report" / "report.html").read_text()
    assert "Could not be graded (2)" in page and "Autograder cells edited or deleted (2)" in page


def assert_regraded_feedback_says_it_is_out_of_date(course: Path, env: dict, command: list) -> None:
    """When `zerogpu grade` grades a hand-in again after its feedback was made, does the feedback
    say it is out of date and name the commands that refresh it, until they have run?"""
    notebook = NB["vector_add"]
    page = course / "feedback" / "edit" / ASSIGNMENT / f"{notebook}.html"
    assert "Correctness: 0 / 10 points" in page.read_text() and "Out of date" not in page.read_text()
    submitted = course / "submitted" / "edit" / ASSIGNMENT / f"{notebook}.ipynb"
    nb = nbformat.read(submitted, as_version=4)
    cell_of(nb, "vector_add").source = (ROOT / "solutions" / "vector_add.py").read_text()
    nbformat.write(nb, submitted)
    output = run(command, ROOT, env).stdout
    refresh = f"nbgrader autograde {ASSIGNMENT} --student edit --force && nbgrader generate_feedback"
    assert "the feedback of 1 student(s) (edit) shows results graded again" in output and refresh in output
    assert "Out of date:</b> vector_add was graded again" in page.read_text()
    assert refresh in html.unescape(page.read_text())
    assert "Out of date" not in (course / "feedback" / "ada" / ASSIGNMENT / f"{notebook}.html").read_text()
    nbgrader("generate_feedback", ASSIGNMENT, "--student", "edit", "--force", cwd=course, env=env)
    assert "Out of date:</strong> vector_add was graded again" in page.read_text(), "made from stale results"
    nbgrader("autograde", ASSIGNMENT, "--student", "edit", "--force", cwd=course, env=env)
    nbgrader("generate_feedback", ASSIGNMENT, "--student", "edit", "--force", cwd=course, env=env)
    text = page.read_text()
    assert "Out of date" not in text and "Correctness: 10 / 10 points (passed)." in text
    run(zerogpu("report", str(course)), ROOT, env)
    assert "Feedback out of date" not in (course / "report" / "report.html").read_text()


def assert_feedback_hides_the_autograder_code(course: Path, env: dict) -> None:
    """Is the autograder cells' hidden line absent from the feedback, while our summary is
    there? (nbgrader shows hidden tests in feedback by default: issues #917, #1363.)"""
    nbgrader("generate_feedback", ASSIGNMENT, cwd=course, env=env)
    notebook = NB["thread_ids"]
    autograded = (course / "autograded" / "ada" / ASSIGNMENT / f"{notebook}.ipynb").read_text()
    assert 'grade_cell(\\"thread_ids\\", \\"correctness\\")' in autograded  # there for the instructor
    for student in AUTOGRADED:
        for page in (course / "feedback" / student / ASSIGNMENT).glob("*.html"):
            text = page.read_text()
            assert "Autograder: correctness of" in text and "points" in text, page
            for hidden in ("grade_cell", "nbgrader_cells", "HIDDEN TESTS", "course-secret"):
                assert hidden not in text, (page, hidden)
    page = (course / "feedback" / "ada" / ASSIGNMENT / f"{notebook}.html").read_text()
    assert "Correctness: 10 / 10 points (passed)." in page
    assert "Speed not graded" in page and "needs manual grade" in page
    page = (course / "feedback" / "edit" / ASSIGNMENT / f"{NB['vector_add']}.html").read_text()
    assert "Correctness: 0 / 10 points (unwritten output)." in page


# -- the pieces, without nbgrader ---------------------------------------------------------------


@pytest.mark.parametrize("exercise_id", LADDER)
def test_released_cell_is_the_starter_with_stubs(exercise_id):
    """Does the released exercise cell compile, keep every TODO line of the starter, and hide
    every line the solution adds?"""
    starter = exercise(exercise_id).starter_file.read_text()
    solution = exercise(exercise_id).solution_file.read_text()
    source = answer_source(exercise_id)
    cell = released_source(source)
    assert cell == released(source)
    compile(cell, exercise_id, "exec")
    assert STUB in cell
    todos = [line.strip() for line in starter.splitlines() if "TODO" in line]
    assert all(todo in cell for todo in todos)
    added = {line.strip() for line in solution.splitlines()} - {line.strip() for line in starter.splitlines()}
    code = [line for line in added if line and not line.startswith("#")]
    assert not any(line in {text.strip() for text in cell.splitlines()} for line in code)


def test_regions_keep_safe_starter_lines_and_comment_the_rest():
    starter = "def f(out):\n    n = 1  # TODO: more\n    out[0] = 0  # TODO: all\n    g(n)\n"
    solution = "def f(out):\n    n = 2\n    for i in range(n):\n        out[i] = 1\n    g(n)\n"
    annotated = annotate(starter, solution)
    assert "    n = 1  # TODO: more\n    # out[0] = 0  # TODO: all\n    ### BEGIN SOLUTION\n" in annotated
    assert (
        released(annotated) == "def f(out):\n    n = 1  # TODO: more\n    # out[0] = 0  # TODO: all\n"
        "    pass  # YOUR CODE HERE\n    g(n)\n"
    )
    compile(without_markers(annotated), "instructor", "exec")


@pytest.mark.parametrize("exercise_id", ["thread_ids", "vector_add"])
def test_instructors_cell_passes(exercise_id, tmp_path):
    from grader.checking.check import check_file

    path = tmp_path / f"{exercise_id}.py"
    path.write_text(answer_source(exercise_id))
    assert check_file(exercise_id, path, case_timeout=30).passed


def test_assignment_plans():
    default = plan()
    assert [a.exercises for a in default][:2] == [("thread_ids",), ("vector_add",)]
    assert plan(["hw1=vector_add,01"])[0].exercises == ("thread_ids", "vector_add")
    assert plan(["02"])[0].name == NB["vector_add"]
    with pytest.raises(ValueError, match="two assignments"):
        plan(["a=thread_ids", "b=01"])
    with pytest.raises(ValueError, match="neither"):
        plan(["a=warp_shuffle"])


def stored(fields: dict) -> CheckResult:
    """A result read back from what a gradebook stores, with `fields` over a plain one."""
    plain = {"exercise": "vector_add", "title": "", "message": "", "hint": "", "cases": [], "seed": None}
    return CheckResult.from_dict(plain | fields)


def test_speed_is_not_graded_without_a_gpu_and_scored_on_one():
    spec = exercise("vector_add").spec
    base = {
        "passed": True,
        "verdict": "passed",
        "score": 10.0,
        "max_score": 10.0,
        "backend": "simulator",
        "speed": {"measured": False, "reason": "not measured: no GPU", "details": {}},
    }
    scores = part_scores(stored(base), spec)
    assert scores["correctness"].points == 10.0 and not scores["speed"].graded
    assert "needs manual grade" in scores["speed"].note
    gpu = {
        **base,
        "backend": "gpu",
        "score": 12.0,
        "max_score": 13.0,
        "speed": {"measured": True, "details": {"points": 2, "max_points": 3, "summary": "Speed: fast."}},
    }
    scores = part_scores(stored(gpu), spec)
    assert (scores["correctness"].points, scores["speed"].points, scores["speed"].graded) == (10.0, 2.0, True)
    slow = stored({**gpu, "passed": False, "verdict": "too_slow", "score": 10.0})
    assert part_scores(slow, spec)["speed"].points == 0.0 and part_scores(slow, spec)["correctness"].points == 10.0
    assert part_scores(None, spec)["correctness"].points == 0.0


def test_a_course_graded_without_a_gpu_names_the_speed_points_nobody_could_earn():
    """Does a run without a GPU name, per assignment, the speed points in nbgrader's max score
    (not scaled away), and say nothing for an assignment without speed points?"""
    from grader.course.grade_course import ungraded_speed

    assert ungraded_speed({"warmup": ["thread_ids", "vector_add"], "none": []}) == [("warmup", 6, 26)]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("cells", "preprocessors"),
    [
        pytest.param(
            "grader.nbgrader_cells", "grader.nbgrader_plugins", marks=pytest.mark.thorough, id="before the relayout"
        ),
        pytest.param(
            "grader.course.cells", "grader.course.plugins", marks=pytest.mark.thorough, id="before the renames"
        ),
    ],
)
def test_a_course_made_before_still_autogrades(tmp_path, env, cells, preprocessors):
    """Does a course folder whose notebooks and nbgrader config name an older generation's
    import paths still autograde through nbgrader?"""
    course = tmp_path / "course"
    run(zerogpu("course", "init", str(course), "--assignments", f"{ASSIGNMENT}=thread_ids"), ROOT, env)
    old_names = {"grader.course.grade_cell": cells, "grader.course.preprocessors": preprocessors}
    for path in [course / "nbgrader_config.py", *course.rglob("*.ipynb")]:
        text = path.read_text()
        for new, old in old_names.items():
            text = text.replace(new, old)
        path.write_text(text)
    assert f"from {cells} import" in (course / "source" / ASSIGNMENT / f"{NB['thread_ids']}.ipynb").read_text()
    assert f"{preprocessors}.ExecuteAutograderCells" in (course / "nbgrader_config.py").read_text()
    nbgrader("generate_assignment", ASSIGNMENT, cwd=course, env=env)
    folder = course / "submitted" / "ada" / ASSIGNMENT
    folder.mkdir(parents=True)
    nb = nbformat.read(course / "release" / ASSIGNMENT / f"{NB['thread_ids']}.ipynb", as_version=4)
    cell_of(nb, "thread_ids").source = (ROOT / "solutions" / "thread_ids.py").read_text()
    nbformat.write(nb, folder / f"{NB['thread_ids']}.ipynb")
    nbgrader("autograde", ASSIGNMENT, "--student", "ada", cwd=course, env=env)
    grades = nbgrader_grades(course)
    correctness = [
        score for (student, name), (score, _) in grades.items() if student == "ada" and "correctness" in name
    ]
    assert correctness and correctness[0] > 0


def autograded_outputs(course: Path) -> dict:
    """(student, notebook, grade id) -> the summaries' markers and the value an autograder cell output."""
    found = {}
    for path in sorted((course / "autograded").rglob("*.ipynb")):
        student = path.relative_to(course / "autograded").parts[0]
        for cell in nbformat.read(path, as_version=4).cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
            if grade_id.endswith(("_correctness", "_speed")):
                shown = [  # the result's digest left out: two gradings differ in their timings
                    {k: v for k, v in o["data"][MIME].items() if k != "result"}
                    for o in cell.outputs
                    if MIME in o.get("data", {})
                ]
                value = [o["data"]["text/plain"] for o in cell.outputs if o.output_type == "execute_result"]
                found[student, path.stem, grade_id] = (shown, value)
    return found


@pytest.mark.slow
def test_autograde_without_kernels_gives_what_the_kernels_gave(tmp_path, env):
    """Does nbgrader autograde with ExecuteAutograderCells (no Jupyter kernel: none can start
    here) record the grades and show the summaries that nbgrader's Execute, running our cells
    in kernels, gives, for results stored by `zerogpu grade` and for ones it grades itself?"""
    # One course made and handed in, then copied: the two differ only in how autograde runs.
    made = tmp_path / "made"
    run(zerogpu("course", "init", str(made), "--assignments", f"{ASSIGNMENT}=thread_ids"), ROOT, env)
    nbgrader("generate_assignment", ASSIGNMENT, cwd=made, env=env)
    work = {
        "ada": {"thread_ids": ("solution", None), "vector_add": ("missing", None)},
        "dee": {
            "thread_ids": (ROOT / "tests/submissions/thread_ids/fixed_grid.py", None),
            "vector_add": ("missing", None),
        },
    }
    for student, handed in work.items():  # ada's results stored by zerogpu grade; dee's graded by autograde
        hand_in(made / "release" / ASSIGNMENT, made / "submitted" / student / ASSIGNMENT, handed)
        if student == "ada":
            run(zerogpu("grade", str(made), ASSIGNMENT, "--workers", "2", "--timeout", CASE_TIMEOUT), ROOT, env)
    courses = {}
    for how in ("kernels", "no kernels"):
        course = courses[how] = tmp_path / how.replace(" ", "-")
        shutil.copytree(made, course)
        config = course / "nbgrader_config.py"
        if how == "kernels":
            config.write_text(
                config.read_text().replace(
                    '"grader.course.preprocessors.ExecuteAutograderCells"', '"nbgrader.preprocessors.Execute"'
                )
            )
        if how == "no kernels":  # a Jupyter kernel started here would die at once
            blocker = tmp_path / "no-kernel"
            blocker.mkdir(exist_ok=True)
            (blocker / "ipykernel_launcher.py").write_text('raise SystemExit("no kernel may start here")\n')
            pythonpath = os.pathsep.join(p for p in (str(blocker), env.get("PYTHONPATH", "")) if p)
            nbgrader("autograde", ASSIGNMENT, cwd=course, env={**env, "PYTHONPATH": pythonpath})
        else:
            nbgrader("autograde", ASSIGNMENT, cwd=course, env=env)
    assert nbgrader_grades(courses["kernels"]) == nbgrader_grades(courses["no kernels"])
    shown = {how: autograded_outputs(course) for how, course in courses.items()}
    assert shown["kernels"] == shown["no kernels"] and len(shown["kernels"]) == 4
    correctness = {k[0]: v[1][0] for k, v in shown["kernels"].items() if k[2].endswith("correctness")}
    assert correctness["ada"] == "10.0" and 0 < float(correctness["dee"]) < 10, correctness


@pytest.mark.slow
def test_all_or_nothing_gives_no_points_for_the_cases_a_kernel_happens_to_pass(tmp_path, env):
    """With `c.ZeroGPU.partial_credit = "all_or_nothing"`, does a kernel that passes 4 of 7 cases
    (a fixed grid: right on the small cases only) earn 0 in nbgrader's gradebook, in autograded
    feedback and in the class report, where "per_case" gives it 4/7 of the points; and is any
    other value refused, naming the choices?"""
    course = tmp_path / "course"
    run(zerogpu("course", "init", str(course), "--assignments", f"{ASSIGNMENT}=thread_ids"), ROOT, env)
    config = course / "nbgrader_config.py"
    assert 'c.ZeroGPU.partial_credit = "per_case"' in config.read_text(), "the default, written down"
    config.write_text(config.read_text().replace('"per_case"', '"all_or_nothing"'))
    nbgrader("generate_assignment", ASSIGNMENT, cwd=course, env=env)
    release = course / "release" / ASSIGNMENT
    work = {"ada": ROOT / "solutions" / "thread_ids.py", "fix": ROOT / "tests/submissions/thread_ids/fixed_grid.py"}
    for student, source in work.items():
        hand_in(
            release,
            course / "submitted" / student / ASSIGNMENT,
            {"thread_ids": (source, None), "vector_add": ("missing", None)},
        )
    grade = zerogpu("grade", str(course), ASSIGNMENT, "--workers", "2", "--timeout", CASE_TIMEOUT)
    run(grade, ROOT, env)
    correctness = {s: nbgrader_grades(course)[s, "thread_ids_correctness"][0] for s in work}
    assert correctness == {"ada": 10.0, "fix": 0.0}
    nbgrader("autograde", ASSIGNMENT, "--student", "fix", cwd=course, env=env)  # in nbgrader's kernel too
    assert nbgrader_grades(course)["fix", "thread_ids_correctness"][0] == 0.0
    autograded = (course / "autograded" / "fix" / ASSIGNMENT / f"{NB['thread_ids']}.ipynb").read_text()
    assert "(unwritten output; all or nothing: 4 of 7 cases passed)" in autograded
    run(zerogpu("report", str(course)), ROOT, env)
    with open(course / "report" / "students.csv") as fh:
        percent = {row["student"]: row["percent"] for row in csv.DictReader(fh)}
    assert percent == {"ada": "100.0", "fix": "0.0"}
    assert "all or nothing" in (course / "report" / "report.html").read_text()

    config.write_text(config.read_text().replace('"all_or_nothing"', '"per_case"'))
    run(grade, ROOT, env)  # nothing graded again: the points are rewritten from the stored results
    assert nbgrader_grades(course)["fix", "thread_ids_correctness"][0] == pytest.approx(5.71)
    config.write_text(config.read_text().replace('"per_case"', '"some"'))
    refused = subprocess.run(grade, cwd=ROOT, env=env, capture_output=True, text=True)
    assert refused.returncode == 2 and "'per_case', 'all_or_nothing'" in refused.stderr


def test_autograded_cell_names_the_line_in_the_learners_cell(tmp_path, monkeypatch):
    """The hidden grader cell grades the exercise cell's text as a file of its own: a line in
    the verdict is the learner's line in that cell, below the exercise's docstring."""
    from grader.course import grade_cell as cells

    source = (
        (ROOT / "exercises" / "saxpy.py")
        .read_text()
        .replace(
            "    if i < out.size:\n        out[i] = x[i]  # TODO: out[i] = alpha * x[i] + y[i]\n",
            "    for k in range(i, out.size + 1, cuda.gridsize(1)):  # one step too far\n"
            "        out[k] = alpha * x[k] + y[k]\n",
        )
    )
    line = next(n for n, text in enumerate(source.splitlines(), 1) if "out[k] = alpha" in text)
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = {"grade_id": "saxpy", "solution": True, "grade": False, "locked": False}
    nb.cells = [nbformat.v4.new_markdown_cell("# SAXPY"), cell]
    nbformat.write(nb, tmp_path / "03-saxpy.ipynb")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ZEROGPU_CASE_TIMEOUT", CASE_TIMEOUT)
    _, result = cells._scores("saxpy")
    assert line > 25 and result.verdict == "out_of_bounds"
    assert f"(line {line}: out[k] = alpha * x[k] + y[k])" in result.message, result.message


@pytest.mark.slow
def test_hand_ins_of_a_course_are_read_as_regular_files_and_nbgraders_files_are_no_hand_ins(tmp_path, env):
    """Under submitted/: a notebook linked to another student's, a student folder linked to
    /etc, an assignment folder linked to another student's are refused and named, never read;
    nbgrader's own timestamp.txt, submission_secret.txt and checkpoints are no "files not
    graded"; a notebook handed in as released counts as not attempted."""
    from grader.course.submissions import course_tasks, files_not_graded, load_course, students

    course = tmp_path / "course"
    run(zerogpu("course", "init", str(course), "--assignments", f"{ASSIGNMENT}=thread_ids"), ROOT, env)
    nbgrader("generate_assignment", ASSIGNMENT, cwd=course, env=env)
    notebook = f"{NB['thread_ids']}.ipynb"
    submitted = course / "submitted"
    for student in ("ada", "ben"):
        folder = submitted / student / ASSIGNMENT
        (folder / ".ipynb_checkpoints").mkdir(parents=True)
        shutil.copy(course / "release" / ASSIGNMENT / notebook, folder / notebook)  # as released
        (folder / "timestamp.txt").write_text("2025-03-01 12:00:00.000000 UTC")
        (folder / "submission_secret.txt").write_text("nbgrader's own")
        (folder / ".ipynb_checkpoints" / notebook).write_text("{}")
    (submitted / "ben" / ASSIGNMENT / notebook).unlink()
    (submitted / "ben" / ASSIGNMENT / notebook).symlink_to(submitted / "ada" / ASSIGNMENT / notebook)
    (submitted / "cat").symlink_to("/etc")
    (submitted / "dan").mkdir()
    (submitted / "dan" / ASSIGNMENT).symlink_to(submitted / "ada" / ASSIGNMENT)

    loaded = load_course(course)
    assert students(loaded, ASSIGNMENT) == ["ada", "ben"]
    tasks = {t.student: t for t in course_tasks(loaded, ASSIGNMENT)}
    assert sorted(tasks) == ["ada", "ben"]
    assert tasks["ada"].source is not None and tasks["ada"].untouched
    assert tasks["ben"].source is None
    assert (
        tasks["ben"].note
        == f"{notebook} is a symbolic link, which is never followed: not read (hand in the file itself)"
    )
    assert files_not_graded(loaded, ASSIGNMENT) == {
        ("cat", f"{ASSIGNMENT}/"): "cat is a symbolic link, which is never followed: nothing in it was read",
        ("dan", f"{ASSIGNMENT}/"): f"{ASSIGNMENT} is a symbolic link, which is never followed: nothing in it was read",
    }


@pytest.mark.parametrize("module", ["grader.course.grade_cell", "grader.course.cells", "grader.nbgrader_cells"])
def test_an_autograder_cell_is_ours_under_each_name_it_was_written_with(module):
    """Is an autograder cell recognised (so autograde needs no Jupyter kernel) whether its line
    names the module as courses are built now or as older courses named it?"""
    from grader.course.build import autograder_source, without_hidden_tests
    from grader.course.preprocessors import autograder_call

    source = autograder_source("vector_add", "speed", 2).replace("grader.course.grade_cell", module)
    assert autograder_call(source) == ("vector_add", "speed")
    assert autograder_call(without_hidden_tests(source)) is None  # the released cell, line gone
    assert autograder_call(source.replace(module, "grader.elsewhere")) is None


def test_the_old_import_paths_name_the_same_objects():
    """Do the names older course configs and notebooks import (grader.course.plugins,
    grader.course.cells, grader.nbgrader_*) give the very classes and functions of today's modules?"""
    import grader.course.cells
    import grader.course.plugins
    import grader.nbgrader_cells
    import grader.nbgrader_plugins
    from grader.course import grade_cell, preprocessors

    for old in (grader.course.plugins, grader.nbgrader_plugins):
        for name in ("RestoreHiddenTests", "RunOnlyAutograderCells", "ExecuteAutograderCells", "FlagUngradedSpeed"):
            assert getattr(old, name) is getattr(preprocessors, name)
        assert old.MarkStaleFeedback is preprocessors.MarkStaleFeedback
    for old in (grader.course.cells, grader.nbgrader_cells):
        assert old.grade_cell is grade_cell.grade_cell


def test_a_new_course_config_names_todays_modules_and_the_one_limit(tmp_path):
    """Does `zerogpu course init`'s nbgrader_config.py name grader.course.preprocessors (no
    shim) and default each case to settings.CASE_TIMEOUT?"""
    from grader.course.config import CONFIG, write_config
    from grader.settings import CASE_TIMEOUT

    write_config(tmp_path, "c", None)
    text = (tmp_path / CONFIG).read_text()
    assert "grader.course.preprocessors.ExecuteAutograderCells" in text and "grader.course.plugins" not in text
    assert f'setdefault("ZEROGPU_CASE_TIMEOUT", "{CASE_TIMEOUT:.0f}")' in text


@pytest.mark.parametrize("size", ["plain", "cut"])
def test_a_cells_result_is_the_same_fresh_and_read_back_from_the_gradebook(size, tmp_path):
    """Does an autograder cell show and fingerprint a result the same whether it graded it now or
    read it back from the gradebook (feedback compares the two), whatever its size (a result too
    long for the gradebook is stored shortened), and does a result stored before results were
    typed keep its fingerprint (feedback made then stays current)?"""
    import hashlib
    from dataclasses import replace

    from test_result import a_result

    from grader.classroom.gradebook import Gradebook
    from grader.course.grade_cell import as_stored, stored_result
    from grader.course.scores import result_digest
    from grader.result import MAX_JSON

    fresh = a_result("wrong_result")
    if size == "cut":
        fresh = replace(fresh, cases=fresh.cases * 1000)
        assert len(json.dumps(fresh.to_dict(), default=str)) > MAX_JSON and len(as_stored(fresh).cases) < 2000
    book = Gradebook(tmp_path / "gradebook.sqlite")
    book.record("ada", "vector_add", "sha", fresh)
    read_back = stored_result(book.path, "ada", "vector_add", "sha")
    assert isinstance(read_back, CheckResult) and read_back == as_stored(fresh)
    assert result_digest(read_back) == result_digest(as_stored(fresh))
    if size == "plain":
        before_types = json.dumps(json.loads(fresh.to_json()), sort_keys=True, default=str)
        assert result_digest(read_back) == hashlib.sha256(before_types.encode()).hexdigest()[:16]
    assert stored_result(book.path, "ada", "vector_add", "other sha") is None
    assert stored_result(book.path, "ada", "vector_add", "sha", backend="gpu") is None, "graded without a GPU"
