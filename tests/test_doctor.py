"""The kernel doctor as the grader's CPU back end: no false alarms on the ladder's reference
kernels, the corpus of wrong submissions gets its verdicts, what it cannot run goes to the
simulator (and says why), and `zerogpu doctor` prints the report."""

import json
import re
import textwrap
from pathlib import Path

import numpy as np
import pytest

from grader.steps.cases import prepare
from grader.checking.verdicts import RACE_RERUNS, judge_all, summarise
from grader.doctor.efficiency import forget
from grader.doctor.errors import Unsupported
from grader.doctor.execute import execute, execute_or_simulate
from grader.doctor.summary import DoctorReport, merge
from grader.exercises import LADDER, exercise
from grader.steps.load import load_launch
from grader.authoring.spec import Array, Spec
from grader.sentinels import PAD

SUBMISSIONS = Path(__file__).parent / "submissions"


def _launch(ex, which):
    if which == "solution":
        path = ex.solution_file
        return load_launch(ex.spec, path.read_text(), str(path)), str(path)
    return getattr(ex, which), str(ex.reference_file)


VIEWS_BYTES_AS_WORDS = {
    ("histogram", "target"),
    ("rgb_to_gray", "target"),
    ("transpose", "target"),
    ("vector_add", "target"),
    ("saxpy", "target"),
}
"""Targets that read arrays as wider words (`.view`: uint8 as uint32, float32 pairs as uint64
or complex64): the doctor hands them to the simulator and says why."""


@pytest.mark.parametrize("which", ["solution", "baseline", "target"])
@pytest.mark.parametrize("exercise_id", LADDER)
def test_reference_kernels_run_clean(exercise_id, which):
    """No finding, no error, every case right, and the doctor (not the simulator) ran it."""
    ex = exercise(exercise_id)
    launch, path = _launch(ex, which)
    forget()
    reports = []
    if (exercise_id, which) in VIEWS_BYTES_AS_WORDS:  # the simulator runs it (test_ladder)
        with pytest.raises(Unsupported, match=r"\.view\((uint32|uint64|complex64)\)"):
            for p in prepare(ex, 19):
                execute(ex.spec, launch, p.inputs, dict(p.case.dims), (path,))
        return
    for p in prepare(ex, 19):
        outcome = execute(ex.spec, launch, p.inputs, dict(p.case.dims), (path,))
        assert outcome.error is None, outcome.error
        reports.append(outcome.report)
        results = judge_all(ex, [p], {p.index: outcome}, lambda q: [])
        assert results[0].verdict == "passed", results[0].message
    report = merge(reports)
    # a baseline is the speed floor: the estimate that a GPU finds it too slow is its due
    found = [f for f in report.findings if not (which == "baseline" and f.kind == "slow_memory")]
    assert report.ran_on_doctor and not found, [f.message for f in found]
    if which != "baseline":
        assert not [t for k in report.kernels for t in k.suggestions], [k.suggestions for k in report.kernels]


def test_matmul_tiled_target_inner_tiles_run_clean():
    """The ladder's cases are smaller than the target's 128×256 tile, so they only run its
    element-by-element loads; at 128×24×256 one tile is inside C: its first k-slice goes
    through the 16-byte loads and stores (grader/authoring/ptx.py's load4 and store4, element
    by element here), its last, partial one element by element. Right values, no finding, no
    suggestion."""
    ex = exercise("matmul_tiled")
    dims = {"m": 128, "k": 24, "n": 256}
    inputs = ex.spec.make_inputs(dims, np.random.default_rng(5))
    forget()
    outcome = execute(ex.spec, ex.target, inputs, dims, (str(ex.reference_file),))
    assert outcome.error is None, outcome.error
    c = outcome.buffers["c"][PAD : PAD + 128 * 256].reshape(128, 256)
    exact = inputs["a"].astype(np.float64) @ inputs["b"].astype(np.float64)
    assert np.all(np.abs(c - exact) <= ex.spec.tolerance(inputs, exact))
    report = outcome.report
    assert report.ran_on_doctor and not report.findings, [f.message for f in report.findings]
    texts = {s.text for k in report.kernels for s in k.sites}
    assert {"a[row, col + 3]", "a[row, col + q]"} <= texts  # load4's and store4's elements
    assert not [t for k in report.kernels for t in k.suggestions], [k.suggestions for k in report.kernels]


def wrong_submissions():
    for path in sorted(SUBMISSIONS.glob("*/*.py")):
        expected = re.fullmatch(r"# expect: (\w+)", path.read_text().splitlines()[0]).group(1)
        if expected == "timeout":  # endless: only a child process with a clock can stop it
            continue
        yield pytest.param(path.parent.name, path, expected, id=f"{path.parent.name}/{path.stem}")


