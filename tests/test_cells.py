"""A check checks the exercise cell as it stands (grader/notebook/cells.py): a `launch` left over
from before a failed run, or from a cell changed since, is not checked and nothing is recorded."""

from __future__ import annotations

import json
import os
import time

import nbformat
import pytest
from nbclient import NotebookClient

from grader.exercises import ROOT
from grader.notebook import cells

GOOD = "def launch(out):\n    out[0] = 1\n"
BROKEN = "def launch(out):\n    out[0] = 1\n\nx = (\n"
RAISES = "def launch(out):\n    out[0] = 1\n\nundefined_name\n"


@pytest.fixture
def shell(tmp_path, monkeypatch):
    """An IPython shell whose runs a fresh CellRuns follows (its profile and history kept out
    of the home folder)."""
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    shell = InteractiveShell.instance(config=config)
    runs = cells.CellRuns(shell)
    shell.events.register("pre_run_cell", runs.before)
    shell.events.register("post_run_cell", runs.after)
    shell.runs = runs
    yield shell
    shell.events.unregister("pre_run_cell", runs.before)
    shell.events.unregister("post_run_cell", runs.after)


def run(shell, text: str, cell_id=None, tags=None):
    meta = {"tags": tags} if tags else None
    return shell.run_cell(text, store_history=True, cell_id=cell_id, cell_meta=meta)


def stale(shell, exercise_id="thread_ids", name="launch", notebook=None):
    return cells.not_as_it_stands(exercise_id, shell.user_ns[name], shell.runs, notebook=notebook)


def test_a_launch_left_over_from_before_a_syntax_error_is_not_checked(shell):
    """Does a syntax error in the cell that defined `launch` (no cell ids: nbclient, a terminal)
    stop the check, naming the error and its line?"""
    run(shell, GOOD)
    assert stale(shell) is None
    run(shell, BROKEN)
    refused = stale(shell)
    assert refused is not None and not refused.passed and refused.verdict != "passed"
    assert "raised SyntaxError at line 4" in refused.reason and "run it again" in refused.reason
    assert "\n" not in refused.reason


def test_a_cell_that_raises_after_defining_launch_is_not_checked(shell):
    """A run that defined `launch`, then raised, is a failed run: is it refused, naming the line?"""
    run(shell, RAISES)
    assert "raised NameError at line 4" in stale(shell).reason


def test_a_fixed_cell_is_checked_again(shell):
    run(shell, GOOD)
    run(shell, BROKEN)
    run(shell, GOOD.replace("= 1", "= 2"))
    assert stale(shell) is None


def test_a_launch_kept_under_another_name_survives_another_exercise_cell(shell):
    """Lesson 10: `naive_launch = launch`, then the next exercise cell defines its own `launch`.
    Is the kept one still checked?"""
    run(shell, GOOD)
    run(shell, "naive_launch = launch")
    run(shell, GOOD.replace("= 1", "= 3"))
    assert stale(shell, name="naive_launch") is None


def test_cell_ids_tie_runs_to_their_cell(shell):
    """Where the front end names each cell (JupyterLab): a failed run of *another* cell does not
    matter; a later run of the same cell does, failed or with other code."""
    run(shell, GOOD, cell_id="exercise-thread_ids", tags=["thread_ids", "exercise"])
    run(shell, BROKEN, cell_id="scratch")
    assert stale(shell) is None
    run(shell, "kept = launch", cell_id="alias")
    run(shell, "def launch(out):\n    out[0] = 5\n", cell_id="exercise-thread_ids", tags=["thread_ids", "exercise"])
    assert "earlier run of its cell" in stale(shell, name="kept").reason
    run(shell, BROKEN, cell_id="exercise-thread_ids", tags=["thread_ids", "exercise"])
    assert "your exercise cell raised SyntaxError at line 4" in stale(shell).reason


def test_another_exercises_cell_is_named(shell):
    """In JupyterLab, tags say which exercise a cell is: a `launch` last defined by another
    exercise's cell is not checked as this one."""
    run(shell, GOOD, cell_id="exercise-matmul_tiled", tags=["matmul_tiled", "exercise"])
    refused = stale(shell, exercise_id="matmul_naive")
    assert "matmul_tiled exercise cell" in refused.reason and "matmul_naive exercise cell" in refused.reason
    assert stale(shell, exercise_id="matmul_tiled") is None


def test_a_cell_changed_after_it_ran_is_seen_in_the_saved_notebook(shell, tmp_path):
    """Is a cell whose saved text differs from what last ran refused, but only when the
    notebook was saved after that run?"""
    run(shell, GOOD, cell_id="exercise-thread_ids", tags=["thread_ids", "exercise"])
    notebook = tmp_path / "01.ipynb"

    def save(source: str, when: float) -> None:
        nb = nbformat.v4.new_notebook()
        cell = nbformat.v4.new_code_cell(source)
        cell.id = "exercise-thread_ids"
        nb.cells = [cell]
        notebook.write_text(nbformat.writes(nb))
        os.utime(notebook, (when, when))

    later = time.time() + 5
    save(GOOD, later)
    assert stale(shell, notebook=notebook) is None
    save(GOOD.replace("= 1", "= 9"), later)
    assert "changed after it last ran" in stale(shell, notebook=notebook).reason
    save(GOOD.replace("= 1", "= 9"), time.time() - 3600)  # saved before the run: tells nothing
    assert stale(shell, notebook=notebook) is None


