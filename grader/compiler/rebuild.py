"""A described kernel made into a function again: its `def` alone, in a namespace of constants.

A kernel travels between processes as its description (grader/compiler/describe.py): the text of
its `def` (the hand-in's, grader/replay/sources.py), its globals as data, its options. This is
where that text becomes a function again, for the compile helper (grader/compiler/server.py,
which loads this file by its path), the replayer and the checking child alike: only the `def`
statement is executed (decorators, annotations dropped; defaults must be constants), and each
global is rebuilt from what describe.py may make of it (constants read back, never evaluated;
modules of the one list, grader/kernel_names.py; numba and NumPy types; device functions
described the same way). Nothing of the learner's runs here.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import textwrap
from pathlib import Path


def _grader_file(name: str):
    """grader/<name>.py loaded by its path: the compile helper loads this file outside the grader
    package, and `import grader` would choose a back end and load the grader's wiring there."""
    spec = importlib.util.spec_from_file_location(f"zerogpu_{name}", Path(__file__).parents[1] / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


if __package__:  # imported as grader.compiler.rebuild: the one parser lock of the process
    from grader import pysource
else:
    pysource = _grader_file("pysource")


MODULES = _grader_file("kernel_names").KERNEL_MODULES
"""The modules a kernel's globals may name (grader/kernel_names.py; describe.py describes no other)."""


class Opaque(Exception):
    """Something of the kernel the check cannot carry to the compiler: (what, what to write
    instead). `grader`: a GPU would take it; the grader cannot replay it."""

    def __init__(self, what: str, fix: str = "", grader: bool = False):
        super().__init__(what)
        self.what, self.fix, self.grader = what, fix, grader


class _DeviceArray:
    """A device array the kernel reads as a global, as numba-cuda types it (by its
    `__cuda_array_interface__`; the pointer is never followed while compiling)."""

    def __init__(self, typestr: str, shape):
        self.__cuda_array_interface__ = {
            "shape": tuple(shape),
            "typestr": typestr,
            "data": (0, False),
            "strides": None,
            "version": 3,
        }


def _value(desc, build_function):
    """A global's value from its description. The description may come from a submission's
    process, so each kind is held to what describe.py makes: modules and their functions only
    from MODULES, numba and NumPy types only, constants parsed, never evaluated."""
    import numpy as np  # noqa: PLC0415 - loaded with numba, at the first request (module docstring)
    from numba import types

    kind = desc[0]
    if kind == "literal":
        return _literal(desc[1])
    if kind == "float":
        if desc[1] not in ("nan", "inf", "-inf"):
            raise Opaque("a float that is not a number")
        return float(desc[1])
    if kind == "module" and desc[1] in MODULES:
        return importlib.import_module(desc[1])
    if kind == "attr" and desc[1] in (*MODULES, "builtins") and _public(desc[2]):
        return getattr(importlib.import_module(desc[1]), desc[2])
    if kind == "numba_type" and _public(desc[1]) and isinstance(getattr(types, desc[1], None), types.Type):
        return getattr(types, desc[1])
    if kind == "numpy" and _public(desc[1]):
        value = getattr(np, desc[1], None)
        if isinstance(value, type) and issubclass(value, np.generic):
            return value
    if kind == "dtype" and np.dtype(desc[1]).kind in "biufc":
        return np.dtype(desc[1])
    if kind == "npscalar" and np.dtype(desc[1]).kind in "biufc":
        return np.dtype(desc[1]).type(_literal(desc[2]))
    if kind == "array" and np.dtype(desc[1]).kind in "biuf":
        return np.array(desc[3], dtype=desc[1]).reshape(desc[2])
    if kind == "devarray":
        return _DeviceArray(desc[1], desc[2])
    if kind == "device":
        return build_function(desc[1], device=True)
    if kind == "pyfunc" and _public(desc[1]):  # a plain Python function: a GPU cannot call it, and Numba says so

        def plain(*args):
            return None

        plain.__name__ = desc[1]
        return plain
    if kind == "opaque":
        raise Opaque(str(desc[1]), str(desc[2]) if len(desc) > 2 else "", grader=desc[3:4] == ["grader"])
    raise Opaque(f"a global of kind `{str(kind)[:20]}`")


def _public(name) -> bool:
    return isinstance(name, str) and name.isidentifier() and not name.startswith("_")


def _literal(text):
    """A constant's repr read back (ast.literal_eval: numbers, strings, tuples; nothing runs)."""
    if not isinstance(text, str) or len(text) > 100_000:
        raise Opaque("a constant too long to read")
    try:
        return ast.literal_eval(pysource.parse(text.lstrip(" \t"), mode="eval"))
    except (ValueError, SyntaxError, RecursionError, MemoryError):
        raise Opaque("a constant that is not a literal") from None


NO_DEFAULTS = (
    "remove the default and pass every argument in the launch (a GPU kernel has no default "
    "arguments), or make the value a module-level constant"
)


def _only_constants(fn, device: bool) -> None:
    """Nothing of the learner's may run here: annotations go, and defaults must be constants
    (a device function's; a kernel may have none)."""
    fn.returns = None
    args = fn.args
    for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
        if arg is not None:
            arg.annotation = None
    defaults = [d for d in [*args.defaults, *args.kw_defaults] if d is not None]
    if defaults and not device:
        shown = ast.unparse(defaults[0])
        raise Opaque(f"the kernel `{fn.name}` has a default argument (`= {shown}`)", NO_DEFAULTS)
    for default in defaults:
        try:
            ast.literal_eval(default)
        except ValueError:
            raise Opaque(
                f"the default `{ast.unparse(default)}` of `{fn.name}` is not a constant", NO_DEFAULTS
            ) from None


def build_function(desc: dict, device: bool = False):
    """The described function, defined afresh (its `def` only) and wrapped by cuda.jit."""
    from numba import cuda

    if desc.get("lambda"):
        raise Opaque("the kernel is a lambda", "write it as a `def` under `@cuda.jit`")
    namespace = {"__name__": "submission"}
    for name, value in desc["globals"].items():
        namespace[name] = _value(value, build_function)
    tree = pysource.parse(textwrap.dedent(desc["source"]))
    fn = next(n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
    fn.decorator_list = []
    _only_constants(fn, device)
    ast.increment_lineno(tree, desc["firstline"] - 1)
    module = ast.Module(body=[fn], type_ignores=[])
    exec(pysource.compile_tree(module, desc["filename"]), namespace)  # noqa: S102 - a def, nothing else
    pyfunc = namespace[fn.name]
    if device:
        return cuda.jit(device=True, **desc.get("options", {}))(pyfunc)
    return pyfunc


def argument_type(desc):
    import numpy as np  # noqa: PLC0415 - loaded with numba, at the first request (module docstring)
    from numba import types
    from numba.np.numpy_support import from_dtype

    kind = desc[0]
    if kind == "array":
        return types.Array(from_dtype(np.dtype(desc[1])), desc[2], desc[3])
    if kind == "scalar":
        return from_dtype(np.dtype(desc[1]))
    if kind == "tuple":
        return types.BaseTuple.from_types([argument_type(d) for d in desc[1]])
    if kind == "none":
        return types.none
    raise Opaque(f"a kernel argument of type {desc[1] if len(desc) > 1 else kind}", ARGUMENT_FIX)


ARGUMENT_FIX = "pass device arrays, NumPy arrays, numbers or tuples of those to a kernel"
