"""Scalar forms whose result, value and type, the kernel doctor must compute as Numba does.

Each form is a device function's source and the arguments to call it with. An argument is
(type, value): a NumPy scalar type's name (`float32`, `uint8`...), as the doctor reads it from
an array of that dtype, or `int` / `float`, a Python number as the doctor holds a thread index,
a loop counter or a literal (Numba types them int64 / float64).

tests/numba_arithmetic.py computes each form with Numba (`numba.njit`, and
`numba.cuda.compile_ptx(..., device=True)` for its CUDA result type) in a process without the
simulator flag; tests/test_doctor_arithmetic.py compares the doctor's result with those, and
tests/test_gpu_arithmetic.py with a real GPU's. Plain data: this file imports nothing, so the
reference process can read it without importing the grader.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Form:
    name: str
    source: str
    """`def f(...): ...`; it may use `math`, `cuda` (numba.cuda) and `int32` (numba's)."""
    args: tuple
    """(type, value) per parameter of `f`."""
    cpu_typing: bool = True
    """False where `numba.njit` (the CPU target) types the form otherwise than numba-cuda does:
    Python 3's `math.ceil` is an int, the CUDA target's keeps the float type."""
    wraps_in_python: bool = True
    """False where the doctor, knowing every operand is a Python int before the kernel runs,
    leaves the operation to Python, which does not wrap at 64 bits (grader/doctor/promote.py):
    only the run-time path (classes unknown) is held to Numba's value."""


def _f(body: str, params: str = "x") -> str:
    lines = "\n".join(f"    {line}" for line in body.strip().splitlines())
    return f"def f({params}):\n{lines}\n"


def _count(bound: str, params: str = "x") -> str:
    return _f(f"s = 0\nfor i in {bound}:\n    s += i + 1\nreturn s", params)


def _expr(expr: str, params: str = "x, y") -> str:
    return _f(f"return {expr}", params)


FORMS = (
    # range over float bounds: Numba truncates each bound to an integer (toward zero)
    Form("range of a float64", _count("range(x)"), (("float64", 2.7),)),
    Form("range of a negative float64", _count("range(x)"), (("float64", -1.5),)),
    Form("range of a float32", _count("range(x)"), (("float32", 3.9),)),
    Form("range of math.ceil of a quotient", _count("range(math.ceil(x / 16))"), (("int", 33),)),
    Form("range with float start and stop", _count("range(x, y)", "x, y"), (("float64", 1.9), ("float64", 5.5))),
    Form("range with a float step", _count("range(0, x, y)", "x, y"), (("int", 9), ("float64", 2.5))),
    Form("range of an int32", _count("range(x)"), (("int32", 4),)),
    Form("range of a uint32", _count("range(x)"), (("uint32", 4),)),
    # int() and float()
    Form("int of a float32", _expr("int(x)", "x"), (("float32", 2.75),)),
    Form("int of a negative float64", _expr("int(x)", "x"), (("float64", -2.75),)),
    Form("int of a large float64", _expr("int(x)", "x"), (("float64", 1e10),)),
    Form("int of a uint8 keeps uint8", _expr("int(x)", "x"), (("uint8", 200),)),
    Form("int of an int32 keeps int32", _expr("int(x)", "x"), (("int32", -7),)),
    Form("float of an int", _expr("float(x)", "x"), (("int", 3),)),
    Form("float of a float32 stays float32", _expr("float(x)", "x"), (("float32", 0.1),)),
    Form("float of a uint8", _expr("float(x)", "x"), (("uint8", 255),)),
    # // and %
    Form("float32 // int literal", _expr("x // 2", "x"), (("float32", 7.5),)),
    Form("float32 % int literal", _expr("x % 3", "x"), (("float32", 7.5),)),
    Form("float32 // float32", _expr("x // y"), (("float32", 7.5), ("float32", 2.0))),
    Form("float64 % negative float64", _expr("x % y"), (("float64", 7.5), ("float64", -2.0))),
    Form("negative float64 // float64", _expr("x // y"), (("float64", -7.5), ("float64", 2.0))),
    Form("int // negative int", _expr("x // y"), (("int", 7), ("int", -2))),
    Form("negative int % int", _expr("x % y"), (("int", -7), ("int", 3))),
    Form("int32 // int32", _expr("x // y"), (("int32", -7), ("int32", 2))),
    Form("uint8 % uint8", _expr("x % y"), (("uint8", 200), ("uint8", 7))),
    Form("int // 0", _expr("x // y"), (("int", 7), ("int", 0))),
    Form("int % 0", _expr("x % y"), (("int", 7), ("int", 0))),
    Form("float64 // 0.0", _expr("x // y"), (("float64", 7.5), ("float64", 0.0))),
    Form("float64 % 0.0", _expr("x % y"), (("float64", 7.5), ("float64", 0.0))),
    Form("float32 // float64", _expr("x // y"), (("float32", 7.5), ("float64", 2.0))),
    Form("int // float64", _expr("x // y"), (("int", 7), ("float64", 2.0))),
    # true division
    Form("int / int", _expr("x / y"), (("int", 7), ("int", 2))),
    Form("int32 / int32", _expr("x / y"), (("int32", 1), ("int32", 3))),
    Form("int / 0", _expr("x / y"), (("int", 7), ("int", 0))),
    Form("0 / 0", _expr("x / y"), (("int", 0), ("int", 0))),
    Form("float64 / 0.0", _expr("x / y"), (("float64", -7.5), ("float64", 0.0))),
    Form("0.0 / 0.0", _expr("x / y"), (("float64", 0.0), ("float64", 0.0))),
    Form("float32 / float32", _expr("x / y"), (("float32", 1.0), ("float32", 3.0))),
    Form("float32 / int", _expr("x / y"), (("float32", 1.0), ("int", 3))),
    Form("float32 / 0.0 literal", _expr("x / 0.0", "x"), (("float32", 1.0),)),
    # math functions' result types
    Form("math.ceil of a float32", _expr("math.ceil(x)", "x"), (("float32", 2.25),), cpu_typing=False),
    Form("math.ceil of a float64", _expr("math.ceil(x)", "x"), (("float64", -2.25),), cpu_typing=False),
    Form("math.ceil of an int", _expr("math.ceil(x)", "x"), (("int", 7),), cpu_typing=False),
    Form("math.floor of an int32", _expr("math.floor(x)", "x"), (("int32", -7),), cpu_typing=False),
    Form("math.trunc of a float32", _expr("math.trunc(x)", "x"), (("float32", -2.75),), cpu_typing=False),
    Form("math.sqrt of an int", _expr("math.sqrt(x)", "x"), (("int", 49),)),
    Form("math.fabs of an int", _expr("math.fabs(x)", "x"), (("int", -3),)),
    Form("math.pow of float32 and int32", _expr("math.pow(x, y)"), (("float32", 1.5), ("int32", 3)), cpu_typing=False),
    Form("math.pow of float32 and an int literal", _expr("math.pow(x, 2)", "x"), (("float32", 1.5),)),
    # integer widths and overflow
    Form("uint8 + uint8 is uint64", _expr("x + y"), (("uint8", 200), ("uint8", 100))),
    Form("uint8 - uint8 wraps as uint64", _expr("x - y"), (("uint8", 3), ("uint8", 5))),
    Form("uint32 - uint32 wraps as uint64", _expr("x - y"), (("uint32", 1), ("uint32", 2))),
    Form("uint32 - 1 is int64", _expr("x - 1", "x"), (("uint32", 0),)),
    Form("uint8 - int is int64", _expr("x - y"), (("uint8", 3), ("int", 5))),
    Form("int32 * int32 is int64", _expr("x * y"), (("int32", 100000), ("int32", 100000))),
    Form("int32 + int32 past 2**31", _expr("x + y"), (("int32", 2147483647), ("int32", 1))),
    Form("int8 * int8 is int64", _expr("x * y"), (("int8", 100), ("int8", 100))),
    Form("int64 * int64 wraps", _expr("x * y"), (("int64", 2**62), ("int64", 4))),
    Form("int64 + int64 wraps", _expr("x + y"), (("int64", 2**63 - 1), ("int64", 1))),
    Form("int * int wraps at 2**64", _expr("x * y"), (("int", 2**62), ("int", 6)), wraps_in_python=False),
    Form("uint64 + int64 is int64", _expr("x + y"), (("uint64", 2**63 + 5), ("int64", 1))),
    Form(
        "a hash with large literals wraps",
        _expr("(x * 6364136223846793005 + 1442695040888963407) >> 33", "x"),
        (("int", 12345),),
    ),
    Form("negated uint8 is uint64", _expr("-x", "x"), (("uint8", 5),)),
    Form("negated int32 is int64", _expr("-x", "x"), (("int32", -2147483648),)),
    Form("inverted uint8 is uint64", _expr("~x", "x"), (("uint8", 5),)),
    Form("abs of int8 stays int8", _expr("abs(x)", "x"), (("int8", -128),)),
    Form("abs of int32", _expr("abs(x)", "x"), (("int32", -5),)),
    Form("int32 << 31 is int64", _expr("x << 31", "x"), (("int32", 1),)),
    Form("int << 40", _expr("x << 40", "x"), (("int", 3),)),
    Form("uint8 >> 1 is uint64", _expr("x >> 1", "x"), (("uint8", 255),)),
    Form("int >> 1 of a negative", _expr("x >> 1", "x"), (("int", -7),)),
    Form("uint8 & int", _expr("x & y"), (("uint8", 255), ("int", 15))),
    Form("bool + bool is int64", _expr("x + y"), (("bool", True), ("bool", True))),
    # float32 and float64 in one expression
    Form("float32 * a float literal is float64", _expr("x * 0.1", "x"), (("float32", 1.1),)),
    Form("float32 + an int literal is float64", _expr("x + 1", "x"), (("float32", 16777216.0),)),
    Form("float32 + int is float64", _expr("x + y"), (("float32", 16777216.0), ("int", 1))),
    Form("float32 + int32 is float64", _expr("x + y"), (("float32", 16777216.0), ("int32", 1))),
    Form("float32 + int16 stays float32", _expr("x + y"), (("float32", 16777216.0), ("int16", 1))),
    Form("float32 + uint8 stays float32", _expr("x + y"), (("float32", 16777216.0), ("uint8", 1))),
    Form("float32 * float32 stays float32", _expr("x * y"), (("float32", 1.1), ("float32", 1.1))),
    Form("float32 * float64 is float64", _expr("x * y"), (("float32", 1.1), ("float64", 1.1))),
    Form("0.299 * a uint8 pixel", _expr("0.299 * x", "x"), (("uint8", 200),)),
    Form("float32 == a float literal compares in float64", _expr("x == 0.1", "x"), (("float32", 0.1),)),
    Form("float32 < a float literal", _expr("x < 0.1", "x"), (("float32", 0.1),)),
    Form("float32 == int compares in float64", _expr("x == y"), (("float32", 16777216.0), ("int", 16777217))),
    Form("uint64 < int64 compares in float64", _expr("x < y"), (("uint64", 2**63), ("int64", -1))),
    Form("max of float32 and an int literal", _expr("max(x, 0)", "x"), (("float32", 1.5),)),
    Form("min of int32 and int", _expr("min(x, y)"), (("int32", -3), ("int", 2))),
    Form("min of uint64 and int64", _expr("min(x, y)"), (("uint64", 5), ("int64", 3))),
    Form("max of NaN and a number", _expr("max(x, y)"), (("float64", float("nan")), ("float64", 1.0))),
    Form("max of a number and NaN", _expr("max(x, y)"), (("float64", 1.0), ("float64", float("nan")))),
    Form("round of a float32 half", _expr("round(x)", "x"), (("float32", 2.5),)),
    Form("round of a negative half", _expr("round(x)", "x"), (("float64", -3.5),)),
    Form("round of an int", _expr("round(x)", "x"), (("int", 7),)),
    Form("float32 ** an int literal", _expr("x ** 2", "x"), (("float32", 1.1),)),
    Form("float32 ** a float literal", _expr("x ** 0.5", "x"), (("float32", 2.0),)),
    Form("int ** int", _expr("x ** y"), (("int", 3), ("int", 4))),
    Form("int ** negative int", _expr("x ** y"), (("int", 2), ("int", -1))),
    Form(
        "accumulating float32 into 0.0", _f("s = 0.0\nfor i in range(10):\n    s += x\nreturn s"), (("float32", 0.1),)
    ),
    Form(
        "accumulating into float32(0)",
        _f("s = y\nfor i in range(10):\n    s += x * 0.1\nreturn s", "x, y"),
        (("float32", 1.1), ("float32", 0.0)),
    ),
    Form(
        "a conditional of float32 and a float literal",
        _expr("(x if y > 0 else 0.5) * x"),
        (("float32", 1.1), ("int", 1)),
    ),
)


GPU_FORMS = (
    # conversions a GPU (PTX's cvt.rzi, which saturates and takes NaN to 0) and an x86 CPU
    # (which gives the lowest integer for both) do differently: the doctor follows PTX
    Form("int of NaN", _expr("int(x)", "x"), (("float64", float("nan")),)),
    Form("int of minus infinity", _expr("int(x)", "x"), (("float64", float("-inf")),)),
    Form("int of a float past int64", _expr("int(x)", "x"), (("float64", 1e19),)),
    Form("int32 of a float past int32", _expr("int32(x)", "x"), (("float64", 3e9),)),
    Form("round of NaN", _expr("round(x)", "x"), (("float64", float("nan")),)),
    # shifts by 64 or more (x86 masks the count to 6 bits; PTX clamps it at the width)
    Form("int << 64", _expr("x << y"), (("int", 1), ("int", 64))),
    Form("negative int >> 70", _expr("x >> y"), (("int", -8), ("int", 70))),
    # cuda.fma rounds once: float32 operands whose product plus c lands, in float64, on a
    # midpoint between two float32s (1048576.125 exactly; float64 then float32 gives .25)
    Form(
        "cuda.fma of float32s rounds once",
        _expr("cuda.fma(x, y, z)", "x, y, z"),
        (("float32", 0.25 * (1 + 2**-23)), ("float32", 0.25 * (1 + 2**-23)), ("float32", 2.0**20)),
    ),
    Form("cuda.cbrt of a float32 is a float32", _expr("cuda.cbrt(x)", "x"), (("float32", 27.0),)),
)
"""Forms whose value only a GPU can confirm (tests/test_gpu_arithmetic.py): a CPU's `numba.njit`
computes them otherwise, or cannot compile them (`cuda.fma`). On the CPU their numba-cuda result
type is checked, and that the doctor runs them."""
