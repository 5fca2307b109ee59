"""The doctor's arithmetic is Numba's: does each form of tests/arithmetic_forms.py give, on the
doctor, the value `numba.njit` computes and the type numba-cuda infers for a GPU; does every
typing rule of grader/doctor/scalars.py agree with numba-cuda's CUDA typing context; and does
the range of a float, the form that made a correct matmul an `exception`, now pass?

Numba's answers come from tests/numba_arithmetic.py, run once in a process without the
simulator flag (the simulator shadows numba.cuda's compiler)."""

import json
import linecache
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from arithmetic_forms import FORMS, GPU_FORMS
from numba import cuda, int32

from grader.doctor import scalars
from grader.doctor.transform import transform

REFERENCE = Path(__file__).parent / "numba_arithmetic.py"
TYPE_NAMES = {scalars.B: "bool", **{t: np.dtype(t).name for t in scalars.TYPE_OF.values() if t is not scalars.B}}
PYTHON_INT_STANDS_FOR = ("int64", "int32")
"""A Python int on the doctor is an int64 or an int32: Numba computes with either in 64 bits."""


@pytest.fixture(scope="module")
def numba():
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    done = subprocess.run([sys.executable, str(REFERENCE)], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    answers = json.loads(done.stdout)
    answers["forms"] = {a["name"]: a for a in answers["forms"]}
    return answers


def argument(kind: str, value):
    """A form's argument as the doctor holds it (a Python int or float, else a NumPy scalar)."""
    if kind in ("int", "float", "bool"):
        return {"int": int, "float": float, "bool": bool}[kind](value)
    return np.dtype(kind).type(value)


def argument_class(kind: str):
    return {"int": int, "float": float, "bool": bool}.get(kind) or np.dtype(kind).type


def device_function(form, k: int):
    """The form's `f`, defined in a file of its own (the doctor reads a function's source)."""
    filename = f"<arithmetic form {k}: {form.name}>"
    linecache.cache[filename] = (len(form.source), None, form.source.splitlines(True), filename)
    scope = {"math": math, "cuda": cuda, "int32": int32}
    exec(compile(form.source, filename, "exec"), scope)  # noqa: S102 - the test's own forms
    return scope["f"]


def on_the_doctor(form, k: int, known: bool):
    """The form's result on the doctor, its operands' classes known before it runs (`known`:
    as a kernel's parameters are) or only while it runs (as a device function's are)."""
    fn = device_function(form, k)
    params = fn.__code__.co_varnames[: fn.__code__.co_argcount]
    classes = tuple(zip(params, (argument_class(kind) for kind, _ in form.args))) if known else ()
    with np.errstate(all="ignore"):
        return transform(fn, frozenset(), classes=classes).func(*(argument(kind, v) for kind, v in form.args))


def decoded(value: dict):
    if "float" in value:
        return float.fromhex(value["float"])
    return value.get("int", value.get("bool"))


def type_name(value) -> str:
    t = scalars.TYPE_OF.get(value.__class__)
    return TYPE_NAMES.get(t, type(value).__name__)


def same_number(got, want) -> bool:
    if isinstance(want, float) and want != want:
        return got != got
    return got == want and (not isinstance(want, float) or math.copysign(1, float(got)) == math.copysign(1, want))


@pytest.mark.parametrize("known", [True, False], ids=["classes known", "classes at run time"])
@pytest.mark.parametrize("k", range(len(FORMS)), ids=[f.name for f in FORMS])
def test_the_doctor_computes_a_form_as_numba_does(numba, k, known):
    """Does the doctor give the form numba-cuda's result type and `numba.njit`'s value?"""
    form = FORMS[k]
    answer = numba["forms"][form.name]
    got = on_the_doctor(form, k, known)
    want_type = answer["ptx_type"]
    assert not want_type.startswith("refused"), want_type
    if type_name(got) == "int64" and got.__class__ is int:
        assert want_type in PYTHON_INT_STANDS_FOR, (form.name, got, want_type)
    else:
        assert type_name(got) == want_type, (form.name, got, want_type)
    if known and not form.wraps_in_python:
        return  # Python ints stand for int64s without wrapping (grader/doctor/promote.py)
    assert same_number(got, decoded(answer["value"])), (form.name, got, answer["value"])


@pytest.mark.parametrize("k", range(len(GPU_FORMS)), ids=[f.name for f in GPU_FORMS])
def test_a_form_only_a_gpu_can_confirm_runs_with_numba_cudas_type(numba, k):
    """Does the doctor run a form whose value a CPU computes otherwise than a GPU (NaN to an
    int, a shift past 63, cuda.fma), without an exception, and give numba-cuda's result type?
    (tests/test_gpu_arithmetic.py compares the values with a GPU's.)"""
    form = GPU_FORMS[k]
    got = on_the_doctor(form, len(FORMS) + k, known=False)
    want = numba["forms"][form.name]["ptx_type"]
    assert type_name(got) == want or (got.__class__ is int and want in PYTHON_INT_STANDS_FOR), (got, want)


def test_the_cpu_target_types_every_form_as_the_cuda_target_but_math_rounding(numba):
    """Does `numba.njit` infer numba-cuda's result type for every form, except the ones marked
    (the CPU target's `math.ceil/floor/trunc` return an int, as Python 3's do, and its
    `math.pow(float32, int32)` a float64; numba-cuda keeps the float type, float32 for both)?"""
    agree = {f.name: numba["forms"][f.name]["njit_type"] == numba["forms"][f.name]["ptx_type"] for f in FORMS}
    assert agree == {f.name: f.cpu_typing for f in FORMS}


def names(t) -> str | None:
    return None if t is None else TYPE_NAMES[t]


TYPES = {name: t for t, name in TYPE_NAMES.items()}


def test_every_binary_operation_is_typed_as_numba_cuda_types_it(numba):
    """For each operator and each pair of scalar types, does scalars.binary_type name the type
    numba-cuda's typing context infers (None where it refuses)?"""
    wrong = {
        key: (names(scalars.binary_type(*_split(key))), want)
        for key, want in numba["rules"]["binary"].items()
        if names(scalars.binary_type(*_split(key))) != want
    }
    assert wrong == {}


def _split(key: str):
    op, a, b = key.split()
    return op, TYPES[a], TYPES[b]


def test_comparisons_unification_and_unary_operations_are_typed_as_numba_cuda_types_them(numba):
    rules = numba["rules"]
    wrong = {}
    for key, want in rules["compare"].items():
        a, b = (TYPES[n] for n in key.split())
        if names(scalars.compare_type(a, b)) != want:
            wrong[f"compare {key}"] = (names(scalars.compare_type(a, b)), want)
        if names(scalars.unify(a, b)) != rules["unify"][key]:
            wrong[f"unify {key}"] = (names(scalars.unify(a, b)), rules["unify"][key])
    for key, want in rules["unary"].items():
        op, a = key.split()
        if names(scalars.unary_type(op, TYPES[a])) != want:
            wrong[key] = (names(scalars.unary_type(op, TYPES[a])), want)
    for key, want in rules["builtin"].items():
        name, a = key.split()
        if names(scalars.builtin_type(name, TYPES[a])) != want:
            wrong[key] = (names(scalars.builtin_type(name, TYPES[a])), want)
    assert wrong == {}


def test_a_range_counts_in_the_type_numba_cuda_gives_its_bounds(numba):
    wrong = {
        key: (names(scalars.range_type([TYPES[n] for n in key.split()])), want)
        for key, want in numba["rules"]["range"].items()
        if names(scalars.range_type([TYPES[n] for n in key.split()])) != want
    }
    assert wrong == {}


def test_a_correct_matmul_counting_tiles_with_math_ceil_passes():
    """CUDA MODE lecture 5's `for t in range(math.ceil(k / TILE))`: numba-cuda compiles it (the
    float bound is truncated); the doctor used to hand the float to Python's range."""
    from grader.checking.check import check_file

    path = Path(__file__).parent / "gpu_verdicts" / "matmul_tiled" / "range_of_ceil.py"
    result = check_file("matmul_tiled", path, seed=3)
    assert result.verdict == "passed", result.message
    assert result.doctor is not None and result.doctor.ran_on_doctor
