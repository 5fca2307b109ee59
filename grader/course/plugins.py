"""nbgrader preprocessors the course's nbgrader_config.py adds to `nbgrader autograde`.

- RunOnlyAutograderCells (after the sanitizing steps): tags every code cell but the
  autograder cells with nbclient's "skip-execution", so autograde runs only our hidden cells.
  They read each exercise cell from the notebook file and grade it in a sandboxed child
  process; learners' code then never runs in nbgrader's kernel, which runs as the instructor
  and could read the course folder and the grading secret. It is also far faster, and a
  kernel-side endless loop in a lesson cell cannot stall the run.
- FlagUngradedSpeed (after SaveAutoGrades): a speed cell that could not be graded (no GPU),
  or any autograder cell whose grading failed, outputs 0 points, which nbgrader records; this
  marks that grade "needs manual grade", so formgrader shows it as open, not as a silent 0.
"""

from __future__ import annotations

from nbgrader import utils
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import NbGraderPreprocessor

from grader.course.cells import MIME

SKIP_TAG = "skip-execution"


class RunOnlyAutograderCells(NbGraderPreprocessor):
    """Skip every code cell that is not an nbgrader grade cell."""

    def preprocess_cell(self, cell, resources, cell_index):
        if cell.cell_type == "code" and not utils.is_grade(cell):
            tags = list(cell.metadata.get("tags", []))
            if SKIP_TAG not in tags:
                cell.metadata["tags"] = tags + [SKIP_TAG]
        return cell, resources


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
