"""`cuda.fp16` for the CPU engines, in half precision and exact: the kernel doctor's `cuda.fp16`
(grader/doctor/fakecuda.py) and the simulator's (patched by grader/backend/simulator.py, whose
own `hadd` was float32's `a + b`). Also `fused`, a fused multiply-add rounded once.

numba-cuda 0.30.4's `cuda.fp16` functions are NVIDIA's cuda_fp16.h functions on `__half`
values: their arguments are converted to half precision first (a float32 or float64 rounded
to nearest even, as `cvt.rn.f16`, an integer likewise), and each result is a half. A GPU's
results are IEEE half-precision results, so each function here computes exactly, in float64,
and rounds once to float16: a sum, difference or product of two halves is exact in float64;
a quotient or square root rounded to float64 first still rounds to the right half (53 bits
is more than 2 * 11 + 2); `hfma` rounds its exact result once (`fused`). Measured on an NVIDIA
H100 (2026-12-07): `hadd`, `hmul` and `hfma` of float32 arrays give the half-rounded results.

The math functions (hsqrt, hrcp, hexp, hlog, hsin...) are documented in cuda_fp16.h as
rounded to nearest even; here they are numpy's float64 value rounded to half, refused
(NotImplementedError) where that value lies too near a midpoint between two halves for its rounding to
be sure (tests/test_doctor_fp16.py checks that no half input does). `htanh_approx` (an
approximation, by its name and documentation) and the functions not written here are refused:
neither CPU engine computes them in another precision.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

H = np.float16
HALF_MAX = float(np.finfo(H).max)
CANONICAL_NAN = np.uint16(0x7FFF).view(H)
"""The NaN a GPU's half-precision arithmetic gives."""


def unexact(why: str) -> NotImplementedError:
    """The refusal of a cuda.fp16 function the CPU engines cannot compute as a GPU does: a
    NotImplementedError, which the simulator's fallback reports as the grader's, never as the
    learner's exception (grader/doctor/fallback.py)."""
    return NotImplementedError(why)


def half(x) -> np.float16:
    """A number as a `__half` argument: rounded to the nearest half, ties to even (NumPy's
    conversions round correctly from float32, float64 and integers)."""
    if x.__class__ is H:
        return x
    with np.errstate(over="ignore"):
        return H(float(x)) if x.__class__ is int and abs(x) > 2**53 else H(x)


def _rounded(value: float) -> np.float16:
    with np.errstate(over="ignore", invalid="ignore"):
        return H(value) if value == value else CANONICAL_NAN


def fused(t, a, b, c):
    """a * b + c rounded once to float type t, as PTX's fma.rn does (cuda.fma, hfma): for float32
    or float16 operands the product is exact in float64, and the float64 sum's error term
    (TwoSum) decides the one case its rounding to t could get wrong, a sum that lands on a
    midpoint of t; float64 operands are added as exact fractions."""
    a, b, c = float(a), float(b), float(c)
    p = a * b
    s = p + c
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(c)) or not math.isfinite(s):
        with np.errstate(over="ignore", invalid="ignore"):
            return s if t is np.float64 else t(s)
    if t is np.float64:
        exact = Fraction(a) * Fraction(b) + Fraction(c)
        try:
            return float(exact) if exact else s  # s keeps the sign of a zero
        except OverflowError:
            return math.copysign(math.inf, exact)
    bp = s - p
    error = (p - (s - bp)) + (c - bp)  # s + error == a * b + c exactly
    with np.errstate(over="ignore"):
        r = t(s)
    if not error or float(r) == s:
        return r
    top = np.finfo(t).max
    if math.isinf(r):
        threshold = float(top) + (float(top) - float(np.nextafter(top, t(0)))) / 2
        below = abs(s) == threshold and error * s < 0
        return t(math.copysign(float(top), s)) if below else r
    lo, hi = (r, np.nextafter(r, t(math.inf))) if float(r) < s else (np.nextafter(r, t(-math.inf)), r)
    if 2 * s == float(lo) + float(hi):  # a midpoint of t: the exact value lies to one side
        return hi if error > 0 else lo
    return r


def _saturated(h: np.float16) -> np.float16:
    """PTX's .sat: clamped to [0, 1], NaN to +0."""
    return H(0.0) if h != h or h < 0 else (H(1.0) if h > 1 else H(h))


