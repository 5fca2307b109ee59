"""Each recorded kernel's text, taken from the grader's own copy of the hand-in.

A recording child runs the submission, so whatever it sends is the submission's to shape: a
kernel's description could carry another `def` than the file's. So a recording names a kernel
only by where its `def` starts (`firstline`, the decorator's line) and its name; the grader
parses the bytes it read from the hand-in itself and puts that `def`'s text into the
description. The policy, numba-cuda, the kernel doctor and the simulator then all take one
text: the hand-in's. A kernel the file does not define at that line (built by `exec`, taken
from another module) is refused: the grader runs only kernels written in the hand-in.
"""

from __future__ import annotations

import ast
import copy
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from grader.steps.load import decoded
from grader import pysource

NOT_IN_FILE = (
    "the grader found no kernel `{name}` at line {line} of your file: write each kernel and device "
    "function as a `def` under `@cuda.jit` in the file itself (not made by `exec`, nor imported)"
)


class NotInHandIn(ValueError):
    """A description whose `def` is not in the hand-in where it says: a learner's message."""


@dataclass(frozen=True)
class HandIn:
    """The hand-in as the grader read it: its text, the name messages give it, and its bytes
    (which a recording child gets a copy of: it decodes them as the grader did)."""

    text: str
    filename: str
    data: bytes = b""
    _defs: dict = field(default_factory=dict, compare=False, repr=False)

    def lines(self) -> int:
        return self.text.count("\n") + 1

    def def_at(self, firstline: int) -> ast.FunctionDef | None:
        """The `def` (at any depth) whose first line, decorators included, is `firstline`."""
        if not self._defs:
            try:
                tree = pysource.parse(self.text)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                tree = ast.Module(body=[], type_ignores=[])
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef):
                    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                    self._defs.setdefault(first, node)
            self._defs.setdefault(0, None)  # parsed, even if it holds no `def`
        return self._defs.get(firstline)

    def source_of(self, name: str, firstline: int) -> str:
        """The text of the `def` named `name` starting at `firstline`, as `inspect.getsource`
        gives it (decorators included, dedented); NotInHandIn when there is none."""
        node = self.def_at(firstline) if isinstance(firstline, int) else None
        if node is None or node.name != name:
            raise NotInHandIn(NOT_IN_FILE.format(name=str(name)[:100], line=firstline))
        lines = self.text.splitlines(True)[firstline - 1 : node.end_lineno]
        return textwrap.dedent("".join(lines))


def hand_in_of(path) -> HandIn:
    """A file read as the grader reads a hand-in (its bytes, decoded as Python decodes them)."""
    data = Path(path).read_bytes()
    return HandIn(decoded(data), Path(path).name, data)


def pinned(kernels: dict, hand_in: HandIn) -> dict:
    """kernel key -> its description with the hand-in's text as `source` and the hand-in's
    name as `filename` (device functions too), whatever the descriptions carried."""
    kernels = copy.deepcopy(kernels)
    todo = list(kernels.values())
    while todo:
        desc = todo.pop()
        if desc.get("lambda"):
            raise NotInHandIn("a kernel is a lambda: write it as a `def` under `@cuda.jit`")
        desc["source"] = hand_in.source_of(desc.get("name"), desc.get("firstline"))
        desc["filename"] = hand_in.filename
        todo += [v[1] for v in desc["globals"].values() if v[0] == "device"]
    return kernels
