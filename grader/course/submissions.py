"""`zerogpu grade COURSE_DIR [ASSIGNMENT]`: grade an nbgrader course's submissions, fast.

For every student folder under COURSE/submitted/, each notebook of the assignment is read once
as a regular file, never through a link (grader/classroom/handins.py); each exercise cell is
written to COURSE/zerogpu/submissions/<assignment>/<student>/<id>.py for the instructor to read,
and its text graded by grader.classroom.grading.grade_class (parallel, graded mode, resumable: our gradebook,
COURSE/gradebook.sqlite, keeps one row per student and exercise). A missing or unreadable
notebook, a link, or a deleted exercise cell, is "not submitted", and the gradebook notes why;
an exercise cell handed in as released (the starter, unchanged) is graded but noted as not
attempted; nbgrader's own files (timestamp.txt, submission_secret.txt) are no hand-ins;
autograder cells are never run, so editing or deleting them changes nothing, but it is noted
too (the class report lists both, and notebooks that belong to no exercise). Then every score
goes into nbgrader's gradebook (the course's
`CourseDirectory.db_url`, SQLite unless configured otherwise) for `nbgrader export` and
formgrader. That step is rebuilt from our gradebook each run, so a killed run loses nothing.
"""

from __future__ import annotations

import difflib
import json
import os
import stat
import warnings
from dataclasses import dataclass
from pathlib import Path

from grader.classroom.grading import Task, pending
from grader.classroom.handins import NBGRADER_FILES, Missing, Refused, entries, not_read, opened, read_below, walk
from grader.classroom.handins import what_it_is
from grader.course.build import CourseError, extracted_path, released_source, without_hidden_tests
from grader.course.config import load_config, partial_credit
from grader.course.scores import PARTS, PER_CASE, part_scores, test_cell_id
from grader.exercises import LADDER, exercise
from grader.course.grade_cell import exercise_source
from grader.result import CheckResult


@dataclass(frozen=True)
class Course:
    root: Path
    course_id: str
    db_url: str
    coursedir: object
    """nbgrader's CourseDirectory, configured from the course's nbgrader_config.py."""
    partial_credit: str = PER_CASE
    """`c.ZeroGPU.partial_credit` (grader/course/scores.py PARTIAL_CREDIT)."""

    @property
    def source(self) -> Path:
        return self.root / self.coursedir.source_directory

    def submitted(self, student: str = "", assignment: str = "") -> Path:
        return self.root / self.coursedir.submitted_directory / student / assignment


def load_course(course_dir: Path) -> Course:
    """The course's nbgrader settings, read the way nbgrader reads them."""
    from nbgrader.coursedir import CourseDirectory

    root = Path(course_dir).resolve()
    config = load_config(root)
    try:
        credit = partial_credit(config)
    except ValueError as err:
        raise CourseError(str(err)) from None
    coursedir = CourseDirectory(config=config)
    coursedir.root = str(root)
    return Course(root, coursedir.course_id, coursedir.db_url, coursedir, credit)


def _read_notebook(path: Path) -> tuple[dict | None, str]:
    """(an instructor's notebook's JSON, "") or (None, why it cannot be read)."""
    if not path.is_file():
        return None, f"no {path.name}"
    try:
        return _parse_notebook(path.read_bytes(), path.name)
    except OSError as err:
        return None, f"{path.name} could not be read ({err.strerror or err})"


def _handed_in(course: Course, student: str, assignment: str, notebook: str) -> tuple[dict | None, str | None]:
    """(a student's notebook's JSON, "") or (None, why it cannot be graded), read once as a
    regular file without following links; (None, None) when nothing by that name was handed in."""
    name = f"{notebook}.ipynb"
    try:
        data = read_below(course.submitted(), student, assignment, name)
    except Missing:
        return None, None
    except Refused as why:
        return None, str(why)
    return _parse_notebook(data, name)


def _parse_notebook(data: bytes, name: str) -> tuple[dict | None, str]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, f"{name} is not a notebook: not UTF-8 text"
    try:
        nb = json.loads(text)
    except ValueError as err:
        return None, f"{name} is not valid JSON ({err}): not a notebook nbgrader can open either"
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        return None, f"{name} is JSON but not a notebook (it has no list of cells)"
    return nb, ""