def _certain(name: str, value: float) -> np.float16:
    """`value` (numpy's float64 result of a math function of a half) rounded to half, where
    that rounding is certain: not within a few float64 units of a midpoint between halves."""
    r = _rounded(value)
    if not math.isfinite(value) or float(r) == value or math.isinf(r):
        return r
    lo, hi = (r, np.nextafter(r, H(math.inf))) if float(r) < value else (np.nextafter(r, H(-math.inf)), r)
    if abs(value - (float(lo) + float(hi)) / 2) <= 8 * math.ulp(value):
        raise unexact(f"cuda.fp16.{name} of {float(value)!r}: too near a midpoint between two halves to round surely")
    return r


MATH = {
    "hsqrt": np.sqrt,
    "hrsqrt": lambda x: 1.0 / np.sqrt(x),
    "hrcp": lambda x: 1.0 / x,
    "hexp": np.exp,
    "hexp2": np.exp2,
    "hexp10": lambda x: np.power(10.0, x),
    "hlog": np.log,
    "hlog2": np.log2,
    "hlog10": np.log10,
    "hsin": np.sin,
    "hcos": np.cos,
    "htanh": np.tanh,
}
"""The math functions cuda_fp16.h documents as rounded to nearest even, by numpy's float64 form."""


class HalfPrecision:
    """numba-cuda's `cuda.fp16`, computed in half precision (methods take `self`, so that the
    simulator's FakeCUDAFp16 can take them over unchanged)."""

    def hadd(self, a, b):
        return _rounded(float(half(a)) + float(half(b)))

    def hsub(self, a, b):
        return _rounded(float(half(a)) - float(half(b)))

    def hmul(self, a, b):
        return _rounded(float(half(a)) * float(half(b)))

    def hdiv(self, a, b):
        x, y = float(half(a)), float(half(b))
        if y == 0:
            return _rounded(math.nan if x == 0 or x != x else math.copysign(math.inf, x) * math.copysign(1, y))
        return _rounded(x / y)

    def hfma(self, a, b, c):
        r = fused(H, half(a), half(b), half(c))
        return CANONICAL_NAN if r != r else r

    def hneg(self, a):
        return -half(a)

    def habs(self, a):
        return abs(half(a))

    def hmax(self, a, b):
        return self._pick(a, b, max_=True, nan=False)

    def hmin(self, a, b):
        return self._pick(a, b, max_=False, nan=False)

    @staticmethod
    def _pick(a, b, max_: bool, nan: bool):
        """PTX's max/min.f16: a NaN operand gives the other (`.NaN`: gives NaN), both NaN the
        canonical NaN; -0 counts as below +0."""
        x, y = half(a), half(b)
        if x != x or y != y:
            if nan or (x != x and y != y):
                return CANONICAL_NAN
            return y if x != x else x
        key = (float(x), math.copysign(1, float(x))), (float(y), math.copysign(1, float(y)))
        return x if (key[0] >= key[1]) == max_ else y

    def hceil(self, a):
        return np.ceil(half(a))

    def hfloor(self, a):
        return np.floor(half(a))

    def htrunc(self, a):
        return np.trunc(half(a))

    def hrint(self, a):
        return np.rint(half(a))

    def heq(self, a, b):
        return bool(half(a) == half(b))

    def hne(self, a, b):
        x, y = half(a), half(b)
        return bool(x == x and y == y and x != y)

    def hlt(self, a, b):
        return bool(half(a) < half(b))

    def hle(self, a, b):
        return bool(half(a) <= half(b))

    def hgt(self, a, b):
        return bool(half(a) > half(b))

    def hge(self, a, b):
        return bool(half(a) >= half(b))

    def htanh_approx(self, a):
        raise unexact("cuda.fp16.htanh_approx is an approximation whose exact results only a GPU gives")


def _math(name, fn):
    def method(self, a):
        x = float(half(a))
        if name == "hexp2" and x.is_integer() and abs(x) < 1100:  # exact: 2**-25 is a tie, rounds to 0
            return _rounded(math.ldexp(1.0, int(x)))
        with np.errstate(all="ignore"):
            return _certain(name, float(fn(np.float64(x))))

    method.__name__ = name
    return method


def _saturating(name, plain):
    def method(self, *args):
        return _saturated(plain(self, *args))

    method.__name__ = name
    return method


def _relu(self, a, b, c):
    r = HalfPrecision.hfma(self, a, b, c)
    return r if r != r or r > 0 else H(0.0)


def _unordered(plain):
    def method(self, a, b):
        x, y = half(a), half(b)
        return x != x or y != y or plain(self, x, y)

    return method


