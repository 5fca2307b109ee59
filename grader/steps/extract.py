"""Rebuild a standalone module from a `launch` function defined in a notebook, so that
`grader.checking.pipeline` can run it in a child process (time limit, crash isolation) like the CLI.

We follow the names `launch` uses, transitively: functions and kernels are copied by source,
modules become imports, numbers and strings become assignments. Anything else (a global
array, a closure, a lambda) makes extraction fail, and the caller checks in-process instead.
"""

from __future__ import annotations

import ast
import dis
import inspect
import textwrap
import types


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
    tree = ast.parse(source)
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


def _source(func) -> str:
    if func.__name__ == "<lambda>" or func.__code__.co_freevars:
        raise NotExtractable(f"{func.__name__} is a lambda or closure")
    try:
        return textwrap.dedent(inspect.getsource(func))
    except (OSError, TypeError) as exc:
        raise NotExtractable(f"no source for {func.__name__}") from exc


def _numba_import(name: str, value):
    import numba

    if getattr(numba, name, object()) is value:
        return f"from numba import {name}"
    return None


def module_source(launch) -> str:
    """Source text of a module defining `launch` and everything it uses."""
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
        source = _source(f)
        definitions.append(source)
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
    parts = sorted(set(imports)) + [""] + sorted(set(assignments)) + [""] + list(reversed(definitions))
    if func.__name__ != "launch":
        parts.append(f"launch = {func.__name__}")
    return "\n".join(parts) + "\n"
