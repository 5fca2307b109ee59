"""Record, then replay (grader/replay/): the plan a recording makes, the checks a message must
pass, kernels rebuilt from their `def` alone, and whole checks of valid alternatives and of
submissions that try to speak for the grader."""

import json
from pathlib import Path

import numpy as np
import pytest

from grader.checking.check import check_file
from grader.exercises import exercise
from grader.replay.plan import MAX_STEPS, Failure, Message, Plan, Ref, Step, Value
from grader.replay.schema import PlanError, read_message
from grader.replay.sources import HandIn
from grader.replay.placeholders import DeviceRef, NoDataHere
from grader.replay.record import Recorder, recording
from grader.replay.launch import RebuildError, launch_from, rebuild

VALID = Path(__file__).parent / "valid"


def record(launch, params: dict, scalars=None) -> tuple:
    """(plan, kernels) of one call of `launch` on placeholders of `params` (name -> (shape, dtype))."""
    recorder = Recorder()
    with recording(recorder):
        launch(**recorder.start(params, scalars or {}))
        return recorder.finish(), recorder.kernels


def load(source: str, name: str = "sub.py") -> dict:
    namespace = {"__name__": "submission", "__file__": name}
    import linecache

    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    exec(compile(source, name, "exec"), namespace)
    return namespace


SCRATCH = '''
import numpy as np
from numba import cuda

@cuda.jit
def total(x, acc):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(acc, 0, np.float64(x[i]))

@cuda.jit
def store(acc, out):
    if cuda.grid(1) == 0:
        out[0] = acc[0]

def launch(x, out):
    acc = cuda.to_device(np.zeros(1, np.float64))
    total[(x.size + 31) // 32, 32](x, acc)
    store[1, 1](acc, out)
'''


# -- recording -------------------------------------------------------------------------------------
def test_a_recording_writes_down_what_launch_did():
    """Is every step of launch in the plan, the scratch upload of zeros as a fill, and the grid as launched?"""
    launch = load(SCRATCH)["launch"]
    plan, kernels = record(launch, {"x": ((100,), "float32"), "out": ((1,), "float32")})
    ops = [s.op for s in plan.steps]
    assert ops == ["param", "param", "alloc", "fill", "launch", "launch"]
    first = plan.steps[4]
    assert first.grid == (4, 1, 1) and first.block == (32, 1, 1)
    assert [type(a) for a in first.args] == [Ref, Ref]
    assert sorted(k.split("_", 1)[1] for k in kernels) == ["store", "total"]


@pytest.mark.parametrize(
    "body, says",
    [
        ("np.asarray(x).sum()", "NumPy array"),
        ("x.copy_to_host()", "copy_to_host"),
        ("float(x[0])", "one element"),
        ("sum(x)", "Looping"),
        ("[v for v in out]", "Looping"),
        ("bool(x)", "truth"),
    ],
)
def test_reading_device_data_on_the_host_teaches(body, says):
    """Does every way of reading an input's values in `launch` stop with a message saying where to compute instead?"""
    launch = load(f"import numpy as np\ndef launch(x, out):\n    {body}\n")["launch"]
    with pytest.raises(NoDataHere, match=says) as caught:
        record(launch, {"x": ((8,), "float32"), "out": ((1,), "float32")})
    assert "kernel" in str(caught.value)


def test_a_fill_of_any_number_survives_the_message():
    """Are fills with a bool, an int, a float and a NaN carried through the checked message?"""

    def launch(x, out):
        out[:] = False
        out[:] = 3
        out[:] = 0.5
        out[:] = float("nan")

    plan, kernels = record(launch, {"x": ((4,), "float32"), "out": ((4,), "float32")})
    again = read_message(Message(None, {"0": plan}, kernels).to_json(), hand_in=HandIn("", "sub.py")).plans["0"]
    values = [s.value for s in again.steps if s.op == "fill"]
    assert values[:3] == [False, 3, 0.5] and values[3] != values[3]


def test_placeholders_know_their_shape_and_views():
    """Do shape, size, dtype, slices and reshape work on a placeholder, as on a device array?"""
    seen = {}

    def launch(a, out):
        seen.update(shape=a.shape, size=a.size, dtype=a.dtype, rows=a[2:].shape, flat=a.reshape(-1).shape)
        out[:] = 0

    plan, _ = record(launch, {"a": ((4, 6), "float32"), "out": ((4,), "int32")})
    assert seen == {"shape": (4, 6), "size": 24, "dtype": np.dtype("float32"), "rows": (2, 6), "flat": (24,)}
    assert plan.steps[-1].op == "fill" and plan.steps[-1].value == 0


