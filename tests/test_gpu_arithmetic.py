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
