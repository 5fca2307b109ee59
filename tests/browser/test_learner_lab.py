"""The learner's first hour in the lab `make lab` starts, in a real browser: a check run after a
failed exercise cell claims no pass; `zerogpu list` typed in a lab terminal works; nbgrader's
instructor tools and JupyterLab's news question are not there; a save changes no tracked file."""

from __future__ import annotations

import subprocess

import nbformat
import pytest

import lab
import web
from grader.exercises import ROOT
from test_lessons import tagged_cell

pytestmark = pytest.mark.browser
LESSON, EXERCISE = "02-vector-add-launch-and-timing", "vector_add"
"""A lesson the lesson tests (test_lessons.py) leave alone: these tests edit and save it."""


def test_a_check_after_a_failed_exercise_cell_claims_no_pass(browser, jupyter_lab, artifacts):
    """The solution in the exercise cell: the check passes. The same cell with a syntax error,
    run (it fails), then the check cell on its own: the card says the cell raised, not Passed."""
    nb = nbformat.read(lab.CURRICULUM / f"{LESSON}.ipynb", as_version=4)
    exercise_cell, check_cell = tagged_cell(nb, "exercise"), tagged_cell(nb, "check")
    solution = (ROOT / "solutions" / f"{EXERCISE}.py").read_text(encoding="utf-8")
    web.console_errors(browser)
    page = lab.NotebookPage(browser, jupyter_lab, f"{LESSON}.ipynb")
    page.wait_for_cells(len(nb.cells))
    page.run_all()
    page.paste_into(exercise_cell, solution)
    page.run_from(exercise_cell)
    assert "Passed" in page.output_text(check_cell), page.output_text(check_cell)

    page.paste_into(exercise_cell, solution + "\nblocks = (\n")  # a syntax error on its last line
    page.run_cell(exercise_cell)
    assert "SyntaxError" in page.stderr() or "SyntaxError" in page.output_text(exercise_cell)
    page.run_cell(check_cell)
    card = page.output_text(check_cell)
    page.cell(check_cell).screenshot(str(artifacts / "lab-check-after-a-syntax-error.png"))
    assert "Not checked" in card and "your exercise cell raised SyntaxError at line" in card, card
    assert "Passed" not in card, card
    page.save()  # the learner's copy; leaves no unsaved change behind for the next page
    assert web.console_errors(browser) == []


def test_zerogpu_list_works_in_a_lab_terminal(browser, jupyter_lab, artifacts):
    """Typed into a terminal of the lab, does `zerogpu list` print the ladder (not "command
    not found"), whatever the shell's start-up files do to PATH?"""
    terminal = lab.TerminalPage(browser, jupyter_lab)
    terminal.type("zerogpu list")
    try:
        web.wait_for(
            lambda: "scan" in terminal.text() or "not found" in terminal.text(), lab.START_SECONDS, "zerogpu list"
        )
    finally:
        browser.save_screenshot(str(artifacts / "lab-terminal-zerogpu-list.png"))
    shown = terminal.text()
    assert "not found" not in shown and "thread_ids" in shown and "the ladder" in shown, shown


def test_the_learners_lab_has_no_nbgrader_and_asks_no_news_question(browser, jupyter_lab, artifacts):
    """No Nbgrader menu, no Validate button, no Create Assignment panel, no question about news."""
    page = lab.NotebookPage(browser, jupyter_lab, f"{LESSON}.ipynb")
    page.wait_for_cells(len(nbformat.read(lab.CURRICULUM / f"{LESSON}.ipynb", as_version=4).cells))
    menus = browser.execute_script("return [...document.querySelectorAll('.lm-MenuBar-item')].map(e => e.textContent)")
    assert "Run" in menus and "Nbgrader" not in menus, menus
    panels = browser.execute_script(
        "return [...document.querySelectorAll('.jp-SideBar .lm-TabBar-tab')].map(e => e.title || e.textContent)"
    )
    assert panels and not [p for p in panels if "Nbgrader" in p or "Assignment" in p], panels
    buttons = browser.execute_script("return [...document.querySelectorAll('button')].map(b => b.textContent.trim())")
    assert "Validate" not in buttons
    notices = browser.execute_script("return [...document.querySelectorAll('.Toastify')].map(e => e.innerText)")
    assert not [n for n in notices if "news" in n.lower()], notices
    browser.save_screenshot(str(artifacts / "lab-no-nbgrader.png"))
    page.save()  # the kernel's language, written into the notebook's metadata on opening


def git_status() -> str:
    return subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout


def test_a_save_in_the_lab_leaves_git_status_clean(browser, jupyter_lab):
    """The learner edits a lesson and saves: their copy changes, and no tracked file does (nor
    does any new file show to git)."""
    before = git_status()
    page = lab.NotebookPage(browser, jupyter_lab, f"{LESSON}.ipynb")
    nb = nbformat.read(lab.CURRICULUM / f"{LESSON}.ipynb", as_version=4)
    exercise_cell = tagged_cell(nb, "exercise")
    page.wait_for_cells(len(nb.cells))
    note = "# my own note, saved by the lab"
    page.paste_into(exercise_cell, nb.cells[exercise_cell].source + "\n" + note)
    page.save()
    copy = lab.LESSONS / f"{LESSON}.ipynb"
    assert note in copy.read_text(encoding="utf-8"), "the save did not reach the learner's copy"
    assert git_status() == before
