"""JupyterLab as `zerogpu lab` starts it (`make lab`, `make course-lab`; tests/browser/ start it
the same way): the learner's lab on their own copies of the lessons (grader/learner/lessons.py),
or the course lab, with nbgrader, on a course folder.

Both get a Jupyter configuration of their own, written into a state folder and put first on
`JUPYTER_CONFIG_PATH` (the user's own Jupyter configuration is left alone):
- terminals start the learner's shell through grader/learner/terminal.py, so `zerogpu` works
  in them whatever the shell's start-up files do to PATH;
- JupyterLab's question about news is not asked (its announcements plugin is off);
- in the learner's lab nbgrader is off: its menu, validate, create-assignment, formgrader and
  assignment list (its lab extension), and its server extensions.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from grader.learner.lessons import Delivered, refresh
from grader.learner.terminal import BIN, START_UP_FILES
from grader.paths import ROOT, data_dir

CURRICULUM = ROOT / "curriculum"
LESSONS = ROOT / "my-lessons"
"""The learner's copies of the lessons (git-ignored): what `make lab` opens."""

NBGRADER_LAB_EXTENSION = "@jupyter/nbgrader"
NBGRADER_SERVER_EXTENSIONS = (
    "nbgrader.server_extensions.formgrader",
    "nbgrader.server_extensions.validate_assignment",
    "nbgrader.server_extensions.assignment_list",
    "nbgrader.server_extensions.course_list",
)
NEWS = "@jupyterlab/apputils-extension:announcements"
"""The plugin that asks, on a first start, whether to fetch Jupyter news."""


@dataclass(frozen=True)
class Lab:
    """How to start one lab: run `command` with `env`."""

    command: list
    env: dict
    folder: Path


def learner_lab(lessons: Path = LESSONS, state: Path | None = None) -> tuple[Lab, list[Delivered]]:
    """The learner's lab on `lessons`, their copies, brought up to date first (`refresh`)."""
    delivered = refresh(CURRICULUM, lessons)
    return prepare(lessons, state or state_folder("learner")), delivered


def course_lab(folder: Path, state: Path | None = None) -> Lab:
    """The lab of an nbgrader course, nbgrader on, on `folder` (a course's, for the formgrader)."""
    return prepare(folder, state or state_folder("course"), course=True)


def state_folder(kind: str) -> Path:
    """Where a lab's configuration is written: beside this Python environment (a project's
    .venv), else in the data folder when that is read-only."""
    folder = Path(sys.prefix) / "share" / "zerogpu-lab" / kind
    try:
        folder.mkdir(parents=True, exist_ok=True)
        return folder
    except OSError:
        return data_dir() / "lab" / kind


def prepare(folder: Path, state: Path, *, course: bool = False, python: str = sys.executable, env=None) -> Lab:
    """Write the lab's configuration into `state` and say how to start JupyterLab on `folder`
    with `python` (whose `bin` folder goes first on PATH: its kernels, terminals and `zerogpu`
    are this environment's). `course`: nbgrader stays on."""
    env = dict(os.environ if env is None else env)
    config = state / "config"
    _write_json(config / "labconfig" / "page_config.json", {"disabledExtensions": _disabled(course)})
    server = {"terminado_settings": {"shell_command": [python, "-m", "grader.learner.terminal", str(state)]}}
    if not course:
        server["jpserver_extensions"] = dict.fromkeys(NBGRADER_SERVER_EXTENSIONS, False)
    _write_json(config / "jupyter_server_config.json", {"ServerApp": server})
    for name, text in START_UP_FILES.items():
        (state / name).parent.mkdir(parents=True, exist_ok=True)
        (state / name).write_text(text, encoding="utf-8")
    bin_dir = str(Path(python).parent)
    env[BIN] = bin_dir
    env["PATH"] = os.pathsep.join([bin_dir, env.get("PATH", "")])
    env["JUPYTER_CONFIG_PATH"] = os.pathsep.join(p for p in (str(config), env.get("JUPYTER_CONFIG_PATH")) if p)
    command = [python, "-m", "jupyterlab", f"--notebook-dir={folder}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")
    return Lab(command, env, folder)


def _disabled(course: bool) -> dict:
    return {NEWS: True} if course else {NEWS: True, NBGRADER_LAB_EXTENSION: True}


def _write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
