"""The kernel doctor's arithmetic against a real GPU's (run on the device:
`ZEROGPU_BACKEND=gpu python -m pytest -m gpu tests/test_gpu_arithmetic.py`).

Each form of tests/arithmetic_forms.py (FORMS, and GPU_FORMS, whose values a CPU computes
otherwise than a GPU) runs as a device function in a one-thread CUDA kernel, its arguments read
from one-element arrays of their types and its result stored into an array of the type
numba-cuda infers for it; the same function runs on the kernel doctor
(tests/test_doctor_arithmetic.py `on_the_doctor`). Same value (NaN-aware, the sign of a zero
included), and the doctor's type is numba-cuda's (a Python int standing for an int64 or an
int32). A failure names the form, both values and both types: the doctor's rule for that form
(grader/doctor/scalars.py, numbaops.py) is then wrong for a GPU, however right for `numba.njit`.
"""

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

import grader  # noqa: E402
from arithmetic_forms import FORMS, GPU_FORMS  # noqa: E402
from test_doctor_arithmetic import (  # noqa: E402
    PYTHON_INT_STANDS_FOR,
    device_function,
    on_the_doctor,
    same_number,
    type_name,
)

ALL = FORMS + GPU_FORMS


@pytest.fixture(autouse=True)
def needs_gpu():
    if grader.BACKEND != "gpu":
        pytest.skip("needs a real GPU (ZEROGPU_BACKEND=gpu on a machine with one)")


def argument_array(kind: str, value) -> np.ndarray:
    dtype = {"int": np.int64, "float": np.float64, "bool": np.bool_}.get(kind, kind)
    return np.array([value], dtype=dtype)


def on_the_gpu(form, k: int):
    """(the value a CUDA kernel computes for the form, numba-cuda's name of its type)."""
    from numba import cuda, from_dtype, types
    from numba.np.numpy_support import as_dtype

    fn = device_function(form, k)
    arrays = [argument_array(kind, value) for kind, value in form.args]
    signature = tuple(from_dtype(a.dtype) for a in arrays)
    _, result_type = cuda.compile_ptx(fn, signature, device=True)
    out = np.zeros(1, dtype=np.bool_ if result_type == types.boolean else as_dtype(result_type))
    params = [f"a{i}" for i in range(len(arrays))]
    source = f"def run({', '.join(params)}, out):\n    out[0] = f({', '.join(p + '[0]' for p in params)})\n"
    scope = {"f": cuda.jit(device=True)(fn)}
    exec(source, scope)  # noqa: S102 - the test's own one-line kernel
    cuda.jit(scope["run"])[1, 1](*arrays, out)
    cuda.synchronize()
    return out[0].item(), str(result_type)


@pytest.mark.parametrize("k", range(len(ALL)), ids=[f.name for f in ALL])
def test_the_doctor_computes_a_form_as_a_gpu_does(k):
    """Does the doctor give the form the value and the type a GPU gives it?"""
    form = ALL[k]
    on_gpu, gpu_type = on_the_gpu(form, k)
    got = on_the_doctor(form, k, known=False)
    assert same_number(got, on_gpu), f"{form.name}: doctor {got!r} ({type_name(got)}), GPU {on_gpu!r} ({gpu_type})"
    if got.__class__ is int:
        assert gpu_type in PYTHON_INT_STANDS_FOR, (form.name, gpu_type)
    else:
        assert type_name(got) == gpu_type, (form.name, type_name(got), gpu_type)


# -- cuda.fp16 ---------------------------------------------------------------------------------
HALVES = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
"""Every half, NaNs and infinities included."""
SPECIAL = np.array(
    [0.0, -0.0, 1.0, -1.0, 0.5, 65504.0, -65504.0, 2.0**-24, -(2.0**-24), 2.0**-14, np.inf, -np.inf, np.nan]
)
FP16_UNARY = ("hneg", "habs", "hceil", "hfloor", "htrunc", "hrint", "hsqrt", "hrsqrt", "hrcp", "hexp", "hexp2")
FP16_UNARY += ("hexp10", "hlog", "hlog2", "hlog10", "hsin", "hcos", "htanh", "__hisnan", "__hisinf")
FP16_BINARY = ("hadd", "hsub", "hmul", "hdiv", "hmax", "hmin", "__hmax_nan", "__hmin_nan", "__hadd_sat", "__hsub_sat")
FP16_BINARY += ("__hmul_sat", "heq", "hne", "hlt", "hle", "hgt", "hge", "__hequ", "__hneu", "__hltu", "__hgeu")
FP16_TERNARY = ("hfma", "__hfma_sat", "__hfma_relu")


