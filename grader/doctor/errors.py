"""The two ways the kernel doctor stops: it cannot run a kernel, or a kernel broke a rule that
ends a launch (an index outside an array)."""

from __future__ import annotations


class Unsupported(Exception):
    """A Numba feature the doctor does not implement; the grader falls back to Numba's
    simulator and says why (the message names the feature and, when known, the line)."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message if line is None else f"{message} (line {line})")
        self.feature, self.line = message, line


class OutOfBounds(Exception):
    """An index outside an array (negative ones included: the doctor never wraps them)."""

    def __init__(self, array: str, index: tuple, shape: tuple, axis: int, site: int, write: bool):
        self.array, self.index, self.shape, self.axis = array, index, shape, axis
        self.site, self.write = site, write
        super().__init__(f"{array}{list(index)} outside shape {shape} (axis {axis})")