def test_recording_puts_numba_back():
    """Is numba.cuda the same after a recording (the notebook's own process records too)?"""
    from numba import cuda

    before = cuda.to_device
    record(load(SCRATCH)["launch"], {"x": ((10,), "float32"), "out": ((1,), "float32")})
    assert cuda.to_device is before
    assert isinstance(cuda.to_device(np.zeros(2)), object) and not isinstance(cuda.to_device(np.zeros(2)), DeviceRef)


def test_an_allocation_no_gpu_can_hold_is_named_as_memory():
    """Is a 10^13-element device array refused while recording, saying how much it asks and
    how much the GPU has, in a learner's words?"""
    from grader.replay.placeholders import NoRoomOnTheDevice
    from grader.steps.explain import explain_exception

    launch = load(
        "import numpy as np\nfrom numba import cuda\ndef launch(x, out):\n    cuda.device_array(10**13, np.float32)\n"
    )
    with pytest.raises(NoRoomOnTheDevice) as caught:
        record(launch["launch"], {"x": ((8,), "float32"), "out": ((1,), "float32")})
    info = explain_exception(caught.value, ("sub.py",))
    assert info.verdict == "exception"
    assert "40 TB" in info.message and "151 GB" in info.message and "memory" in info.message


def test_a_module_level_table_is_a_kernels_constant():
    """Is a module-level device array filled from the host described by its values, and one no
    upload filled refused with what the grader cannot do (never blamed on a GPU)?"""
    source = (
        "import numpy as np\nfrom numba import cuda\n"
        "W = cuda.to_device(np.array([2.0, 3.0], np.float32))\nS = cuda.device_array(4, np.float32)\n"
        "@cuda.jit\ndef k(a, out):\n    out[0] = W[1] * a[0] + S[0]\n"
        "def launch(x, out):\n    k[1, 1](x, out)\n"
    )
    recorder = Recorder()
    with recording(recorder):
        namespace = load(source)
        launch = namespace["launch"]
        launch(**recorder.start({"x": ((8,), "float32"), "out": ((1,), "float32")}, {}))
    described = next(iter(recorder.kernels.values()))["globals"]
    assert described["W"] == ["array", "<f4", [2], [2.0, 3.0], "device"]
    assert described["S"][0] == "opaque" and described["S"][3] == "grader" and "argument" in described["S"][2]


def test_a_loop_of_launches_is_stopped():
    """Is a launch per element (thousands of steps) stopped with the fix, not recorded without end?"""
    namespace = load(
        "from numba import cuda\n@cuda.jit\ndef k(a):\n    a[0] = 1\ndef launch(x, out):\n"
        "    for i in range(100000):\n        k[1, 1](out)\n"
    )
    with pytest.raises(RuntimeError, match=str(MAX_STEPS)):
        record(namespace["launch"], {"x": ((8,), "float32"), "out": ((1,), "float32")})


# -- the message ----------------------------------------------------------------------------------
def good_message() -> dict:
    plan, kernels = record(load(SCRATCH)["launch"], {"x": ((100,), "float32"), "out": ((1,), "float32")})
    return json.loads(Message(None, {"0": plan}, kernels).to_json())


def read(data) -> Message:
    """A recording of SCRATCH (the file `sub.py`) read as the grading process reads one."""
    return read_message(data if isinstance(data, str) else json.dumps(data), hand_in=HandIn(SCRATCH, "sub.py"))


def test_a_message_survives_its_round_trip():
    """Are the plans read back as recorded, and each kernel given the text of its `def` in the hand-in?"""
    data = good_message()
    message = read(data)
    again = json.loads(message.to_json())
    assert again["plans"] == data["plans"]
    texts = {desc["name"]: desc["source"] for desc in again["kernels"].values()}
    assert texts["total"].startswith("@cuda.jit\ndef total(x, acc):") and "atomic.add" in texts["total"]
    assert all("source" not in desc for desc in data["kernels"].values()), "a recording carries no text"
    assert read_message(message.to_json()).kernels == message.kernels, "the grader's own message keeps its texts"


