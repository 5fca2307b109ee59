"""What a GPU refuses at a launch, refused on both CPU engines with the GPU's error: kernels the
compile check cannot verify (fail closed), the grader's own failures (crashed, never a pass),
declared signatures (numba-cuda's "No matching definition") and the launch limits
(CUDA_ERROR_INVALID_VALUE). The verdicts a GPU gives here are reasoned from numba-cuda 0.30.4's
source (decorators.jit, dispatcher.py) and CUDA's technical specifications."""

import textwrap

import numpy as np
import pytest

from grader.compiler import client
from grader.compiler.dispatch import check_launch, LaunchRefused
from grader.doctor.execute import execute_or_simulate
from grader.exercises import exercise
from grader.steps.cases import prepare
from grader.steps.execute import execute as simulate
from grader.steps.load import SubmissionError, load_launch

ENGINES = {"doctor": execute_or_simulate, "simulator": simulate}


def run(tmp_path, source, exercise_id="vector_add", engine="doctor", case=1):
    """The error (or None) of one case of `source` on one CPU engine."""
    ex = exercise(exercise_id)
    path = tmp_path / "submission.py"
    path.write_text(textwrap.dedent(source))
    launch = load_launch(ex.spec, path.read_text(), str(path))
    prepared = prepare(ex, seed=1)[case]
    outcome = ENGINES[engine](ex.spec, launch, prepared.inputs, dict(prepared.case.dims), (str(path),))
    return outcome.error


ADD = """
from numba import cuda
{globals}

@cuda.jit{decorator}
def add(a, b, c{extra}):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = {value}


def launch(a, b, c):
    add[{launch}](a, b, c)
"""


def add(decorator="", extra="", value="a[i] + b[i]", launch="(c.size + 127) // 128, 128", globals=""):
    return ADD.format(decorator=decorator, extra=extra, value=value, launch=launch, globals=globals)


# -- fail closed ---------------------------------------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    "source, named, fix",
    [
        (add(globals="SCALE = [1.0]", value="(a[i] + b[i]) * SCALE[0]"), "`SCALE` is a list", "SCALE = (1.0,)"),
        (add(globals="WEIGHTS = {'a': 1.0}", value="a[i] + b[i] * WEIGHTS['a']"), "`WEIGHTS` is a dict", "argument"),
        (add(extra=", axis=-1"), "default argument (`= -1`)", "pass every argument"),
        (add(extra=", scale=1.0"), "default argument (`= 1.0`)", "pass every argument"),
        (
            add(globals="@cuda.jit\ndef twice(x):\n    return 2 * x\n", value="twice(a[i]) + b[i]"),
            "`twice` is a kernel, called from a kernel",
            "device=True",
        ),
    ],
    ids=["list global", "dict global", "negative default", "float default", "kernel called from a kernel"],
)
def test_a_kernel_the_check_cannot_verify_is_refused_never_run(tmp_path, engine, source, named, fix):
    """Is a kernel the compile check cannot carry to Numba's compiler an `exception` naming what
    and what to write instead (a GPU refused each of these), on both engines, never a pass?"""
    error = run(tmp_path, source, engine=engine)
    assert error is not None and error.verdict == "exception", error
    assert named in error.message and fix in error.message
    assert error.line is not None and error.hint


def test_a_lambda_kernel_is_refused_with_a_def_to_write(tmp_path):
    source = """
    from numba import cuda

    total = cuda.jit(lambda x, out: cuda.atomic.add(out, 0, x[cuda.grid(1)]))


    def launch(x, out):
        total[1, 1](x, out)
    """
    error = run(tmp_path, source, "reduce_sum")
    assert error.verdict == "exception" and "lambda" in error.message and "`def`" in error.hint


@pytest.mark.parametrize(
    "answer",
    [
        {"status": "unchecked", "why": "the compile helper did not answer"},
        {"status": "unchecked", "why": "Numba's CUDA compiler libraries are missing (libnvvm)", "fix": "pip"},
        {"status": "unchecked", "why": "the compile check failed (KeyError: 'x')"},
    ],
    ids=["helper silent", "no NVVM", "rebuild failed"],
)
@pytest.mark.parametrize("engine", ENGINES)
def test_the_graders_own_failure_is_crashed_and_never_a_pass(tmp_path, monkeypatch, engine, answer):
    """When the compile check itself fails, is the case `crashed`, said to be the grader's
    failure, with the kernel not run (its output stays unwritten)?"""
    monkeypatch.setattr(client, "compile_answer", lambda *args: answer)
    error = run(tmp_path, add(), engine=engine)
    assert error.verdict == "crashed" and "grader's failure" in error.message
    assert answer["why"] in error.message


