"""`zerogpu report`'s files: report.html (self-contained, charts embedded), students.csv,
exercises.csv and submissions.csv (one row per student and exercise: what the page's grid
opens), from a gradebook analysed by grader/report/data.py.

Each file is written whole under a temporary name beside it, fsynced, then renamed over the
old one (`paths.write_atomically`): a full disk, a refused folder or a killed `zerogpu report`
leaves the previous report whole (or none), never a truncated one, and the error is one line.
Every CSV cell goes through `textsafe.csv_cell` (no formula, no lone surrogate)."""

from __future__ import annotations

import csv
import io
import statistics
import time
from dataclasses import dataclass, replace
from pathlib import Path

from grader.classroom.gradebook import Gradebook
from grader.classroom.kind import kind_of
from grader.report.data import (
    EXERCISES_CSV,
    PER_CASE,
    REPORT_HTML,
    STUDENTS_CSV,
    SIMILARITY_CSV,
    SUBMISSIONS_CSV,
    VERDICT_ORDER,
    ClassReport,
    analyse,
    load_rows,
    tier_names,
)
from grader.paths import cannot_write, gradebook_file, temporary_name, write_atomically
from grader.result import mistake_label
from grader.report.feedback import FEEDBACK_FOLDER, feedback_pages, page_name
from grader.report.leaderboard import boards, why_empty
from grader.report.page import page
from grader.report.plots import charts
from grader.report.similarity import class_pairs, given_texts, hand_ins
from grader.textsafe import csv_cell

ELSEWHERE = "choose another folder with zerogpu report --out DIR"
LEFTOVER_SECONDS = 60
"""A temporary file of ours older than this was left by a report killed half way: removed."""


def _number(value, digits=3):
    """Blank, never 0, for what was not measured."""
    return "" if value is None else round(value, digits)


def csv_text(rows) -> str:
    """Rows (the header first) as CSV text, every cell through `csv_cell`."""
    buffer = io.StringIO()
    csv.writer(buffer).writerows([csv_cell(cell) for cell in row] for row in rows)
    return buffer.getvalue()


VERDICT_COLUMNS = tuple(v for v in VERDICT_ORDER if v != "passed")
"""exercises.csv's count per verdict; "passed" has its own column already."""


def exercises_csv(report: ClassReport) -> str:
    tiers = tier_names(report)
    header = [
        "stage",
        "exercise",
        "students",
        "submitted",
        "passed",
        "pass_rate",
        "mean_score",
        "median_score",
        "max_score",
        *VERDICT_COLUMNS,
        "gpu_timed",
        "median_speedup",
        "required_speedup",
        "meeting_required_speedup",
        "rejected_timings",
        *(f"tier_{t.replace(' ', '_')}" for t in tiers),
        "common_mistake",
        "common_mistake_count",
    ]
    rows = []
    for e in report.exercises:
        timed = len(e.speedups) + e.rejected_timings
        rows.append(
            [
                "" if e.stage is None else e.stage,
                e.id,
                e.students,
                e.submitted,
                e.passed,
                _number(e.pass_rate),
                _number(statistics.mean(e.scores) if e.scores else None, 2),
                _number(statistics.median(e.scores) if e.scores else None, 2),
                e.max_score,
                *(e.verdicts.get(v, 0) for v in VERDICT_COLUMNS),
                timed,
                _number(e.median_speedup),
                _number(e.required_speedup),
                e.meeting_requirement if e.speedups else "",
                e.rejected_timings if timed else "",
                *((e.tiers.get(t, 0) if e.speedups else "") for t in tiers),
                e.common_mistake[0] if e.common_mistake else "",
                e.common_mistake[1] if e.common_mistake else "",
            ]
        )
    return csv_text([header, *rows])


