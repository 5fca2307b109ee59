"""The `spare` role: the slow start-up (Python, numba, the compile helper, on a GPU the
compiler's first use) done before the task exists, then the task replayed as `replay` does
(grader/children/spares.py). A spare makes no CUDA context before its task arrives."""

from __future__ import annotations

from pathlib import Path

from grader.backend import current
from grader.children.folder import TASK
from grader.children.roles.common import wait_for, warm_up_compiler
from grader.children.roles.replay import import_replay_code, run_task
from grader.compiler.client import start_helper


def wait_then_replay(folder: Path) -> None:
    import_replay_code()
    import numba.cuda  # noqa: F401 - the back end's CUDA API, which an exercise's spec imports first

    start_helper()  # the compile helper's start-up too (the task would start it)
    if current() == "gpu":
        warm_up_compiler()
    wait_for(folder / TASK)
    run_task(folder)
