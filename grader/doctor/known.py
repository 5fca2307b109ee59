"""What the doctor can know about a kernel's values before it runs: the class of the values
each name and expression will hold (a Python int, a float, a NumPy float32...), for
grader/doctor/promote.py, which leaves to plain Python the arithmetic that Python computes as
Numba does.

A thread index, a loop counter over integers, an array's shape or size and an integer literal
are Python ints; an element of an array has its array's element class
(grader/doctor/memory.py `element_class`), `float32(0)` a NumPy float32; an operation's class
follows Numba's typing (grader/doctor/scalars.py). A local name has a class when every
assignment to it gives that one class, worked out to a fixed point; anything else is unknown
(None), and left to the helpers, which look at the values while the kernel runs. A class
claimed here must be the class the values will have: a wrong one would let NumPy's arithmetic
stand where Numba's differs.
"""

from __future__ import annotations

import ast

import numpy as np

from grader.doctor.devicemath import HALF, in_kernel, result_type
from grader.doctor.fakecuda import replacement
from grader.doctor.kernel_source import OPERATORS
from grader.doctor.memory import element_class
from grader.doctor.numbaops import BUILTINS
from grader.doctor.scalars import F64, I64, TYPE_OF, binary_type, range_type, unary_type

BOTTOM = object()
"""Not known yet (the fixed point's start): a name nothing has been worked out for."""
COMPARISONS = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}
UNARY = {ast.USub: "neg", ast.UAdd: "pos", ast.Invert: "invert"}
CUDA_INTS = ("cuda.laneid", "cuda.warpsize")
CUDA_DIMS = ("cuda.threadIdx.", "cuda.blockIdx.", "cuda.blockDim.", "cuda.gridDim.")
MATH_BOOLS = ("isnan", "isinf", "isfinite")
BIG = 1 << 31
"""Integer literals from here on make an operation go through a helper, which wraps at 64 bits."""
SIGNED = (np.int8, np.int16, np.int32, np.int64)


def runtime_class(t):
    """The class a value of Numba type t has on the doctor (grader/doctor/scalars.py)."""
    return {I64: int, np.int32: int, F64: float, np.bool_: bool}.get(t, t)


def canon(c):
    return float if c is np.float64 else c


def literal(node):
    return node.value if isinstance(node, ast.Constant) and node.value.__class__ in (int, float) else None