def test_a_helper_that_dies_is_the_graders_failure(tmp_path, monkeypatch):
    def broken(request):
        raise OSError("Broken pipe")

    monkeypatch.setattr(client.HELPER, "ask", broken)
    monkeypatch.setattr(client, "_MEMO", {})
    monkeypatch.setattr(client, "cache_dir", lambda: tmp_path)
    error = run(tmp_path, add(value="a[i] - b[i] + b[i] + b[i]"))
    assert error.verdict == "crashed" and "Broken pipe" in error.message


# -- declared signatures --------------------------------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    "decorator",
    [
        '("void(float64[:], float64[:], float64[:])")',
        '(["void(float64[:], float64[:], float64[:])", "void(int32[:], int32[:], int32[:])"])',
        "(void(float64[:], float64[:], float64[:]))",
        '("void(float32[:, :], float32[:], float32[:])")',
    ],
    ids=["string", "list", "numba types", "wrong dimensions"],
)
def test_arguments_that_fit_no_declared_signature_are_refused(tmp_path, engine, decorator):
    """float32 buffers launched into `@cuda.jit("void(float64[:], ...)")`: numba-cuda raises
    TypeError "No matching definition" (an eager kernel compiles nothing more); the CPU engines
    give the same error at the launch's line, instead of running the kernel as if undeclared."""
    source = add(decorator=decorator).replace("from numba import cuda", "from numba import cuda, void, float64")
    error = run(tmp_path, source, engine=engine)
    assert error.verdict == "exception", error
    assert "No matching definition for argument type(s) array(float32, 1d, C)" in error.message
    assert error.source.startswith("add[") and "signature" in error.hint


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    "decorator",
    [
        '("void(float32[:], float32[:], float32[:])")',
        '(["void(float64[:], float64[:], float64[:])", "void(float32[::1], float32[::1], float32[::1])"])',
    ],
    ids=["any layout", "second of two"],
)
def test_arguments_that_fit_a_declared_signature_run(tmp_path, engine, decorator):
    assert run(tmp_path, add(decorator=decorator), engine=engine) is None


def test_a_number_is_cast_to_the_declared_scalar_type(tmp_path, monkeypatch):
    """A Python float into a declared float32 parameter is float32 in the kernel, as numba-cuda
    converts it: alpha * x is computed in float32."""
    source = """
    from numba import cuda


    @cuda.jit("void(float32[:], float32[:], float32[:], float32)")
    def saxpy(x, y, out, alpha):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = alpha * x[i] + y[i]


    def launch(x, y, out, alpha):
        saxpy[(out.size + 127) // 128, 128](x, y, out, float(alpha))
    """
    assert run(tmp_path, source, "saxpy") is None
    seen = []
    verify = client.verify_launch

    def spying(py_func, args, signatures=()):
        verified = verify(py_func, args, signatures)
        seen.append(verified.args[-1])
        return verified

    monkeypatch.setattr("grader.doctor.kernel.verify_launch", spying)
    run(tmp_path, source, "saxpy")
    assert type(seen[0]) is np.float32


def test_a_declared_return_type_is_refused_when_the_file_loads(tmp_path):
    """numba-cuda's `cuda.jit("float32(float32[:])")` raises at decoration; so does the simulator's."""
    with pytest.raises(SubmissionError, match="CUDA kernel must have void return type"):
        run(tmp_path, add(decorator='("float32(float32[:], float32[:], float32[:])")'))


# -- launch limits --------------------------------------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    "config, case, said",
    [
        ("(c.size + 7) // 8, (8, 1, 128)", 1, "at most 64 threads along z"),
        ("1, 2048", 1, "at most 1024 threads along x"),
        ("(c.size + 1023) // 1024, (32, 64)", 1, "at most 1024 threads, and (32, 64, 1) is 2048"),
        ("((c.size + 127) // 128, 65536), 128", 1, "at most 65,535 blocks along y"),
        ("c.size // 128, 128", 0, "0 blocks along x"),
        ("1, c.size // 2", 0, "0 threads along x"),
        ("(c.size + 127) // 128, 128, 0, 49153", 1, "49,153"),
    ],
    ids=["block z", "block x", "threads per block", "grid y", "no block", "no thread", "dynamic shared"],
)
def test_a_launch_past_the_gpus_limits_is_refused_as_a_gpu_does(tmp_path, engine, config, case, said):
    """Block 8 × 1 × 128, grid y 65,536, n // 128 blocks for n = 1...: a GPU answers
    CUDA_ERROR_INVALID_VALUE and runs nothing; the CPU engines say so (`exception`), never
    run it (a 0-block launch is not a wrong_result)."""
    error = run(tmp_path, add(launch=config), engine=engine, case=case)
    assert error is not None and error.verdict == "exception", error
    assert "CUDA_ERROR_INVALID_VALUE" in error.message and said in error.message
    assert error.source.startswith("add[") and error.hint


