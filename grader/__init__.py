"""Zero to GPU's grader: checks Numba CUDA kernels on a GPU or without one (the kernel doctor,
or Numba's CUDA simulator).

`import grader` before anything imports numba: it chooses the back end first. This package's
own namespace is the notebook's facade: `grader.check(id, launch)` checks and records the
learner's progress; `grader.widgets` and `grader.doctor` are what the lessons use.
"""

import threading as _threading

from grader.backend import activate as _activate

BACKEND = _activate()

from grader import wiring as _wiring  # noqa: E402

_wiring.install()  # the tables lower layers read (the simulator's steps, the views), in written order

from grader.checking import notebook as _notebook  # noqa: E402
from grader.exercises import exercise, ladder  # noqa: E402
from grader.learner import progress as _progress  # noqa: E402
from grader.notebook import cells as _cells  # noqa: E402
from grader.notebook.status_line import status_line as _status_line  # noqa: E402
from grader.settings import CASE_TIMEOUT  # noqa: E402


def _ready_for_a_check() -> None:
    """Start the next check's two children now (a recording child, grader/children/recording.py
    `record_ahead`; a checking child, grader/children/spares.py `spare_ahead`), so that a
    notebook's check waits for no Python start-up: they import while the learner reads."""
    from grader.children import recording, spares  # noqa: PLC0415 - a check's machinery, loaded as a check loads it

    try:
        recording.record_ahead()
        spares.spare_ahead()
    except OSError:  # no process could start now: the next check starts its own
        pass


_runs = _cells.watch()  # in a notebook's kernel: which cells ran and how, so a check sees a stale `launch`
if _runs is not None:  # the first check's children start once the cell importing grader is done
    _runs.when_done.append(lambda: _threading.Thread(target=_ready_for_a_check, daemon=True).start())


def check(exercise_id: str, launch, **options):
    """Check a notebook's `launch` (grader/checking/notebook.py `check`) and record the attempt
    in the learner's progress. In a notebook, a line under the cell states each case's time
    limit and follows the case under way. A `launch` that is not its cell as it stands (the
    cell raised when it last ran, or changed since: grader/notebook/cells.py) is not checked
    and nothing is recorded. Never raises for a learner's bug."""
    cases = len(exercise(exercise_id).spec.cases) + 1  # the last one again, with fresh inputs
    stale = _cells.not_as_it_stands(exercise_id, launch)
    if stale is not None:
        return stale
    limit = options.get("case_timeout", CASE_TIMEOUT)
    with _status_line(f"Checking {exercise_id}: {cases} cases, each may take up to {limit:g} s.") as progress:
        result = _notebook.check(exercise_id, launch, progress=progress, **options)
    _progress.record(result)
    _ready_for_a_check()
    return result


def __getattr__(name):  # `from grader import widgets` in lessons written before the re-layout
    if name == "widgets":
        from grader.notebook import widgets  # noqa: PLC0415 - matplotlib, ipywidgets: only a lesson that draws

        return widgets
    raise AttributeError(f"module 'grader' has no attribute {name!r}")


__all__ = ["BACKEND", "check", "exercise", "ladder"]