class Known:
    """The classes of a function's values where they can be known before it runs."""

    def __init__(self, func: ast.FunctionDef, params: dict, arrays: dict, path, value_of, locals_):
        self.path, self.value_of, self.locals = path, value_of, locals_
        self.arrays = dict(arrays)
        """Name -> (element class or None, dimensions, dtype's scalar type) of the arrays the
        function indexes."""
        self.names: dict = {n: c for n, c in params.items()}
        self._settle(func)

    # -- names ------------------------------------------------------------------------------
    def _settle(self, func) -> None:
        """Each local name's class: the one class all its assignments give, at a fixed point."""
        bindings = _bindings(func, self.path)
        for name in {n for n, _ in bindings}:
            if name not in self.names:
                self.names[name] = BOTTOM
        made: dict = {}
        for name, value in bindings:
            made.setdefault(name, []).append(value if _shared_or_local(value, self.path) else None)
        for name, values in made.items():
            self.arrays.pop(name, None)  # a parameter bound again is no longer surely that array
            if None not in values and len({ast.dump(v) for v in values}) == 1:
                self.arrays[name] = self._made_array(values[0])
        for _ in range(2 * len(bindings) + 2):  # each name changes at most twice: BOTTOM, a class, None
            changed = False
            for name, value in bindings:
                old = self.names.get(name)
                new = self._join(old, self._bound(value))
                if new is not old:
                    self.names[name], changed = new, True
            if not changed:
                break
        else:
            self.names = {n: None for n in self.names}  # never reached; unknown is always safe
        self.names = {n: (None if c is BOTTOM else c) for n, c in self.names.items()}

    @staticmethod
    def _join(old, new):
        if new is BOTTOM or old is new:
            return old
        if old is BOTTOM:
            return new
        return None

    def _bound(self, value):
        """The class a binding gives its name (`value`: an expression, or a marker tuple)."""
        if isinstance(value, tuple):
            kind, node = value
            if kind == "range":
                return self._counter(node)
            if kind == "op":
                return self.of(node)
            return None
        return self.of(value)

    def _counter(self, call):
        classes = [self.of(a) for a in call.args]
        if any(c is BOTTOM for c in classes):
            return BOTTOM
        types = [TYPE_OF.get(c) for c in classes]
        if not types or any(t is None for t in types):
            return None
        return np.uint64 if range_type(types) is np.uint64 else int  # numbaops.device_range's counters

    def _made_array(self, call):
        shape = call.args[0] if call.args else None
        dtype = call.args[1] if len(call.args) > 1 else None
        for k in call.keywords:
            shape, dtype = (k.value, dtype) if k.arg == "shape" else (shape, k.value if k.arg == "dtype" else dtype)
        ndim = len(shape.elts) if isinstance(shape, ast.Tuple) else 1
        kind = self.static(dtype) if dtype is not None else None
        try:
            dtype = np.dtype(replacement(kind) or kind)
        except TypeError:
            return None, ndim, None
        return element_class(dtype), ndim, dtype.type

    # -- expressions ---------------------------------------------------------------------------
    def static(self, node):
        """The value of a global name or attribute chain (numba's types as NumPy's), or None."""
        if isinstance(node, ast.Name):
            value = None if node.id in self.locals else self.value_of(node.id)
        elif isinstance(node, ast.Attribute):
            owner = self.static(node.value)
            try:
                value = getattr(owner, node.attr) if owner is not None else None
            except Exception:  # noqa: BLE001 - the doctor's cuda refuses what it lacks
                return None
        else:
            return None
        if value is None:
            return None
        return in_kernel(value) or replacement(value) or value

    def of(self, node):
        """The class of the values `node` gives, BOTTOM while a name is not settled, or None."""
        method = getattr(self, f"_of_{type(node).__name__}", None)
        return method(node) if method is not None else None

    def _of_Constant(self, node):
        v = node.value
        if v.__class__ is int:
            return int if -(1 << 63) <= v < 1 << 63 else None
        return v.__class__ if v.__class__ in (bool, float) else None

    def _of_Name(self, node):
        if node.id in self.names:
            return self.names[node.id]
        value = self.static(node)
        return canon(value.__class__) if value.__class__ in (int, float, bool, np.float32, np.float64) else None

    def _of_Attribute(self, node):
        path = self.path(node)
        if path in CUDA_INTS or (path and path.startswith(CUDA_DIMS)):
            return int
        if node.attr in ("size", "ndim") and isinstance(node.value, ast.Name) and node.value.id in self.arrays:
            return int
        return None

    def _of_Subscript(self, node):
        value, index = node.value, node.slice
        if isinstance(value, ast.Attribute) and value.attr == "shape" and isinstance(value.value, ast.Name):
            return int if value.value.id in self.arrays else None
        if not isinstance(value, ast.Name) or value.id not in self.arrays:
            return None
        elements = index.elts if isinstance(index, ast.Tuple) else [index]
        element, ndim, _ = self.arrays[value.id]
        if any(isinstance(e, (ast.Slice, ast.Starred)) for e in elements) or len(elements) != ndim:
            return None
        return element

    def _of_BinOp(self, node):
        a, b = self.of(node.left), self.of(node.right)
        return self.result(OPERATORS.get(type(node.op)), a, b)

    def result(self, op, a, b):
        if a is BOTTOM or b is BOTTOM:
            return BOTTOM
        if op is None or TYPE_OF.get(a) is None or TYPE_OF.get(b) is None:
            return None
        t = binary_type(op, TYPE_OF[a], TYPE_OF[b])
        return None if t is None else canon(runtime_class(t))

    def _of_UnaryOp(self, node):
        a = self.of(node.operand)
        if isinstance(node.op, ast.Not):
            return bool
        if a is BOTTOM or TYPE_OF.get(a) is None:
            return a if a is BOTTOM else None
        t = unary_type(UNARY[type(node.op)], TYPE_OF[a])
        return None if t is None else canon(runtime_class(t))

    def _of_Compare(self, node):
        return bool

    def _of_IfExp(self, node):
        a, b = self.of(node.body), self.of(node.orelse)
        return a if a is b else (BOTTOM if BOTTOM in (a, b) else None)

    def argument(self, node):
        """What a device function is told about an argument: ("array", element class,
        dimensions, scalar type) for an array (its elements are NumPy scalars: an array handed
        to a device function is never read-only), else the argument's class or None."""
        if isinstance(node, ast.Name) and node.id in self.arrays:
            element, ndim, scalar = self.arrays[node.id]
            return None if scalar is None else ("array", element, ndim, scalar)
        found = self.of(node)
        return None if found is BOTTOM else found

    def _of_Call(self, node):
        scalar = self.dtype_call(node)
        if scalar is not None:
            return canon(runtime_class(scalar))
        path = self.path(node.func)
        if path in ("cuda.grid", "cuda.gridsize") and len(node.args) == 1 and literal(node.args[0]) == 1:
            return int
        callee = self.static(node.func)
        if callee in (len,):
            return int
        if isinstance(callee, type) and issubclass(callee, np.generic) and callee in TYPE_OF:
            return canon(runtime_class(callee))
        if callee in BUILTINS:
            return self._builtin(callee, [self.of(a) for a in node.args])
        if getattr(callee, "__qualname__", "").startswith(("_ufunc.", "_scalar.", "_predicate.")):
            return self._math(callee.__name__, [self.of(a) for a in node.args])
        return None

    @staticmethod
    def _math(name, args):
        """A kernel's `math.<name>` (grader/doctor/devicemath.py) of arguments of these classes."""
        if name in MATH_BOOLS:
            return bool
        if BOTTOM in args:
            return BOTTOM
        if not args or any(TYPE_OF.get(a) is None for a in args):
            return None
        if name in HALF and all(a is np.float16 for a in args):
            return np.float16  # numba-cuda's fp16 overload (grader/doctor/devicemath.py)
        return canon(result_type(name, [a() for a in args]))

    def dtype_call(self, node):
        """The scalar type of `x.dtype.type(v)` for an array x (a cast to its type), or None."""
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr == "type" and isinstance(func.value, ast.Attribute)):
            return None
        owner = func.value.value
        if func.value.attr != "dtype" or not isinstance(owner, ast.Name) or owner.id not in self.arrays:
            return None
        return self.arrays[owner.id][2]

    def _builtin(self, callee, args):
        if BOTTOM in args:
            return BOTTOM
        if callee in (min, max, abs) and args and all(a is args[0] for a in args) and args[0] in (int, float):
            return args[0]
        if callee is int and args and args[0] in (int, bool, float, np.float32, np.float64):
            return int
        if callee is float and args and args[0] in (int, bool, float):
            return float
        if callee is round and len(args) == 1:
            return int
        return None


