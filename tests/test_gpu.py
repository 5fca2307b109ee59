"""Speed grading on a real GPU (run on the device: ZEROGPU_BACKEND=gpu pytest -m gpu)."""

import pytest

pytestmark = pytest.mark.gpu

import grader  # noqa: E402
from grader.checking.notebook import check  # noqa: E402
from grader.checking.check import check_file  # noqa: E402
from grader.exercises import LADDER, ROOT, exercise  # noqa: E402


@pytest.fixture(autouse=True)
def needs_gpu():
    if grader.BACKEND != "gpu":
        pytest.skip("needs a real GPU (ZEROGPU_BACKEND=gpu on a machine with one)")


def test_device_ceilings_are_measured_and_plausible():
    from grader.gpu.ceilings import ceilings

    c = ceilings(refresh=True)
    assert 100e9 < c["copy_bandwidth"] < 20e12
    assert 1e12 < c["fp32_flops"] < 500e12
    assert c["method"]["copy_bandwidth"]


def test_solution_gets_a_speed_section_with_every_figure():
    result = check_file("vector_add", exercise("vector_add").solution_file)
    assert result.passed, result.message
    d = result.speed.to_dict()["details"]  # its JSON form: every figure by name
    assert result.speed.measured
    for key in ("yours_ms", "speedup_vs_baseline", "fraction_of_target", "throughput", "method", "tier"):
        assert key in d
    assert d["throughput"]["unit"] == "GB/s" and 0 < d["throughput"]["fraction_of_ceiling"] < 1.1
    assert not d["below_floor"] and not d["hidden_work"]


@pytest.mark.parametrize("exercise_id", LADDER)
def test_the_baseline_itself_is_too_slow(exercise_id):
    """A baseline-quality submission must not meet the speed requirement."""
    ex = exercise(exercise_id)
    result = check(exercise_id, ex.baseline)
    assert result.verdict == "too_slow", (exercise_id, result.message)


def test_caching_outputs_between_calls_is_caught():
    """A launch that computes once and then replays is wrong on fresh timed inputs. The cache
    stays on the device (host code may not read device data: that alone is `forbidden`). Its
    own kernels only: the grader's target views arrays as wider types, which a learner's
    recorded `launch` may not."""
    from numba import cuda

    state = {}

    @cuda.jit
    def add(a, b, c):
        i = cuda.grid(1)
        if i < c.size:
            c[i] = a[i] + b[i]

    @cuda.jit
    def copy(src, dst):
        i = cuda.grid(1)
        if i < dst.size:
            dst[i] = src[i]

    def replay(a, b, c):
        blocks = (c.size + 255) // 256
        if "c" in state and c.size == state["c"].size:
            copy[blocks, 256](state["c"], c)
            return
        add[blocks, 256](a, b, c)
        state["c"] = cuda.device_array_like(c)
        copy[blocks, 256](c, state["c"])

    result = check("vector_add", replay)
    assert result.verdict in ("wrong_result",), result.message


FAR_OFF_WRITE = '''
from numba import cuda


@cuda.jit
def add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i + (1 << 34)] = a[i] + b[i]  # 64 GiB past the end: no mapping there


def launch(a, b, c):
    add[(c.size + 127) // 128, 128](a, b, c)
'''


def test_an_illegal_address_is_a_crash_verdict_and_the_grader_lives_on(tmp_path):
    """The GPU kills the child's context; the parent reports `crashed` and grades the next
    submission normally."""
    bad = tmp_path / "far_off.py"
    bad.write_text(FAR_OFF_WRITE)
    result = check_file("vector_add", bad, graded=True)
    assert result.verdict == "crashed", (result.verdict, result.message)
    assert "outside every array" in result.message or "ILLEGAL" in result.message, result.message
    after = check_file("vector_add", exercise("vector_add").solution_file, graded=True)
    assert after.passed, after.message