for _name, _fn in MATH.items():
    setattr(HalfPrecision, _name, _math(_name, _fn))
for _name in ("hadd", "hsub", "hmul"):
    setattr(HalfPrecision, f"__{_name}_rn", getattr(HalfPrecision, _name))
for _name in ("hadd", "hsub", "hmul", "hfma"):
    setattr(HalfPrecision, f"__{_name}_sat", _saturating(f"__{_name}_sat", getattr(HalfPrecision, _name)))
for _name in ("heq", "hne", "hlt", "hle", "hgt", "hge"):
    setattr(HalfPrecision, f"__{_name}", getattr(HalfPrecision, _name))
    setattr(HalfPrecision, f"__{_name}u", _unordered(getattr(HalfPrecision, _name)))
for _name in ("hadd", "hsub", "hmul", "hdiv", "hfma", "hneg", "habs", "hmax", "hmin"):
    setattr(HalfPrecision, f"__{_name}", getattr(HalfPrecision, _name))
_MORE = {
    "__hmax_nan": lambda self, a, b: HalfPrecision._pick(a, b, max_=True, nan=True),
    "__hmin_nan": lambda self, a, b: HalfPrecision._pick(a, b, max_=False, nan=True),
    "__hfma_relu": _relu,
    "__hisnan": lambda self, a: bool(half(a) != half(a)),
    "__hisinf": lambda self, a: 0 if not np.isinf(half(a)) else (1 if half(a) > 0 else -1),
    "__half2float": lambda self, a: np.float32(half(a)),
    "__float2half": lambda self, a: half(a),
    "__double2half": lambda self, a: half(a),
}
_INTEGERS = {
    "char": np.int8,
    "short": np.int16,
    "int": np.int32,
    "ll": np.int64,
    "uchar": np.uint8,
    "ushort": np.uint16,
    "uint": np.uint32,
    "ull": np.uint64,
}
_TO_INTEGER = {"rz": math.trunc, "rn": round, "rd": math.floor, "ru": math.ceil}


def _to_integer(kind, mode):
    """`__half2int_rz` & co: PTX's cvt.{rzi,rni,rmi,rpi} from a half: NaN gives 0, a value out of
    the integer's range its nearest end."""
    info = np.iinfo(kind)

    def method(self, a):
        x = float(half(a))
        if x != x:
            return 0
        if math.isinf(x):
            return int(info.max) if x > 0 else int(info.min)
        return int(min(max(_TO_INTEGER[mode](x), info.min), info.max))

    return method


def _directed(value: float, mode: str) -> np.float16:
    """`value` rounded to half toward zero (rz), down (rd), up (ru) or to nearest even (rn)."""
    r = _rounded(value)
    if mode == "rn" or value != value or float(r) == value:
        return r
    down = r if float(r) < value else np.nextafter(r, H(-math.inf))
    up = r if float(r) > value else np.nextafter(r, H(math.inf))
    if mode == "rz":
        return down if value > 0 else up
    return down if mode == "rd" else up


def _from_number(mode):
    def method(self, a):
        return _directed(float(a), mode)

    return method


for _mode in ("rz", "rn", "rd", "ru"):
    for _word in ("int", "ll", "short", "uint", "ull", "ushort"):
        _MORE[f"__half2{_word}_{_mode}"] = _to_integer(_INTEGERS[_word], _mode)
        _MORE[f"__{_word}2half_{_mode}"] = _from_number(_mode)
    _MORE[f"__float2half_{_mode}"] = _from_number(_mode)
_MORE["__half2char_rz"] = _to_integer(np.int8, "rz")
_MORE["__half2uchar_rz"] = _to_integer(np.uint8, "rz")
_MORE["__half_as_short"] = lambda self, a: half(a).view(np.int16)
_MORE["__half_as_ushort"] = lambda self, a: half(a).view(np.uint16)
_MORE["__short_as_half"] = lambda self, a: np.int16(a).view(H)
_MORE["__ushort_as_half"] = lambda self, a: np.uint16(a).view(H)
for _name, _method in _MORE.items():
    setattr(HalfPrecision, _name, _method)  # set outside the class body: no name mangling

NAMES = (
    *(n for n in vars(HalfPrecision) if n[0] == "h" or (n.startswith("__") and not n.endswith("__"))),
    *(n for n in MATH if n not in vars(HalfPrecision)),
)
"""The cuda.fp16 functions the CPU engines compute (htanh_approx among them, to refuse it)."""
