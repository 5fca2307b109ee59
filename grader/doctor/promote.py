"""Where a kernel's arithmetic must be Numba's, not Python's: operators and builtins rewritten
into grader/doctor/numbaops.py's helpers (`x * 0.5` -> `_zg_n_mul(x, 0.5)`), except where the
doctor can tell before the kernel runs that Python computes what Numba does.

A helper costs a Python call per operation, so the rewrite first works out, for the launch
being run, the class of the values each name and expression will hold where it can (the
`Known` classes): a thread index, a loop counter over integers, an array's shape or a literal is
a Python int; an element of a float32 array a NumPy float32; `float32(0)` too; a name every
assignment of which gives one class has that class. An operation whose operands' classes make
Python's (or NumPy's) result Numba's stays as it is: int with int for `+ - * & | ^` (index
arithmetic), float with int or float, float32 with float32, comparisons of those. Anything else
goes through a helper, which looks at the values' own classes while the kernel runs.

What Python ints do not do: wrap at 64 bits. Products and sums of thread indices never get
there; an operation with an integer literal of 2**31 or more (a hash's multiplier) goes through a
helper, which wraps. Every rewritten node keeps, as `zg_text`, the learner's text of the
expression it replaces, for the doctor's messages.
"""

from __future__ import annotations

import ast

import numpy as np

from grader.doctor.kernel_source import OPERATORS
from grader.doctor.known import BIG, BOTTOM, COMPARISONS, SIGNED, UNARY, Known, canon, literal
from grader.doctor.numbaops import BUILTINS, type_name
from grader.doctor.scalars import TYPE_OF, unify


def native(op: str, a, b, right=None, left=None) -> bool:
    """Does Python (NumPy for NumPy scalars) compute `a <op> b` for values of classes a and b
    as Numba does? `right`/`left`: the operand nodes (a literal divisor, a large literal)."""
    if a is None or b is None or a is BOTTOM or b is BOTTOM:
        return False
    a, b = canon(a), canon(b)
    if any(isinstance(v, int) and not isinstance(v, bool) and abs(v) >= BIG for v in (literal(left), literal(right))):
        return False
    if op in ("add", "sub", "mul"):
        return {a, b} <= {int, float} or (a is b and a in (np.float32, np.float16))
    if op in ("and_", "or_", "xor"):
        return a is b and a in (int, bool)
    divisor = literal(right)
    if op == "rshift":
        return a is int and b is int and divisor.__class__ is int and 0 <= divisor < 64
    if op in ("floordiv", "mod"):
        return a is int and b is int and divisor.__class__ is int and divisor > 0
    if op == "truediv":
        return {a, b} <= {int, float} and divisor is not None and divisor != 0
    return False


def native_comparison(a, b) -> bool:
    if a is None or b is None or a is BOTTOM or b is BOTTOM:
        return False
    a, b = canon(a), canon(b)
    if {a, b} <= {int, float} or (a is b and a in (np.float32, np.float16, bool)):
        return True
    return (a is int and b in SIGNED) or (b is int and a in SIGNED)


