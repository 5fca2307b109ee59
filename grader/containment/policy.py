"""The static policy check: what a submission may import, call and touch.

Runs on the source before anything executes. The work must happen in the learner's own
`@cuda.jit` kernels: no library computing the answer, no copying device data to the host,
no reaching into Python's machinery (exec, dunder attributes, file or process access), no
touching streams, events or the context the grader times with.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from grader.containment.library_calls import RULE, library_message, refused_call
from grader.kernel_names import IMPORTABLE_NUMBA, MODULES_IN_TYPES, NUMBA_HELPERS, TYPES_MODULES
from grader.containment.scopes import ScopeTracker
from grader import pysource

DEFAULT_IMPORTS = ("numba", "numpy", "math")

FORBIDDEN_CALLS = {
    "exec": "runs code the grader cannot check",
    "eval": "runs code the grader cannot check",
    "compile": "runs code the grader cannot check",
    "__import__": "imports modules behind the policy's back",
    "open": "reads or writes files",
    "globals": "reaches into module state",
    "locals": "reaches into module state",
    "vars": "reaches into module state",
    "getattr": "looks names up dynamically",
    "setattr": "changes objects dynamically",
    "delattr": "changes objects dynamically",
    "breakpoint": "stops the grader",
    "input": "waits for a keyboard",
    "memoryview": "reads raw memory",
    "exit": "ends the grader's process",
    "quit": "ends the grader's process",
}

NUMPY_ALLOWED = {
    # dtypes and constants, for casts and typed literals
    "float16",
    "float32",
    "float64",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "bool_",
    "intp",
    "dtype",
    "finfo",
    "iinfo",
    "inf",
    "nan",
    "pi",
    "e",
    # small host arrays for constants handed to a kernel (never the answer)
    "empty",
    "zeros",
    "ones",
    "full",
    "arange",
    "array",  # a literal table of weights (reading a device array on the host stops while recording)
}

CUDA_FORBIDDEN = {
    # A recorded launch replays in order on the default stream of the grader's device
    # (grader/replay/): streams, the device's attributes and closing are answered while recording.
    "external_stream": "launches on another stream (use the default stream)",
    "event": "touches the grader's timers",
    "event_elapsed_time": "touches the grader's timers",
    "current_context": "reaches into the CUDA context",
    "driver": "reaches into the CUDA driver",
    "cudadrv": "reaches into the CUDA driver",
    "profile_start": "touches the profiler",
    "profile_stop": "touches the profiler",
    "mapped_array": "shares host memory with the device",
    "pinned_array": "shares host memory with the device",
    "managed_array": "shares host memory with the device",
}
NUMBA_PUBLIC_MODULES = IMPORTABLE_NUMBA  # grader/kernel_names.py says why
NUMBA_INTERNALS = {
    "core",
    "np",
    "misc",
    "typed",
    "experimental",
    "parfors",
    "pycc",
    "stencils",
    "testing",
    "tests",
    "cpython",
    "extending",
    "scripts",
    "typeinfer",
    "simulator",
    "cudadrv",
    "devicearray",
    "cudaimpl",
    "cudamath",
    "compiler",
    "dispatcher",
    "kernels",
    "memory_management",
    "utils",
    "serialize",
    "config",
    "ctypes_utils",
    "numpy_support",
    "_helperlib",
    "runtime",
    "targets",
}
"""Attributes of numba and numba.cuda that lead into numba's machinery rather than its kernel API."""

FORBIDDEN_METHODS = {
    "copy_to_host": "copies device data to the host, where the answer could be computed",
    "tofile": "writes files",
}


@dataclass(frozen=True)
class Violation:
    line: int
    rule: str
    message: str


