"""The learner's JupyterLab in a real browser: a lesson runs top to bottom, every widget shows
its controls and redraws its picture when one moves, the check card says "Not yet" with a hint
for the starter and "Passed" once the solution is pasted into the exercise cell, and the
browser's console stays free of errors. Screenshots of each state go to the artefacts folder."""

from __future__ import annotations

from dataclasses import dataclass

import nbformat
import pytest

import lab
import web
from grader.exercises import LADDER, ROOT

pytestmark = pytest.mark.browser
REDRAW_SECONDS = 60  # the kernel draws the new picture with matplotlib, on a busy machine


@dataclass(frozen=True)
class Lesson:
    notebook: str
    live_widgets: int
    """Widgets with controls the lesson shows (`grader.notebook.widgets` explorers)."""


LESSONS = (
    Lesson("01-first-kernel-thread-ids", live_widgets=1),
    Lesson("07-histogram-privatisation", live_widgets=0),
    Lesson("12-warp-reduce-shuffles", live_widgets=0),
)


def tagged_cell(nb, tag: str) -> int:
    """The index of the one code cell tagged `tag` (the lesson's exercise or check)."""
    found = [i for i, cell in enumerate(nb.cells) if tag in cell.get("metadata", {}).get("tags", [])]
    assert len(found) == 1, f"expected one cell tagged {tag!r}, found {len(found)}"
    return found[0]


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.notebook[:2])
def test_lesson_in_jupyterlab(lesson, browser, jupyter_lab, artifacts):
    """Does the lesson run in JupyterLab with working widgets, and does its check card say
    Not yet (with a hint) for the starter and Passed for the solution?"""
    nb = nbformat.read(lab.CURRICULUM / f"{lesson.notebook}.ipynb", as_version=4)
    exercise_cell, check_cell = tagged_cell(nb, "exercise"), tagged_cell(nb, "check")
    exercise_id = next(tag for tag in nb.cells[exercise_cell].metadata.tags if tag in LADDER)

    def shot(step: str) -> str:
        return str(artifacts / f"lesson-{lesson.notebook}-{step}.png")

    web.console_errors(browser)  # what earlier pages logged is theirs

    page = lab.NotebookPage(browser, jupyter_lab, f"{lesson.notebook}.ipynb")
    page.run_all()
    browser.save_screenshot(shot("1-ran-all"))
    assert page.unrun_cells() == [], f"Run All stopped before cells {page.unrun_cells()}:\n{page.stderr()}"
    assert_widgets_work(browser, page, lesson, shot)

    card = page.output_text(check_cell)
    page.cell(check_cell).screenshot(shot("3-starter-not-yet"))
    assert "Not yet" in card and "Hint:" in card, card

    page.paste_into(exercise_cell, (ROOT / "solutions" / f"{exercise_id}.py").read_text(encoding="utf-8"))
    page.run_from(exercise_cell)
    card = page.output_text(check_cell)
    page.cell(check_cell).screenshot(shot("4-solution-passed"))
    assert "Passed" in card and "Not yet" not in card, (
        f"{card}\n--- the exercise cell held:\n{page.source(exercise_cell)}"
    )

    assert web.broken_images(browser) == []
    assert web.console_errors(browser) == []


def assert_widgets_work(browser, page, lesson: Lesson, shot) -> None:
    """Each live widget rendered (controls and a picture that decodes), and each of its
    controls, moved, redraws the picture."""
    assert page.widget_errors() == []
    views = page.widget_views()
    assert len(views) == lesson.live_widgets, (
        f"{lesson.notebook} shows {len(views)} live widget(s) where {lesson.live_widgets} were expected "
        "(a widget that fails to render in JupyterLab leaves its still picture, or nothing)"
    )
    for number, view in enumerate(views, 1):
        moves = lab.controls(view)
        assert moves, f"widget {number} shows no control"
        assert web.broken_images(browser, view) == [] and lab.picture_bytes(browser, view), "no picture"
        view.screenshot(shot(f"2-widget{number}-0"))
        for step, control in enumerate(moves, 1):
            before = lab.picture_bytes(browser, view)
            done = lab.move(browser, control)
            web.wait_for(
                lambda: lab.picture_bytes(browser, view) not in ("", before),
                REDRAW_SECONDS,
                f"widget {number}'s picture to change after it {done}",
            )
            view.screenshot(shot(f"2-widget{number}-{step}"))
