"""`math` as a kernel sees it on a GPU: float32 in, float32 out; inf and NaN instead of errors.

Python's `math.exp(np.float32(90))` is a Python float (1.2e39, finite) where Numba's CUDA
target types `math.exp(float32)` as float32 (inf): a softmax without the max subtracted
passes on the CPU and gives NaN on a GPU. Numba's CUDA typing (numba/cuda/cudamath.py,
checked with `cuda.compile_ptx(..., device=True)`): a function of float32 arguments only
returns float32; with an integer or a float64 argument it returns float64 (`math.exp(2)`,
`math.atan2(f32, f64)`); `math.pow(f32, int32)` is float32 but `math.pow(x, 2)` float64 (the
literal is an int64); `floor`, `ceil` and `trunc` return the float type, not an int. And a GPU
never raises: `math.sqrt(-1.0)` is NaN, `math.exp(1000.0)` inf, `math.log(0.0)` -inf. A float16
argument: numba-cuda's fp16 overloads (`math.sin(half)` is `cuda.fp16.hsin`, a half) where it
has one, else float32 (`math.atan(half)`, measured with compile_ptx).
"""

from __future__ import annotations

import math

import numpy as np

from grader.backend.fp16 import HalfPrecision

F32 = np.float32
F64 = np.float64

UFUNCS = {
    "exp": np.exp,
    "expm1": np.expm1,
    "exp2": np.exp2,
    "log": np.log,
    "log2": np.log2,
    "log10": np.log10,
    "log1p": np.log1p,
    "sqrt": np.sqrt,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "tanh": np.tanh,
    "asinh": np.arcsinh,
    "acosh": np.arccosh,
    "atanh": np.arctanh,
    "floor": np.floor,
    "ceil": np.ceil,
    "trunc": np.trunc,
    "fabs": np.fabs,
    "degrees": np.degrees,
    "radians": np.radians,
    "atan2": np.arctan2,
    "hypot": np.hypot,
    "copysign": np.copysign,
    "fmod": np.fmod,
    "pow": np.power,
}
SCALAR_ONLY = ("erf", "erfc", "gamma", "lgamma", "remainder", "nextafter")
"""Functions NumPy has no ufunc for: computed by Python's math, then rounded to the type."""


F16 = np.float16
HALF = {
    "trunc": "htrunc",
    "ceil": "hceil",
    "floor": "hfloor",
    "fabs": "habs",
    "sqrt": "hsqrt",
    "log": "hlog",
    "log2": "hlog2",
    "log10": "hlog10",
    "exp": "hexp",
    "exp2": "hexp2",
    "tanh": "htanh",
    "cos": "hcos",
    "sin": "hsin",
}
"""math functions numba-cuda 0.30.4 overloads for a float16 (numba/cuda/fp16.py): cuda.fp16's."""


def result_type(name: str, args) -> type:
    """float32 when Numba's CUDA typing keeps float32 (a float16 and float32 mix included, for
    the functions without a float16 form), else float64."""
    if all(a.__class__ is F32 for a in args):
        return F32
    if all(a.__class__ in (F16, F32) for a in args):
        return F32
    if name in ("pow", "ldexp") and args[0].__class__ is F32 and args[1].__class__ in (np.int32, np.int16, np.int8):
        return F32
    return F64


def _ufunc(name, ufunc):
    half = HALF.get(name)

    def device_function(*args):
        if half is not None and args[0].__class__ is F16:
            return getattr(HALF_PRECISION, half)(args[0])
        kind = result_type(name, args)
        return ufunc(*(kind(a) for a in args))

    device_function.__name__ = name
    return device_function


def _scalar(name, fn):
    def device_function(*args):
        kind = result_type(name, args)
        try:
            return kind(fn(*(float(a) for a in args)))
        except OverflowError:
            return kind(math.inf)
        except ValueError:
            return kind(math.nan)

    device_function.__name__ = name
    return device_function


def _predicate(fn):
    def device_function(x):
        return fn(float(x))

    device_function.__name__ = fn.__name__
    return device_function


class DeviceMath:
    """The module a kernel's `math` is under the kernel doctor."""

    pi, e, tau, inf, nan = math.pi, math.e, math.tau, math.inf, math.nan

    def __init__(self):
        for name, ufunc in UFUNCS.items():
            setattr(self, name, _ufunc(name, ufunc))
        for name in SCALAR_ONLY:
            setattr(self, name, _scalar(name, getattr(math, name)))
        for name in ("isnan", "isinf", "isfinite"):
            setattr(self, name, _predicate(getattr(math, name)))

    def ldexp(self, x, i):
        kind = result_type("ldexp", (x, i))
        return kind(np.ldexp(kind(x), int(i)))

    def frexp(self, x):
        kind = F32 if x.__class__ is F32 else F64
        mantissa, exponent = np.frexp(kind(x))
        return mantissa, int(exponent)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(math, name)  # the compile check has refused what a GPU lacks


DEVICE_MATH = DeviceMath()
HALF_PRECISION = HalfPrecision()


def in_kernel(value):
    """What a global or closure value of a kernel (never of host code) becomes: `math` and
    the functions imported from it get their GPU forms; None keeps the value."""
    if value is math:
        return DEVICE_MATH
    if value.__class__.__name__ != "builtin_function_or_method":
        return None
    name = getattr(value, "__name__", None)
    if name and getattr(math, name, None) is value and hasattr(DEVICE_MATH, name):
        return getattr(DEVICE_MATH, name)
    return None