@pytest.mark.parametrize("exercise_id, path, expected", list(wrong_submissions()))
def test_wrong_submission_verdict_on_the_doctor(exercise_id, path, expected):
    """The check's own judging (reruns included) over outcomes from the doctor."""
    ex = exercise(exercise_id)
    launch = load_launch(ex.spec, path.read_text(), str(path))
    files = (str(path),)

    def run(p):
        return execute_or_simulate(ex.spec, launch, p.inputs, dict(p.case.dims), files)

    prepared = prepare(ex, 7)
    outcomes = {p.index: run(p) for p in prepared}
    results = judge_all(ex, prepared, outcomes, lambda p: [run(p) for _ in range(RACE_RERUNS)])
    result = summarise(ex, "simulator", 7, results, 0.0)
    assert result.verdict == expected, result.message
    assert all(o.report.ran_on_doctor for o in outcomes.values())


def _spec(n=64):
    return Spec(
        id="t",
        stage=0,
        title="t",
        lesson="",
        make_inputs=None,
        cases=(),
        tolerance=None,
        params=(Array("x", "float32", ("n",)), Array("out", "float32", ("n",), role="out")),
    )


def _module(tmp_path, body):
    from grader.steps.load import load_namespace

    path = tmp_path / "kernel.py"
    path.write_text(textwrap.dedent(body))
    return load_namespace(path.read_text(), str(path)), str(path)


def test_what_it_cannot_run_goes_to_the_simulator(tmp_path):
    """A grid-wide sync (cooperative groups): Unsupported from the doctor; the fallback says
    which back end and why."""
    ns, path = _module(
        tmp_path,
        """
        from numba import cuda

        @cuda.jit
        def k(x, out):
            i = cuda.grid(1)
            out[i] = x[i]
            cuda.cg.this_grid().sync()

        def launch(x, out):
            k[1, 64](x, out)
        """,
    )
    inputs = {"x": np.arange(64, dtype=np.float32)}
    with pytest.raises(Unsupported, match="cuda.cg"):
        execute(_spec(), ns["launch"], inputs, {"n": 64}, (path,))
    outcome = execute_or_simulate(_spec(), ns["launch"], inputs, {"n": 64}, (path,))
    assert outcome.report.executor == "simulator" and "cuda.cg" in outcome.report.reason


def test_barrier_reductions_helpers_and_device_functions(tmp_path):
    """syncthreads_count, a device function that synchronises (yield from), a host helper
    that launches, a tuple argument and a local array all run as on a GPU."""
    ns, path = _module(
        tmp_path,
        """
        from numba import cuda, float32

        @cuda.jit(device=True)
        def block_total(shared, value):
            tid = cuda.threadIdx.x
            shared[tid] = value
            cuda.syncthreads()
            total = float32(0.0)
            for k in range(cuda.blockDim.x):
                total += shared[k]
            cuda.syncthreads()
            return total

        @cuda.jit
        def k(x, out, scale):
            shared = cuda.shared.array(64, float32)
            acc = cuda.local.array(2, float32)
            i = cuda.grid(1)
            acc[0] = x[i] * scale[0]
            positive = cuda.syncthreads_count(1 if x[i] > 0 else 0)
            out[i] = block_total(shared, acc[0]) + positive

        def go(x, out):
            k[1, 64](x, out, (2.0, 0.0))

        def launch(x, out):
            go(x, out)
        """,
    )
    x = np.linspace(-1, 1, 64).astype(np.float32)
    outcome = execute(_spec(), ns["launch"], {"x": x}, {"n": 64}, (path,))
    assert outcome.error is None and not outcome.report.findings, outcome.error
    from grader.sentinels import PAD

    got = outcome.buffers["out"][PAD : PAD + 64]
    np.testing.assert_allclose(got, np.full(64, 2 * x.sum() + (x > 0).sum()), rtol=1e-5, atol=1e-5)


def test_libdevice_bit_casts_run_as_on_a_gpu(tmp_path):
    """A float's bits packed beside a flag in one int64 word and read back (libdevice's
    float_as_int and int_as_float, both import forms): the doctor runs it, bit for bit."""
    ns, path = _module(
        tmp_path,
        """
        from numba import cuda, int32, int64
        from numba.cuda import libdevice
        from numba.cuda.libdevice import int_as_float

        @cuda.jit
        def k(x, out):
            i = cuda.grid(1)
            if i < x.size:
                word = (int64(2) << 32) | (int64(libdevice.float_as_int(x[i])) & 0xFFFFFFFF)
                out[i] = int_as_float(int32(word & 0xFFFFFFFF)) * (word >> 32)

        def launch(x, out):
            k[1, 64](x, out)
        """,
    )
    x = np.linspace(-3, 3, 64).astype(np.float32)
    x[5] = -0.0
    outcome = execute(_spec(), ns["launch"], {"x": x}, {"n": 64}, (path,))
    assert outcome.error is None and not outcome.report.findings, outcome.error
    assert outcome.report.ran_on_doctor
    from grader.sentinels import PAD

    assert np.array_equal(outcome.buffers["out"][PAD : PAD + 64], 2 * x)


