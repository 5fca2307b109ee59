"""Rebuild a standalone module from a `launch` function defined in a notebook, so that
`grader.checking.check` can run it in a child process (time limit, crash isolation) like the CLI.

We follow the names `launch` uses, transitively: functions and kernels are copied by source,
modules become imports, numbers and strings become assignments. Anything else (a global
array, a closure, a lambda) makes extraction fail, and the caller checks in-process instead.

Every line a check reports must be the learner's line in their cell, so each function is
copied to the line it has in its cell, and the imports and constants go into the lines above
the first one (joined by `;` when there are more of them than lines). Then every line number
the child produces (a verdict, a doctor finding, a compile error, the excerpt shown) is
already the cell's. Where that layout is impossible (two cells' functions on the same lines,
or a function on a cell's first line with imports to place), the functions follow one another
and `Extracted.lines` maps the file's lines back; when the functions come from several cells,
it also names each line's cell ("line 12 of cell In[4]", as IPython's own tracebacks do).
"""

from __future__ import annotations

import ast
import dis
import inspect
import re
import sys
import textwrap
import types
from dataclasses import dataclass, field
from pathlib import Path
from grader import pysource


class NotExtractable(Exception):
    pass


def code_names(code) -> set:
    """Global names the code reads (not attribute names like `.shape`)."""
    names = {i.argval for i in dis.get_instructions(code) if i.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= code_names(const)
    return names


def _decorator_names(source: str) -> set:
    """Names a definition needs at definition time: its decorators (e.g. `cuda` in @cuda.jit)."""
    tree = pysource.parse(source)
    names = set()
    for node in tree.body:
        for decorator in getattr(node, "decorator_list", []):
            names |= {n.id for n in ast.walk(decorator) if isinstance(n, ast.Name)}
    return names


def _python_function(value):
    """The plain Python function behind a value (a numba dispatcher's py_func), or None."""
    if isinstance(value, types.FunctionType):
        return value
    py_func = getattr(value, "py_func", None)
    return py_func if isinstance(py_func, types.FunctionType) else None


@dataclass(frozen=True)
class Definition:
    """One function copied by source, and where it came from."""

    name: str
    text: tuple
    """Its lines, dedented, without line ends."""
    cell: str
    """The file its code was compiled from: a notebook cell's own name (co_filename)."""
    first: int
    """Its first line (the first decorator's) in that cell."""


_LINE = re.compile(r"\bline (\d+)\b")


@dataclass(frozen=True)
class Extracted:
    """The module's text, and how its line numbers map back to the learner's cells."""

    source: str
    lines: dict = field(default_factory=dict)
    """File line -> (line in its cell, the cell's name or "" when all come from one cell), for
    the lines of copied functions; empty when every file line already is the cell's line."""

    def line(self, number):
        """A line number of the file as the learner's line (numbers not in a copied function
        are left alone)."""
        return self.lines[number][0] if number in self.lines else number

    def text(self, message: str) -> str:
        """A message with each "line N" of the file said as the learner's line."""
        if not self.lines or not message:
            return message

        def said(match):
            number = int(match.group(1))
            if number not in self.lines:
                return match.group(0)
            line, cell = self.lines[number]
            return f"line {line}" + (f" of {cell}" if cell else "")

        return _LINE.sub(said, message)


def _definition(func) -> Definition:
    if func.__name__ == "<lambda>" or func.__code__.co_freevars:
        raise NotExtractable(f"{func.__name__} is a lambda or closure")
    try:
        lines, first = inspect.getsourcelines(func)
    except (OSError, TypeError) as exc:
        raise NotExtractable(f"no source for {func.__name__}") from exc
    text = textwrap.dedent("".join(lines)).splitlines()
    return Definition(func.__name__, tuple(text), func.__code__.co_filename, max(first, 1))


def cell_name(filename: str) -> str:
    """How a learner knows the cell a function came from: IPython's own name for it ("cell
    In[4]", as in its tracebacks), else the file's name."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    numbers = getattr(getattr(shell, "compile", None), "_filename_map", None) or {}
    if numbers.get(filename) is not None:
        return f"cell In[{numbers[filename]}]"
    return f"`{Path(filename).name}`"


def _numba_import(name: str, value):
    import numba

    if getattr(numba, name, object()) is value:
        return f"from numba import {name}"
    return None


def module_source(launch) -> str:
    """Source text of a module defining `launch` and everything it uses."""
    return extract(launch).source


def extract(launch) -> Extracted:
    """A module defining `launch` and everything it uses, each function on its cell's lines
    where it can be (the module docstring says how)."""
    func = _python_function(launch)
    if func is None:
        raise NotExtractable("launch is not a Python function")
    namespace = func.__globals__
    imports, assignments, definitions = [], [], []
    seen, queue = set(), [func]
    while queue:
        f = queue.pop()
        if f.__name__ in seen:
            continue
        seen.add(f.__name__)
        definition = _definition(f)
        source = "\n".join(definition.text) + "\n"
        definitions.append(definition)
        for name in sorted(code_names(f.__code__) | _decorator_names(source)):
            if name in seen or name not in namespace:
                continue  # a builtin, an attribute name, or already copied
            value = namespace[name]
            inner = _python_function(value)
            if inner is not None and inner.__name__ == name:
                queue.append(inner)
            elif isinstance(value, types.ModuleType):
                line = f"import {value.__name__}" + ("" if value.__name__ == name else f" as {name}")
                imports.append(line.replace("import numba.cuda as cuda", "from numba import cuda"))
                seen.add(name)
            elif isinstance(value, (bool, int, float, str)) or (
                isinstance(value, tuple) and all(isinstance(v, (bool, int, float, str)) for v in value)
            ):
                assignments.append(f"{name} = {value!r}")
                seen.add(name)
            elif _numba_import(name, value):
                imports.append(_numba_import(name, value))
                seen.add(name)
            else:
                raise NotExtractable(f"`{name}` ({type(value).__name__}) cannot be copied")
    preamble = sorted(set(imports)) + sorted(set(assignments))
    tail = [f"launch = {func.__name__}"] if func.__name__ != "launch" else []
    definitions.reverse()
    return _on_cell_lines(preamble, definitions, tail) or _one_after_another(preamble, definitions, tail)


def _cell_names(definitions) -> dict:
    """Each cell's name, or "" for all when the functions come from one cell."""
    cells = {d.cell for d in definitions}
    return {c: cell_name(c) if len(cells) > 1 else "" for c in cells}


def _on_cell_lines(preamble: list, definitions: list, tail: list) -> Extracted | None:
    """Every function on its own cell's lines, the preamble above the first; None when two
    functions claim one line or the preamble has no line to go to."""
    owner: dict = {}
    for d in definitions:
        for number in range(d.first, d.first + len(d.text)):
            if number in owner:
                return None
            owner[number] = d
    room = min(d.first for d in definitions) - 1
    if preamble and room < 1:
        return None
    head = preamble if len(preamble) <= room else ["; ".join(preamble)]
    lines = [""] * max(owner)
    lines[: len(head)] = head
    for d in definitions:
        lines[d.first - 1 : d.first - 1 + len(d.text)] = d.text
    names = _cell_names(definitions)
    mapped = {n: (n, names[d.cell]) for n, d in owner.items()} if any(names.values()) else {}
    return Extracted("\n".join(lines + tail) + "\n", mapped)


def _one_after_another(preamble: list, definitions: list, tail: list) -> Extracted:
    """The preamble, then the functions cell by cell, with a map back to the cells' lines."""
    names, order = _cell_names(definitions), {}
    for d in definitions:
        order.setdefault(d.cell, len(order))
    lines, mapped = list(preamble), {}
    for d in sorted(definitions, key=lambda d: (order[d.cell], d.first)):
        lines.append("")
        for k, text in enumerate(d.text):
            lines.append(text)
            mapped[len(lines)] = (d.first + k, names[d.cell])
    return Extracted("\n".join(lines + tail) + "\n", mapped)