def layout(course: Course, assignment: str) -> dict[str, list[str]]:
    """Notebook name -> the exercise ids it grades, from the assignment's source notebooks."""
    found = {}
    for path in sorted((course.source / assignment).glob("*.ipynb")):
        nb = _read_notebook(path)[0] or {"cells": []}
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
    """Students with a folder for the assignment: real folders only (`refused_folders` names
    the links)."""
    refused = refused_folders(course, assignment)
    return [name for name, mode in _student_folders(course) if stat.S_ISDIR(mode) and name not in refused]


def _student_folders(course: Course) -> list[tuple[str, int]]:
    """(name, mode) of each entry of COURSE/submitted/ that is no dot name."""
    if not course.submitted().is_dir():
        return []
    with opened(course.submitted()) as top:
        return [(name, mode) for name, mode in entries(top) if not name.startswith(".")]


def refused_folders(course: Course, assignment: str) -> dict:
    """{student: why} for a student folder, or its assignment folder, that is a link (or a FIFO...):
    nothing in it is read. A student without the assignment's folder is left out silently."""
    found = {}
    for name, mode in _student_folders(course):
        if not stat.S_ISDIR(mode):
            if stat.S_ISLNK(mode):
                found[name] = f"{name} is {what_it_is(mode)}: nothing in it was read"
            continue
        try:
            with opened(course.submitted(), [name, assignment]):
                pass
        except Missing:
            found[name] = ""
        except Refused as why:
            found[name] = str(why)
    return found


def _write_if_changed(path: Path, text: str) -> None:
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def starters(course: Course, assignment: str) -> dict:
    """Exercise id -> its exercise cell as released to learners (the starter)."""
    found = {}
    for notebook, ids in layout(course, assignment).items():
        original = _read_notebook(course.source / assignment / f"{notebook}.ipynb")[0]
        for exercise_id in ids:
            cell = exercise_source(original, exercise_id) if original else None
            if cell is not None:
                found[exercise_id] = released_source(cell)
    return found


def course_tasks(course: Course, assignment: str, exercises=None):
    """One grader.classroom.grading.Task per student and exercise of the assignment: why
    nothing is graded when that is so, which autograder cells were edited or deleted, and
    whether the exercise cell is the released starter, unchanged."""
    tasks, notebooks = [], layout(course, assignment)
    originals = {n: _read_notebook(course.source / assignment / f"{n}.ipynb")[0] for n in notebooks}
    released = starters(course, assignment)
    strays = files_not_graded(course, assignment)
    for student in students(course, assignment):
        for notebook, ids in notebooks.items():
            nb, problem = _handed_in(course, student, assignment, notebook)
            if problem is None:  # nothing handed in: nothing to explain...
                renamed = [
                    name.split("/", 1)[1]
                    for (who, name), why in strays.items()
                    if who == student and f"rename it {notebook}.ipynb" in why
                ]
                problem = (  # ...unless it was handed in under another name
                    f"no {notebook}.ipynb, but {', '.join(renamed)} was handed in: rename it {notebook}.ipynb"
                    if renamed
                    else ""
                )
            for exercise_id in ids:
                if exercises and exercise_id not in exercises:
                    continue
                source = exercise_source(nb, exercise_id) if nb else None
                if source is None:
                    note = (
                        problem
                        if nb is None
                        else (
                            f"{notebook}.ipynb has no exercise cell for {exercise_id} (deleted, or its "
                            "nbgrader metadata removed)"
                        )
                    )
                    tasks.append(Task(student, exercise_id, None, note))
                    continue
                _write_if_changed(extracted_path(course.root, assignment, student, exercise_id), source)
                changed = autograder_changes(originals[notebook], nb, exercise_id)
                untouched = source == released.get(exercise_id)
                tasks.append(Task(student, exercise_id, source.encode("utf-8"), "", changed, untouched))
    return tasks


