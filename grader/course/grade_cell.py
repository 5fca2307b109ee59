"""What a course notebook's hidden autograder cells call, one line per cell:

    from grader.course.grade_cell import grade_cell; grade_cell("vector_add", "correctness")

`grade_cell` finds the exercise cell (its nbgrader grade id is the exercise id) in the
notebook file being graded, grades its text in graded mode (the host's secret mixed into
fresh inputs, a sandboxed child process, time limits: grader/checking/check.py `check_file`), shows our
learner-facing summary and returns the cell's points, which nbgrader records as partial
credit. The correctness and speed cells of one exercise share one check. It never raises and
never writes to stderr: nbgrader gives 0 to a test cell with either, and shows the traceback
(which would reveal the hidden line) in the feedback.

During `nbgrader autograde` the result is also recorded in our gradebook under the course
folder, and a submission `zerogpu grade` already graded is shown from there, not run again.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import html
import io
import json
import os
import tempfile
import warnings
from pathlib import Path

from grader import settings
from grader.backend import current as current_backend
from grader.checking.check import check_file
from grader.classroom.gradebook import Gradebook
from grader.classroom.handins import Refused, read_below
from grader.course.config import load_config, partial_credit
from grader.course.scores import PER_CASE, part_scores, result_digest
from grader.exercises import exercise
from grader.paths import gradebook_file
from grader.result import CheckResult
from grader.settings import CheckOptions
from grader.steps.cases import new_seed

MIME = "application/vnd.zerogpu.grade+json"
"""Output data for grader/course/preprocessors.py: which part, its points, whether it was graded."""

_RESULTS: dict = {}
"""(exercise id, sha256 of the cell) -> its result, as stored, for this kernel's lifetime."""
_COURSE_RESULTS: dict = {}
"""(course, student, exercise id, sha256) -> its result, as stored, in an autograde run without kernels."""


def grade_cell(exercise_id: str, part: str) -> float:
    """Grade one part ("correctness" or "speed") of an exercise; returns its points."""
    try:
        with _quiet():
            scores, result = _scores(exercise_id)
        score = scores[part]
        _display(*_summary(exercise_id, part, score, result))
        return score.points
    except Exception as exc:  # noqa: BLE001 - a grading failure must not look like learner error
        _display(*_failure(exercise_id, part, exc))
        return 0.0


def outputs_without_kernel(nb, exercise_id: str, part: str, course: Path, student: str, assignment: str) -> list:
    """The outputs the autograder cell `grade_cell(exercise_id, part)` of `nb` gives when run
    by `nbgrader autograde` for `student`, computed in this process (grader/course/preprocessors.py
    ExecuteAutograderCells): a stored result of this very submission is shown, anything else
    is graded in the sandbox and stored, as the cell would. nbformat output dicts: our summary,
    then the points as the cell's value, which nbgrader records."""
    try:
        with _quiet():
            source = exercise_source(nb, exercise_id)
            result = None
            if source is not None:
                sha = hashlib.sha256(source.encode("utf-8")).hexdigest()
                key = (str(course), student, exercise_id, sha)
                if key not in _COURSE_RESULTS:  # the speed cell reuses the correctness cell's
                    _COURSE_RESULTS[key] = _grade_for_course(exercise_id, source, sha, course, student, assignment)
                result = _COURSE_RESULTS[key]
            score = part_scores(result, exercise(exercise_id).spec, partial_credit_of(str(course)))[part]
        html_text, text, marker = _summary(exercise_id, part, score, result)
        points = score.points
    except Exception as exc:  # noqa: BLE001 - as in grade_cell
        html_text, text, marker = _failure(exercise_id, part, exc)
        points = 0.0
    return [
        {
            "output_type": "display_data",
            "data": _bundle(html_text, text, marker),
            "metadata": {},
        },
        {
            "output_type": "execute_result",
            "data": {"text/plain": repr(points)},
            "metadata": {},
            "execution_count": None,
        },
    ]


def _failure(exercise_id: str, part: str, exc: Exception) -> tuple[str, str, dict]:
    return (
        f"<p><b>{html.escape(exercise_id)}</b>: the autograder failed: "
        f"{html.escape(type(exc).__name__)}: {html.escape(str(exc))}. 0 points recorded; "
        "please tell your instructor.</p>",
        f"{exercise_id}: the autograder failed ({type(exc).__name__}: {exc}); 0 points.",
        {
            "exercise": exercise_id,
            "part": part,
            "points": 0.0,
            "graded": False,
            "error": f"{type(exc).__name__}: {exc}",
        },
    )


@contextlib.contextmanager
def _quiet():
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        yield


def _cell_source(nb: dict, exercise_id: str) -> str | None:
    """The first code cell whose nbgrader grade id is the exercise id (nbgrader's own
    DeduplicateIds keeps the first too); else the first tagged with it as an exercise."""
    cells = [c for c in nb.get("cells", []) if c.get("cell_type") == "code"]
    for match in (
        lambda c: c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == exercise_id,
        lambda c: {exercise_id, "exercise"} <= set(c.get("metadata", {}).get("tags", [])),
    ):
        for cell in cells:
            if match(cell):
                source = cell.get("source", "")
                return "".join(source) if isinstance(source, list) else source
    return None


def exercise_source(nb: dict, exercise_id: str) -> str | None:
    """An exercise cell's text from a notebook's JSON (also used by `zerogpu grade`)."""
    try:
        return _cell_source(nb, exercise_id)
    except (AttributeError, TypeError):  # a notebook edited into another shape
        return None