def _shared_or_local(value, path) -> bool:
    return isinstance(value, ast.Call) and path(value.func) in ("cuda.shared.array", "cuda.local.array")


def _bindings(func: ast.FunctionDef, path) -> list:
    """(name, value) for every place the function binds a local name: an expression, or
    ("range", call) for a loop counter, ("op", BinOp) for an augmented assignment, ("opaque",
    None) for bindings whose class the doctor does not follow."""
    out: list = []
    opaque = ("opaque", None)
    for node in ast.walk(func):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                out += _assigned(target, node.value, path)
        elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and isinstance(node.target, ast.Name):
            out.append((node.target.id, node.value if node.value is not None else opaque))
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            op = ast.BinOp(ast.Name(node.target.id, ast.Load()), node.op, node.value)
            out.append((node.target.id, ("op", op)))
        elif isinstance(node, ast.For):
            counted = isinstance(node.iter, ast.Call) and isinstance(node.iter.func, ast.Name)
            if isinstance(node.target, ast.Name) and counted and node.iter.func.id == "range":
                out.append((node.target.id, ("range", node.iter)))
            else:
                out += [(n.id, opaque) for n in _stored(node.target)]
        elif isinstance(node, (ast.Lambda, ast.FunctionDef)) and node is not func:
            out += [(a.arg, opaque) for a in ast.walk(node.args) if isinstance(a, ast.arg)]
        elif isinstance(node, (ast.comprehension, ast.With, ast.ExceptHandler)):
            targets = [node.target] if isinstance(node, ast.comprehension) else []
            targets += [i.optional_vars for i in getattr(node, "items", ()) if i.optional_vars is not None]
            out += [(n.id, opaque) for t in targets for n in _stored(t)]
            if isinstance(node, ast.ExceptHandler) and node.name:
                out.append((node.name, opaque))
    return out


def _stored(target) -> list:
    """The names a binding target binds (not those an element or attribute store reads)."""
    return [n for n in ast.walk(target) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]


def _assigned(target, value, path) -> list:
    if isinstance(target, ast.Name):
        return [(target.id, value)]
    names = _stored(target)
    if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)):
        if len(target.elts) == len(value.elts):
            return [pair for t, v in zip(target.elts, value.elts) for pair in _assigned(t, v, path)]
    if isinstance(target, ast.Tuple) and all(isinstance(n, ast.Name) for n in target.elts):
        n = len(target.elts)
        if isinstance(value, ast.Call) and path(value.func) in ("cuda.grid", "cuda.gridsize"):
            if len(value.args) == 1 and literal(value.args[0]) == n:  # a tuple of Python ints
                return [(t.id, ast.Constant(0)) for t in target.elts]
        if isinstance(value, ast.Attribute) and value.attr == "shape":  # each one `a.shape[k]`
            return [(t.id, ast.Subscript(value, ast.Constant(k), ast.Load())) for k, t in enumerate(target.elts)]
    return [(n.id, ("opaque", None)) for n in names]