def files_not_graded(course: Course, assignment: str) -> dict:
    """{(student, "ASSIGNMENT/FILE"): why} for what students handed in that no exercise reads:
    a notebook of another name (the closest of the assignment's suggested), a file that is not
    part of the assignment, a link or a FIFO (never read); "ASSIGNMENT/": the folder itself is
    a link. nbgrader's own files are none of these."""
    notebooks = layout(course, assignment)
    released = (
        {p.name for p in (course.source / assignment).iterdir()} if (course.source / assignment).is_dir() else set()
    )
    found = {(s, f"{assignment}/"): why for s, why in refused_folders(course, assignment).items() if why}
    for student in students(course, assignment):
        for relative, mode in walk(course.submitted(), student, assignment):
            why = _not_graded(relative, mode, notebooks, released, assignment)
            if why:
                found[(student, f"{assignment}/{relative}")] = why
    return found


def _not_graded(relative: str, mode: int, notebooks: dict, released: set, assignment: str) -> str:
    """Why a file of a student's assignment folder is not graded, "" when it is (or is nbgrader's)."""
    name = relative.rsplit("/", 1)[-1]
    stem, top = name.removesuffix(".ipynb"), "/" not in relative
    if stat.S_ISDIR(mode) or name in NBGRADER_FILES or relative in released:
        return ""
    if not stat.S_ISREG(mode):
        if top and name.endswith(".ipynb") and stem in notebooks:
            return ""  # its exercises' notes say why
        return not_read(name, mode)
    if name.endswith(".ipynb"):
        if top and stem in notebooks:
            return ""
        close = difflib.get_close_matches(stem, list(notebooks), n=1, cutoff=0.6)
        return f"not a notebook of assignment {assignment}" + (
            f": rename it {close[0]}.ipynb to grade it"
            if close
            else " (its exercises are read from " + ", ".join(f"{n}.ipynb" for n in notebooks) + ")"
        )
    return f"not part of assignment {assignment}: only its notebooks are graded"


def _grade_cell(nb: dict, grade_id: str) -> dict | None:
    for cell in nb.get("cells", []):
        if isinstance(cell, dict) and cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id:
            return cell
    return None


def _text(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def autograder_changes(original: dict | None, handed_in: dict, exercise_id: str) -> str:
    """Which autograder cells of `exercise_id` a hand-in edited or deleted, compared with the
    instructor's notebook ("vector_add_correctness edited; vector_add_speed deleted"), "" when
    none: a cell is untouched when it reads as released (hidden region removed) or in full,
    and is still a grade cell worth the same points."""
    if original is None:
        return ""
    changes = []
    for part in PARTS:
        grade_id = test_cell_id(exercise_id, part)
        source = _grade_cell(original, grade_id)
        if source is None:
            continue
        cell = _grade_cell(handed_in, grade_id)
        if cell is None:
            changes.append(f"{grade_id} deleted")
            continue
        full, meta, want = _text(source), cell["metadata"]["nbgrader"], source["metadata"]["nbgrader"]
        same_text = _text(cell) in (full, without_hidden_tests(full))
        same_meta = bool(meta.get("grade")) and float(meta.get("points") or 0) == float(want.get("points") or 0)
        if not (same_text and same_meta):
            changes.append(f"{grade_id} edited")
    return "; ".join(changes)


def _timestamp(course: Course, student: str, assignment: str):
    try:
        return course.coursedir.get_existing_timestamp(str(course.submitted(student, assignment)))
    except Exception:  # noqa: BLE001 - nbgrader fails on a garbled timestamp.txt; keep going
        return None


def _comment(result: CheckResult | None) -> str:
    if result is None:
        return "No response."
    return f"zerogpu: {result.verdict} ({result.score:g}/{result.max_score:g}). {result.message}"[:1000]


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
    returns how many grades were written. `rows`: (student, exercise) -> our gradebook's
    `ClassRow` (`Gradebook.by_task`)."""
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
                    result = row.result if row else None
                    parts = part_scores(result, exercise(exercise_id).spec, course.partial_credit)
                    for part, score in parts.items():
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
    done = set(pending(tasks, book))
    no_gpu = {(r.student, r.exercise) for r in book.rows() if r.backend == "simulator" and r.verdict == "passed"}
    return [t for t in tasks if t.source is not None and t not in done and (t.student, t.exercise) in no_gpu]
