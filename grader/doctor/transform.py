"""Rewrite a kernel's (or device function's) source so that the doctor can step it.

Read from `inspect.getsource` of the function numba wraps, the body is changed in three ways:
- `cuda.syncthreads()` becomes `yield SITE` (and `syncthreads_count/and/or(p)` becomes
  `(yield (SITE, "count", p))`), so one OS thread can step every CUDA thread of a block from
  barrier to barrier; a call of a device function that (transitively) synchronises becomes
  `yield from`;
- every subscript of an array becomes a call that checks and records the access:
  `a[i]` -> `_zg_ld(a, i, SITE)`, `a[i] = v` -> `_zg_st(v, a, i, SITE)`,
  `a[i] += v` -> `_zg_upd(a, i, add, v, SITE)`;
- `cuda.atomic.op(a, i, v)`, `cuda.shared.array`, `cuda.local.array` and `cuda.const.array_like`
  become calls carrying their site (line, array name);
- a warp collective (`cuda.shfl_down_sync(mask, v, d)`, a vote, `cuda.syncwarp()`...) becomes
  `(yield _zg_warp(SITE, "shfl_down", mask, v, d))`: the lanes of a warp meet in the scheduler
  (grader/doctor/warps.py), which sends each one its result.
Line numbers are kept, so tracebacks and messages point at the learner's own lines. Anything
the doctor cannot follow raises Unsupported before the kernel runs.
"""

from __future__ import annotations

import ast
import builtins
import itertools
import types
from dataclasses import dataclass, field

from grader.doctor import sites
from grader.doctor.errors import Unsupported
from grader.doctor.devicemath import in_kernel
from grader.doctor.fakecuda import FAKE_CUDA, FAKE_NUMBA, replacement
from grader.doctor.promote import promote_function
from grader import pysource
from grader.doctor.kernel_source import (
    BARRIER_REDUCTIONS,
    CUDA_OK,
    OPERATORS,
    WARP_COLLECTIVES,
    grid_expression,
    has_subscript,
    install_helpers,
    local_names,
    op_text,
    source_tree,
    stored_names,
    text_of,
    jit_function,
)

MISSING = object()


@dataclass
class Transformed:
    """A kernel or device function, ready to run under the doctor."""

    func: types.FunctionType
    is_generator: bool
    """It synchronises (itself or through a device function): step it with next()."""
    name: str
    filename: str
    envs: list = field(default_factory=list)
    """The globals of this function and of every device function it calls."""
    uses_threadfence: bool = False
    read_only: frozenset = frozenset()
    """Array parameters that nothing in the kernel can write (no store, update or atomic
    names them, none is handed to a device function, and every write goes to a name we know):
    their loads need no shadow."""
    uses_warp: bool = False
    """It calls a warp collective (itself or through a device function): the warp-aware
    scheduler steps it (grader/doctor/warps.py)."""


_CACHE: dict = {}


def transform(fn: types.FunctionType, array_params=frozenset(), _active=(), classes=()) -> Transformed:
    """The doctor's version of `fn`, cached per function and per set of parameters that are
    arrays in this launch (like numba, which compiles once per signature): subscripts of
    those call the array's method directly, one Python call per access. `classes`: (parameter,
    class) pairs of the launch's values (grader/doctor/promote.py), which let arithmetic that
    Python computes as Numba does stay plain Python."""
    key = (fn, frozenset(array_params), tuple(classes))
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    if fn in _active:
        raise Unsupported(f"recursion through device function `{fn.__name__}`")
    result = _Builder(fn, (*_active, fn), frozenset(array_params), dict(classes)).build()
    _CACHE[key] = result
    return result


