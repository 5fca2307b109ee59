"""nbgrader preprocessors the course's nbgrader_config.py adds to `nbgrader autograde`.

- RestoreHiddenTests (before OverwriteCells): an autograder cell handed in exactly as it was
  released (its hidden region removed by generate_assignment) gets its hidden lines back.
  nbgrader keeps each locked cell's checksum from *before* the hidden region was removed, so
  without this every honest submission logs "Attribute 'checksum' ... has changed!" for every
  autograder cell, and the warnings that matter (a cell a learner edited) drown among them.
  An edited or deleted autograder cell is left to OverwriteCells, which warns and puts it back;
  this step also notes it in our gradebook for the class report.
- RunOnlyAutograderCells (after the sanitizing steps): tags every code cell but the
  autograder cells with nbclient's "skip-execution", so autograde runs only our hidden cells.
  They read each exercise cell from the notebook file and grade it in a sandboxed child
  process; learners' code then never runs in nbgrader's kernel, which runs as the instructor
  and could read the course folder and the grading secret. It is also far faster, and a
  kernel-side endless loop in a lesson cell cannot stall the run.
- ExecuteAutograderCells (in place of nbgrader's Execute): when every cell left to run is one
  of our autograder cells, their outputs are made in this process, with no Jupyter kernel
  (grader/course/grade_cell.py outputs_without_kernel): results `zerogpu grade` stored are shown,
  anything else is graded in the sandbox as the cell would. Starting a kernel per notebook
  was most of autograde's time (about 3.7 s a notebook on a 2-core machine). A notebook with
  any other cell to run (an instructor's own test cell) runs in a kernel as before.
- MarkStaleFeedback (in GenerateFeedback.preprocessors): feedback made from an autograded
  notebook whose results `zerogpu grade` has since replaced opens with a note saying so and
  naming the commands that refresh it (grader/course/feedback.py).
- FlagUngradedSpeed (after SaveAutoGrades): a speed cell that could not be graded (no GPU),
  or any autograder cell whose grading failed, outputs 0 points, which nbgrader records; this
  marks that grade "needs manual grade", so formgrader shows it as open, not as a silent 0.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
from nbformat.v4 import new_markdown_cell
from nbgrader import utils
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import Execute, NbGraderPreprocessor

from grader.classroom.gradebook import AUTOGRADER_CELLS, Gradebook as Results
from grader.course.build import without_hidden_tests
from grader.course.feedback import BANNER_ID, outdated, warning
from grader.course.grade_cell import MIME, outputs_without_kernel, partial_credit_of
from grader.course.scores import part_of
from grader.paths import gradebook_file
from grader.settings import course_dir

SKIP_TAG = "skip-execution"


class RestoreHiddenTests(NbGraderPreprocessor):
    """Autograder cells handed in as released get their hidden lines back (no false checksum
    warning); edited or deleted ones are noted in our gradebook."""

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gb:
            try:
                source = gb.find_notebook(info["notebook"], info["assignment"])
            except MissingEntry:
                return nb, resources
            originals = {c.name: c.source for c in source.source_cells}
            points = {c.name: float(c.max_score) for c in source.grade_cells}
        for cell in nb.cells:
            full = originals.get(cell.metadata.get("nbgrader", {}).get("grade_id"))
            if utils.is_grade(cell) and full is not None and cell.source != full:
                if cell.source == without_hidden_tests(full):
                    cell.source = full
        _note_changes(nb, info, originals, points)
        return nb, resources


def _note_changes(nb, info: dict, originals: dict, points: dict) -> None:
    """Our autograder cells of this notebook that were edited or deleted, noted in the course's
    gradebook of results (grader/classroom/gradebook.py) per exercise."""
    course = course_dir()
    ours = {g: part_of(g) for g in points if part_of(g)}
    if not course or not ours:
        return
    handed = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in nb.cells if utils.is_grade(c)}
    changes: dict = {}
    for grade_id, (exercise_id, _) in ours.items():
        said = changes.setdefault((info["student"], exercise_id), [])
        cell = handed.get(grade_id)
        if cell is None:
            said.append(f"{grade_id} deleted")
        elif cell.source != originals[grade_id] or float(cell.metadata.nbgrader.get("points", 0)) != points[grade_id]:
            said.append(f"{grade_id} edited")
    Results(gradebook_file(Path(course))).set_notes(AUTOGRADER_CELLS, {k: "; ".join(v) for k, v in changes.items()})


class RunOnlyAutograderCells(NbGraderPreprocessor):
    """Skip every code cell that is not an nbgrader grade cell."""

    def preprocess_cell(self, cell, resources, cell_index):
        if cell.cell_type == "code" and not utils.is_grade(cell):
            tags = list(cell.metadata.get("tags", []))
            if SKIP_TAG not in tags:
                cell.metadata["tags"] = tags + [SKIP_TAG]
        return cell, resources


_CALL = re.compile(
    r'from grader\.(?:course\.grade_cell|course\.cells|nbgrader_cells) import grade_cell; grade_cell\("(\w+)", "(\w+)"\)'
)
"""Our autograder cell's one line, under the module name it has now or had in courses made before."""