def students_csv(report: ClassReport) -> str:
    ids = [e.id for e in report.exercises]
    mixed = len(report.devices) > 1  # which GPU timed each result, only when they differ
    header = [
        "student",
        "submitted",
        "passed",
        "exercises",
        "score",
        "max_score",
        "percent",
        "stuck_on",
        "stuck_on_verdict",
        *ids,
        *(["timed_on"] if mixed else []),
        *(["unsandboxed"] if report.unsandboxed else []),
        *(["files_not_graded"] if report.files else []),
    ]
    outside = set(report.unsandboxed)
    rows = []
    for s in report.students:
        timed = "; ".join(f"{e}: {report.timed_on[(s.name, e)]}" for e in ids if (s.name, e) in report.timed_on)
        bare = "; ".join(e for e in ids if (s.name, e) in outside)
        rows.append(
            [
                s.name,
                s.submitted,
                s.passed,
                len(ids),
                round(s.score, 2),
                round(s.max_score, 2),
                round(s.percent, 1),
                s.stuck_on or "",
                s.verdicts[s.stuck_on] if s.stuck_on else "",
                *(s.verdicts[e] for e in ids),
                *([timed] if mixed else []),
                *([bare] if report.unsandboxed else []),
                *(["; ".join(f"{path}: {why}" for path, why in s.files)] if report.files else []),
            ]
        )
    return csv_text([header, *rows])


def submissions_csv(report: ClassReport) -> str:
    """One row per student and exercise: verdict, the mistake counted, points, cases passed,
    the message and its line, why nothing was graded or which autograder cells changed, and
    whether the row was graded again since the class was graded (a regrade)."""
    header = [
        "student",
        "exercise",
        "verdict",
        "mistake",
        "mistake_label",
        "score",
        "max_score",
        "cases_passed",
        "cases",
        "line",
        "source",
        "message",
        "not_graded_because",
        "autograder_cells",
        "regraded",
    ]
    rows = [
        [
            s.name,
            exercise_id,
            m.verdict,
            m.mistake,
            mistake_label(m.mistake) if m.mistake else "",
            round(m.score, 2),
            round(m.max_score, 2),
            m.cases_passed if m.cases else "",
            m.cases or "",
            m.line or "",
            m.source,
            m.message,
            m.note,
            m.autograder_cells,
            m.regraded,
        ]
        for s in report.students
        for exercise_id, m in s.marks.items()
    ]
    return csv_text([header, *rows])


# ---- the whole report -------------------------------------------------------------------


def similarity_csv(report: ClassReport) -> str:
    """One row per pair of hand-ins far more alike than the class's usual pair."""
    header = ["exercise", "student", "student", "score", "usual_pair"]
    return csv_text([header, *([p.exercise, p.first, p.second, p.score, p.usual] for p in report.pairs)])


@dataclass(frozen=True)
class ReportRequest:
    """What `zerogpu report` was asked for, beyond the gradebook and the folder to write into."""

    title: str | None = None
    partial_credit: str = PER_CASE
    """An nbgrader course's setting (grader/course/scores.py)."""
    directory: str | None = None
    """The class (or course) folder, whose hand-ins are read again for similarity."""
    names: bool = False
    """Name students on the leaderboard."""
    feedback: bool = False
    """Write feedback/<student>.html (a plain class: nbgrader makes a course's)."""


