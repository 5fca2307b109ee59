"""One headless Chromium and one JupyterLab for all the browser tests (each takes seconds to
start). Without Chromium the tests skip, saying how to install it; under ZEROGPU_REQUIRE_BROWSER=1
(CI) they fail instead, so a missing install cannot pass as green."""

from __future__ import annotations

import os
import shutil

import pytest

import lab
import web
from grader.exercises import ROOT


@pytest.fixture(scope="session")
def artifacts():
    return web.artifacts_dir(ROOT)


@pytest.fixture(scope="session")
def browser():
    why = web.missing()
    if why and os.environ.get("ZEROGPU_REQUIRE_BROWSER") == "1":
        pytest.fail(f"ZEROGPU_REQUIRE_BROWSER=1, but {why}", pytrace=False)
    if why:
        pytest.skip(why)
    driver = web.start_chromium()
    yield driver
    driver.quit()


@pytest.fixture(scope="session")
def jupyter_lab(browser, tmp_path_factory, artifacts):
    """JupyterLab as `make lab` starts it, on copies of the lessons it makes (lab.LESSONS, removed
    afterwards); its log is kept beside the screenshots."""
    shutil.rmtree(lab.LESSONS, ignore_errors=True)
    server, process = lab.start_lab(lab.LESSONS, tmp_path_factory.mktemp("lab"), artifacts / "jupyterlab.log")
    yield server
    lab.stop_lab(process)
    shutil.rmtree(lab.LESSONS, ignore_errors=True)
    try:
        lab.LESSONS.parent.rmdir()  # my-lessons/, when the tests made it
    except OSError:
        pass