def autograder_call(source: str) -> tuple[str, str] | None:
    """(exercise id, part) when `source` is one of our autograder cells: comments, and the one
    line that calls grade_cell (grader/course/build.py autograder_source); else None."""
    calls = []
    for line in source.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = _CALL.fullmatch(line)
        if match is None:
            return None
        calls.append(match.groups())
    return calls[0] if len(calls) == 1 else None


class ExecuteAutograderCells(Execute):
    """nbgrader's Execute, without a kernel when only our autograder cells are to run."""

    def preprocess(self, nb, resources):
        to_run = [c for c in nb.cells if c.cell_type == "code" and SKIP_TAG not in c.metadata.get("tags", [])]
        calls = [autograder_call(c.source) for c in to_run]
        course = course_dir()
        info = resources.get("nbgrader", {})
        if not course or not to_run or None in calls or not {"student", "assignment"} <= set(info):
            return super().preprocess(nb, resources)
        for count, (cell, (exercise_id, part)) in enumerate(zip(to_run, calls), start=1):
            outputs = outputs_without_kernel(nb, exercise_id, part, Path(course), info["student"], info["assignment"])
            cell.outputs = [nbformat.from_dict(o) for o in outputs]
            cell.execution_count = count
            cell.outputs[-1]["execution_count"] = count
        return nb, resources


def ungraded_parts(cell) -> bool:
    """Does this autograder cell say its points were not graded here?"""
    for output in cell.get("outputs", []):
        marker = output.get("data", {}).get(MIME)
        if isinstance(marker, dict) and marker.get("graded") is False:
            return True
    return False


class FlagUngradedSpeed(NbGraderPreprocessor):
    """Mark the grades of cells that could not be graded as needing a manual grade."""

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        flagged = [c.metadata.nbgrader["grade_id"] for c in nb.cells if utils.is_grade(c) and ungraded_parts(c)]
        if flagged:
            with Gradebook(info["db_url"]) as gb:
                for grade_id in flagged:
                    try:
                        grade = gb.find_grade(grade_id, info["notebook"], info["assignment"], info["student"])
                    except MissingEntry:
                        continue
                    grade.needs_manual_grade = True
                gb.db.commit()
        return nb, resources


class MarkStaleFeedback(NbGraderPreprocessor):
    """Feedback from an out-of-date autograded notebook opens with a note saying so."""

    def preprocess(self, nb, resources):
        course = course_dir()
        book = gradebook_file(Path(course)) if course else None
        if book is None or not book.is_file():
            return nb, resources
        info = resources["nbgrader"]
        rows = Results(book).by_task(student=info["student"])
        exercises = outdated(nb, info["student"], rows, partial_credit_of(course))
        nb.cells = [c for c in nb.cells if c.get("id") != BANNER_ID]
        if exercises:
            text = warning(info["assignment"], info["student"], exercises)
            head, rest = text.split(":", 1)
            cell = new_markdown_cell(f"**{head}:**{rest}")
            cell.id = BANNER_ID
            nb.cells.insert(0, cell)
        return nb, resources
