"""Numba's refusal of a kernel, in a learner's words: the line, what a GPU needs, the fix."""

from __future__ import annotations

import ast
import inspect
import linecache
import re
import textwrap

from grader.steps.compile_errors import ARGUMENT_COUNT, DURING_AT, FILE_LINE, NO_IMPLEMENTATION, why
from grader.steps.explain import ErrorInfo, missing_attribute
from grader.compiler.describe import jit_python_function
from grader import pysource


def _return_line(py_func) -> int | None:
    """The line of the kernel's first `return <value>` (Numba's message names none)."""
    try:
        lines, first = inspect.getsourcelines(py_func)
        tree = pysource.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Return) and node.value is not None:
            return node.lineno + first - 1
    return None


def _refused_line(text: str, py_func) -> int | None:
    filename = py_func.__code__.co_filename
    for pattern in (FILE_LINE, DURING_AT):
        for path, line in pattern.findall(text):
            if path.endswith(filename.rsplit("/", 1)[-1]):
                return int(line)
    found = NO_IMPLEMENTATION.search(text) or ARGUMENT_COUNT.search(text)  # no line: the first call
    if found:
        try:
            lines, first = inspect.getsourcelines(py_func)
        except (OSError, TypeError):
            return None
        call = re.compile(rf"\b{re.escape(found.group(1))}\s*\(")
        return next((first + k for k, ln in enumerate(lines) if call.search(ln)), None)
    return None


def _functions_of(py_func) -> list:
    """The kernel and the device functions it calls by name (one level is where loops hide)."""
    found = [py_func]
    for name in py_func.__code__.co_names:
        called = jit_python_function(py_func.__globals__.get(name))
        if called is not None and called[0] not in found:
            found.append(called[0])
    return found


def _endless_loop(py_func):
    """(function, line) of a `while True:` with no `break` or `return` inside, else None."""
    for fn in _functions_of(py_func):
        try:
            lines, first = inspect.getsourcelines(fn)
            tree = pysource.parse(textwrap.dedent("".join(lines)))
        except (OSError, TypeError, SyntaxError):
            continue
        for node in ast.walk(tree):
            endless = isinstance(node, ast.While) and isinstance(node.test, ast.Constant) and node.test.value
            if endless and not any(isinstance(n, (ast.Break, ast.Return)) for n in ast.walk(node)):
                return fn, node.lineno + first - 1
    return None


NO_VALUE = re.compile(r"\bnone\b")


def _never_returns(py_func, text: str):
    """Numba types a call of a function that never returns as `none`, and then refuses what uses
    it (`setitem(array, int64, none)`, `add(none, float32)`): name the loop that never ends."""
    found = _endless_loop(py_func) if NO_VALUE.search(text) else None
    if found is None:
        return None
    fn, line = found
    reason = (
        f"`{fn.__name__}` never finishes: the loop at line {line} has no way out (no `break` or "
        "`return` inside), so Numba gives its result no value (`none`) and cannot use it. Run on a "
        "GPU, the kernel would not even compile; were it to compile, it would never finish."
    )
    return fn.__code__.co_filename, line, reason, "Give the loop an exit: a condition that becomes false, or a `break`."


def refusal(py_func, answer: dict) -> ErrorInfo:
    """An `exception` verdict for a kernel Numba's CUDA compiler refused."""
    text = answer.get("message", "")
    name = py_func.__name__
    filename = py_func.__code__.co_filename
    returns = "void return type" in text
    line = _return_line(py_func) if returns else _refused_line(text, py_func)
    misspelt = None if returns else missing_attribute(None, text)  # `cuda.threadidx`: a suggestion
    reason, hint = misspelt if misspelt else (why(f"`{name}`", text, returns), "")
    endless = None if returns or misspelt else _never_returns(py_func, text)
    if endless:
        filename, line, reason, hint = endless
    source = linecache.getline(filename, line).strip() if line else ""
    where = f" (line {line})" if line and not source else ""
    message = (
        f"A GPU would not compile your kernel `{name}`{where}: {reason} "
        "(Checked with Numba's CUDA compiler before running: what a GPU refuses, the "
        "CPU refuses too.)"
    )
    return ErrorInfo("exception", message, answer.get("error_type", "CompileError"), line, source, hint=hint)


def _line_naming(py_func, why: str) -> int | None:
    """The first line of the kernel naming what `why` names in backticks, else its `def` line."""
    try:
        lines, first = inspect.getsourcelines(py_func)
    except (OSError, TypeError):
        return None
    named = re.findall(r"`([A-Za-z_]\w*)`", why)
    for name in named[:1]:
        word = re.compile(rf"\b{re.escape(name)}\b")
        body = [k for k, ln in enumerate(lines) if word.search(ln) and not ln.lstrip().startswith(("def ", "@"))]
        if body:
            return first + body[0]
    return next((first + k for k, ln in enumerate(lines) if re.match(r"\s*def\s", ln)), first)


def unverifiable(py_func, answer: dict) -> ErrorInfo:
    """An `exception` verdict for a kernel the compile check cannot carry to the compiler:
    never run unchecked, since a GPU refused every such kernel tried (a list global, a lambda,
    a default argument)."""
    why, fix = answer.get("why", ""), answer.get("fix", "")
    name = py_func.__name__
    line = _line_naming(py_func, why)
    source = linecache.getline(py_func.__code__.co_filename, line).strip() if line else ""
    gpu = "" if answer.get("grader") else "; a GPU refuses such a kernel too"
    message = (
        f"Your kernel `{name}` cannot be checked the way a GPU compiles it: {why}. Without a GPU the "
        f"grader runs only kernels Numba's CUDA compiler has accepted, so it did not run this one{gpu}. "
        f"Fix: {fix}."
    )
    return ErrorInfo("exception", message, "CompileCheck", line, source, hint=fix[:1].upper() + fix[1:] + ".")