class _Checker(ScopeTracker, ast.NodeVisitor):
    def __init__(self, allowed_imports, allowed_library_calls=()):
        self.allowed = tuple(allowed_imports)
        self.allowed_calls = tuple(allowed_library_calls)
        self.constant_getattrs: set = set()
        """ids of `getattr` names called with a constant attribute name (checked as `a.name`)."""
        self.violations: list[Violation] = []
        self.numpy_names = {"numpy"}
        self.cuda_names = set()
        self.helper_names: dict = {}
        """Local name -> a module of NUMBA_HELPERS (`numpy_support`) or numba's types, whose
        names are checked (grader/kernel_names.py)."""

    def flag(self, node, rule, message):
        self.violations.append(Violation(getattr(node, "lineno", 0), rule, message))

    def _allowed_module(self, name: str) -> bool:
        return any(name == m or name.startswith(m + ".") for m in self.allowed)

    def _internal(self, node, dotted: str) -> None:
        hit = next((part for part in dotted.split(".") if part in CUDA_FORBIDDEN), None)
        if hit and dotted.startswith("numba"):
            self.flag(node, "cuda", f"`{dotted}` {CUDA_FORBIDDEN[hit]}")
        elif (dotted == "numba" or dotted.startswith("numba.")) and dotted not in NUMBA_PUBLIC_MODULES:
            self.flag(
                node, "numba", f"`{dotted}` is numba's machinery, not its kernel API (use `from numba import cuda`)"
            )

    def _library(self, node, dotted: str) -> bool:
        key = refused_call(dotted, self.cuda_names | {"cuda"}, self.allowed_calls)
        if key:
            self.flag(node, RULE, library_message(key))
        return bool(key)

    def visit_FunctionDef(self, node):
        _drop_plain_annotations(node)
        self.enter_scope(node)
        self.generic_visit(node)
        self.leave_scope()

    def visit_AnnAssign(self, node):
        if not _plain_annotation(node.annotation):
            self.visit(node.annotation)
        self.visit(node.target)
        if node.value is not None:
            self.visit(node.value)

    visit_AsyncFunctionDef = visit_Lambda = visit_FunctionDef

    def visit_Call(self, node):
        func = node.func
        if (
            isinstance(func, ast.Name)
            and func.id == "getattr"
            and not self.shadows("getattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and node.args[1].value.isidentifier()
        ):
            # getattr(a, "stream", 0) is `a.stream` with a default: judged as that attribute
            self.constant_getattrs.add(id(func))
            self.visit_Attribute(
                ast.copy_location(ast.Attribute(value=node.args[0], attr=node.args[1].value, ctx=ast.Load()), node)
            )
            for extra in node.args[2:]:
                self.visit(extra)
            return
        self.generic_visit(node)

    def visit_Import(self, node):
        for alias in node.names:
            if alias.name in NUMBA_HELPERS or alias.name in TYPES_MODULES:
                self.helper_names[alias.asname or alias.name] = alias.name
            self._internal(node, alias.name)
            if self._library(node, alias.name):
                continue
            if not self._allowed_module(alias.name):
                self.flag(node, "import", f"`import {alias.name}`: only {', '.join(self.allowed)} may be imported")
            elif alias.name == "numpy":
                self.numpy_names.add(alias.asname or "numpy")
            elif alias.name.startswith("numpy.") and alias.asname:
                self.flag(node, "numpy", f"`{alias.name}` would do the work outside your kernel")
            elif alias.name == "numba.cuda" and alias.asname:
                self.cuda_names.add(alias.asname)
        self.generic_visit(node)

    def visit_ImportFrom(self, node):
        module = node.module or ""
        helpers = [a for a in node.names if f"{module}.{a.name}" in IMPORTABLE_NUMBA]
        for alias in helpers:  # `from numba.np import numpy_support`, `from numba.core import types`
            self.helper_names[alias.asname or alias.name] = f"{module}.{alias.name}"
        for alias in node.names:
            if not self._helper_name_allowed(module, alias.name):
                self.flag(node, "numba", f"`{module}.{alias.name}` is numba's machinery, not its kernel API")
        if len(helpers) < len(node.names):
            self._internal(node, module)
        if any([self._library(node, f"{module}.{a.name}" if module != "numba" else a.name) for a in node.names]):
            return
        if node.level or (not self._allowed_module(module) and not helpers):
            self.flag(
                node, "import", f"`from {module or '.'} import …`: only {', '.join(self.allowed)} may be imported"
            )
        for alias in node.names:
            if alias.name == "*":
                self.flag(node, "import", "`import *` hides what the file uses")
            if module == "numba" and alias.name == "cuda":
                self.cuda_names.add(alias.asname or "cuda")
            if module.startswith("numpy."):
                self.flag(node, "numpy", f"`{module}` would do the work outside your kernel")
            elif module == "numpy" and alias.name not in NUMPY_ALLOWED:
                self.flag(node, "numpy", f"`numpy.{alias.name}` would do the work outside your kernel")
            if module in ("numba.cuda", "numba") and alias.name in NUMBA_INTERNALS:
                self.flag(node, "numba", f"`{module}.{alias.name}` is numba's machinery, not its kernel API")
            if module in ("numba.cuda", "numba") and alias.name in CUDA_FORBIDDEN:
                self.flag(node, "cuda", f"`{alias.name}` {CUDA_FORBIDDEN[alias.name]}")
        self.generic_visit(node)

    def visit_Name(self, node):
        if node.id in FORBIDDEN_CALLS and (self.shadows(node.id) or id(node) in self.constant_getattrs):
            pass  # the learner's own variable (a parameter `input`), or getattr of a constant name
        elif node.id in FORBIDDEN_CALLS:
            self.flag(node, "builtin", f"`{node.id}` {FORBIDDEN_CALLS[node.id]}")
        elif _python_machinery(node.id) or (node.id.startswith("__") and not self.shadows(node.id)):
            self.flag(node, "dunder", f"`{node.id}` reaches into Python's machinery")
        self.generic_visit(node)

    @staticmethod
    def _helper_name_allowed(module: str, name: str) -> bool:
        if module in NUMBA_HELPERS:
            return name in NUMBA_HELPERS[module]
        return module not in TYPES_MODULES or name not in MODULES_IN_TYPES

    def visit_Attribute(self, node):
        helper = self.helper_names.get(node.value.id) if isinstance(node.value, ast.Name) else None
        if helper and not self._helper_name_allowed(helper, node.attr):
            self.flag(node, "numba", f"`{helper}.{node.attr}` is numba's machinery, not its kernel API")
        if node.attr.startswith("__"):
            self.flag(node, "dunder", f"`.{node.attr}` reaches into Python's machinery")
        elif node.attr.startswith("_"):
            self.flag(node, "internals", f"`.{node.attr}` reaches into another object's internals")
        if _dotted(node) and self._library(node, _dotted(node)):
            return
        base = node.value
        if isinstance(base, ast.Name):
            if base.id in self.numpy_names and node.attr not in NUMPY_ALLOWED:
                self.flag(node, "numpy", f"`{base.id}.{node.attr}` would do the work outside your kernel")
        if node.attr in CUDA_FORBIDDEN and _dotted(base).split(".")[-1] in self.cuda_names | {"cuda"}:
            self.flag(node, "cuda", f"`{_dotted(base)}.{node.attr}` {CUDA_FORBIDDEN[node.attr]}")
        if node.attr in NUMBA_INTERNALS and _dotted(base).split(".")[0] in {"numba"} | self.cuda_names | {"cuda"}:
            self.flag(node, "numba", f"`{_dotted(base)}.{node.attr}` is numba's machinery, not its kernel API")
        if node.attr in FORBIDDEN_METHODS:
            self.flag(node, "host", f"`.{node.attr}()` {FORBIDDEN_METHODS[node.attr]}")
        self.generic_visit(node)

    def visit_BinOp(self, node):
        if isinstance(node.op, ast.MatMult):
            self.flag(node, "host", "`@` multiplies matrices outside your kernel")
        self.generic_visit(node)

    def visit_Global(self, node):
        self.flag(node, "state", "`global` keeps state between calls; each launch must compute afresh")
        self.generic_visit(node)


TOO_DEEP = "an expression nested too deeply for the grader to read; split it into steps"


def _python_machinery(name: str) -> bool:
    """`__builtins__`, `__import__`, `__loader__`...: Python's own names (`__name__` is harmless).
    A name such as `__add` that the file binds itself (a kernel's name) is the learner's."""
    return name.startswith("__") and name.endswith("__") and name != "__name__"


PLAIN_ANNOTATION = (ast.Name, ast.Attribute, ast.Subscript, ast.Constant, ast.Tuple, ast.Slice, ast.Load, ast.BinOp)


def _plain_annotation(node) -> bool:
    """An annotation made of names, attributes and subscripts only (`np.ndarray`,
    `float32[:]`): Python evaluates it when the `def` runs, but it reads nothing and calls
    nothing, and numba ignores it. Anything else is checked like any other expression."""
    return all(
        isinstance(n, PLAIN_ANNOTATION + (ast.operator, ast.expr_context))
        and not (isinstance(n, ast.Attribute) and n.attr.startswith("_"))
        and not (isinstance(n, ast.Name) and n.id.startswith("__"))
        for n in ast.walk(node)
    )


def _drop_plain_annotations(func) -> None:
    """Annotations on a function's parameters and return need no rule of the policy
    (`def kernel(x: np.ndarray)` does no work on the host) when they are plain."""
    if isinstance(func, ast.Lambda):
        return
    args = func.args
    for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
        if arg is not None and arg.annotation is not None and _plain_annotation(arg.annotation):
            arg.annotation = None
    if func.returns is not None and _plain_annotation(func.returns):
        func.returns = None


def _dotted(node) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def violations(source: str, allowed_imports=DEFAULT_IMPORTS, allowed_library_calls=()) -> list[Violation]:
    """Every rule the source breaks (it must already parse)."""
    checker = _Checker(allowed_imports, allowed_library_calls)
    try:
        tree = pysource.parse(source)
        checker.enter_scope(tree)
        checker.visit(tree)
    except (RecursionError, MemoryError):  # the walk recurses: a deep enough expression ends it
        return [Violation(1, "nesting", TOO_DEEP)]
    return sorted(checker.violations, key=lambda v: v.line)


def _constant_shape(node) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int)
    if isinstance(node, (ast.Name, ast.Attribute)):
        return True  # a module-level constant: Numba freezes globals at compile time
    if isinstance(node, ast.Tuple):
        return all(_constant_shape(e) for e in node.elts)
    return False


def shape_problems(source: str) -> list[Violation]:
    """`cuda.shared.array` / `cuda.local.array` shapes a real GPU cannot compile.

    The simulator accepts any shape; Numba on a GPU needs a compile-time constant: an integer
    literal, a global constant, or a tuple of those — not arithmetic like `TILE + 1`."""
    found = []
    try:
        tree = pysource.parse(source)
    except (RecursionError, MemoryError):
        return [Violation(1, "nesting", TOO_DEEP)]
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        name = _dotted(node.func)
        if not name.endswith(("shared.array", "local.array")):
            continue
        shape = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "shape"), None)
        if shape is not None and not _constant_shape(shape):
            found.append(
                Violation(
                    node.lineno,
                    "shape",
                    f"`{name}` needs a shape Numba knows when it compiles: an integer, a module-level "
                    f"constant (e.g. `PADDED = TILE + 1` at the top of the file) or a tuple of those, "
                    f"not `{ast.unparse(shape)}`. The simulator accepts it, but a real GPU will not compile it",
                )
            )
    return found