class Promote(ast.NodeTransformer):
    """Rewrites a function's operators and builtins into numbaops' helpers where `native` says
    Python's result could differ from Numba's."""

    def __init__(self, known: Known):
        self.known = known
        self.temps = 0
        self.depth = 0

    def helper(self, name: str, args: list, node) -> ast.Call:
        call = ast.Call(ast.Name(name, ast.Load()), args, [])
        call.zg_text = getattr(node, "zg_text", None)
        return ast.copy_location(call, node)

    def nested(self, node):
        self.depth += 1
        try:
            return self.generic_visit(node)
        finally:
            self.depth -= 1

    visit_Lambda = visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = nested

    def visit_BinOp(self, node):
        op = OPERATORS.get(type(node.op))
        a, b = self.known.of(node.left), self.known.of(node.right)
        node = self.generic_visit(node)
        if op is None or native(op, a, b, node.right, node.left):
            return node
        return self.helper(f"_zg_n_{op}", [node.left, node.right], node)

    def visit_UnaryOp(self, node):
        a = self.known.of(node.operand)
        node = self.generic_visit(node)
        op = UNARY.get(type(node.op))
        if op is None:
            return node
        kept = (int, float, np.float32, np.float16, np.float64) if op != "invert" else (int,)
        if a in kept:
            return node
        return self.helper(f"_zg_n_{op}", [node.operand], node)

    def visit_Compare(self, node):
        classes = [self.known.of(node.left)] + [self.known.of(c) for c in node.comparators]
        node = self.generic_visit(node)
        names = [COMPARISONS.get(type(op)) for op in node.ops]
        if None in names or all(native_comparison(a, b) for a, b in zip(classes, classes[1:])):
            return node
        if len(names) == 1:
            return self.helper(f"_zg_n_{names[0]}", [node.left, node.comparators[0]], node)
        if self.depth:
            return node  # no walrus inside a comprehension: left to Python
        parts, left = [], node.left
        for k, (name, right) in enumerate(zip(names, node.comparators)):
            if k < len(names) - 1:
                temp = f"_zg_cmp{self.temps}"
                self.temps += 1
                right = ast.NamedExpr(ast.Name(temp, ast.Store()), right)
                parts.append(self.helper(f"_zg_n_{name}", [left, right], node))
                left = ast.Name(temp, ast.Load())
            else:
                parts.append(self.helper(f"_zg_n_{name}", [left, right], node))
        return ast.copy_location(ast.BoolOp(ast.And(), parts), node)

    def visit_IfExp(self, node):
        """Numba gives `a if c else b` one type, both branches' unified: the branch taken is
        converted to it, where Python keeps its own type."""
        a, b = self.known.of(node.body), self.known.of(node.orelse)
        node = self.generic_visit(node)
        ta, tb = TYPE_OF.get(a), TYPE_OF.get(b)
        if ta is not None and tb is not None:
            if ta is tb:
                return node
            name = f"_zg_n_to_{type_name(unify(ta, tb))}"
            node.body, node.orelse = (self.helper(name, [branch], branch) for branch in (node.body, node.orelse))
            return node
        if _pure(node.body) and _pure(node.orelse):
            return self.helper("_zg_n_pick", [node.test, node.body, node.orelse], node)
        return node

    def visit_AugAssign(self, node):
        op = OPERATORS.get(type(node.op))
        target = node.target
        if isinstance(target, ast.Name):
            a, b = self.known.names.get(target.id), self.known.of(node.value)
            node = self.generic_visit(node)
            if op is None or native(op, a, b, node.value, target):
                return node
            value = self.helper(f"_zg_n_{op}", [ast.Name(target.id, ast.Load()), node.value], node)
            return ast.copy_location(ast.Assign([ast.Name(target.id, ast.Store())], value), node)
        a = self.known.of(target) if isinstance(target, ast.Subscript) else None
        b = self.known.of(node.value)
        node = self.generic_visit(node)
        if op is not None and not native(op, a, b, node.value):
            node.zg_op = f"_zg_n_{op}"  # the update's operator (grader/doctor/transform.py)
        return node

    def visit_Call(self, node):
        callee = self.known.static(node.func)
        classes = [self.known.of(a) for a in node.args]
        arguments = tuple(self.known.argument(a) for a in node.args)
        node = self.generic_visit(node)
        node.zg_classes = arguments  # for a device function's own rewrite (grader/doctor/transform.py)
        try:
            builtin = callee in BUILTINS
        except TypeError:  # an unhashable value
            builtin = False
        if builtin and not _kept(callee, classes):
            node.func = ast.copy_location(ast.Name(BUILTINS[callee], ast.Load()), node.func)
        elif len(node.args) == 1 and (_integer_type(callee) or self.known.dtype_call(node) is not None):
            return self.helper("_zg_n_cast", [node.func, node.args[0]], node)
        return node


def _integer_type(value) -> bool:
    return isinstance(value, type) and issubclass(value, np.integer)


def _pure(node) -> bool:
    """Can `node` be evaluated where the kernel would not, without effect: names, literals,
    attributes, arithmetic of those (the rewritten arithmetic never raises), no loads."""
    if isinstance(node, (ast.Name, ast.Constant)):
        return True
    if isinstance(node, ast.Attribute):
        return _pure(node.value)
    if isinstance(node, ast.UnaryOp):
        return _pure(node.operand)
    if isinstance(node, ast.BinOp):
        return _pure(node.left) and _pure(node.right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id.startswith("_zg_n_"):
        return all(_pure(a) for a in node.args)
    return False


def _kept(callee, classes) -> bool:
    """May this builtin stay Python's for arguments of these classes?"""
    if not classes:
        return False
    first, same = classes[0], all(c is classes[0] for c in classes)
    if callee is range:
        return all(c is int for c in classes)
    if callee in (int, round):
        return classes == [int]
    if callee is float:
        return len(classes) == 1 and first in (int, float)
    if callee is abs:
        return len(classes) == 1 and first in (int, float, np.float32)
    if callee in (min, max):
        return len(classes) > 1 and same and first in (int, float, np.float32)
    return False


def promote_function(func: ast.FunctionDef, classes: dict, path, value_of, locals_) -> ast.FunctionDef:
    """`func` (a kernel's or device function's tree) with Numba's arithmetic where Python's
    could differ. `classes`: parameter -> the class its values have in this launch, or
    ("array", element class, dimensions, scalar type). Every expression keeps its text as `zg_text`."""
    for node in ast.walk(func):
        if isinstance(node, ast.expr):
            node.zg_text = ast.unparse(node)
    params = {n: c for n, c in classes.items() if not isinstance(c, tuple)}
    arrays = {n: c[1:] for n, c in classes.items() if isinstance(c, tuple)}
    known = Known(func, params, arrays, path, value_of, locals_)
    rewrite = Promote(known)
    func.body = [rewrite.visit(stmt) for stmt in func.body]
    return ast.fix_missing_locations(func)