def test_report_survives_json():
    """The report travels from the grading child as JSON and comes back equal."""
    ex = exercise("transpose")
    launch = ex.baseline
    p = prepare(ex, 1)[-1]
    forget()
    report = execute(ex.spec, launch, p.inputs, dict(p.case.dims)).report
    again = DoctorReport.from_dict(json.loads(json.dumps(report.to_dict())))
    assert again == report
    assert "swap the indices" in str(report) and "<table" in report._repr_html_()


def test_cli_doctor_reports_the_race(capsys):
    from grader.cli import main

    code = main(["doctor", "reduce_sum", str(SUBMISSIONS / "reduce_sum/no_syncthreads.py"), "--seed", "3"])
    out = capsys.readouterr().out
    assert code == 1
    assert "Race on shared array `partial`" in out and "line 26" in out


def test_cli_doctor_clean_solution_json(capsys):
    from grader.cli import main
    from grader.exercises import ROOT

    code = main(["doctor", "matmul_tiled", str(ROOT / "solutions/matmul_tiled.py"), "--json", "--seed", "3"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert all(c["verdict"] == "passed" for c in data["cases"])
    assert data["report"]["executor"] == "kernel doctor" and data["report"]["findings"] == []
    assert data["report"]["kernels"][0]["kernel"] == "matmul_tiled_kernel"


# -- what the doctor runs instead of handing it to a more lenient engine ---------------------------
def _run_case(tmp_path, source, exercise_id, case=1):
    ex = exercise(exercise_id)
    path = tmp_path / "submission.py"
    path.write_text(textwrap.dedent(source))
    launch = load_launch(ex.spec, path.read_text(), str(path))
    prepared = prepare(ex, 1)[case]
    return execute_or_simulate(ex.spec, launch, prepared.inputs, dict(prepared.case.dims), (str(path),))


DYNAMIC_SHARED_SUM = """
import numpy as np
from numba import cuda, float32

THREADS = 128


@cuda.jit
def block_sums(x, out):
    partial = cuda.shared.array(0, float32)
    also = cuda.shared.array(0, dtype=float32)  # the same memory, as on a GPU
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    partial[t] = x[i] if i < x.size else 0.0
    cuda.syncthreads()
    step = cuda.blockDim.x // 2
    while step > 0:
        if t < step:
            partial[t] += also[t + step]
        cuda.syncthreads()
        step //= 2
    if t == 0:
        cuda.atomic.add(out, 0, partial[0])


def launch(x, out):
    out[:] = 0
    block_sums[(x.size + THREADS - 1) // THREADS, THREADS, 0, {shared}](x, out)
"""


@pytest.mark.parametrize("shared", ["THREADS * np.dtype(np.float32).itemsize", "THREADS * 4 + 3"])
def test_dynamic_shared_memory_runs_on_the_doctor(tmp_path, shared):
    """`cuda.shared.array(0, dtype)` sized by the 4th launch parameter: the doctor runs it (its
    races and float32 math kept), and every such array of a block is the same memory."""
    outcome = _run_case(tmp_path, DYNAMIC_SHARED_SUM.format(shared=shared), "reduce_sum")
    assert outcome.error is None, outcome.error
    assert outcome.report.ran_on_doctor


def test_too_little_dynamic_shared_memory_is_out_of_bounds(tmp_path):
    outcome = _run_case(tmp_path, DYNAMIC_SHARED_SUM.format(shared="64"), "reduce_sum")
    assert outcome.error.verdict == "out_of_bounds" and "`partial` has 16 elements" in outcome.error.message


@pytest.mark.parametrize("stream", ["0", "getattr(x, 'stream', 0)"])
def test_a_launch_on_a_stream_runs_on_the_doctor(tmp_path, stream):
    source = DYNAMIC_SHARED_SUM.format(shared="THREADS * 4").replace(", 0, THREADS * 4]", f", {stream}, THREADS * 4]")
    outcome = _run_case(tmp_path, source, "reduce_sum")
    assert outcome.error is None and outcome.report.ran_on_doctor


def test_lesson_code_with_a_stream_runs_on_the_doctor():
    """`cuda.stream()` in a lesson cell: launches and copies on it run in order, on the doctor."""
    from numba import cuda

    from grader.doctor import run

    @cuda.jit
    def double(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] *= 2

    def host():
        stream = cuda.stream()
        d = cuda.to_device(np.arange(8, dtype=np.float32), stream=stream)
        double[1, 32, stream](d)
        stream.synchronize()
        return d.copy_to_host(stream=stream)

    assert (run(host) == 2 * np.arange(8)).all()


@pytest.mark.parametrize(
    "loop",
    ["for v in x:", "for k, v in enumerate(x):", "for v, w in zip(x, x):"],
    ids=["for", "enumerate", "zip"],
)
def test_iterating_over_an_array_in_a_kernel_runs_on_the_doctor(tmp_path, loop):
    """`for element in array:` is device code numba compiles; the doctor reads each element as
    `x[k]` (checked, recorded), never as host code touching device data (`forbidden`)."""
    source = f"""
    from numba import cuda


    @cuda.jit
    def total(x, out):
        if cuda.grid(1) == 0:
            s = 0.0
            {loop}
                s += v
            out[0] = s


    def launch(x, out):
        total[1, 32](x, out)
    """
    outcome = _run_case(tmp_path, source, "reduce_sum")
    assert outcome.error is None, outcome.error
    assert outcome.report.ran_on_doctor


def test_iterating_over_the_rows_of_a_2d_array(tmp_path):
    source = """
    from numba import cuda


    @cuda.jit
    def transpose(a, out):
        col = cuda.grid(1)
        if col < a.shape[1]:
            r = 0
            for row in a:
                out[col, r] = row[col]
                r += 1


    def launch(a, out):
        transpose[(a.shape[1] + 63) // 64, 64](a, out)
    """
    outcome = _run_case(tmp_path, source, "transpose")
    assert outcome.error is None, outcome.error


IMPORTED_IN_LAUNCH = """
_WARPSIZE = 32


def _factory():
    {imports}

    @cuda.jit(device=True)
    def combine(a, b):
        return a + b

    @cuda.jit
    def total(x, out):
        i = cuda.grid(1)
        partial = 0.0
        for j in range(i, x.size, cuda.gridsize(1)):
            partial = combine(partial, x[j])
        cuda.atomic.add(out, 0, partial)

    return total


def launch(x, out):
    {imports}

    out[:] = 0
    _factory()[4, _WARPSIZE](x, out)
"""


@pytest.mark.parametrize("imports", ["from numba import cuda", "import numba.cuda as cuda"])
def test_a_kernel_made_after_an_import_inside_launch_runs(tmp_path, imports):
    """numba's own reduction code imports cuda inside a function and builds its kernels there:
    the doctor (and the simulator, whose `cuda` a closure holds) run them as the module's."""
    source = IMPORTED_IN_LAUNCH.format(imports=imports)
    outcome = _run_case(tmp_path, source, "reduce_sum")
    assert outcome.error is None, outcome.error
    assert outcome.report.ran_on_doctor
    from grader.steps.execute import execute as simulate

    ex = exercise("reduce_sum")
    path = tmp_path / "submission.py"
    launch = load_launch(ex.spec, path.read_text(), str(path))
    prepared = prepare(ex, 1)[1]
    assert simulate(ex.spec, launch, prepared.inputs, dict(prepared.case.dims), (str(path),)).error is None


def test_the_simulator_fallback_keeps_float32_math(tmp_path):
    """What the doctor cannot run goes to the simulator, which now computes `math.exp` of a
    float32 as a GPU does: exp(90) is inf, so a softmax without the max is NaN (wrong_result),
    not the Python float that passed before."""
    source = (Path(__file__).parent / "gpu_verdicts/softmax_fused/no_max_subtraction.py").read_text()
    source = source.replace("](x, out)", "](x.view(np.float32), out)").replace(
        "import math", "import math\nimport numpy as np"
    )
    outcome = _run_case(tmp_path, source, "softmax_fused", case=0)
    assert outcome.report.executor == "simulator"
    assert outcome.error is None and np.isnan(outcome.buffers["out"][PAD : PAD + 1]).all()


def test_a_none_in_launchs_globals_stays_none_whatever_numba_has_imported(monkeypatch):
    """`launch` reading a global or closure value of None (an optional buffer, a cache not yet
    made) gets None under the doctor, not a fake module: a module numba has not imported yet is
    None in sys.modules too."""
    import sys

    from grader.doctor.fakecuda import replacement

    monkeypatch.delitem(sys.modules, "numba.cuda.libdevice", raising=False)
    assert replacement(None) is None
