"""`cuda.fp16` on the CPU engines (grader/backend/fp16.py): is every function computed in half
precision and exactly, on the kernel doctor and on Numba's simulator alike, and is what they
cannot compute exactly refused rather than computed in another precision?"""

import math
from fractions import Fraction

import numpy as np
import pytest

from grader.backend.fp16 import MATH, HalfPrecision, fused
from grader.backend.simulator import install_if_simulating

H = np.float16
FP16 = HalfPrecision()
ALL_HALVES = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(H)
FINITE = ALL_HALVES[np.isfinite(ALL_HALVES)]


def nearest_half(exact: Fraction) -> H:
    """The half nearest to a rational number, ties to the even one: by comparing neighbours."""
    guess = H(float(exact))
    candidates = [guess, np.nextafter(guess, H(np.inf)), np.nextafter(guess, H(-np.inf))]
    candidates = [c for c in candidates if np.isfinite(c)]
    return min(candidates, key=lambda c: (abs(Fraction(float(c)) - exact), int(np.array(c).view(np.uint16)) & 1))


def random_halves(count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.choice(FINITE, count)


@pytest.mark.parametrize(
    "name, exact",
    [
        ("hadd", lambda a, b: a + b),
        ("hsub", lambda a, b: a - b),
        ("hmul", lambda a, b: a * b),
        ("hdiv", lambda a, b: a / b),
    ],
)
def test_an_operation_of_two_halves_is_rounded_once_to_half(name, exact):
    """Is each result the half nearest the exact rational result (ties to even), for halves
    drawn from the whole finite range, subnormals included?"""
    xs, ys = random_halves(3000, 1), random_halves(3000, 2)
    wrong = []
    for x, y in zip(xs, ys):
        if name == "hdiv" and y == 0:
            continue
        want = Fraction(float(x)), Fraction(float(y))
        value = exact(*want)
        if abs(value) >= 65520:  # past the largest half by half an ulp: inf
            continue
        got = getattr(FP16, name)(x, y)
        if got != nearest_half(value) and not (got == 0 and value == 0):
            wrong.append((float(x), float(y), float(got)))
    assert wrong == []


def test_hfma_rounds_once_even_where_float64_lands_on_a_midpoint():
    """Does hfma round a * b + c once, also where rounding the float64 sum to half would round
    twice: a * b + c just under a midpoint between two halves that float64 rounds up onto it?"""
    a, b, c = H(0.5 * (1 + 2**-10)), H(1 - 2**-11), H(1024.0)
    exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    assert FP16.hfma(a, b, c) == nearest_half(exact)
    rng = np.random.default_rng(3)
    wrong = 0
    for _ in range(3000):
        x, y, z = rng.choice(FINITE, 3)
        value = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
        if abs(value) < 65520 and FP16.hfma(x, y, z) != nearest_half(value) and value != 0:
            wrong += 1
    assert wrong == 0


def test_cuda_fma_of_float32s_rounds_once():
    """`fused` for float32 (the doctor's cuda.fma): a sum that float64 rounds onto a midpoint
    between two float32s, and random operands, against the exact rational result."""
    f = np.float32
    a = f(0.25 * (1 + 2**-23))
    got = fused(f, a, a, f(2.0**20))
    assert got == f(1048576.125)  # float64, then float32, gives 1048576.25
    rng = np.random.default_rng(4)
    for x, y, z in rng.standard_normal((2000, 3)).astype(f):
        exact = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
        got = fused(f, x, y, z)
        neighbours = [got, np.nextafter(got, f(np.inf)), np.nextafter(got, f(-np.inf))]
        assert min(neighbours, key=lambda c: abs(Fraction(float(c)) - exact)) == got


def test_comparisons_max_min_and_specials_follow_ptx():
    nan, inf = H(np.nan), H(np.inf)
    assert not FP16.heq(nan, nan) and not FP16.hne(nan, H(1)) and FP16.hne(H(1), H(2))
    assert getattr(FP16, "__hequ")(nan, H(1)) and getattr(FP16, "__hltu")(nan, H(0))
    assert FP16.hmax(nan, H(2)) == 2 and FP16.hmin(H(2), nan) == 2
    assert np.isnan(getattr(FP16, "__hmax_nan")(nan, H(2)))
    assert math.copysign(1, FP16.hmax(H(-0.0), H(0.0))) == 1 and math.copysign(1, FP16.hmin(H(0.0), H(-0.0))) == -1
    assert FP16.hadd(H(65504), H(32)) == inf  # past the largest half: inf
    assert getattr(FP16, "__hadd_sat")(H(0.75), H(0.5)) == 1 and getattr(FP16, "__hsub_sat")(H(0.25), H(0.5)) == 0
    assert getattr(FP16, "__hisinf")(-inf) == -1 and getattr(FP16, "__half2int_rn")(H(2.5)) == 2
    assert float(getattr(FP16, "__float2half_rz")(0.1)) < 0.1 < float(getattr(FP16, "__float2half_ru")(0.1))


def test_arguments_are_rounded_to_half_first():
    """cuda.fp16 takes `__half`s: a float32 or float64 argument is rounded to half (as
    cvt.rn.f16 does) before the operation, so 0.1 + 0.2 is the half sum of two halves."""
    got = FP16.hadd(np.float32(0.1), np.float64(0.2))
    assert got.__class__ is H and got == H(float(H(0.1)) + float(H(0.2)))


@pytest.mark.parametrize("name", sorted(MATH))
def test_a_math_function_of_every_half_rounds_surely(name):
    """For every half, is numpy's float64 value of the function far enough from a midpoint
    between two halves that rounding it to half is the correctly rounded result, so that the
    CPU engines never refuse one (they would, rather than round unsure)?"""
    inputs = FINITE.astype(np.float64)
    with np.errstate(all="ignore"):
        values = MATH[name](inputs)
        halves = values.astype(H)
    finite = np.isfinite(values) & np.isfinite(halves) & (halves.astype(np.float64) != values)
    if name == "hexp2":  # 2**n is exact in float64, ties included (2**-25 rounds to 0)
        finite &= inputs != np.round(inputs)
        assert FP16.hexp2(H(-25)) == 0 and FP16.hexp2(H(-24)) == H(2.0**-24)
    v, r = values[finite], halves[finite]
    other = np.where(r.astype(np.float64) < v, np.nextafter(r, H(np.inf)), np.nextafter(r, H(-np.inf)))
    midpoint = (r.astype(np.float64) + other.astype(np.float64)) / 2
    with np.errstate(all="ignore"):
        gap = np.abs(v - midpoint) / np.spacing(np.abs(v))
    assert gap.min() > 8, f"{name}: a half input lands {gap.min():.1f} float64 units from a midpoint"
    for x in FINITE[::257]:  # and the engines' own function agrees with the vectorised one
        getattr(FP16, name)(x)


def test_htanh_approx_is_refused_closed_not_approximated(tmp_path):
    """htanh_approx is an approximation (cuda_fp16.h) no CPU engine reproduces: is a kernel
    using it refused as the grader's failure (`crashed`), never run in another precision nor
    blamed on the learner?"""
    from grader.checking.check import check_file

    with pytest.raises(NotImplementedError):
        FP16.htanh_approx(H(0.5))
    folder = tmp_path / "vector_add"
    folder.mkdir()
    path = folder / "tanh_approx.py"
    path.write_text(
        "from numba import cuda\n\n\n@cuda.jit\ndef add(a, b, c):\n    i = cuda.grid(1)\n"
        "    if i < c.size:\n        c[i] = cuda.fp16.htanh_approx(a[i]) + b[i]\n\n\n"
        "def launch(a, b, c):\n    add[(c.size + 127) // 128, 128](a, b, c)\n"
    )
    result = check_file("vector_add", path, seed=1)
    assert result.verdict == "crashed" and "htanh_approx" in result.message, result.message


def kernel_file(tmp_path, body: str) -> str:
    path = tmp_path / "fp16_kernel.py"
    path.write_text(
        "from numba import cuda\n\n\n@cuda.jit\ndef k(a, b, c):\n    i = cuda.grid(1)\n"
        f"    if i < c.size:\n        c[i] = {body}\n\n\ndef launch(a, b, c):\n"
        "    k[(c.size + 31) // 32, 32](a, b, c)\n"
    )
    return str(path)


@pytest.mark.parametrize("engine", ["doctor", "simulator"])
@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_a_kernel_computes_cuda_fp16_in_half_precision_on_both_engines(tmp_path, engine, dtype):
    """Does a kernel's `cuda.fp16.hfma(a[i], b[i], c[i])` give the half result on the doctor
    and on the patched simulator, for float16 and float32 arrays alike?"""
    from grader.authoring.spec import Array, Case, Spec
    from grader.doctor.execute import execute
    from grader.steps.execute import execute as simulate
    from grader.steps.load import load_launch

    install_if_simulating()
    params = (Array("a", dtype, ("n",)), Array("b", dtype, ("n",)), Array("c", dtype, ("n",), role="out"))
    rng = np.random.default_rng(5)
    inputs = {"a": rng.standard_normal(40).astype(dtype), "b": rng.standard_normal(40).astype(dtype)}
    spec = Spec(
        id="fp16",
        stage=0,
        title="fp16",
        lesson="",
        params=params,
        make_inputs=lambda d, r: inputs,
        cases=(Case("n", {"n": 40}),),
        tolerance=lambda i, e: 0.0,
    )
    path = kernel_file(tmp_path, "cuda.fp16.hfma(a[i], b[i], cuda.fp16.hmul(a[i], b[i]))")
    launch = load_launch(spec, open(path).read(), path)
    run = execute if engine == "doctor" else simulate
    outcome = run(spec, launch, inputs, {"n": 40}, (path,))
    assert outcome.error is None, outcome.error
    a, b = inputs["a"].astype(H), inputs["b"].astype(H)
    want = [FP16.hfma(x, y, FP16.hmul(x, y)) for x, y in zip(a, b)]
    assert np.array_equal(_inside(outcome, "c"), np.array(want, dtype=dtype))
    if engine == "doctor":
        assert outcome.report.ran_on_doctor


def _inside(outcome, name):
    from grader.sentinels import PAD

    buf = outcome.buffers[name]
    return buf[PAD : len(buf) - PAD]
