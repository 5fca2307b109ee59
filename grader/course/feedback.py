"""Feedback that no longer shows the gradebook's results, found and marked.

nbgrader's feedback (COURSE/feedback/<student>/<assignment>/<notebook>.html) is made by
`nbgrader generate_feedback` from the autograded notebooks, whose autograder cells show the
results as they stood when `nbgrader autograde` ran. `zerogpu grade` may grade a hand-in again
afterwards (a changed submission, speed on a GPU host): nbgrader's gradebook then holds the new
points, the feedback still the old ones, until autograde and generate_feedback run again.

Each autograder cell's output carries a marker (grader/course/grade_cell.py): the points shown, the
verdict and a fingerprint of the result. A notebook is *out of date* when a marker no longer
matches what the gradebook holds for that student and exercise. `zerogpu grade` marks such
feedback pages with a banner that names the commands that refresh them (and removes it from a
page that is current again); the MarkStaleFeedback preprocessor (grader/course/preprocessors.py)
does the same for feedback generated from an out-of-date autograded notebook.
"""

from __future__ import annotations

import html
import json
import os
import re
from pathlib import Path

from grader.classroom.gradebook import FEEDBACK, Gradebook
from grader.course.config import is_course, tools_on_path
from grader.course.grade_cell import MIME
from grader.course.scores import PER_CASE, part_scores, result_digest
from grader.exercises import LADDER, exercise

BANNER_ID = "zerogpu-out-of-date"
_BANNER = re.compile(rf'<div id="{BANNER_ID}".*?</div>\n?', re.S)


def shown(nb: dict) -> list[dict]:
    """The markers of the results an (autograded) notebook shows, one per autograder cell."""
    found = []
    for cell in nb.get("cells", []):
        for output in cell.get("outputs", []) if isinstance(cell, dict) else []:
            marker = (output.get("data") or {}).get(MIME) if isinstance(output, dict) else None
            if isinstance(marker, dict) and marker.get("exercise") in LADDER and "error" not in marker:
                found.append(marker)
    return found


def outdated(nb: dict, student: str, rows: dict, partial_credit: str = PER_CASE) -> list[str]:
    """Exercises whose results the notebook shows differently from the gradebook: other points,
    another verdict or, where the marker has one, another result. `rows`: (student, exercise)
    -> our gradebook's `ClassRow` (`Gradebook.by_task`)."""
    stale = []
    for marker in shown(nb):
        exercise_id = marker["exercise"]
        row = rows.get((student, exercise_id))
        result = row.result if row else None
        points = part_scores(result, exercise(exercise_id).spec, partial_credit)[marker["part"]].points
        differs = float(marker.get("points") or 0) != points or (
            "verdict" in marker and marker["verdict"] != (result.verdict if result else None)
        )
        if marker.get("result") and result is not None:
            differs = differs or marker["result"] != result_digest(result)
        if differs and exercise_id not in stale:
            stale.append(exercise_id)
    return stale


def refresh_commands(assignment: str, student: str | None = None) -> str:
    """The commands, run in the course folder, that make feedback current again."""
    who = f" --student {student}" if student else ""
    return (
        f"nbgrader autograde {assignment}{who} --force && "
        f"nbgrader generate_feedback {assignment}{who} --force && "
        f"nbgrader release_feedback {assignment}{who}"
    )


def warning(assignment: str, student: str, exercises: list[str]) -> str:
    """What an out-of-date page says, in plain words (no glyphs that need an emoji font).
    No `exercises`: the notebook was autograded again after the page was made."""
    what = (
        f"{', '.join(exercises)} {'was' if len(exercises) == 1 else 'were'} graded again after this feedback was made"
        if exercises
        else "this notebook was autograded again after this feedback was made"
    )
    return (
        f"Out of date: {what}, so the points and summaries below may not be the ones in the "
        f"gradebook. The instructor refreshes this page with: {refresh_commands(assignment, student)}"
    )