STATIC_TILE = """
    from numba import cuda, float32


    @cuda.jit
    def add(a, b, c):
        tile = cuda.shared.array(SLOTS, float32)
        i = cuda.grid(1)
        tile[cuda.threadIdx.x] = a[i] if i < c.size else 0
        cuda.syncthreads()
        if i < c.size:
            c[i] = tile[cuda.threadIdx.x] + b[i]


    def launch(a, b, c):
        add[(c.size + 127) // 128, 128](a, b, c)
    """


@pytest.mark.parametrize("engine", ["doctor", "simulator"])
def test_static_shared_memory_is_bounded_by_the_targets_toolchain(tmp_path, monkeypatch, engine):
    """The compile check counts the kernel's fixed `cuda.shared.array`s (from its PTX): on sm_90
    a 52,000-byte tile builds and runs, as numba-cuda's did on an H100 (64 KiB there), and past
    the device's 227 KiB it is refused; for a target where the linker stops at 48 KiB (8.6),
    52,000 bytes is refused, naming it."""
    assert run(tmp_path, STATIC_TILE.replace("SLOTS", "13000"), engine=engine) is None
    error = run(tmp_path, STATIC_TILE.replace("SLOTS", "60000"), engine=engine)
    assert error.verdict == "exception" and "240,000 bytes" in error.message and "227 KiB" in error.message
    monkeypatch.setenv("ZEROGPU_COMPUTE_CAPABILITY", "8.6")
    error = run(tmp_path, STATIC_TILE.replace("SLOTS", "13000"), engine=engine)
    assert error.verdict == "exception" and "52,000 bytes" in error.message and "48 KiB" in error.message


def test_the_limits_themselves():
    check_launch("k", (2**31 - 1, 65535, 65535), (1024, 1, 1), 49152)
    check_launch("k", (1, 1, 1), (16, 16, 4), 0, 49152)
    check_launch("k", (1, 1, 1), (256, 1, 1), 0, 65536, cc=(9, 0))  # ran on an H100
    for grid, block, shared in [((2**31, 1, 1), (1, 1, 1), 0), ((1, 1, 1), (1, 1, 65), 0), ((1, 1, 1), (1, 1, 1), -1)]:
        with pytest.raises(LaunchRefused):
            check_launch("k", grid, block, shared)
    with pytest.raises(LaunchRefused, match="CUDA_ERROR_INVALID_VALUE"):  # refused on an H100
        check_launch("k", (1, 1, 1), (32, 1, 1), 49152 + 4, 0, cc=(9, 0))
    with pytest.raises(LaunchRefused, match="48 KiB"):  # dynamic memory needs an opt-in numba never makes
        check_launch("k", (1, 1, 1), (32, 1, 1), 4, 65536, cc=(9, 0))


# -- a device function that never returns ---------------------------------------------------------
@pytest.mark.parametrize(
    "loop, use",
    [("while True:", "spin(a[i]) + b[i]"), ("while 1:", "spin(a[i])")],
    ids=["used in a sum", "stored"],
)
def test_an_endless_loop_in_a_device_function_is_named_at_its_line(tmp_path, loop, use):
    """Numba types a call that never returns as `none` and refuses what uses it (a typing
    message about `setitem` or `add` with no line of the loop): the refusal names the loop."""
    source = f"""
    from numba import cuda


    @cuda.jit(device=True)
    def spin(x):
        k = 0
        {loop}
            k += 1
        return x


    @cuda.jit
    def add(a, b, c):
        i = cuda.grid(1)
        if i < c.size:
            c[i] = {use}


    def launch(a, b, c):
        add[(c.size + 127) // 128, 128](a, b, c)
    """
    error = run(tmp_path, source)
    assert error.verdict == "exception" and "`spin` never finishes" in error.message
    assert error.line == 8 and error.source == loop and "exit" in error.hint


def test_a_dtype_global_is_a_constant_numba_compiles(tmp_path):
    source = add(globals="import numpy as np\nDT = np.dtype(np.float32)", value="DT.type(a[i]) + b[i]")
    assert run(tmp_path, source) is None