def test_a_grading_process_holds_no_cuda_context():
    """Only the child touches the GPU: a CUDA context in the grading process while its child
    was timed moved reduce_sum's time by 6% (docs/BENCHMARKS-LOG.md)."""
    import subprocess
    import sys

    from grader.exercises import ROOT

    code = (
        "import ctypes, grader\n"
        "from grader.backend import driver_library\n"
        "from grader.checking.check import check_file\n"
        "from grader.exercises import exercise\n"
        "r = check_file('vector_add', exercise('vector_add').solution_file)\n"
        "lib = driver_library(); flags, active = ctypes.c_uint(0), ctypes.c_int(0)\n"
        "lib.cuDevicePrimaryCtxGetState(0, ctypes.byref(flags), ctypes.byref(active))\n"
        "print(r.speed.measured, active.value)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.stdout.split()[-2:] == ["True", "0"], out.stdout[-500:] + out.stderr[-2000:]


def test_one_wave_is_whole_blocks_per_sm():
    """The transpose target's grid is what the GPU runs at once (grader/authoring/occupancy.py): a
    whole number of blocks on every SM. Last in this file: it leaves a CUDA context in the
    test process."""
    import numpy as np
    from numba import cuda

    from grader.exercises import reference_module
    from grader.authoring.occupancy import one_wave

    T = reference_module("transpose")
    a64, out64 = T.pair_views(cuda.device_array((64, 64), np.float32), cuda.device_array((64, 64), np.float32))
    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    blocks = one_wave(T._transpose_pairs, (a64, out64), 256)
    assert blocks % sms == 0 and sms <= blocks <= 8 * sms, (blocks, sms)


def test_a_class_with_unguarded_writes_before_correct_ones_completes_on_every_gpu(tmp_path):
    """Do kernels that write past their arrays, graded first on every GPU of the host, leave
    the workers able to grade the correct submissions after them (every row arrives)?"""
    import shutil

    from grader.backend import gpu_count
    from grader.classroom.gradebook import Gradebook
    from grader.classroom.grading import discover, grade_class
    from grader.paths import ROOT

    gpus = max(gpu_count(), 1)
    unguarded = ROOT / "tests" / "submissions" / "vector_add" / "no_bounds_guard.py"
    for k in range(4 * gpus):
        folder = tmp_path / "class" / f"s{k:02d}"
        folder.mkdir(parents=True)
        shutil.copy(unguarded if k < 2 * gpus else exercise("vector_add").solution_file, folder / "vector_add.py")
    book = Gradebook(tmp_path / "book.sqlite")
    tasks = discover(tmp_path / "class", ["vector_add"])
    grade_class(tasks, book, workers=gpus, case_timeout=60, backend="gpu", task_timeout=300)
    verdicts = [r.verdict for r in book.rows()]
    assert len(verdicts) == len(tasks)
    assert verdicts[2 * gpus :] == ["passed"] * (2 * gpus)
    assert all(v != "passed" for v in verdicts[: 2 * gpus])


@pytest.mark.parametrize(
    "path", sorted((ROOT / "tests" / "valid").glob("*/*.py")), ids=lambda p: f"{p.parent.name}/{p.stem}"
)
def test_a_valid_alternative_is_correct_on_a_gpu(path):
    """Scratch uploads (`cuda.to_device(np.zeros(1))`), partial sums in device arrays, device
    queries, views, streams and device-to-device copies: recorded, replayed on the H200, correct
    (tests/valid/; speed is theirs: a float64 atomic on one address may well be too_slow)."""
    result = check_file(path.parent.name, path, seed=3)
    assert result.verdict in ("passed", "too_slow"), result.message
    assert all(case.verdict == "passed" for case in result.cases)


def test_every_cheat_gets_the_cpus_verdict_on_a_gpu(monkeypatch):
    """One verdict on every engine: each file of tests/cheats/, graded on a GPU, gets the verdict
    its `# expect:` line names, which the kernel doctor and the simulator give it on the CPU
    (tests/test_cheats.py). Four checks at once, as a class run has several under way."""
    from concurrent.futures import ThreadPoolExecutor
    from pathlib import Path

    monkeypatch.setenv("ZEROGPU_SECRET", "gpu-secret")
    cheats = sorted((Path(__file__).parent / "cheats").glob("*.py"))

    def verdict(path):
        head = path.read_text().splitlines()
        exercise_id, expected = (line.split(": ")[1] for line in head[:2])
        limit = next((float(line.split(": ")[1]) for line in head[2:4] if line.startswith("# timeout:")), 5.0)
        result = check_file(exercise_id, path, graded=True, case_timeout=limit)
        return path.stem, expected, result.verdict, result.message[:300]

    with ThreadPoolExecutor(4) as pool:
        seen = list(pool.map(verdict, cheats))
    differ = [s for s in seen if s[1] != s[2]]
    assert not differ, "\n".join(f"{name}: CPU {cpu}, GPU {gpu}: {said}" for name, cpu, gpu, said in differ)


def test_host_computation_never_passes_a_graded_check_on_a_gpu(monkeypatch):
    from pathlib import Path

    monkeypatch.setenv("ZEROGPU_SECRET", "gpu-secret")
    cheats = sorted((Path(__file__).parent / "cheats").glob("host_*.py"))
    assert len(cheats) >= 6
    for path in cheats:
        exercise_id, expected = (line.split(": ")[1] for line in path.read_text().splitlines()[:2])
        result = check_file(exercise_id, path, graded=True, case_timeout=30)
        # each its own verdict, as on the CPU (tests/test_cheats.py): a NumPy array handed to a
        # kernel is never copied back, so a round trip through one is wrong, not forbidden
        assert result.verdict == expected, (path.stem, result.verdict, result.message)
        assert expected in ("forbidden", "wrong_result", "exception") and not result.passed


def test_a_launch_that_refuses_the_benchmark_size_is_not_passed(tmp_path):
    """A launch that works at the correctness sizes and raises at the benchmark's would escape
    the speed grade: on a GPU it fails there, so it is not passed (recorded per size, grader/replay/)."""
    path = tmp_path / "vector_add.py"
    path.write_text(
        "from numba import cuda\n\n\n@cuda.jit\ndef add(a, b, c):\n    i = cuda.grid(1)\n    if i < c.size:\n"
        "        c[i] = a[i] + b[i]\n\n\ndef launch(a, b, c):\n    if c.size > 1_000_000:\n"
        "        raise ValueError('too big for me')\n    add[(c.size + 127) // 128, 128](a, b, c)\n"
    )
    result = check_file("vector_add", path, seed=3)
    assert result.verdict == "exception" and "benchmark" in result.message, result.message
    assert result.score == 0


NOTEBOOK_CELL = """
from numba import cuda

@cuda.jit
def add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]

@cuda.jit("void(float32[:], float32[:], float32[:])")
def add_declared(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]
"""


def test_a_notebook_launch_that_cannot_be_copied_is_recorded_not_run_in_the_notebook(tmp_path):
    """On a GPU host, a lambda `launch` is recorded in the notebook's process on placeholders and
    replayed in a checking child: the kernel is never compiled nor launched in the notebook, host
    reads are forbidden, and the pass is timed like any other."""
    cell = tmp_path / "cell.py"
    cell.write_text(NOTEBOOK_CELL)
    namespace = {"__name__": "cell"}
    exec(compile(cell.read_text(), str(cell), "exec"), namespace)
    add, declared = namespace["add"], namespace["add_declared"]
    result = check("vector_add", lambda a, b, c: add[(c.size + 127) // 128, 128](a, b, c), seed=1)
    assert result.verdict == "passed", result.message
    assert result.speed is not None and result.speed.measured
    assert not add.overloads  # compiled and launched in the checking child only
    result = check("vector_add", lambda a, b, c: declared[(c.size + 127) // 128, 128](a, b, c), seed=1)
    assert result.verdict == "passed", result.message
    reads = check("vector_add", lambda a, b, c: c.copy_to_device(a.copy_to_host() + b.copy_to_host()), seed=1)
    assert reads.verdict == "forbidden", reads.message


@pytest.mark.parametrize("exercise_id", ["vector_add", "reduce_sum", "scan", "matmul_tiled", "softmax_fused"])
def test_kernels_compiled_ahead_are_loaded_not_compiled_and_pass_every_case(exercise_id):
    """A replayer given a check's kernels compiled ahead by a compiling child (grader/checking/
    compiling.py) links and loads them, compiles none, and the solution passes every case."""
    from numba import cuda

    from grader.children.compiling import Compilers, compiled_ahead
    from grader.children.task import ReplayTask
    from grader.checking.verdicts import all_passed
    from grader.checking.check import plans_wanted
    from grader.compiler.prebuilt import arch_of
    from grader.replay.plan import Message
    from grader.replay.record import Recorder, record_cases, recording
    from grader.replay.launch import launch_from, rebuild
    from grader.replay.sources import hand_in_of, pinned
    from grader.steps.cases import prepare
    from grader.steps.execute import execute
    from grader.steps.load import load_launch

    ex = exercise(exercise_id)
    path = str(ex.solution_file)
    prepared = prepare(ex, 7)
    recorder = Recorder()
    recorder.filename = path
    with recording(recorder):
        launch = load_launch(ex.spec, ex.solution_file.read_bytes(), path)
        plans = record_cases(recorder, launch, ex.spec, plans_wanted(ex, prepared), (path,))
    message = Message(None, plans, pinned(recorder.kernels, hand_in_of(path)))  # as the grading process reads it
    compilers = Compilers()
    try:
        arch = arch_of(cuda.get_current_device().compute_capability)
        compiled = compiled_ahead(compilers, ReplayTask(ex, None, message, tuple(prepared), 120.0), arch)
    finally:
        compilers.stop()
    assert compiled, "the compiling child answered"
    functions = rebuild(message.kernels, path)
    jitted: dict = {}
    outcomes = {}
    for p in prepared:
        replayed = launch_from(message.plans[str(p.index)], functions, jitted=jitted, compiled=compiled)
        outcomes[p.index] = execute(ex.spec, replayed, p.inputs, dict(p.case.dims))
    assert all_passed(ex, prepared, outcomes)
    dispatchers = [d for engine in jitted.values() for d in engine.values()]
    assert dispatchers and all(not d._cache_misses for d in dispatchers), "nothing compiled in the replayer"
    assert all(k._codelibrary._llvm_strs == [] for d in dispatchers for k in d.overloads.values())


@pytest.mark.parametrize("exercise_id", ["vector_add", "scan", "softmax_fused"])
def test_references_compiled_ahead_are_loaded_not_compiled_and_compute_the_oracle(exercise_id):
    """An exercise's baseline and target kernels compiled by a compiling child (grader/replay/
    references.py) for the benchmark's types, added to this process's own dispatchers: the
    target's output is the oracle's, and no kernel is compiled here for a type compiled ahead
    (at a case's size a target may launch other kernels or types: those compile here)."""
    import sys

    from numba import cuda

    from grader.children.compiling import Compiler, references_ahead
    from grader.checking.verdicts import all_passed
    from grader.compiler.prebuilt import arch_of
    from grader.compiler.rebuild import argument_type
    from grader.replay.references import install_references
    from grader.steps.cases import prepare
    from grader.steps.execute import execute

    ex = exercise(exercise_id)
    compiler = Compiler(False, ())
    try:
        entries = references_ahead(compiler, exercise_id, arch_of(cuda.get_current_device().compute_capability), 300.0)
    finally:
        compiler.stop()
    fresh = [e for e in entries if not getattr(sys.modules[e["module"]], e["name"]).overloads]
    assert install_references(fresh) == len(fresh) > 0
    prepared = prepare(ex, 7)
    outcomes = {p.index: execute(ex.spec, ex.target, p.inputs, dict(p.case.dims)) for p in prepared}
    assert all_passed(ex, prepared, outcomes)
    for entry in fresh:
        dispatcher = getattr(sys.modules[entry["module"]], entry["name"])
        ahead = tuple(argument_type(a) for a in entry["args"])
        assert ahead not in dispatcher._cache_misses, f"{entry['name']} compiled here for {ahead}"
