"""`zerogpu course init`: an nbgrader course built from curriculum/, exercises/ and solutions/.

One assignment per curriculum notebook with exercises (or the grouping `--assignments` asks
for). In each course notebook, the exercise cell becomes an nbgrader "autograded answer" cell
(the solution, its changes from the starter in solution regions: grader/course/solution_regions.py),
followed by two locked, hidden "autograder tests" cells, correctness and speed, each one line
calling grader/course/grade_cell.py. The grading secret never enters a notebook or the course
folder; nbgrader_config.py says where it lives.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import nbformat

from grader.course.config import write_config
from grader.course.scores import PARTS, max_points, test_cell_id
from grader.exercises import LADDER, ROOT, exercise
from grader.course.solution_regions import STUB, annotate

COURSE_ID = "zero-to-gpu"
CURRICULUM = ROOT / "curriculum"


class CourseError(ValueError):
    """The course cannot be built as asked; the message says why."""


# -- where our files live inside a course folder -------------------------------------------


def zerogpu_dir(course_dir: Path) -> Path:
    return Path(course_dir) / "zerogpu"


def extracted_path(course_dir: Path, assignment: str, student: str, exercise_id: str) -> Path:
    """Where a student's exercise cell is written as a file before it is graded."""
    return zerogpu_dir(course_dir) / "submissions" / assignment / student / f"{exercise_id}.py"


# -- which notebooks make which assignments -----------------------------------------------


def _tags(cell) -> list:
    return list(cell.get("metadata", {}).get("tags", []))


def exercise_ids(nb) -> list[str]:
    """Exercise ids of a curriculum notebook, in cell order."""
    return [t for c in nb.cells if c.cell_type == "code" and "exercise" in _tags(c) for t in _tags(c) if t in LADDER]


def curriculum_notebooks(curriculum: Path = CURRICULUM) -> dict[str, list[str]]:
    """Notebook stem -> its exercise ids, for every curriculum notebook with exercises."""
    found = {}
    for path in sorted(Path(curriculum).glob("[0-9][0-9]-*.ipynb")):
        ids = exercise_ids(nbformat.read(path, as_version=4))
        if ids:
            found[path.stem] = ids
    return found


@dataclass(frozen=True)
class Assignment:
    name: str
    notebooks: tuple
    """Curriculum notebook stems, in course order."""
    exercises: tuple
    """The exercise ids graded in this assignment."""


def plan(items=None, curriculum: Path = CURRICULUM) -> list[Assignment]:
    """Assignments from `--assignments` items, `[NAME=]SELECTOR[,SELECTOR...]`, where a
    selector is an exercise id or a notebook (its stem, or its number such as `02`). Without
    NAME= the assignment is named after its first notebook. No items: one assignment per
    curriculum notebook with exercises."""
    notebooks = curriculum_notebooks(curriculum)
    if not notebooks:
        raise CourseError(f"no curriculum notebooks with exercises in {curriculum}")
    if not items:
        return [Assignment(stem, (stem,), tuple(ids)) for stem, ids in notebooks.items()]
    by_exercise = {e: stem for stem, ids in notebooks.items() for e in ids}
    assignments, taken = [], {}
    for item in items:
        name, _, selectors = item.rpartition("=")
        chosen: list[str] = []
        for selector in filter(None, selectors.split(",")):
            stems = [s for s in notebooks if s == selector or s.split("-")[0] == selector]
            if selector in by_exercise:
                chosen.append(selector)
            elif stems:
                chosen += notebooks[stems[0]]
            else:
                raise CourseError(
                    f"--assignments {item!r}: {selector!r} is neither an exercise id "
                    f"nor a curriculum notebook ({', '.join(notebooks)})"
                )
        if not chosen:
            raise CourseError(f"--assignments {item!r} selects no exercise")
        chosen = [e for e in LADDER if e in chosen]  # course order, no repeats
        stems = tuple(s for s in notebooks if any(by_exercise[e] == s for e in chosen))
        name = name or stems[0]
        if not re.fullmatch(r"[A-Za-z0-9_.\-]+", name):
            raise CourseError(f"assignment name {name!r}: use letters, digits, '.', '_' and '-'")
        for e in chosen:
            if e in taken:
                raise CourseError(f"exercise {e} is in two assignments ({taken[e]}, {name})")
            taken[e] = name
        assignments.append(Assignment(name, stems, tuple(chosen)))
    return assignments


# -- the cells -------------------------------------------------------------------------------


def _nbgrader(grade_id: str, *, grade: bool, solution: bool, locked: bool, points=None) -> dict:
    meta = {
        "grade": grade,
        "grade_id": grade_id,
        "locked": locked,
        "schema_version": 3,
        "solution": solution,
        "task": False,
    }
    if points is not None:
        meta["points"] = points
    return meta


def released_source(annotated: str) -> str:
    """The exercise cell as learners get it, made by nbgrader's own ClearSolutions."""
    from nbgrader.preprocessors import ClearSolutions

    cell = nbformat.v4.new_code_cell(annotated)
    ClearSolutions(code_stub={"python": STUB})._replace_solution_region(cell, "python")
    return cell.source


