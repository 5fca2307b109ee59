"""Zero to GPU's grader: checks Numba CUDA kernels on a GPU or on Numba's CUDA simulator.

`import grader` before anything imports numba: it chooses the back end first.
"""
from grader.backend import activate as _activate

BACKEND = _activate()

from grader.check import check  # noqa: E402  (after the back end is chosen)
from grader.exercises import exercise, ladder  # noqa: E402

__all__ = ["BACKEND", "check", "exercise", "ladder"]