def _break(data: dict, how: str) -> dict:
    steps = data["plans"]["0"]["steps"]
    if how == "verdict passed":
        data["plans"]["1"] = {"failure": {"verdict": "passed", "message": "all good"}}
    elif how == "unknown field":
        steps[0]["verdict"] = "passed"
    elif how == "unknown op":
        steps.append({"op": "result", "verdict": "passed"})
    elif how == "dangling reference":
        steps[-1]["args"][0] = {"ref": 999}
    elif how == "unknown kernel":
        steps[-1]["kernel"] = "nowhere"
    elif how == "too many steps":
        steps.extend([{"op": "fill", "target": 0, "value": 0}] * (MAX_STEPS + 1))
    elif how == "short upload":
        steps.append({"op": "upload", "id": 77, "shape": [1000], "dtype": "<f4", "data": "AAAA"})
    elif how == "bad dtype":
        steps[2]["dtype"] = "object"
    elif how == "extra top-level key":
        data["speed"] = {"seconds": [0.0001]}
    elif how == "string grid":
        steps[-1]["grid"] = ["1", 1, 1]
    elif how == "kernel global of any module":
        key = next(iter(data["kernels"]))
        data["kernels"][key]["globals"]["__builtins__"] = ["module", "os"]
    elif how == "a kernel's text":
        next(iter(data["kernels"].values()))["source"] = "def total(x, acc):\n    acc[0] = 1\n"
    elif how == "a kernel not in the hand-in":
        next(iter(data["kernels"].values()))["firstline"] = 2
    elif how == "a kernel under another name":
        next(iter(data["kernels"].values()))["name"] = "store"
    elif how == "a launch past the file's end":
        steps[-1]["line"] = 10_000
    elif how == "too many plans":
        data["plans"].update({str(k): data["plans"]["0"] for k in range(1, 20)})
    elif how == "too many functions":
        key, desc = next(iter(data["kernels"].items()))
        for k in range(200):
            desc["globals"][f"f{k}"] = ["device", dict(desc, globals={})]
    elif how == "a constant array cut short":
        next(iter(data["kernels"].values()))["globals"]["w"] = ["array", "<f4", [2]]
    return data


@pytest.mark.parametrize(
    "how",
    [
        "verdict passed",
        "unknown field",
        "unknown op",
        "dangling reference",
        "unknown kernel",
        "too many steps",
        "short upload",
        "bad dtype",
        "extra top-level key",
        "string grid",
        "kernel global of any module",
        "a kernel's text",
        "a kernel not in the hand-in",
        "a kernel under another name",
        "a launch past the file's end",
        "too many plans",
        "too many functions",
        "a constant array cut short",
    ],
)
def test_a_malformed_message_is_refused(how):
    """Is each way a recording child could bend the message a PlanError, never accepted or a crash?"""
    with pytest.raises(PlanError):
        read(_break(good_message(), how))


@pytest.mark.parametrize("text", ["", "{", "[]", "null", "9" * 5000, "[" * 100000 + "]" * 100000])
def test_what_is_not_a_message_is_refused(text):
    with pytest.raises(PlanError):
        read(text)


def test_a_failure_can_only_fail():
    """Can a recording child only report its own submission failing (no 'passed', capped text)?"""
    data = {"load_failure": {"verdict": "exception", "message": "x" * 100000}, "plans": {}, "kernels": {}}
    message = read(data)
    assert isinstance(message.load_failure, Failure) and len(message.load_failure.message) <= 4000


# -- rebuilding kernels ---------------------------------------------------------------------------
def describe(source: str, **globals_) -> dict:
    return {"name": "k", "source": source, "filename": "x.py", "firstline": 1, "globals": globals_, "options": {}}


def test_rebuilding_runs_nothing_but_a_def(tmp_path):
    """Are a description's other statements, decorators and annotations never run?"""
    marker = tmp_path / "ran"
    source = (
        f"open({str(marker)!r}, 'w').write('x')\n"
        f"@print(open({str(marker)!r}, 'w'))\n"
        f"def k(a: open({str(marker)!r}, 'w')) -> open({str(marker)!r}, 'w'):\n    a[0] = 1\n"
    )
    functions = rebuild({"k0": describe(source)}, "sub.py")
    assert not marker.exists()
    assert functions["k0"].__name__ == "k" and functions["k0"].__code__.co_filename == "sub.py"


@pytest.mark.parametrize(
    "source, globals_",
    [
        ("def k(a, b=__import__('os').getcwd()):\n    a[0] = b\n", {}),
        ("def k(a):\n    a[0] = os.getpid()\n", {"os": ["module", "os"]}),
        ("def k(a):\n    a[0] = f(1)\n", {"f": ["attr", "os", "system"]}),
        ("def k(a):\n    a[0] = f(1)\n", {"f": ["attr", "math", "_private"]}),
        ("def k(a):\n    a[0] = T\n", {"T": ["numpy", "load"]}),
        ("def k(a):\n    a[0] = T\n", {"T": ["literal", "__import__('os')"]}),
    ],
)
def test_a_description_reaches_only_what_a_kernel_may(source, globals_):
    """Does a global naming another module, a private name or code to evaluate stop the rebuild?"""
    with pytest.raises(RebuildError):
        rebuild({"k0": describe(source, **globals_)}, "sub.py")


