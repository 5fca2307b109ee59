"""Feedback pages for a plain class, as nbgrader makes them for a course: report/feedback/
<student>.html, one self-contained page per student (inline CSS, no script, no external link)
holding every exercise's card, the very view `zerogpu check` and the notebook show
(grader/render.py `result_html`), or why there is none. Rendered from
templates/feedback.html.j2 with autoescape; a page's file name is the student's name made safe
for any file system, with a short hash when it had to change (`page_name`)."""

from __future__ import annotations

import hashlib
import re
import time

from grader.classroom.gradebook import NOT_SUBMITTED
from grader.render import result_html
from grader.report.page import CSS
from grader.report.stats import NOT_ATTEMPTED, ClassReport
from grader.report.templates import html, render
from grader.textsafe import terminal_text

_UNSAFE = re.compile(r"[^\w.@+-]+")
FEEDBACK_FOLDER = "feedback"


def page_name(student: str) -> str:
    """The file name of `student`'s page: escape sequences gone (`terminal_text`), word
    characters, dots, @, + and - kept, the rest as "_"; a name that changed (or starts with a dot) gets 8 hex digits of its hash, so two
    students never share a page."""
    plain = _UNSAFE.sub("_", terminal_text(student)).strip("._")[:80] or "student"
    if plain != student:
        plain += "-" + hashlib.sha256(student.encode("utf-8", "backslashreplace")).hexdigest()[:8]
    return plain + ".html"


def feedback_pages(report: ClassReport, rows, title: str | None = None, generated: float | None = None) -> dict:
    """{file name: page} for every student of `report`; `rows`: the gradebook's `ClassRow`s."""
    results = {(r.student, r.exercise): r.result for r in rows}
    made = time.strftime("%-d %b %Y, %H:%M", time.localtime(generated)) if generated else ""
    pages = {}
    for student in report.students:
        items = []
        for exercise_id, mark in student.marks.items():
            result = results.get((student.name, exercise_id))
            card = html(result_html(result)) if result is not None and mark.verdict != NOT_SUBMITTED else None
            items.append({"id": exercise_id, "card": card, "note": _note(mark), "regraded": mark.regraded})
        pages[page_name(student.name)] = render(
            "feedback.html.j2",
            student=student.name,
            title=title or "Class feedback",
            css=html(CSS),
            exercises=items,
            score=f"{student.score:g}",
            max_score=f"{student.max_score:g}",
            percent=student.percent,
            passed=student.passed,
            made=made,
        )
    return pages


def _note(mark) -> str:
    """What a page says for an exercise with no card."""
    if mark.verdict == NOT_ATTEMPTED:
        return "Handed in as given out (the starter, unchanged): not attempted."
    return mark.note or "Nothing handed in for this exercise."
