"""Scalar arithmetic as numba-cuda types it, for the kernels the doctor runs.

The doctor runs a kernel's Python with NumPy scalars, whose arithmetic is NumPy's: a float32
times the literal 0.5 stays float32 (NumPy 2 treats Python numbers as weak), int32 * int32
wraps at 32 bits, `range(2.5)` raises. Numba types every expression first (numba-cuda's
typing, read here from its CUDA typing context, `cuda_target.typing_context`, for numba-cuda
0.30.4): a literal is an int64 or a float64, float32 * float64 is float64, the sum of two
integers is 64 bits wide (uint64 when both are unsigned: uint8 3 - 5 is 2**64 - 2), an integer
beside a float32 makes it float64 unless it is 16 bits or less, `range` truncates float bounds.
The functions here compute each operator, `range`, `int`, `float`, `abs`, `min`, `max`, `round`
and `pow` as that typing and numba-cuda's lowering (`numba/cuda/cpython/numbers.py`) do:
integers wrap at 64 bits, an integer divided by 0 gives 0, a float divided by 0 inf or NaN,
`//` and `%` follow Python's signs, `x ** n` multiplies in x's type.

Values keep the doctor's representation: an int64 or an int32 is a Python int (the two behave
alike as operands: Numba computes with either in 64 bits), a float64 a Python float, a boolean
a Python bool, any other type a NumPy scalar of that type. tests/test_doctor_scalars.py
checks every rule against numba-cuda's typing context, tests/test_doctor_arithmetic.py the
values against Numba's (tests/arithmetic_forms.py).
"""

from __future__ import annotations

import math
import operator

import numpy as np

B, I8, U8, I16, U16, I32, U32, I64, U64 = (
    np.bool_,
    np.int8,
    np.uint8,
    np.int16,
    np.uint16,
    np.int32,
    np.uint32,
    np.int64,
    np.uint64,
)
F16, F32, F64 = np.float16, np.float32, np.float64
INTEGERS = (B, I8, U8, I16, U16, I32, U32, I64, U64)
FLOATS = (F16, F32, F64)
TYPE_OF = {bool: B, int: I64, float: F64, **{t: t for t in INTEGERS + FLOATS}}
"""The Numba type a value of a class stands for (a Python int is an int64, a float a float64)."""
UNSIGNED = (U8, U16, U32, U64)
ARITHMETIC_FLOAT = {B: F16, I8: F16, U8: F32, I16: F32, U16: F64, I32: F64, U32: F64, I64: F64, U64: F64}
"""The float an integer becomes beside a float in arithmetic and comparisons (numba-cuda)."""
UNIFY_FLOAT = {**ARITHMETIC_FLOAT, U8: F16, U16: F32}
"""The float an integer becomes when min/max unify it with a float."""
BITS = {t: (1 if t is B else np.dtype(t).itemsize * 8) for t in INTEGERS + FLOATS}


def wider(*floats):
    return max(floats, key=BITS.__getitem__)


def float_of(t, table=ARITHMETIC_FLOAT):
    return t if t in FLOATS else table[t]


def _integer_result(a, b):
    return U64 if a in UNSIGNED and b in UNSIGNED else I64


def binary_type(op: str, a, b):
    """Numba's result type of `a <op> b` for operands of types a and b (None: Numba refuses)."""
    ints = a not in FLOATS and b not in FLOATS
    if op in ("add", "sub", "mul"):
        return _integer_result(a, b) if ints else wider(float_of(a), float_of(b))
    if op == "truediv":
        return F64 if ints else wider(float_of(a), float_of(b))
    if op in ("floordiv", "mod"):
        return _integer_result(a, b) if ints else wider(F32, float_of(a), float_of(b))
    if op == "pow":
        if ints:
            return F32 if (a, b) == (B, I32) else _integer_result(a, b)
        return wider(F32, float_of(a)) if b not in FLOATS else wider(F32, float_of(a), b)
    if not ints:
        return None
    if op in ("lshift", "rshift"):
        return U64 if a in UNSIGNED else I64
    return B if a is B and b is B else _integer_result(a, b)  # and_, or_, xor


def unify(a, b):
    """The type Numba gives a value that is of type a or of type b (min, max)."""
    if a is b or b is B:
        return a
    if a is B:
        return b
    if a in FLOATS or b in FLOATS:
        return wider(float_of(a, UNIFY_FLOAT), float_of(b, UNIFY_FLOAT))
    if (a in UNSIGNED) == (b in UNSIGNED):
        return a if BITS[a] >= BITS[b] else b
    signed, unsigned = (b, a) if a in UNSIGNED else (a, b)
    if BITS[unsigned] < BITS[signed]:
        return signed
    return {8: I16, 16: I32, 32: I64}.get(BITS[unsigned], F64)


def compare_type(a, b):
    """The type both sides of a comparison are converted to."""
    if a in FLOATS or b in FLOATS:
        return wider(float_of(a), float_of(b))
    return unify(a, b)


def unary_type(op: str, a):
    if op == "not_":
        return B
    if op == "invert" and a is B:
        return B
    if a in FLOATS:
        return a if op != "invert" else None
    return U64 if a in UNSIGNED else I64  # neg, pos, invert


