"""`zerogpu grade COURSE_DIR [ASSIGNMENT]`: grade an nbgrader course's submissions, fast.

For every student folder under COURSE/submitted/, each exercise cell of each notebook of the
assignment is written to COURSE/zerogpu/submissions/<assignment>/<student>/<id>.py and graded
by grader.classroom.grading.grade_class (parallel, graded mode, resumable: our gradebook,
COURSE/gradebook.sqlite, keeps one row per student and exercise). A missing or unreadable
notebook, or a deleted exercise cell, is "not submitted"; autograder cells are never read, so
editing or deleting them changes nothing. Then every score goes into nbgrader's gradebook (the course's
`CourseDirectory.db_url`, SQLite unless configured otherwise) for `nbgrader export` and
formgrader. That step is rebuilt from our gradebook each run, so a killed run loses nothing.
"""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

from grader.course.build import CourseError, extracted_path
from grader.course.config import CONFIG
from grader.course.scores import part_scores, test_cell_id
from grader.exercises import LADDER, exercise
from grader.course.cells import exercise_source


@dataclass(frozen=True)
class Course:
    root: Path
    course_id: str
    db_url: str
    coursedir: object
    """nbgrader's CourseDirectory, configured from the course's nbgrader_config.py."""

    @property
    def source(self) -> Path:
        return self.root / self.coursedir.source_directory

    def submitted(self, student: str = "", assignment: str = "") -> Path:
        return self.root / self.coursedir.submitted_directory / student / assignment


def load_course(course_dir: Path) -> Course:
    """The course's nbgrader settings, read the way nbgrader reads them."""
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    root = Path(course_dir).resolve()
    config = PyFileConfigLoader(CONFIG, path=str(root)).load_config()
    coursedir = CourseDirectory(config=config)
    coursedir.root = str(root)
    return Course(root, coursedir.course_id, coursedir.db_url, coursedir)


def _read_notebook(path: Path) -> dict | None:
    """A submitted notebook's JSON, or None when it is missing or unreadable."""
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return nb if isinstance(nb, dict) and isinstance(nb.get("cells"), list) else None


def layout(course: Course, assignment: str) -> dict[str, list[str]]:
    """Notebook name -> the exercise ids it grades, from the assignment's source notebooks."""
    found = {}
    for path in sorted((course.source / assignment).glob("*.ipynb")):
        nb = _read_notebook(path) or {"cells": []}
        ids = [
            c["metadata"]["nbgrader"]["grade_id"]
            for c in nb["cells"]
            if c.get("metadata", {}).get("nbgrader", {}).get("solution")
            and c["metadata"]["nbgrader"].get("grade_id") in LADDER
        ]
        if ids:
            found[path.stem] = ids
    return found


def assignments(course: Course) -> list[str]:
    if not course.source.is_dir():
        return []
    return sorted(p.name for p in course.source.iterdir() if p.is_dir() and layout(course, p.name))


def students(course: Course, assignment: str) -> list[str]:
    base = course.submitted()
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir() if not p.name.startswith(".") and (p / assignment).is_dir())


def _write_if_changed(path: Path, text: str) -> None:
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def course_tasks(course: Course, assignment: str, exercises=None):
    """One grader.classroom.grading.Task per student and exercise of the assignment."""
    from grader.classroom.grading import Task

    tasks, notebooks = [], layout(course, assignment)
    for student in students(course, assignment):
        for notebook, ids in notebooks.items():
            nb = _read_notebook(course.submitted(student, assignment) / f"{notebook}.ipynb")
            for exercise_id in ids:
                if exercises and exercise_id not in exercises:
                    continue
                source = exercise_source(nb, exercise_id) if nb else None
                if source is None:
                    tasks.append(Task(student, exercise_id, None))
                    continue
                path = extracted_path(course.root, assignment, student, exercise_id)
                _write_if_changed(path, source)
                tasks.append(Task(student, exercise_id, path))
    return tasks


def _timestamp(course: Course, student: str, assignment: str):
    try:
        return course.coursedir.get_existing_timestamp(str(course.submitted(student, assignment)))
    except Exception:  # noqa: BLE001 - nbgrader fails on a garbled timestamp.txt; keep going
        return None


def _comment(result: dict | None) -> str:
    if result is None:
        return "No response."
    return f"zerogpu: {result['verdict']} ({result['score']:g}/{result['max_score']:g}). {result['message']}"[:1000]


def check_released(course: Course, assignment: str) -> None:
    """nbgrader's gradebook must know the assignment (generate_assignment records it)."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(course.db_url, course.course_id) as gb:
        try:
            gb.find_assignment(assignment)
        except MissingEntry:
            raise CourseError(
                f"nbgrader's gradebook ({course.db_url}) has no assignment "
                f"{assignment!r}: run `nbgrader generate_assignment {assignment}` "
                "in the course folder first"
            ) from None


def sync_nbgrader(course: Course, assignment: str, rows: dict) -> int:
    """Write every student's autograder scores of the assignment into nbgrader's gradebook;
    returns how many grades were written. `rows`: (student, exercise) -> our gradebook row."""
    from nbgrader.api import Gradebook, MissingEntry

    written = 0
    notebooks = layout(course, assignment)
    with warnings.catch_warnings(), Gradebook(course.db_url, course.course_id) as gb:
        warnings.simplefilter("ignore")  # nbgrader's own SQLAlchemy warnings on new submissions
        for student in students(course, assignment):
            gb.update_or_create_student(student)
            stamp = _timestamp(course, student, assignment)
            gb.update_or_create_submission(assignment, student, **({"timestamp": stamp} if stamp else {}))
            for notebook, ids in notebooks.items():
                try:
                    submitted = gb.find_submission_notebook(notebook, assignment, student)
                except MissingEntry:
                    continue
                grades = {g.name: g for g in submitted.grades}
                comments = {c.name: c for c in submitted.comments}
                for exercise_id in ids:
                    row = rows.get((student, exercise_id))
                    result = row["result"] if row else None
                    for part, score in part_scores(result, exercise(exercise_id).spec).items():
                        grade = grades.get(test_cell_id(exercise_id, part))
                        if grade is None:
                            continue
                        grade.auto_score = score.points
                        grade.needs_manual_grade = grade.manual_score is not None or not score.graded
                        written += 1
                    if exercise_id in comments:
                        comments[exercise_id].auto_comment = _comment(result)
            gb.db.commit()  # one transaction per student
    return written


def regrade_for_speed(tasks, book) -> list:
    """On a GPU host: passing submissions graded without a GPU, whose speed was not graded."""
    from grader.classroom.grading import pending

    done = set(pending(tasks, book))
    no_gpu = {
        (r["student"], r["exercise"]) for r in book.rows() if r["backend"] == "simulator" and r["verdict"] == "passed"
    }
    return [t for t in tasks if t.path and t not in done and (t.student, t.exercise) in no_gpu]