def write_report(db: Path, out_dir: Path, request: ReportRequest = ReportRequest(), **fields) -> dict:
    """Read the gradebook at `db`, write report.html, the CSVs and (`request.feedback`) the
    feedback pages into `out_dir`. Returns {"html", "students_csv", "exercises_csv",
    "submissions_csv", "similarity_csv": paths, "feedback": [paths], "report": ClassReport}.
    A file that cannot be written raises `paths.DataDirError` (one line, naming --out); the
    files written before it are whole. A field of `request` may also be given by name."""
    request = replace(request, **fields)
    rows = load_rows(db)
    if not rows:
        raise ValueError(f"the gradebook {db} has no results yet")
    notes = Gradebook(db, read_only=True).notes()
    report = analyse(rows, source=str(db), notes=notes, partial_credit=request.partial_credit)
    sources = hand_ins(request.directory, rows)
    report = replace(
        report,
        pairs=tuple(class_pairs(sources, given_texts({e for _, e in sources}))),
        boards=boards(rows),
        no_board=why_empty(rows),
        names=request.names,
        feedback_pages={s.name: page_name(s.name) for s in report.students} if request.feedback else {},
    )
    out_dir = Path(out_dir)
    try:
        (out_dir / FEEDBACK_FOLDER if request.feedback else out_dir).mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise cannot_write(out_dir, err, ELSEWHERE) from None
    generated = time.time()
    texts = {
        "students_csv": (STUDENTS_CSV, students_csv(report)),
        "exercises_csv": (EXERCISES_CSV, exercises_csv(report)),
        "submissions_csv": (SUBMISSIONS_CSV, submissions_csv(report)),
        "similarity_csv": (SIMILARITY_CSV, similarity_csv(report)),
        "html": (REPORT_HTML, page(report, charts(report), title=request.title, generated=generated)),
    }
    paths = {key: out_dir / name for key, (name, _) in texts.items()}
    pages = feedback_pages(report, rows, request.title, generated) if request.feedback else {}
    written = [out_dir / FEEDBACK_FOLDER / name for name in pages]
    _remove_leftovers([*paths.values(), *written])
    for key, (_, text) in texts.items():
        write_atomically(paths[key], text, elsewhere=ELSEWHERE)
    for path, text in zip(written, pages.values()):
        write_atomically(path, text, elsewhere=ELSEWHERE)
    if request.feedback:
        _remove_pages_of_others(out_dir / FEEDBACK_FOLDER, set(pages))
    return {**paths, "feedback": written, "report": report}


def _remove_pages_of_others(folder: Path, kept: set) -> None:
    """Feedback pages an earlier report wrote for students no longer in the gradebook."""
    for old in folder.glob("*.html"):
        if old.name not in kept:
            try:
                old.unlink()
            except OSError:
                pass  # not ours to remove: it never stops a report


def _remove_leftovers(paths) -> None:
    """Temporary files that a report killed while writing left beside these files."""
    now = time.time()
    for path in paths:
        for tmp in path.parent.glob(temporary_name(path)):
            try:
                if now - tmp.stat().st_mtime > LEFTOVER_SECONDS:
                    tmp.unlink()
            except OSError:
                pass  # gone already, or not ours to remove: it never stops a report


class ReportError(Exception):
    """No report: the message is one line naming the fix (nothing named, no gradebook)."""


def report_class(directory, db=None, out=None, title: str | None = None, course_setup=None, **asked) -> dict:
    """`zerogpu report`: `write_report` for a class (or course) folder's gradebook, or `db`, into
    `out` (default: report/ beside the gradebook). `course_setup(directory, db, kind)`: what an
    nbgrader course adds first, returning its partial-credit setting (grader/course/feedback.py
    `before_report`); it lives above this package. `asked`: `names` (the leaderboard's) and
    `kind` ("class" or "course", else decided by what is there). ValueError: no rows, a course
    config that cannot be read, a folder that could be either kind. A file that is not a
    gradebook: `GradebookError`, one line."""
    if not (directory or db):
        raise ReportError("give a class (or course) folder, or --db PATH")
    db = gradebook_file(directory, db)
    if not db.is_file():
        hint = f" Grade the class first: zerogpu grade {directory}" if directory else ""
        raise ReportError(f"no gradebook at {db}.{hint}")
    kind = asked.get("kind")
    credit = course_setup(directory, db, kind) if course_setup else PER_CASE
    plain = bool(directory) and kind_of(directory, kind).kind == "class"
    request = ReportRequest(title, credit, directory, bool(asked.get("names")), feedback=plain)
    return write_report(db, Path(out) if out else db.parent / "report", request)
