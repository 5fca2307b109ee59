"""The course folder's nbgrader_config.py (the instructor's) and learner_nbgrader_config.py."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from grader.classroom.kind import kind_of
from grader.course.scores import PARTIAL_CREDIT, PER_CASE
from grader.course.solution_regions import STUB
from grader.settings import CASE_TIMEOUT

CONFIG = "nbgrader_config.py"
LEARNER_CONFIG = "learner_nbgrader_config.py"

CONFIG_TEXT = '''\
"""nbgrader configuration of the Zero to GPU course {course_id!r}; written by `zerogpu course init`.

Run nbgrader and `zerogpu grade` with this folder as the course (docs/COURSE.md). The grading
secret is NOT in this folder: it is $ZEROGPU_SECRET, else the file $ZEROGPU_SECRET_FILE, else
~/.local/share/zerogpu/grading-secret of the user who grades (created on first use, readable by
that user only). Never put it in a notebook or in this file: feedback shows what notebooks hold.
"""
import os

c = get_config()  # noqa: F821 - nbgrader provides it
HERE = os.path.dirname(os.path.abspath(__file__))

c.CourseDirectory.course_id = {course_id!r}
c.CourseDirectory.root = HERE
# release_assignment puts assignments here and learners' `submit` leaves their work here; the
# learners' own nbgrader config ({learner_config}) names the same folder.
c.Exchange.root = {exchange}

# A solution region of a released exercise cell becomes one statement: the cell still runs.
c.ClearSolutions.code_stub = {{"python": {stub!r}}}

# Correctness points: "per_case" gives an exercise's points times the share of its cases that
# pass (a racy kernel earns the small cases it happens to pass); "all_or_nothing" gives them
# only when every case passes. nbgrader's grades, the feedback and `zerogpu report` follow it.
c.ZeroGPU.partial_credit = "per_case"

# Autograding. Each autograder cell grades one exercise cell in a child process, every case
# limited to CASE_TIMEOUT seconds; the notebook cell limit is set well above that total.
CASE_TIMEOUT = int(os.environ.setdefault("ZEROGPU_CASE_TIMEOUT", "{case_timeout:.0f}"))
c.Execute.timeout = 30 + 20 * CASE_TIMEOUT
c.Execute.raise_on_iopub_timeout = False  # else one stuck kernel drops the whole submission
c.OverwriteCells.add_missing_cells = True  # else a deleted autograder cell silently scores 0
# Only library warnings reach stderr here, and nbgrader scores a test cell with any stderr 0.
c.IgnorePattern.enabled = True
c.IgnorePattern.pattern = ".*"
# Autograder cells reach learners without their hidden line, so nbgrader's checksum (taken
# before it was removed) no longer matches: RestoreHiddenTests puts the line back in cells
# handed in as released, so only edited or deleted autograder cells are warned about (and
# noted for `zerogpu report`). OverwriteCells puts those back.
# Only the autograder cells run: they read each exercise cell from the submitted notebook and
# grade it in the sandbox, so learners' code never runs in nbgrader's own kernel (it could
# read this folder and the secret). Drop RunOnlyAutograderCells to run notebooks in full.
c.Autograde.sanitize_preprocessors = [
    "nbgrader.preprocessors.ClearOutput",
    "nbgrader.preprocessors.DeduplicateIds",
    "nbgrader.preprocessors.OverwriteKernelspec",
    "grader.course.preprocessors.RestoreHiddenTests",
    "nbgrader.preprocessors.OverwriteCells",
    "nbgrader.preprocessors.CheckCellMetadata",
    "grader.course.preprocessors.RunOnlyAutograderCells",
]
# A speed cell graded without a GPU records 0 points and is flagged "needs manual grade".
c.Autograde.autograde_preprocessors = [
    "grader.course.preprocessors.ExecuteAutograderCells",  # nbgrader's Execute, no kernel for our cells
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",
    "grader.course.preprocessors.FlagUngradedSpeed",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]
# Feedback shows each autograder cell's output (our summary) but not its hidden code:
# nbgrader shows hidden tests in feedback by default (nbgrader issues #917, #1363). Feedback
# made from results `zerogpu grade` has since replaced opens with a note saying so.
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "nbgrader.preprocessors.ClearHiddenTests",
    "grader.course.preprocessors.MarkStaleFeedback",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]

# The autograder's kernels inherit this: they record results in our gradebook under HERE.
os.environ["ZEROGPU_COURSE_DIR"] = HERE
'''

LEARNER_CONFIG_TEXT = '''\
"""nbgrader configuration for learners of {course_id!r}: copy it to ~/.jupyter/nbgrader_config.py
(or, on a shared JupyterHub, /etc/jupyter/nbgrader_config.py) and JupyterLab's Nbgrader >
Assignment List fetches and submits through the same exchange as the instructor."""
c = get_config()  # noqa: F821
c.CourseDirectory.course_id = {course_id!r}
c.Exchange.root = {exchange!r}
'''


def is_course(folder, asked: str | None = None) -> bool:
    """Is `folder` an nbgrader course, not a plain class folder? Decided by what is there
    (grader/classroom/kind.py `kind_of`; `asked`: the `--kind` flag); FolderKindError, one line,
    when it could be either."""
    return bool(folder) and kind_of(folder, asked).kind == "course"


def partial_credit(config) -> str:
    """The course's `c.ZeroGPU.partial_credit` from its loaded nbgrader config ("per_case" when
    unset, as in courses made before the setting); anything else is refused, naming the choices."""
    value = config.ZeroGPU.get("partial_credit", PER_CASE) if "ZeroGPU" in config else PER_CASE
    if value not in PARTIAL_CREDIT:
        raise ValueError(
            f"{CONFIG}: c.ZeroGPU.partial_credit = {value!r}; use one of {', '.join(map(repr, PARTIAL_CREDIT))}"
        )
    return value


def load_config(course_dir: Path):
    """A course folder's nbgrader_config.py, read the way nbgrader reads it."""
    from traitlets.config.loader import PyFileConfigLoader

    return PyFileConfigLoader(CONFIG, path=str(Path(course_dir).resolve())).load_config()


def tools_on_path() -> None:
    """nbgrader runs `alembic` by name: make this interpreter's scripts folder findable even
    when the virtual environment was not activated (`.venv/bin/zerogpu …`, `make test`)."""
    scripts = str(Path(sys.executable).parent)
    if scripts not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = scripts + os.pathsep + os.environ.get("PATH", "")


def write_config(course_dir: Path, course_id: str, exchange: Path | None, *, overwrite: bool = True) -> bool:
    """Write both configs (and make the exchange folder); False when they existed and
    `overwrite` is off."""
    course_dir = Path(course_dir)
    if not overwrite and (course_dir / CONFIG).exists():
        return False
    exchange_path = Path(exchange).resolve() if exchange else course_dir / "exchange"
    exchange_expr = repr(str(exchange_path)) if exchange else 'os.path.join(HERE, "exchange")'
    course_dir.mkdir(parents=True, exist_ok=True)
    (course_dir / CONFIG).write_text(
        CONFIG_TEXT.format(
            course_id=course_id,
            exchange=exchange_expr,
            stub=STUB,
            learner_config=LEARNER_CONFIG,
            case_timeout=CASE_TIMEOUT,
        )
    )
    (course_dir / LEARNER_CONFIG).write_text(
        LEARNER_CONFIG_TEXT.format(course_id=course_id, exchange=str(exchange_path.resolve()))
    )
    exchange_path.mkdir(parents=True, exist_ok=True)
    return True