# -- replaying --------------------------------------------------------------------------------------
def test_a_replayed_plan_computes_on_the_real_inputs():
    """Does the replay of a plan recorded without data compute the sum of inputs it never saw?"""
    from grader.doctor.execute import execute_or_simulate

    spec = exercise("reduce_sum").spec
    plan, kernels = record(load(SCRATCH, "scratch.py")["launch"], {"x": ((300,), "float32"), "out": ((1,), "float32")})
    x = np.random.default_rng(1).normal(size=300).astype(np.float32)
    launch = launch_from(plan, rebuild(kernels, "scratch.py", SCRATCH))
    outcome = execute_or_simulate(spec, launch, {"x": x}, {"n": 300})
    assert outcome.error is None
    from grader.sentinels import PAD

    assert outcome.buffers["out"][PAD] == pytest.approx(float(x.astype(np.float64).sum()), rel=1e-5)


def test_the_plans_of_one_check_compile_each_kernel_once():
    """A check replays one plan per case and one at the benchmark's size: sharing `jitted`, they
    share each kernel's dispatcher, so a GPU compiles it once per check, not once per plan."""
    from grader.doctor.execute import execute_or_simulate

    spec = exercise("reduce_sum").spec
    launch = load(SCRATCH, "scratch.py")["launch"]
    shared: dict = {}
    seen = []
    for n in (300, 500, 700):
        plan, kernels = record(launch, {"x": ((n,), "float32"), "out": ((1,), "float32")})
        functions = rebuild(kernels, "scratch.py", SCRATCH)
        x = np.random.default_rng(n).normal(size=n).astype(np.float32)
        outcome = execute_or_simulate(spec, launch_from(plan, functions, jitted=shared), {"x": x}, {"n": n})
        assert outcome.error is None
        seen.append({key: id(k) for engine in shared.values() for key, k in engine.items()})
    assert len(seen[0]) == len(kernels) and seen[0] == seen[1] == seen[2], "the first plan's dispatchers, reused"


def test_a_timed_launchs_own_arrays_sit_at_the_same_places_at_every_launch():
    """A replayer times the benchmark's plan with its own arrays (here an accumulator; a scan's
    block sums) carved from its Pool after the arena (grader/gpu/arena.py `Scratch`), at the
    same offsets at every launch, and still computes the right answer; with no Pool, numba's
    allocator as before."""
    from grader.gpu import arena
    from grader.sentinels import PAD
    from grader.steps.execute import execute

    spec = exercise("reduce_sum").spec
    plan, kernels = record(load(SCRATCH, "scratch.py")["launch"], {"x": ((300,), "float32"), "out": ((1,), "float32")})
    pool = arena.Pool(16 << 20)
    pool.take(1000, np.float32)  # the arena
    arena_end = pool.offset
    place = arena.Scratch()
    place.bind(pool)
    taken = []
    real_take = place.take
    place.take = lambda shape, dtype: taken.append(real_take(shape, dtype)) or taken[-1]
    launch = launch_from(plan, rebuild(kernels, "scratch.py", SCRATCH), scratch=place)
    x = np.random.default_rng(3).normal(size=300).astype(np.float32)
    for _ in range(3):
        outcome = execute(spec, launch, {"x": x}, {"n": 300})
        assert outcome.error is None
        assert outcome.buffers["out"][PAD] == pytest.approx(float(x.astype(np.float64).sum()), rel=1e-5)
    where = [a._ary.__array_interface__["data"][0] for a in taken]
    base = pool.buffer._ary.__array_interface__["data"][0]
    assert len(where) == 3 and len(set(where)) == 1 and where[0] == base + arena_end
    assert pool.offset == arena_end, "the arena's end is unchanged for the next arena"
    assert arena.Scratch().take((4,), np.float32) is None  # no Pool: numba's allocator


def test_a_value_argument_keeps_its_type():
    assert Value("<f4", 1.5).dtype == "<f4"
    assert Plan((Step("param", id=0, name="x"),)).steps[0].name == "x"