def pairs(count: int, seed: int):
    """Operands: every special value against every other, then halves drawn at random."""
    rng = np.random.default_rng(seed)
    special = SPECIAL.astype(np.float16)
    a, b = (g.ravel() for g in np.meshgrid(special, special))
    return np.concatenate([a, rng.choice(HALVES, count)]), np.concatenate([b, rng.choice(HALVES, count)])


def gpu_fp16(name: str, *operands: np.ndarray) -> np.ndarray:
    """`cuda.fp16.<name>` of each element of the operands, on the GPU."""
    from numba import cuda

    params = [f"a{k}" for k in range(len(operands))]
    call = f"cuda.fp16.{name}({', '.join(p + '[i]' for p in params)})"
    source = (
        f"def run({', '.join(params)}, out):\n    i = cuda.grid(1)\n    if i < out.size:\n        out[i] = {call}\n"
    )
    scope = {"cuda": cuda}
    exec(source, scope)  # noqa: S102 - the test's own kernel
    from grader.backend.fp16 import HalfPrecision

    sample = getattr(HalfPrecision(), name)(*(np.float16(1.0),) * len(operands))
    out = np.zeros(operands[0].size, dtype=np.asarray(sample).dtype if not isinstance(sample, bool) else np.bool_)
    cuda.jit(scope["run"])[(out.size + 255) // 256, 256](*operands, out)
    cuda.synchronize()
    return out


def on_the_engines(name: str, *operands: np.ndarray) -> np.ndarray:
    from grader.backend.fp16 import HalfPrecision

    fn = getattr(HalfPrecision(), name)
    with np.errstate(all="ignore"):
        return np.array([fn(*args) for args in zip(*operands)])


def assert_same(name, operands, got, want):
    """Equal values, the same sign of a zero, NaN where the GPU gave NaN: else name the first
    operands that differ."""
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype.kind == "f":
        same = (got == want) & (np.signbit(got) == np.signbit(want)) | (np.isnan(got) & np.isnan(want))
    else:
        same = got == want
    bad = np.flatnonzero(~same)
    if bad.size:
        k = bad[0]
        shown = ", ".join(repr(float(o[k])) for o in operands)
        pytest.fail(f"cuda.fp16.{name}({shown}): engines {got[k]!r}, GPU {want[k]!r} ({bad.size} operands differ)")


@pytest.mark.parametrize("name", FP16_UNARY)
def test_an_fp16_function_of_every_half_is_the_gpus(name):
    """For all 65,536 halves: the CPU engines' cuda.fp16.<name> against the GPU's (for the
    math functions, whether cuda_fp16.h's "round-to-nearest-even" holds for every input)."""
    assert_same(name, (HALVES,), on_the_engines(name, HALVES), gpu_fp16(name, HALVES))


@pytest.mark.parametrize("name", FP16_BINARY)
def test_an_fp16_operation_of_two_halves_is_the_gpus(name):
    a, b = pairs(100_000, seed=1)
    assert_same(name, (a, b), on_the_engines(name, a, b), gpu_fp16(name, a, b))


@pytest.mark.parametrize("name", FP16_TERNARY)
def test_an_fp16_fused_multiply_add_is_the_gpus(name):
    """Random halves, and operands whose product plus c lies just beside a midpoint between
    two halves (where rounding twice would go wrong)."""
    a, b = pairs(50_000, seed=2)
    c = np.random.default_rng(3).choice(HALVES, a.size)
    near = np.float16(1024.0) + np.zeros(64, np.float16)
    a = np.concatenate([a, np.full(64, 0.5 * (1 + 2**-10), np.float16)])
    b = np.concatenate([b, np.float16(1 - 2**-11) + np.zeros(64, np.float16)])
    c = np.concatenate([c, near + np.arange(64, dtype=np.float16)])
    assert_same(name, (a, b, c), on_the_engines(name, a, b, c), gpu_fp16(name, a, b, c))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_an_fp16_argument_of_another_float_type_is_rounded_to_half_as_a_gpu_rounds_it(dtype):
    """cuda.fp16.hadd(x, -0.0) of float32 / float64 values: x converted to half (cvt.rn.f16),
    near midpoints between halves, past the largest half, subnormal."""
    rng = np.random.default_rng(4)
    halves = rng.choice(HALVES[np.isfinite(HALVES)], 20_000).astype(np.float64)
    x = np.concatenate(
        [halves * (1 + rng.uniform(-(2**-11), 2**-11, halves.size)), [65519.0, 65520.0, 2.0**-25, 3 * 2.0**-26]]
    )
    x = x.astype(dtype)
    zero = np.full(x.size, -0.0, dtype=dtype)
    assert_same("hadd", (x, zero), on_the_engines("hadd", x, zero), gpu_fp16("hadd", x, zero))
