"""The instructor's pages in a real browser, opened from disk as an instructor opens them: the
class report (`zerogpu grade` + `zerogpu report` on a class of two) and nbgrader's feedback
pages. Every picture decodes, every in-page link lands, and the console stays free of errors."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

import web
from grader.exercises import ROOT

pytestmark = pytest.mark.browser
EXERCISE, NOTEBOOK, ASSIGNMENT = "vector_add", "02-vector-add-launch-and-timing", "warmup"
HANDED_IN = {  # student -> the file they hand in for vector_add: one right, one wrong
    "ada": ROOT / "solutions" / f"{EXERCISE}.py",
    "bob": ROOT / "tests" / "submissions" / EXERCISE / "no_bounds_guard.py",
}


def run(*args: str, cwd: Path) -> str:
    """A command of the project's venv (nbgrader finds `alembic` on PATH, as under `make`)."""
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    proc = subprocess.run([sys.executable, "-m", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{args}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


def open_page(driver, page: Path) -> None:
    web.console_errors(driver)  # what earlier pages logged is theirs
    driver.get(page.as_uri())
    web.wait_for(lambda: driver.execute_script("return document.readyState") == "complete", 30, f"{page} to load")


def assert_page_is_whole(driver, page: Path, screenshot: Path) -> None:
    web.full_page_screenshot(driver, screenshot)
    assert web.broken_images(driver) == [], f"{page}: pictures that do not decode"
    assert web.dead_links(driver) == [], f"{page}: in-page links to nothing"
    assert web.console_errors(driver) == [], f"{page}: errors in the browser's console"


def test_class_report(browser, artifacts, tmp_path):
    """Does the class report of a class of two show its charts, with working links and a
    clean console, opened as a file?"""
    for student, submission in HANDED_IN.items():
        (tmp_path / student).mkdir()
        shutil.copy(submission, tmp_path / student / f"{EXERCISE}.py")
    run("grader.cli", "grade", str(tmp_path), "--exercises", EXERCISE, "--workers", "2", cwd=ROOT)
    run("grader.cli", "report", str(tmp_path), cwd=ROOT)
    page = tmp_path / "report" / "report.html"

    open_page(browser, page)
    assert web.image_count(browser) >= 2, "the report shows its charts"
    assert_page_is_whole(browser, page, artifacts / "class-report.png")


def test_nbgrader_feedback(browser, artifacts, tmp_path):
    """Does nbgrader's feedback page, for a right and a wrong hand-in, have working links and
    a clean console, opened as a file?"""
    course = tmp_path / "course"
    run("grader.cli", "course", "init", str(course), "--assignments", f"{ASSIGNMENT}={EXERCISE}", cwd=ROOT)
    run("nbgrader", "generate_assignment", ASSIGNMENT, cwd=course)
    for student, submission in HANDED_IN.items():
        hand_in(course, student, submission.read_text(encoding="utf-8"))
    run("nbgrader", "autograde", ASSIGNMENT, cwd=course)
    run("nbgrader", "generate_feedback", ASSIGNMENT, cwd=course)

    for student in HANDED_IN:
        page = course / "feedback" / student / ASSIGNMENT / f"{NOTEBOOK}.html"
        open_page(browser, page)
        assert web.in_page_links(browser) > 0, "nbgrader's feedback links to each graded cell"
        assert_page_is_whole(browser, page, artifacts / f"feedback-{student}.png")


def hand_in(course: Path, student: str, source: str) -> None:
    """The released notebook with `source` in its exercise cell, as `nbgrader collect` leaves it."""
    nb = nbformat.read(course / "release" / ASSIGNMENT / f"{NOTEBOOK}.ipynb", as_version=4)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == EXERCISE)
    cell.source = source
    folder = course / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / f"{NOTEBOOK}.ipynb")
    (folder / "timestamp.txt").write_text("2026-12-01 12:00:00.000000 UTC")


def test_the_checks_see_a_broken_page(browser, tmp_path):
    """Would a picture that does not decode, a link to nothing and an uncaught error each be
    caught (the pages above may have none of them to show it)?"""
    page = tmp_path / "broken.html"
    page.write_text(
        "<!doctype html><title>broken</title><h2 id='here'>here</h2>"
        "<a href='#here'>fine</a> <a href='#nowhere'>dead</a> <a href='#top'>top</a>"
        "<img alt='not a picture' src='data:image/png;base64,bm90IGEgcGljdHVyZQ=='>"
        "<script>window.notDefined()</script>"
    )
    open_page(browser, page)
    assert web.dead_links(browser) == ["nowhere"]
    broken = web.broken_images(browser)
    assert len(broken) == 1 and "not a picture" in broken[0], broken
    assert any("notDefined" in error for error in web.console_errors(browser))