def without_hidden_tests(source: str) -> str:
    """An autograder cell's text as learners get it: nbgrader's own ClearHiddenTests removes
    the hidden region (its checksum, kept from before, then no longer matches: see
    grader/course/preprocessors.py RestoreHiddenTests)."""
    from nbgrader.preprocessors import ClearHiddenTests

    cell = nbformat.v4.new_code_cell(source)
    ClearHiddenTests()._remove_hidden_test_region(cell)
    return cell.source


def answer_source(exercise_id: str) -> str:
    """The instructor's exercise cell; both it and the released cell must compile."""
    ex = exercise(exercise_id)
    starter = ex.starter_file.read_text(encoding="utf-8")
    solution = ex.solution_file.read_text(encoding="utf-8")
    problems = []
    for commented_only in (False, True):  # keep starter lines where safe; else comment them
        annotated = annotate(starter, solution, commented_only=commented_only)
        try:
            compile(annotated, f"<{exercise_id}: instructor's cell>", "exec")
            compile(released_source(annotated), f"<{exercise_id}: released cell>", "exec")
            return annotated
        except SyntaxError as err:
            problems.append(f"{err.filename} line {err.lineno}: {err.msg}")
    raise CourseError(f"cannot derive solution regions for {exercise_id}: " + "; ".join(problems))


def answer_cell(cell, exercise_id: str):
    new = nbformat.v4.new_code_cell(answer_source(exercise_id))
    new.id = cell.get("id") or f"exercise-{exercise_id}"
    new.metadata = {"tags": _tags(cell), "nbgrader": _nbgrader(exercise_id, grade=False, solution=True, locked=False)}
    return new


def autograder_source(exercise_id: str, part: str, points: int) -> str:
    what = {
        "correctness": f"correctness of `{exercise_id}` ({points} points)",
        "speed": f"speed of `{exercise_id}` (up to {points} points, graded on a GPU only)",
    }[part]
    return "\n".join(
        [
            f"# Autograder: {what}. Read-only; its code is hidden and runs when your work is graded.",
            "### BEGIN HIDDEN TESTS",
            f'from grader.course.grade_cell import grade_cell; grade_cell("{exercise_id}", "{part}")',
            "### END HIDDEN TESTS",
        ]
    )


def autograder_cells(exercise_id: str) -> list:
    spec = exercise(exercise_id).spec
    cells = []
    for part in PARTS:
        points = max_points(spec, part)
        if points <= 0:
            continue
        cell = nbformat.v4.new_code_cell(autograder_source(exercise_id, part, points))
        cell.id = f"zerogpu-{exercise_id}-{part}"
        cell.metadata = {
            "nbgrader": _nbgrader(
                test_cell_id(exercise_id, part), grade=True, solution=False, locked=True, points=points
            )
        }
        cells.append(cell)
    return cells


GRADING_NOTE = """\
**How this notebook is graded.** Write your answer in each exercise cell (where it says
`pass  # YOUR CODE HERE` or `# TODO`), and keep the name of its `launch` function. The check cell
below each exercise is yours to run as often as you like. The read-only *Autograder* cells
under it are empty for you: when you submit, they grade that exercise cell, with fresh inputs,
in a separate process, and show you the result in your feedback. Correctness points come from
the cases that pass; speed points need a GPU."""


def course_notebook(nb, graded: set):
    """The instructor's version of one curriculum notebook."""
    nb = nbformat.from_dict(nb)
    cells, pending = [], []
    for cell in nb.cells:
        tags = _tags(cell)
        if pending and "check" not in tags:  # no check cell right after the exercise
            cells += pending
            pending = []
        ids = [t for t in tags if t in graded] if cell.cell_type == "code" and "exercise" in tags else []
        if ids:
            cells.append(answer_cell(cell, ids[0]))
            pending = autograder_cells(ids[0])  # they go after the learner's own check cell
        else:
            cells.append(cell)
            if "check" in tags:
                cells += pending
                pending = []
    cells += pending
    note = nbformat.v4.new_markdown_cell(GRADING_NOTE)
    note.id = "zerogpu-grading-note"
    cells.insert(1 if cells and cells[0].cell_type == "markdown" else 0, note)
    nb.cells = cells
    nbformat.validate(nb)
    return nb


# -- the course folder ----------------------------------------------------------------------


def init_course(
    course_dir: Path,
    items=None,
    *,
    course_id: str = COURSE_ID,
    exchange: Path | None = None,
    force: bool = False,
    curriculum: Path = CURRICULUM,
) -> list[Assignment]:
    """Write the course: source/<assignment>/, and nbgrader_config.py and the learners' config
    unless they exist (an instructor may have edited them)."""
    course_dir = Path(course_dir).resolve()
    assignments = plan(items, curriculum)
    source = course_dir / "source"
    clashes = [a.name for a in assignments if (source / a.name).exists()]
    if clashes and not force:
        raise CourseError(f"{course_dir} already has source/{clashes[0]}; use --force to rebuild")
    for assignment in assignments:
        folder = source / assignment.name
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for stem in assignment.notebooks:
            nb = nbformat.read(Path(curriculum) / f"{stem}.ipynb", as_version=4)
            nbformat.write(course_notebook(nb, set(assignment.exercises)), folder / f"{stem}.ipynb")
    write_config(course_dir, course_id, exchange, overwrite=False)
    return assignments