class _Builder(ast.NodeTransformer):
    def __init__(self, fn, active, array_params, classes=None):
        self.fn, self.active, self.array_params = fn, active, array_params
        self.classes = classes or {}
        self.filename = fn.__code__.co_filename
        self.env = dict(fn.__globals__)
        cells = fn.__closure__ or ()
        try:
            self.free = {n: c.cell_contents for n, c in zip(fn.__code__.co_freevars, cells)}
        except ValueError:
            raise Unsupported(f"`{fn.__name__}` uses a variable that is not set yet") from None
        self.uses_yield = self.uses_threadfence = self.uses_warp = False
        self.scope_depth = 0
        self.assign_target = ""
        self.devices: list[Transformed] = []
        self.written: set = set()
        self.unknown_writes = False
        self.temps = itertools.count()
        self.lines: list[str] = []

    # -- resolving names ----------------------------------------------------------------------
    def value_of(self, name):
        if name in self.locals:
            return MISSING
        for scope in (self.free, self.env, vars(builtins)):
            if name in scope:
                return scope[name]
        return MISSING

    def global_value(self, name):
        """The value of a global (or closure, or builtin) name, None for a local or a name not
        defined."""
        value = self.value_of(name)
        return None if value is MISSING else value

    def path(self, node) -> str | None:
        """'cuda.x.y' for an expression rooted at numba.cuda (or numba.cuda.x...), else None."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        value = self.value_of(node.id)
        if value is MISSING:
            return None
        swapped = replacement(value) or value  # numba.cuda, or the doctor's own (an import inside `launch`)

        parts.reverse()
        if swapped is FAKE_NUMBA and parts[:1] == ["cuda"]:
            return ".".join(["cuda", *parts[1:]])
        if swapped is FAKE_CUDA:
            return ".".join(["cuda", *parts])
        return None

    def device_of(self, node):
        if not isinstance(node, ast.Name):
            return None
        value = self.value_of(node.id)
        return None if value is MISSING else jit_function(value)

    # -- sites ----------------------------------------------------------------------------------
    def site(self, kind, node, text, array=""):
        line = getattr(node, "lineno", 0)
        statement = self.lines[line - self.first].strip() if 0 <= line - self.first < len(self.lines) else ""
        return sites.add(sites.Site(kind, self.filename, line, text, self.fn.__name__, array, statement))

    def unsupported(self, what, node):
        raise Unsupported(what, getattr(node, "lineno", None))

    # -- the rewrite ----------------------------------------------------------------------------
    def build(self) -> Transformed:
        func, self.lines, self.first = source_tree(self.fn)
        self.locals = local_names(func)
        self.arrays = self.known_arrays(func)
        func = promote_function(func, self.classes, self.path, self.global_value, self.locals)
        func.decorator_list = []
        body = []
        for stmt in func.body:
            new = self.visit(stmt)
            body.extend(new if isinstance(new, list) else [new])
        func.body = body
        self.env.update({k: v for k, v in ((k, replacement(v)) for k, v in self.env.items()) if v is not None})
        self.env.update({k: v for k, v in ((k, in_kernel(v)) for k, v in self.env.items()) if v is not None})
        free = list(self.free)
        factory = ast.FunctionDef(
            name="_zg_factory",
            args=ast.arguments(
                posonlyargs=[], args=[ast.arg(n) for n in free], kwonlyargs=[], kw_defaults=[], defaults=[]
            ),
            body=[func, ast.copy_location(ast.Return(ast.Name(func.name, ast.Load())), func)],
            decorator_list=[],
        )
        ast.copy_location(factory, func)
        module = ast.fix_missing_locations(ast.Module(body=[factory], type_ignores=[]))
        install_helpers(self.env)
        code = pysource.compile_tree(module, self.filename)
        scope: dict = {}
        exec(code, self.env, scope)  # noqa: S102 - the learner's own kernel, instrumented
        values = [self.free[n] for n in free]
        values = [replacement(v) if replacement(v) is not None else v for v in values]
        values = [in_kernel(v) if in_kernel(v) is not None else v for v in values]
        made = scope["_zg_factory"](*values)
        envs = [self.env] + [e for d in self.devices for e in d.envs]
        params = self.fn.__code__.co_varnames[: self.fn.__code__.co_argcount]
        read_only = (
            frozenset()
            if self.unknown_writes
            else frozenset(p for p in params if p in self.array_params and p not in self.written)
        )
        return Transformed(
            made,
            self.uses_yield,
            self.fn.__name__,
            self.filename,
            envs,
            self.uses_threadfence or any(d.uses_threadfence for d in self.devices),
            read_only,
            self.uses_warp or any(d.uses_warp for d in self.devices),
        )

    def note_write(self, target) -> None:
        """The array expression of a store, an update or an atomic."""
        if isinstance(target, ast.Name) and (target.id in self.arrays or target.id in self.array_params):
            self.written.add(target.id)
        else:
            self.unknown_writes = True

    def known_arrays(self, func) -> set:
        """Names that are surely our arrays: array parameters never reassigned, and names only
        ever assigned a cuda.shared/local/const array."""
        stored = stored_names(func)
        known = {name for name in self.array_params if name not in stored}
        makers = ("cuda.shared.array", "cuda.local.array", "cuda.const.array_like")
        for name, values in stored.items():
            if values and all(isinstance(v, ast.Call) and self.path(v.func) in makers for v in values):
                known.add(name)
        return known

    def generic_scope(self, node):
        self.scope_depth += 1
        try:
            return self.generic_visit(node)
        finally:
            self.scope_depth -= 1

    visit_Lambda = visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = generic_scope

    def visit_FunctionDef(self, node):
        return self.generic_scope(node)

    def visit_AsyncFunctionDef(self, node):
        self.unsupported("async functions in a kernel", node)

    def visit_Yield(self, node):
        self.unsupported("`yield` in a kernel", node)

    visit_YieldFrom = visit_Await = visit_Yield

    def visit_Global(self, node):
        self.unsupported("`global` in a kernel", node)

    def check_cuda(self, path, node):
        rest = path[len("cuda.") :]
        if path != "cuda" and not any(rest == ok or rest.startswith(ok + ".") for ok in CUDA_OK):
            self.unsupported(f"`{path}` (not implemented by the kernel doctor)", node)

    def visit_Attribute(self, node):
        path = self.path(node)
        if path is not None:
            self.check_cuda(path, node)
            return node  # cuda.threadIdx.x & co: attribute reads on the fake module
        return self.generic_visit(node)

    def yield_here(self, node, value):
        if self.scope_depth:
            self.unsupported("a barrier inside a lambda, a comprehension or a nested function", node)
        self.uses_yield = True
        return value

    def visit_Call(self, node):
        path = self.path(node.func)
        if path is not None:
            self.check_cuda(path, node)
            return self.cuda_call(path[len("cuda.") :], node)
        device = self.device_of(node.func)
        if device is not None:
            fn, is_device = device
            if not is_device:
                self.unsupported("launching a kernel from inside a kernel", node)
            params = fn.__code__.co_varnames[: fn.__code__.co_argcount]
            told = [(p, c) for p, c in zip(params, getattr(node, "zg_classes", ())) if c is not None]
            arrays = frozenset(p for p, c in told if isinstance(c, tuple))
            dev = transform(fn, arrays, self.active, tuple(told))
            self.devices.append(dev)
            for arg in node.args:  # a device function may write any array it is given
                if isinstance(arg, ast.Name):
                    self.written.add(arg.id)
                elif not isinstance(arg, ast.Constant):
                    self.unknown_writes = True
            alias = f"_zg_dev_{fn.__name__}_{len(self.devices)}"
            self.env[alias] = dev.func
            node = self.generic_visit(node)
            node.func = ast.copy_location(ast.Name(alias, ast.Load()), node.func)
            if dev.is_generator:
                return ast.copy_location(self.yield_here(node, ast.YieldFrom(node)), node)
            return node
        return self.generic_visit(node)

    def cuda_call(self, api, node):
        text = text_of(node)
        args = [self.visit(a) for a in node.args]
        kwargs = {k.arg: self.visit(k.value) for k in node.keywords}
        if api == "syncthreads":
            return ast.copy_location(
                self.yield_here(node, ast.Yield(ast.Constant(self.site("barrier", node, text)))), node
            )
        if api in BARRIER_REDUCTIONS:
            site = ast.Constant(self.site("barrier", node, text))
            value = ast.Tuple([site, ast.Constant(BARRIER_REDUCTIONS[api]), *args], ast.Load())
            return ast.copy_location(self.yield_here(node, ast.Yield(value)), node)
        if api in WARP_COLLECTIVES:
            self.uses_warp = True
            site = ast.Constant(self.site("warp", node, text))
            call = self.helper("_zg_warp", [site, ast.Constant(WARP_COLLECTIVES[api]), *args], node)
            call.keywords = [ast.keyword(k, v) for k, v in kwargs.items()]
            return ast.copy_location(self.yield_here(node, ast.Yield(call)), node)
        if api == "lanemask_lt":
            return self.helper("_zg_lanemask_lt", args, node)
        if api in ("grid", "gridsize") and len(args) == 1 and not kwargs:
            fast = grid_expression(api, args[0])
            if fast is not None:
                for part in ast.walk(fast):
                    ast.copy_location(part, node)
                return fast
        if api.startswith("threadfence"):
            self.uses_threadfence = True
        if api.startswith("atomic."):
            return self.atomic(api[len("atomic.") :], node, args, kwargs, text)
        if api in ("shared.array", "local.array"):
            shape = args[0] if args else kwargs.get("shape")
            dtype = args[1] if len(args) > 1 else kwargs.get("dtype")
            if shape is None or dtype is None:
                self.unsupported(f"`{text}` without a shape and a dtype", node)
            kind = api.split(".")[0]
            site = self.site(kind, node, text, self.assign_target)
            return self.helper(f"_zg_{kind}", [shape, dtype, ast.Constant(site)], node)
        if api == "const.array_like":
            site = self.site("const", node, text, self.assign_target)
            return self.helper("_zg_const", [args[0], ast.Constant(site)], node)
        node.args, node.keywords = args, [ast.keyword(k, v) for k, v in kwargs.items()]
        return node

    def atomic(self, op, node, args, kwargs, text):
        if kwargs:
            self.unsupported(f"`{text}` with keyword arguments", node)
        array_text = text_of(node.args[0]) if node.args else ""
        if node.args:
            self.note_write(node.args[0])
        site = ast.Constant(self.site("atomic", node, text, array_text))
        if op == "compare_and_swap":
            array, old, val = args
            return self.helper("_zg_cas", [array, ast.Constant(0), old, val, site], node)
        if op == "cas":
            array, index, old, val = args
            return self.helper("_zg_cas", [array, index, old, val, site], node)
        if len(args) != 3:
            self.unsupported(f"`{text}`: cuda.atomic.{op} takes (array, index, value)", node)
        return self.helper("_zg_atomic", [ast.Constant(op), *args, site], node)

    def helper(self, name, args, node):
        return ast.copy_location(ast.Call(ast.Name(name, ast.Load()), args, []), node)

    # -- subscripts -----------------------------------------------------------------------------
    @staticmethod
    def instrumented(node: ast.Subscript) -> bool:
        value = node.value
        if isinstance(value, ast.Attribute):
            return value.attr not in ("shape", "strides")
        return isinstance(value, (ast.Name, ast.Subscript))

    def index(self, node):
        """A subscript's index as an expression (slices become slice(...) calls)."""
        if isinstance(node, ast.Slice):
            parts = [
                self.visit(p) if p is not None else ast.Constant(None) for p in (node.lower, node.upper, node.step)
            ]
            return ast.Call(ast.Name("slice", ast.Load()), parts, [])
        if isinstance(node, ast.Tuple):
            return ast.Tuple([self.index(e) for e in node.elts], ast.Load())
        return self.visit(node)

    def access(self, kind, target, extra, site, node):
        """`a._ld2(i, j, *extra, site)` for a known array, `_zg_ld2(a, i, j, *extra, site)`
        otherwise (arity n: one index argument, slices included)."""
        index = target.slice
        if (
            isinstance(index, ast.Tuple)
            and 2 <= len(index.elts) <= 3
            and not any(isinstance(e, (ast.Slice, ast.Starred)) for e in index.elts)
        ):
            arity, args = str(len(index.elts)), [self.visit(e) for e in index.elts]
        elif not isinstance(index, (ast.Tuple, ast.Slice)):
            arity, args = "1", [self.visit(index)]
        else:
            arity, args = "n", [self.index(index)]
        args = [*args, *extra, ast.Constant(site)]
        value = target.value
        if isinstance(value, ast.Name) and value.id in self.arrays:
            func = ast.Attribute(ast.Name(value.id, ast.Load()), f"_{kind}{arity}", ast.Load())
            return ast.copy_location(ast.Call(func, args, []), node)
        return self.helper(f"_zg_{kind}{arity}", [self.visit(value), *args], node)

    def visit_Subscript(self, node):
        if not isinstance(node.ctx, ast.Load) or not self.instrumented(node):
            return self.generic_visit(node)
        site = self.site("load", node, text_of(node), text_of(node.value))
        return self.access("ld", node, [], site, node)

    def store(self, target, value, node, kind="store"):
        """Statements assigning `value` (an expression evaluated once) to `target`."""
        if isinstance(target, ast.Subscript):
            self.note_write(target.value)
            site = self.site(kind, target, text_of(target), text_of(target.value))
            call = self.access("st", target, [value], site, node)
            return [ast.copy_location(ast.Expr(call), node)]
        if isinstance(target, (ast.Tuple, ast.List)) and has_subscript(target):
            names = [f"_zg_tmp{next(self.temps)}" for _ in target.elts]
            if any(isinstance(e, ast.Starred) for e in target.elts):
                self.unsupported("starred assignment to array elements", node)
            unpack = ast.Assign([ast.Tuple([ast.Name(n, ast.Store()) for n in names], ast.Store())], value)
            out = [ast.copy_location(unpack, node)]
            for elt, name in zip(target.elts, names):
                out += self.store(elt, ast.Name(name, ast.Load()), node)
            return out
        target = self.visit(target)
        return [ast.copy_location(ast.Assign([target], value), node)]

    def visit_Assign(self, node):
        first = node.targets[0]
        self.assign_target = first.id if isinstance(first, ast.Name) else ""
        value = self.visit(node.value)
        self.assign_target = ""
        if not any(has_subscript(t) for t in node.targets):
            node.value = value
            node.targets = [self.visit(t) for t in node.targets]
            return node
        if len(node.targets) == 1:
            return self.store(node.targets[0], value, node)
        temp = f"_zg_tmp{next(self.temps)}"
        out = [ast.copy_location(ast.Assign([ast.Name(temp, ast.Store())], value), node)]
        for target in node.targets:
            out += self.store(target, ast.Name(temp, ast.Load()), node)
        return out

    def visit_AugAssign(self, node):
        if not isinstance(node.target, ast.Subscript):
            return self.generic_visit(node)
        target = node.target
        self.note_write(target.value)
        site = self.site("update", target, f"{text_of(target)} {op_text(node.op)}= ...", text_of(target.value))
        op = OPERATORS.get(type(node.op))
        if op is None:
            self.unsupported(f"`{op_text(node.op)}=` on an array element", node)
        operator_name = getattr(node, "zg_op", None) or f"_zg_op_{op}"  # Numba's where Python's differs
        extra = [ast.Name(operator_name, ast.Load()), self.visit(node.value)]
        return ast.copy_location(ast.Expr(self.access("upd", target, extra, site, node)), node)

    def visit_AnnAssign(self, node):
        if has_subscript(node.target):
            self.unsupported("an annotated assignment to an array element", node)
        return self.generic_visit(node)

    def visit_Delete(self, node):
        if any(has_subscript(t) for t in node.targets):
            self.unsupported("`del` of an array element", node)
        return self.generic_visit(node)

    def visit_For(self, node):
        if has_subscript(node.target):
            self.unsupported("a for loop assigning to an array element", node)
        node = self.generic_visit(node)
        node.iter = self.iterated(node.iter, node)
        return node

    def iterated(self, expr, loop):
        """`for v in a:` over an array (valid device code) reads its elements one by one, each a
        checked load; `range(...)` stays as it is, `enumerate(a)` and `zip(a, b)` wrap theirs."""
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name):
            builtin = self.value_of(expr.func.id)
            if builtin is range or expr.func.id == "_zg_n_range":
                return expr
            if builtin in (enumerate, zip):
                expr.args = [self.iterated(a, loop) for a in expr.args]
                return expr
        text = text_of(expr)
        site = self.site("load", loop, f"for ... in {text}", text)
        return self.helper("_zg_iter", [expr, ast.Constant(site)], expr)