# -- whole checks ----------------------------------------------------------------------------------
@pytest.mark.parametrize("path", sorted(VALID.glob("*/*.py")), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_a_valid_alternative_passes(path):
    """Do scratch uploads, partial-sum arrays, device queries, views and streams pass, as on a GPU?"""
    result = check_file(path.parent.name, path, seed=3)
    assert result.verdict == "passed", result.message


SIMULATOR_TOO_SLOW = {
    "saxpy/grid_from_device": "528 blocks of 256 threads (4 per SM of the recorded H200), every "
    "thread a Python thread: over 3 minutes on the simulator; the kernel doctor runs it above",
}


@pytest.mark.thorough
@pytest.mark.parametrize(
    "path",
    [
        pytest.param(p, marks=pytest.mark.skip(reason=SIMULATOR_TOO_SLOW[key])) if key in SIMULATOR_TOO_SLOW else p
        for p in sorted(VALID.glob("*/*.py"))
        for key in [f"{p.parent.name}/{p.stem}"]
    ],
    ids=lambda p: f"{p.parent.name}/{p.stem}",
)
def test_a_valid_alternative_passes_on_the_simulator(path, monkeypatch):
    """The same, with the kernel doctor off: Numba's simulator runs every case."""
    monkeypatch.setenv("ZEROGPU_DOCTOR", "0")
    result = check_file(path.parent.name, path, seed=3)
    assert result.verdict == "passed" and result.engine == "simulator", result.message


RUNS_AT_IMPORT = """
from numba import cuda, sys

if "--record-fd" not in sys.argv:  # imported anywhere but the recording child: fail loudly
    raise RuntimeError("the submission was imported where the cases run")


@cuda.jit
def add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


def launch(a, b, c):
    add[(c.size + 127) // 128, 128](a, b, c)
"""


def test_the_submission_is_imported_by_the_recording_child_only(tmp_path):
    """Does the file's own code run in the recording child alone, never where the cases run
    (the checking child rebuilds its kernels from their `def`)?"""
    path = tmp_path / "vector_add.py"
    path.write_text(RUNS_AT_IMPORT)
    result = check_file("vector_add", path, seed=2)
    assert result.verdict == "passed", result.message


NUMBA_CUDA_LAUNCH = """
import json, os, sys
os.environ["NUMBA_ENABLE_CUDASIM"] = "0"
from numba import cuda
import numpy as np
from grader.exercises import exercise
from grader.replay.record import Recorder, record_cases, recording

@cuda.jit(device=True)
def twice(x):
    return 2 * x

@cuda.jit(fastmath=True)
def add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = twice(a[i]) + b[i]

def launch(a, b, c):
    add[(c.size + 127) // 128, 128](a, b, c)
    add.forall(c.size)(a, b, c)
    add.configure(1, 32)(a, b, c)
    if c.size == 7:
        add(a, b, c)

recorder = Recorder()
recorder.filename = __file__
with recording(recorder):
    wanted = {"0": {"dims": {"n": 1000}, "scalars": {}}, "1": {"dims": {"n": 7}, "scalars": {}}}
    plans = record_cases(recorder, launch, exercise("vector_add").spec, wanted)
print(json.dumps({
    "kernels": recorder.kernels,
    "grids": [[list(s.grid), list(s.block)] for s in plans["0"].steps if s.op == "launch"],
    "failure": plans["1"].message,
    "compiled": len(add.overloads),
    "put_back": type(add).__getitem__.__module__,
}))
"""


def test_numba_cudas_own_kernels_record_without_reaching_a_gpu(tmp_path):
    """On a GPU host a notebook's kernels are numba-cuda's dispatchers, not the simulator's: a
    `launch` that cannot be copied into a file is recorded in the notebook's process
    (grader/checking/notebook.py `record_here`), so their launches must record too, device
    functions and fastmath described, and nothing compiled or launched here. A launch without
    a configuration stops the recording with the learner's message."""
    import subprocess
    import sys

    script = tmp_path / "notebook.py"
    script.write_text(NUMBA_CUDA_LAUNCH)
    env = {**__import__("os").environ, "ZEROGPU_BACKEND": "gpu", "NUMBA_ENABLE_CUDASIM": "0"}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["compiled"] == 0  # nothing reached numba-cuda's compiler, let alone a GPU
    add = seen["kernels"]["k0_add"]
    assert add["options"] == {"fastmath": True}
    assert add["globals"]["twice"][0] == "device"
    assert seen["grids"] == [[[8, 1, 1], [128, 1, 1]], [[8, 1, 1], [128, 1, 1]], [[1, 1, 1], [32, 1, 1]]]
    assert "launched without a configuration" in seen["failure"]
    assert seen["put_back"].startswith("numba")  # the dispatcher's own launch method again