def banner(text: str) -> str:
    return (
        f'<div id="{BANNER_ID}" style="margin:12px;padding:10px 14px;border-left:6px solid #bf8700;'
        'background:#fff8c5;color:#1f2328;font:15px/1.5 sans-serif">'
        f"<b>{html.escape(text.split(':', 1)[0])}:</b>{html.escape(text.split(':', 1)[1])}</div>\n"
    )


def mark_page(path: Path, text: str | None) -> bool:
    """Put the banner saying `text` at the top of a feedback page (replacing an older one), or
    take it off when `text` is None. True when the page changed."""
    page = path.read_text(encoding="utf-8")
    plain = _BANNER.sub("", page)
    if text is None:
        new = plain
    else:
        body = re.search(r"<body[^>]*>\n?", plain)
        at = body.end() if body else 0
        new = plain[:at] + banner(text) + plain[at:]
    if new == page:
        return False
    made = path.stat()
    path.write_text(new, encoding="utf-8")
    os.utime(path, ns=(made.st_atime_ns, made.st_mtime_ns))  # still says when nbgrader made it
    return True


def mark_feedback(course, assignment: str, rows: dict) -> dict:
    """Check every autograded notebook of `assignment` against the gradebook rows, and every
    feedback page against its autograded notebook (made before it was autograded again), mark
    or unmark the page; returns {student: [exercises out of date]} (an empty list: only the
    page is behind its notebook). An out-of-date notebook counts whether its feedback was made
    or not: generate_feedback would copy its results."""
    root = Path(course.root)
    stale: dict = {}
    for autograded in sorted((root / course.coursedir.autograded_directory).glob(f"*/{assignment}/*.ipynb")):
        student = autograded.parent.parent.name
        try:
            nb = json.loads(autograded.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        exercises = outdated(nb, student, rows, course.partial_credit)
        page = root / course.coursedir.feedback_directory / student / assignment / f"{autograded.stem}.html"
        behind = page.is_file() and page.stat().st_mtime < autograded.stat().st_mtime
        if exercises or behind:
            stale.setdefault(student, []).extend(e for e in exercises if e not in stale.get(student, ()))
        if page.is_file():
            mark_page(page, warning(assignment, student, exercises) if exercises or behind else None)
    return stale


def note_out_of_date(course, book, assignments) -> dict:
    """`mark_feedback` for each assignment, and the gradebook's FEEDBACK notes set to match
    (a class report lists them); returns {assignment: {student: [exercises]}} of those out of
    date."""
    from grader.course.submissions import students  # noqa: PLC0415 - nbformat: only a course needs it; every `zerogpu` command loads this module

    rows = book.by_task()
    found = {}
    for assignment in assignments:
        stale = mark_feedback(course, assignment, rows)
        book.set_notes(
            FEEDBACK,
            {
                (student, assignment): warning(assignment, student, stale[student]) if student in stale else ""
                for student in students(course, assignment)
            },
        )
        if stale:
            found[assignment] = stale
    return found


def before_report(directory, db: Path, kind: str | None = None) -> str:
    """What `zerogpu report` needs of a course: in an nbgrader course folder, notes which
    feedback is out of date now (and marks its pages), and returns the course's
    partial-credit setting (docs/COURSE.md); "per_case" for a plain class folder. A course
    whose config cannot be read, or a folder that could be either (`kind`: `--kind`), raises
    ValueError with the reason."""
    from grader.course.build import CourseError  # noqa: PLC0415 - nbformat: only a course needs it; every `zerogpu` command loads this module
    from grader.course.submissions import assignments, load_course  # noqa: PLC0415 - nbformat: only a course needs it; every `zerogpu` command loads this module

    if not is_course(directory, kind):
        return PER_CASE
    tools_on_path()
    try:
        course = load_course(Path(directory))
    except CourseError as err:
        raise ValueError(str(err)) from None
    note_out_of_date(course, Gradebook(db), assignments(course))
    return course.partial_credit