def test_without_cell_ids_the_saved_notebook_must_hold_the_code_that_ran(shell, tmp_path):
    run(shell, GOOD)
    notebook = tmp_path / "01.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import grader"), nbformat.v4.new_code_cell(GOOD.replace("= 1", "= 9"))]
    notebook.write_text(nbformat.writes(nb))
    os.utime(notebook, (time.time() + 5, time.time() + 5))
    assert "changed after it last ran" in stale(shell, notebook=notebook).reason
    nb.cells.append(nbformat.v4.new_code_cell(GOOD))
    notebook.write_text(nbformat.writes(nb))
    os.utime(notebook, (time.time() + 5, time.time() + 5))
    assert stale(shell, notebook=notebook) is None


def test_a_launch_from_a_module_or_the_running_cell_is_checked_as_it_is(shell, tmp_path):
    """A `launch` from a file has no cell to compare with; one defined by the cell that runs the
    check is that cell as it stands."""
    import importlib.util

    module = tmp_path / "mine.py"
    module.write_text(GOOD)
    spec = importlib.util.spec_from_file_location("mine", module)
    mine = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mine)
    run(shell, BROKEN)
    assert cells.not_as_it_stands("thread_ids", mine.launch, shell.runs) is None
    shell.user_ns.update(RUNS=shell.runs, cells=cells)
    run(shell, GOOD + "\nfound = cells.not_as_it_stands('thread_ids', launch, RUNS)")
    assert shell.user_ns["found"] is None


def test_a_refusal_shows_one_line_and_is_not_recorded(shell, monkeypatch):
    """Does grader.check return the refusal without running a check or recording progress?"""
    import grader

    run(shell, GOOD)
    run(shell, BROKEN)
    monkeypatch.setattr(cells, "_watching", shell.runs)
    monkeypatch.setattr(grader._notebook, "check", lambda *a, **k: pytest.fail("a check ran"))
    monkeypatch.setattr(grader._progress, "record", lambda *a, **k: pytest.fail("progress recorded"))
    refused = grader.check("thread_ids", shell.user_ns["launch"])
    assert isinstance(refused, cells.NotChecked)
    html = refused._repr_html_()
    assert "Not checked" in html and "SyntaxError" in html and "Passed" not in html


def test_lesson_01_after_a_syntax_error_claims_no_pass(tmp_path):
    """The reproduction: notebook 01 in a kernel (nbclient, as the lesson tests run it), the
    solution in the exercise cell, its check passes; the same cell with a syntax error, the
    check again: not passed, and progress holds the one pass only."""
    nb = nbformat.read(ROOT / "curriculum" / "01-first-kernel-thread-ids.ipynb", as_version=4)
    setup = next(c for c in nb.cells if "setup" in c.metadata.get("tags", []))
    exercise_cell = next(c for c in nb.cells if "exercise" in c.metadata.get("tags", []))
    check_cell = next(c for c in nb.cells if "check" in c.metadata.get("tags", []))
    solution = (ROOT / "solutions" / "thread_ids.py").read_text()
    probe = nbformat.v4.new_code_cell(
        "import json; print(json.dumps({'verdict': _.verdict, 'passed': _.passed}))"  # the check cell's result
    )
    nb.cells.append(probe)
    index = {id(cell): i for i, cell in enumerate(nb.cells)}
    client = NotebookClient(
        nb, timeout=300, kernel_name="python3", allow_errors=True, resources={"metadata": {"path": str(tmp_path)}}
    )
    verdicts = []
    with client.setup_kernel(env={**os.environ, "ZEROGPU_HOME": str(tmp_path / "home")}):
        client.execute_cell(setup, index[id(setup)])
        for source in (solution, solution.replace("def launch(out):", "def launch(out:", 1)):
            exercise_cell.source = source
            for cell in (exercise_cell, check_cell, probe):
                client.execute_cell(cell, index[id(cell)])
            verdicts.append(json.loads(probe.outputs[0]["text"]))
        exercise_cell.source = solution
    assert verdicts[0] == {"verdict": "passed", "passed": True}
    assert verdicts[1] == {"verdict": "not_checked", "passed": False}
    card = check_cell.outputs[-1]["data"]["text/html"]
    assert "Not checked" in card and "SyntaxError at line" in card
    import sqlite3

    with sqlite3.connect(tmp_path / "home" / "progress.sqlite") as db:
        assert db.execute("SELECT verdict FROM attempts").fetchall() == [("passed",)]
