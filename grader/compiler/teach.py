"""Numba's refusal of a kernel, in a learner's words: the line, what a GPU needs, the fix."""

from __future__ import annotations

import ast
import inspect
import linecache
import re
import textwrap

from grader.steps.explain import ErrorInfo, missing_attribute

_FILE_LINE = re.compile(r'File "([^"]*)", line (\d+)')
_DURING_AT = re.compile(r"During: typing of .* at (.*) \((\d+)\)")
_ARGUMENT_COUNT = re.compile(r"(\w+)\(\) takes (\d+) positional arguments? but (\d+) (?:was|were) given")
_NO_IMPLEMENTATION = re.compile(
    r"No implementation of function Function\(<[^>]*?(\w+)(?: at 0x\w+)?>\) "
    r"found for signature:\s*>>> ([^\n]*)"
)
_NOISE = (
    "Failed in cuda mode pipeline",
    "During:",
    "No implementation of function",
    ">>>",
    "There are ",
    "- Of which",
    "Overload",
    "With argument",
    "Rejected as",
    "raised from",
    "File ",
    "<source elided>",
    "^",
    "Intrinsic of function",
    "No match",
)

SHAPE_FIX = (
    "`cuda.shared.array` and `cuda.local.array` need a shape Numba knows when it "
    "compiles: an integer, a module-level constant (e.g. `PADDED = TILE + 1` at the top "
    "of the file) or a tuple of those."
)


def _why(name: str, text: str, returns: bool) -> str:
    """What a GPU needs, and the fix, for the refusals learners meet most."""
    if returns:
        return (
            f"`{name}` returns a value, and a CUDA kernel cannot: on a GPU it ends with "
            "nothing to give back (Numba: \"CUDA kernel must have void return type\"). Write "
            "the results into an output array and end the kernel with a bare `return`, or none."
        )
    found = _ARGUMENT_COUNT.search(text)
    if found:
        called, takes, given = found.group(1), int(found.group(2)) - 1, int(found.group(3)) - 1
        why = f"`cuda.{called}` takes {takes} arguments, and the kernel gives {given}."
        if called.startswith("shfl") and given > takes:
            why += (
                " Numba's shuffles have no `width` argument (CUDA C's __shfl_*_sync do): a "
                "shuffle always spans the 32 lanes of a warp; to work in groups of 16 lanes, "
                "compute the source lane yourself or stop the offsets at 8."
            )
        return why
    if re.search(r"\blist\(|reflected list|List\(", text):
        return (
            "Python lists do not exist in a kernel (a GPU thread cannot allocate them). "
            "Use separate variables, or a `cuda.local.array(N, float32)` of a constant size."
        )
    found = re.search(r"Unknown attribute '(\w+)' of type Module\(<module '(\w+)'", text)
    if found:
        attr, module = found.groups()
        return (
            f"`{module}.{attr}` does not exist in a kernel: Numba's CUDA target has "
            f"{module}'s scalar functions (sqrt, exp, log, sin, …) but not `{attr}`. "
            "Compute it from those, or with a loop of your own."
        )
    found = re.search(r"Untyped global name '(\w+)'.*<class 'function'>", text)
    if found:
        return (
            f"`{found.group(1)}` is a plain Python function, and a kernel can only call "
            f"device functions. Put `@cuda.jit(device=True)` above `def {found.group(1)}`."
        )
    if "shared.array" in text or "local.array" in text:
        return SHAPE_FIX
    if "Unsupported array index type float" in text:
        return "an array index must be an integer, and `/` gives a float in Python 3: use `//` (or `int(...)`)."
    found = _NO_IMPLEMENTATION.search(text)
    if found:
        return (
            f"Numba's CUDA target has no `{found.group(1)}` for these argument types: "
            f"`{found.group(2).strip()}`. Check what the function takes (an int32 flag, not "
            "a bool, for `syncthreads_count`), and convert the argument."
        )
    found = re.search(r"Untyped global name '(\w+)'", text)
    if found:
        return (
            f"a kernel cannot use `{found.group(1)}`: Numba compiles kernels with numbers, "
            "arrays, constants and device functions only."
        )
    detail = next((ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith(_NOISE)), "")
    return (
        f"Numba's CUDA compiler says: {detail[:300]}"
        if detail
        else "Numba's CUDA compiler cannot type this line for the launch's argument types."
    )


def _return_line(py_func) -> int | None:
    """The line of the kernel's first `return <value>` (Numba's message names none)."""
    try:
        lines, first = inspect.getsourcelines(py_func)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Return) and node.value is not None:
            return node.lineno + first - 1
    return None


def _refused_line(text: str, py_func) -> int | None:
    filename = py_func.__code__.co_filename
    for pattern in (_FILE_LINE, _DURING_AT):
        for path, line in pattern.findall(text):
            if path.endswith(filename.rsplit("/", 1)[-1]):
                return int(line)
    found = _NO_IMPLEMENTATION.search(text) or _ARGUMENT_COUNT.search(text)  # no line: the first call
    if found:
        try:
            lines, first = inspect.getsourcelines(py_func)
        except (OSError, TypeError):
            return None
        call = re.compile(rf"\b{re.escape(found.group(1))}\s*\(")
        return next((first + k for k, ln in enumerate(lines) if call.search(ln)), None)
    return None


def refusal(py_func, answer: dict) -> ErrorInfo:
    """An `exception` verdict for a kernel Numba's CUDA compiler refused."""
    text = answer.get("message", "")
    name = py_func.__name__
    filename = py_func.__code__.co_filename
    returns = "void return type" in text
    line = _return_line(py_func) if returns else _refused_line(text, py_func)
    source = linecache.getline(filename, line).strip() if line else ""
    where = f" (line {line})" if line and not source else ""
    misspelt = None if returns else missing_attribute(None, text)  # `cuda.threadidx`: a suggestion
    why, hint = misspelt if misspelt else (_why(name, text, returns), "")
    message = (
        f"A GPU would not compile your kernel `{name}`{where}: {why} "
        "(Checked with Numba's CUDA compiler before running: what a GPU refuses, the "
        "CPU refuses too.)"
    )
    return ErrorInfo("exception", message, answer.get("error_type", "CompileError"), line, source, hint=hint)