def builtin_type(name: str, t):
    """Numba's result type of a builtin of one argument of type t (None: Numba refuses)."""
    if name == "int":
        return I64 if t is B or t in FLOATS else t
    if name == "float":
        return None if t is B else (t if t in FLOATS else F64)
    if name == "abs":
        return I8 if t is B else t
    if name == "round":
        return I64
    if name == "round_ndigits":
        return wider(F32, float_of(t))
    return None


def range_type(types) -> type:
    """The integer type of a range over bounds of these types: numba-cuda's overload choice
    among its int32, int64 and uint64 ranges, the one whose conversions rank best (fewest
    unsafe, then safe, then promoting conversions; the first of equals). So a float bound
    counts in int32 (`range(2.5)`), unsigned bounds in uint64."""
    ranks = [sorted_conversions(types, target) for target in (I32, I64, U64)]
    return (I32, I64, U64)[ranks.index(min(ranks))]


def sorted_conversions(types, target) -> tuple:
    """(unsafe, safe, promoting) conversions from these types to `target` (an integer type), by
    Numba's casting rules (numba.core.typeconv.rules)."""
    kinds = [_conversion(t, target) for t in types]
    return kinds.count("unsafe"), kinds.count("safe"), kinds.count("promote")


def _conversion(t, target) -> str:
    if t is target:
        return "exact"
    if t in FLOATS:
        return "unsafe"
    if t is B:
        return "safe"
    if t in UNSIGNED:
        if target in UNSIGNED:
            return "promote" if BITS[target] > BITS[t] else "unsafe"
        return "safe" if BITS[target] > BITS[t] else "unsafe"
    if target in UNSIGNED:
        return "unsafe"
    return "promote" if BITS[target] > BITS[t] else "unsafe"


# -- values ------------------------------------------------------------------------------------
_MASK = {t: (1 << BITS[t]) - 1 for t in INTEGERS}


def wrap(t, value: int):
    """An integer converted to integer type t as a GPU converts it (its low bits)."""
    if t is B:
        return bool(value)
    value &= _MASK[t]
    if t not in UNSIGNED and value >> (BITS[t] - 1):
        value -= 1 << BITS[t]
    return value if t is I64 or t is I32 else t(value)


def _int64(value: int) -> int:
    if -(1 << 63) <= value < 1 << 63:
        return value
    return ((value + (1 << 63)) & _MASK[U64]) - (1 << 63)


def truncated(t, value) -> int:
    """A float converted to integer type t as PTX's `cvt.rzi` does: toward zero, NaN to 0,
    out of range to the nearest end of the type's range."""
    x = float(value)
    if x != x:
        return wrap(t, 0)
    low, high = (0, _MASK[t]) if t in UNSIGNED else (-(1 << (BITS[t] - 1)), (1 << (BITS[t] - 1)) - 1)
    if t is B:
        return x != 0
    return wrap(t, min(max(int(x) if abs(x) != math.inf else (high if x > 0 else low), low), high))


def convert(t, value):
    """`value` converted to Numba type t, held as the doctor holds a value of that type."""
    if t in FLOATS:
        return float(value) if t is F64 else t(float(value) if value.__class__ is int else value)
    if value.__class__ in (float, F16, F32, F64):
        return truncated(t, value)
    return wrap(t, int(value))


def _divide(a, b):
    """a / b for two floats of one type, as IEEE division (inf or NaN where Python raises)."""
    if b:
        return a / b
    with np.errstate(divide="ignore", invalid="ignore"):
        quotient = np.float64(a) / np.float64(b) if a.__class__ is float else a / b
    return float(quotient) if a.__class__ is float else quotient


def _float_divmod(a, b):
    """(a // b, a % b) for two floats of one type, non-zero b: CPython's float_divmod, which
    numba-cuda's `real_divmod` follows, in the operands' own type."""
    if a.__class__ is float:
        return a // b, a % b
    t = a.__class__
    with np.errstate(all="ignore"):
        mod = np.fmod(a, b)
        div = (a - mod) / b
        if mod:
            if (b < 0) != (mod < 0):
                mod, div = mod + b, div - t(1)
        else:
            mod = t(-0.0) if b < 0 else t(0.0)
        if div:
            floor = np.floor(div)
            floordiv = floor + t(1) if div - floor > t(0.5) else floor
        else:
            floordiv = div * div * a / b
    return floordiv, mod


def _int_divmod(t, a: int, b: int):
    """numba-cuda's integer divmod in type t: Python's signs, 0 for a division by zero or for
    the lowest integer divided by -1."""
    a, b = int(wrap(t, a)), int(wrap(t, b))
    if b == 0 or (t not in UNSIGNED and a == -(1 << (BITS[t] - 1)) and b == -1):
        return 0, 0
    return divmod(a, b)