def _find_submission(exercise_id: str) -> str | None:
    """The exercise cell of the notebook being graded: nbgrader runs it in its own folder
    (each notebook read as a regular file, never through a link)."""
    for path in sorted(Path.cwd().glob("*.ipynb")):
        try:
            nb = json.loads(read_below(path.parent, path.name).decode("utf-8"))
        except (Refused, OSError, ValueError):
            continue
        source = exercise_source(nb, exercise_id)
        if source is not None:
            return source
    return None


def _autograde_context() -> tuple[Path, str, str] | None:
    """(course folder, student, assignment) during `nbgrader autograde`, which runs each
    notebook in COURSE/autograded/<student>/<assignment>/."""
    course = settings.course_dir()
    if os.environ.get("NBGRADER_EXECUTION") != "autograde" or not course:
        return None
    try:
        parts = Path.cwd().resolve().relative_to(Path(course).resolve() / "autograded").parts
    except ValueError:
        return None
    return (Path(course), parts[0], parts[1]) if len(parts) == 2 else None


def stored_result(
    book_path: Path, student: str, exercise_id: str, sha256: str, backend: str = "simulator"
) -> CheckResult | None:
    """The result our gradebook holds for exactly this submission, if any; on a GPU host,
    not one graded without a GPU (its speed was not graded)."""
    if not Path(book_path).is_file():
        return None
    row = Gradebook(book_path, read_only=True).row(student, exercise_id)
    if row and row.submission_sha256 == sha256 and not (backend == "gpu" and row.backend == "simulator"):
        return row.result
    return None


def as_stored(result: CheckResult) -> CheckResult:
    """A fresh result as a gradebook gives it back (its JSON read again, shortened where it
    was long): what a cell shows and fingerprints is then the same for both."""
    return CheckResult.from_dict(json.loads(result.to_json()))


def _check(exercise_id: str, path: Path):
    return check_file(exercise_id, path, options=CheckOptions(graded=True, case_timeout=settings.case_timeout()))


def _grade_for_course(
    exercise_id: str, source: str, sha: str, course: Path, student: str, assignment: str
) -> CheckResult:
    """During autograde: the stored result of this very submission, else grade and store it
    as `zerogpu grade` does (the task's secret, a seed kept in the gradebook: replayable)."""
    # autograde only: what `zerogpu` (feedback.py) and a grade cell outside autograde never need
    from grader.classroom.grading import Task, grade_task  # noqa: PLC0415 - child processes, replayers
    from grader.course.build import extracted_path  # noqa: PLC0415 - nbformat

    book = gradebook_file(course)
    result = stored_result(book, student, exercise_id, sha, current_backend())
    if result is None:
        path = extracted_path(course, assignment, student, exercise_id)  # for the instructor to read
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
        seed = new_seed()
        task = Task(student, exercise_id, source.encode("utf-8"))
        checked = grade_task(task, CheckOptions(case_timeout=settings.case_timeout(), seed=seed))
        Gradebook(book).record(student, exercise_id, sha, checked, seed=seed)
        result = as_stored(checked)
    return result


def _grade(exercise_id: str, source: str) -> CheckResult:
    sha = hashlib.sha256(source.encode("utf-8")).hexdigest()
    if (exercise_id, sha) not in _RESULTS:  # the speed cell reuses the correctness cell's check
        context = _autograde_context()
        if context:
            result = _grade_for_course(exercise_id, source, sha, *context)
        else:
            with tempfile.TemporaryDirectory(prefix="zerogpu-cell-") as tmp:
                path = Path(tmp) / f"{exercise_id}.py"
                path.write_text(source, encoding="utf-8")
                result = as_stored(_check(exercise_id, path))
        _RESULTS[exercise_id, sha] = result
    return _RESULTS[exercise_id, sha]


def _scores(exercise_id: str):
    spec = exercise(exercise_id).spec
    source = _find_submission(exercise_id)
    result = None if source is None else _grade(exercise_id, source)
    return part_scores(result, spec, partial_credit_of(settings.course_dir())), result


@functools.lru_cache(maxsize=None)
def partial_credit_of(course_dir: str | None) -> str:
    """The course's partial-credit setting (its nbgrader_config.py, which nbgrader ran and which
    named the course folder); "per_case" outside a course."""
    if not course_dir or not (Path(course_dir) / "nbgrader_config.py").is_file():
        return PER_CASE
    return partial_credit(load_config(Path(course_dir)))


def _bundle(html_text: str, text: str, marker: dict) -> dict:
    """What an autograder cell displays, by MIME type (grader/course/preprocessors.py reads `MIME`)."""
    return {"text/html": html_text, "text/plain": text, MIME: marker}


def _display(html_text: str, text: str, marker: dict) -> None:
    try:
        from IPython.display import display
    except ImportError:
        print(text)
        return
    display(_bundle(html_text, text, marker), raw=True)


def _summary(exercise_id: str, part: str, score, result: CheckResult | None) -> tuple[str, str, dict]:
    """(HTML, text, marker) an autograder cell shows for its part."""
    marker = {
        "exercise": exercise_id,
        "part": part,
        "points": score.points,
        "max_points": score.max_points,
        "graded": score.graded,
        "verdict": result.verdict if result else None,
        "result": result_digest(result) if result else None,
    }
    head = f"<p style='font-family:sans-serif'><b>{html.escape(score.note)}</b></p>"
    if part == "correctness" and result is not None:
        return result._repr_html_() + head, f"{result}\n{score.note}", marker
    return head, score.note, marker
