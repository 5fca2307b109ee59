"""What grader/doctor/transform.py's rewrite knows and reads: the `cuda` API it follows, warp
collectives, barriers that reduce, operators; a kernel's source as a tree, the names it binds,
an expression's text as the learner wrote it; and the helpers it installs in a rewritten
kernel's globals.
"""

from __future__ import annotations

import ast
import inspect
import operator
import textwrap

from grader.doctor.errors import Unsupported
from grader.doctor.numbaops import HELPERS as NUMBA_HELPERS
from grader.doctor.runtime import HELPERS
from grader import pysource

CUDA_OK = (
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "grid",
    "gridsize",
    "warpsize",
    "laneid",
    "syncthreads",
    "syncthreads_count",
    "syncthreads_and",
    "syncthreads_or",
    "atomic",
    "shared.array",
    "local.array",
    "const.array_like",
    "threadfence",
    "threadfence_block",
    "threadfence_system",
    "fma",
    "selp",
    "cbrt",
    "popc",
    "brev",
    "clz",
    "ffs",
    "lanemask_lt",
    "fp16",
)
CUDA_OK += (
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
    "boolean",
    "intp",
    "uintp",
)  # numba.cuda's scalar types: casts
WARP_COLLECTIVES = {
    "shfl_sync": "shfl",
    "shfl_up_sync": "shfl_up",
    "shfl_down_sync": "shfl_down",
    "shfl_xor_sync": "shfl_xor",
    "all_sync": "all",
    "any_sync": "any",
    "eq_sync": "eq",
    "ballot_sync": "ballot",
    "match_any_sync": "match_any",
    "match_all_sync": "match_all",
    "syncwarp": "syncwarp",
    "activemask": "activemask",
}
"""numba.cuda's warp functions -> the scheduler's names for them (grader/doctor/warps.py)."""
CUDA_OK += tuple(WARP_COLLECTIVES)
BARRIER_REDUCTIONS = {"syncthreads_count": "count", "syncthreads_and": "and", "syncthreads_or": "or"}
OPERATORS = {
    ast.Add: "add",
    ast.Sub: "sub",
    ast.Mult: "mul",
    ast.Div: "truediv",
    ast.FloorDiv: "floordiv",
    ast.Mod: "mod",
    ast.Pow: "pow",
    ast.LShift: "lshift",
    ast.RShift: "rshift",
    ast.BitOr: "or_",
    ast.BitXor: "xor",
    ast.BitAnd: "and_",
}
NESTED_SCOPES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)


def jit_function(value):
    """The Python function behind a numba kernel / device function (simulator or GPU), and
    whether it is a device function; None for anything else."""
    cls = type(value).__name__  # by name: the kernel classes (ours, numba's) build on this module
    if cls == "DoctorKernel":
        return value.py_func, value.device
    if cls == "FakeCUDAKernel":
        return value.fn, bool(value._device)
    if cls == "CUDADispatcher":
        return value.py_func, bool(value.targetoptions.get("device"))
    return None


def source_tree(fn):
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError) as exc:
        raise Unsupported(f"the source of `{fn.__name__}` cannot be read ({exc})") from None
    try:
        tree = pysource.parse(textwrap.dedent("".join(lines)))
    except SyntaxError:
        raise Unsupported(f"the source of `{fn.__name__}` cannot be parsed on its own") from None
    ast.increment_lineno(tree, first - 1)
    node = tree.body[0] if tree.body else None
    if not isinstance(node, ast.FunctionDef) or node.name != fn.__name__:
        raise Unsupported(f"`{fn.__name__}` is not a plain `def` (a lambda?)")
    return node, lines, first


def stored_names(func: ast.FunctionDef) -> dict:
    """Name -> the values assigned to it in the body (None where not a plain assignment)."""
    stored: dict = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    stored.setdefault(target.id, []).append(node.value)
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            stored.setdefault(node.id, [])
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name):
            stored.setdefault(node.target.id, []).append(None)
    return stored


def local_names(func: ast.FunctionDef) -> set:
    a = func.args
    names = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
    names |= {x.arg for x in (a.vararg, a.kwarg) if x}
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return names


def text_of(node) -> str:
    """The learner's text of an expression, as written (before grader/doctor/promote.py)."""
    text = getattr(node, "zg_text", None)
    return text if text is not None else ast.unparse(node)


def has_subscript(target) -> bool:
    if isinstance(target, ast.Subscript):
        return True
    if isinstance(target, (ast.Tuple, ast.List)):
        return any(has_subscript(e) for e in target.elts)
    if isinstance(target, ast.Starred):
        return has_subscript(target.value)
    return False


_GRID = {
    ("grid", 1): "_zg_cuda.gx0 + _zg_cuda.threadIdx.x",
    ("grid", 2): "(_zg_cuda.gx0 + _zg_cuda.threadIdx.x, _zg_cuda.gy0 + _zg_cuda.threadIdx.y)",
    ("grid", 3): "(_zg_cuda.gx0 + _zg_cuda.threadIdx.x, _zg_cuda.gy0 + _zg_cuda.threadIdx.y, "
    "_zg_cuda.gz0 + _zg_cuda.threadIdx.z)",
    ("gridsize", 1): "_zg_cuda.gs1",
    ("gridsize", 2): "_zg_cuda.gs2",
    ("gridsize", 3): "_zg_cuda.gs3",
}
"""`cuda.grid(n)` / `cuda.gridsize(n)` with a literal n, as attribute reads of what the scheduler
sets per block and per launch (a method call costs several times more, once per thread)."""


def grid_expression(api, arg):
    if isinstance(arg, ast.Constant) and arg.value.__class__ is int and (api, arg.value) in _GRID:
        return pysource.parse(_GRID[(api, arg.value)], mode="eval").body
    return None


def op_text(op) -> str:
    return {
        ast.Add: "+",
        ast.Sub: "-",
        ast.Mult: "*",
        ast.Div: "/",
        ast.FloorDiv: "//",
        ast.Mod: "%",
        ast.Pow: "**",
        ast.LShift: "<<",
        ast.RShift: ">>",
        ast.BitOr: "|",
        ast.BitXor: "^",
        ast.BitAnd: "&",
        ast.MatMult: "@",
    }.get(type(op), "?")


def iterate(a, site):
    """The elements (or rows) of one of our arrays, each read as `a[k]` is; anything else as it is."""
    load = getattr(a, "_ldn", None)
    if load is None:
        return a
    return (load(k, site) for k in range(a.shape[0]))


def install_helpers(env: dict) -> None:
    env.update(HELPERS)
    env.update(NUMBA_HELPERS)
    env["_zg_iter"] = iterate
    for op in OPERATORS.values():
        env[f"_zg_op_{op}"] = getattr(operator, op)