def _int_power(t, a, exponent: int):
    """numba-cuda's `int_power`: `a ** n` by repeated squaring in type t (integers wrap), a
    negative n giving 1 / r (0 for an integer other than 1 or -1, the lowest integer for 0)."""
    integer = t not in FLOATS
    base, n = convert(t, a), int(exponent)
    if n < 0 and integer:
        if base == 0:
            return wrap(t, 1 << (BITS[t] - 1))
        if base not in (1, -1):
            return wrap(t, 0)
    steps = abs(n)
    if steps > 0x10000:
        return convert(t, math.pow(float(base), float(n)))
    result = convert(t, 1)
    with np.errstate(all="ignore"):
        while steps:
            if steps & 1:
                result = _times(t, result, base)
            steps >>= 1
            if steps:
                base = _times(t, base, base)
    if n < 0:
        return convert(t, _divide(1.0, float(result)))
    return result


def _times(t, a, b):
    return wrap(t, int(a) * int(b)) if t not in FLOATS else a * b


def _shift(t, op, a, count):
    """A shift in type t as PTX's shl/shr do: a count past the width (or negative) gives 0, or
    the sign for a right shift of a negative value."""
    a, count = int(convert(t, a)), int(count)
    if not 0 <= count < 64:
        return wrap(t, -1 if op == "rshift" and a < 0 else 0)
    return wrap(t, a << count if op == "lshift" else a >> count)


_PLAIN = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "and_": operator.and_,
    "or_": operator.or_,
    "xor": operator.xor,
}


def _integer_rule(op, r, tb):
    plain = _PLAIN.get(op)
    if plain is not None:
        if r is I64:
            return lambda a, b: _int64(plain(int(a), int(b)))
        return lambda a, b: wrap(r, plain(int(a), int(b)))
    if op in ("floordiv", "mod"):
        k = 0 if op == "floordiv" else 1
        return lambda a, b: wrap(r, _int_divmod(r, int(a), int(b))[k])
    if op in ("lshift", "rshift"):
        return lambda a, b: _shift(r, op, a, b)
    if op == "pow":
        return lambda a, b: _int_power(r, a, b)
    return None


def _float_rule(op, r, ta, tb):
    if op == "pow" and tb not in FLOATS:
        return lambda a, b: _int_power(r, a, b)
    if op == "pow":
        return lambda a, b: convert(r, _real_power(float(a), float(b)))
    plain = _PLAIN.get(op)
    if r is F64:
        if plain is not None:
            return lambda a, b: plain(float(a), float(b))
        if op == "truediv":
            return lambda a, b: _divide(float(a), float(b))
    elif plain is not None:
        if ta is r and tb is r:
            return plain
        return lambda a, b: plain(convert(r, a), convert(r, b))
    elif op == "truediv":
        return lambda a, b: _divide(convert(r, a), convert(r, b))
    k = 0 if op == "floordiv" else 1
    return lambda a, b: _float_floordiv_mod(convert(r, a), convert(r, b), k)


def _float_floordiv_mod(a, b, k):
    if not b:
        return _divide(a, b) if k == 0 else (math.nan if a.__class__ is float else a.__class__(math.nan))
    return _float_divmod(a, b)[k]


def _real_power(x: float, y: float) -> float:
    """pow() of two floats with IEEE results (NaN for a negative base and a fractional power,
    inf on overflow) where Python's `**` raises or gives a complex number."""
    try:
        return math.pow(x, y)
    except (OverflowError, ValueError):
        with np.errstate(all="ignore"):
            return float(np.power(np.float64(x), np.float64(y)))


def binary_rule(op: str, ca: type, cb: type):
    """The function computing `a <op> b` for values of classes ca and cb as Numba does."""
    ta, tb = TYPE_OF.get(ca), TYPE_OF.get(cb)
    plain = getattr(operator, op)
    if ta is None or tb is None:
        return plain  # not numbers (tuples...): what numba-cuda accepted, Python does alike
    r = binary_type(op, ta, tb)
    if r is None:
        return plain
    if r in FLOATS:
        return _float_rule(op, r, ta, tb)
    if r is B:
        return lambda a, b: bool(plain(bool(a), bool(b)))
    return _integer_rule(op, r, tb)


def compare_rule(op: str, ca: type, cb: type):
    """The function computing the comparison `a <op> b` as Numba does (in the common type)."""
    ta, tb = TYPE_OF.get(ca), TYPE_OF.get(cb)
    plain = getattr(operator, op)
    if ta is None or tb is None:
        return plain
    t = compare_type(ta, tb)
    if t in FLOATS:
        if ta is t and tb is t:
            return lambda a, b: bool(plain(a, b))
        return lambda a, b: bool(plain(convert(t, a), convert(t, b)))
    return lambda a, b: plain(int(a), int(b))


def unary_rule(op: str, ca: type):
    t = TYPE_OF.get(ca)
    plain = getattr(operator, op)
    if t is None:
        return plain
    r = unary_type(op, t)
    if r is None or r is B:
        return (lambda a: not a) if r is B else plain
    if r in FLOATS:
        return plain
    if t is B:
        return lambda a: wrap(r, plain(int(a)))
    return lambda a: wrap(r, int(wrap(t, plain(int(a)))))  # in the operand's own width, then widened
