"""What a kernel's operators and builtins become under the doctor where NumPy's and Python's
arithmetic would part from Numba's (grader/doctor/promote.py decides where): `a * b` becomes
`_zg_n_mul(a, b)`, `range(k / 2)` becomes `_zg_n_range(k / 2)`, and so on.

Each operator helper looks up, per pair of operand classes, the function that computes it as
numba-cuda does (grader/doctor/scalars.py) and keeps it, so a kernel pays one dictionary
lookup per operation after the first.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from grader.doctor.scalars import (
    B,
    F16,
    F32,
    FLOATS,
    I32,
    I64,
    TYPE_OF,
    U64,
    binary_rule,
    builtin_type,
    compare_rule,
    convert,
    range_type,
    truncated,
    unary_rule,
    unify,
    wrap,
)

BINARY = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "lshift", "rshift", "and_", "or_", "xor")
COMPARE = ("lt", "le", "gt", "ge", "eq", "ne")
UNARY = ("neg", "pos", "invert")


def _binary_helper(op: str, make):
    rules: dict = {}

    def helper(a, b):
        key = (a.__class__, b.__class__)
        rule = rules.get(key)
        if rule is None:
            rule = rules[key] = make(op, *key)
        return rule(a, b)

    helper.__name__ = f"numba_{op}"
    return helper


def _unary_helper(op: str):
    rules: dict = {}

    def helper(a):
        rule = rules.get(a.__class__)
        if rule is None:
            rule = rules[a.__class__] = unary_rule(op, a.__class__)
        return rule(a)

    helper.__name__ = f"numba_{op}"
    return helper


def _type(value):
    t = TYPE_OF.get(value.__class__)
    if t is None:
        raise TypeError(f"a number was expected, not {type(value).__name__}")
    return t


def device_range(*args):
    """range() as numba-cuda types it: each float bound truncated toward zero into a 32-bit
    range (a float alone makes one), unsigned bounds a uint64 range whose counter is uint64."""
    if all(a.__class__ is int for a in args):
        return range(*args)
    state = range_type([_type(a) for a in args])
    bounds = [int(convert(state, a)) for a in args]
    if state is U64:
        return (U64(k) for k in range(*bounds))
    return range(*bounds)


def device_int(x):
    """int(): an integer keeps its type (int(uint8) is a uint8), a float is truncated to int64."""
    t = _type(x)
    return convert(builtin_type("int", t), x) if t is B or t in FLOATS else x


def device_float(x):
    """float(): float64 of an integer, a float keeps its type (float(float32) is a float32)."""
    t = _type(x)
    return x if t in (F32, F16) else float(x)


def device_abs(x):
    t = _type(x)
    if t in FLOATS:
        return abs(x)
    return wrap(builtin_type("abs", t), abs(int(x)))


def _minmax(args, later_wins):
    if len(args) == 1:
        args = tuple(args[0])
    acc, acc_type = args[0], _type(args[0])
    for value in args[1:]:
        t = unify(acc_type, _type(value))
        acc, value, acc_type = convert(t, acc), convert(t, value), t
        if later_wins(value, acc):
            acc = value
    return acc


def device_max(*args):
    """max(): the operands unified to one type (max(float32, 0) is a float64), Python's order:
    a later value wins only when greater (max(nan, 1.0) is nan, max(1.0, nan) 1.0)."""
    return _minmax(args, lambda v, acc: v > acc)


def device_min(*args):
    return _minmax(args, lambda v, acc: v < acc)


def device_round(x, ndigits=None):
    """round(): numba-cuda's `llrint` of the float64 value (half to even) for one argument;
    with ndigits, CPython's fallback algorithm, which numba-cuda follows, in float64."""
    t = _type(x)
    if ndigits is None:
        value = float(x)
        if value != value or value in (math.inf, -math.inf):
            return -(1 << 63)
        return truncated(I64, builtins.round(value))
    result = _round_ndigits(float(x), int(ndigits))
    return convert(builtin_type("round_ndigits", t), result)


def _round_ndigits(x: float, ndigits: int) -> float:
    if math.isinf(x) or math.isnan(x):
        return x
    if ndigits >= 0:
        pow1, pow2 = (10.0 ** (ndigits - 22), 1e22) if ndigits > 22 else (10.0**ndigits, 1.0)
        y = (x * pow1) * pow2
        if math.isinf(y):
            return x
    else:
        pow1 = 10.0 ** (-ndigits)
        y = x / pow1
    z = float(builtins.round(y))
    if math.fabs(y - z) == 0.5:
        z = 2.0 * builtins.round(y / 2.0)
    return (z / pow2) / pow1 if ndigits >= 0 else z * pow1


HELPERS = {f"_zg_n_{op}": _binary_helper(op, binary_rule) for op in BINARY}
HELPERS.update({f"_zg_n_{op}": _binary_helper(op, compare_rule) for op in COMPARE})
HELPERS.update({f"_zg_n_{op}": _unary_helper(op) for op in UNARY})


def pick(test, a, b):
    """`a if test else b` as Numba types it: the branch taken, converted to the type both
    branches unify to (`x if c else 0.5` is a float64 for a float32 x). For branches that can
    both be evaluated without effect (grader/doctor/promote.py)."""
    ta, tb = TYPE_OF.get(a.__class__), TYPE_OF.get(b.__class__)
    chosen = a if test else b
    if ta is None or tb is None or ta is tb:
        return chosen
    return convert(unify(ta, tb), chosen)


def converter(t):
    def to(value):
        return convert(t, value)

    to.__name__ = f"to_{type_name(t)}"
    return to


def type_name(t) -> str:
    return "bool" if t is B else np.dtype(t).name


HELPERS.update({f"_zg_n_to_{type_name(t)}": converter(t) for t in TYPE_OF.values()})
HELPERS["_zg_n_pick"] = pick


def device_divmod(a, b):
    return HELPERS["_zg_n_floordiv"](a, b), HELPERS["_zg_n_mod"](a, b)


def device_pow(a, b, *rest):
    if rest:
        return builtins.pow(a, b, *rest)
    return HELPERS["_zg_n_pow"](a, b)


def cast(kind, value):
    """`int32(x)`, `x.dtype.type(v)` & co: a number converted to a scalar type as a GPU does
    (the low bits of an integer, a float truncated toward zero), where NumPy would raise or
    warn; held as the doctor holds that type (an int32 as a Python int)."""
    if value.__class__ is int:
        bounds = _RANGES.get(kind)
        if bounds is not None and bounds[0] <= value <= bounds[1]:  # the common case, quickly
            return value if kind is I64 or kind is I32 else kind(value)
    t = TYPE_OF.get(kind)
    if t is None or TYPE_OF.get(value.__class__) is None:
        return kind(value)
    return convert(t, value)


_RANGES = {t: (int(np.iinfo(t).min), int(np.iinfo(t).max)) for t in TYPE_OF.values() if t not in FLOATS and t is not B}


BUILTINS = {
    range: "_zg_n_range",
    int: "_zg_n_int",
    float: "_zg_n_float",
    abs: "_zg_n_abs",
    min: "_zg_n_min",
    max: "_zg_n_max",
    round: "_zg_n_round",
    pow: "_zg_n_pow2",
    divmod: "_zg_n_divmod",
}
"""Python builtins -> the names their numba-cuda forms have in a rewritten kernel."""
HELPERS.update(
    {
        "_zg_n_range": device_range,
        "_zg_n_int": device_int,
        "_zg_n_float": device_float,
        "_zg_n_abs": device_abs,
        "_zg_n_min": device_min,
        "_zg_n_max": device_max,
        "_zg_n_round": device_round,
        "_zg_n_pow2": device_pow,
        "_zg_n_divmod": device_divmod,
        "_zg_n_cast": cast,
    }
)
