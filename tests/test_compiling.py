"""Kernels compiled ahead for a GPU's replayer (grader/children/compiling.py,
grader/replay/signatures.py, grader/compiler/prebuilt.py).

Here (no GPU) the compiling child runs as on a GPU host: it needs no device, only numba-cuda's
compiler. Linking what it answers in a replayer needs a GPU: tests/test_gpu.py.
"""

import base64
from pathlib import Path

import pytest

from grader.children.compiling import Compilers, compiled_ahead, requests_for
from grader.children.task import ReplayTask
from grader.checking.check import plans_wanted
from grader.replay.sources import hand_in_of, pinned
from grader.compiler.describe import describe_argument
from grader.compiler.prebuilt import arch_of, usable
from grader.containment import sandbox
from grader.exercises import LADDER, exercise
from grader.replay.plan import Message
from grader.replay.record import Recorder, record_cases, recording
from grader.replay.launch import launch_from, rebuild
from grader.replay.signatures import launch_types
from grader.steps.cases import prepare
from grader.steps.execute import launch_arguments
from grader.steps.load import load_launch

ROOT = Path(__file__).resolve().parent.parent
FILES = [ROOT / "solutions" / f"{i}.py" for i in LADDER] + sorted((ROOT / "tests" / "valid").glob("*/*.py"))
H200 = arch_of((9, 0))


def recorded(exercise_id: str, path: Path, prepared) -> Message:
    """The message a recording child would send for `path`'s cases (recorded in this process)."""
    ex = exercise(exercise_id)
    recorder = Recorder()
    recorder.filename = str(path)
    with recording(recorder):
        launch = load_launch(ex.spec, path.read_bytes(), str(path))
        plans = record_cases(recorder, launch, ex.spec, plans_wanted(ex, prepared), (str(path),))
    return Message(None, plans, pinned(recorder.kernels, hand_in_of(path)))  # as the grading process reads it


class _Spy:
    """Stands in for a kernel's dispatcher: notes the types of each launch's arguments."""

    def __init__(self, seen: list):
        self.seen = seen

    def __getitem__(self, config):
        return lambda *args: self.seen.append([describe_argument(a) for a in args]) if self.seen is not None else None


def exercise_of(path: Path) -> str:
    return path.stem if path.parent.name == "solutions" else path.parent.name


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_the_types_a_replayer_launches_each_kernel_with_are_read_from_the_plan(path):
    """For every solution and valid alternative, at every case: the types the walk over the plan
    predicts are the types of the arguments the replayer passes each kernel (what numba-cuda
    compiles for), views, scratch arrays and scalars included."""
    exercise_id = exercise_of(path)
    ex = exercise(exercise_id)
    prepared = prepare(ex, 5)
    message = recorded(exercise_id, path, prepared)
    import numba.cuda

    for p in prepared:
        plan = message.plans[str(p.index)]
        predicted = launch_types(plan, ex.spec, dict(p.case.dims))
        seen: dict = {key: [] for key in message.kernels}
        jitted = {id(numba.cuda): {key: _Spy(seen[key]) for key in message.kernels}}
        launch = launch_from(plan, rebuild(message.kernels, str(path)), jitted=jitted)
        kwargs, _ = launch_arguments(ex.spec, p.inputs, dict(p.case.dims))
        launch(**kwargs)
        actual = {key: [t for k, t in enumerate(types) if t not in types[:k]] for key, types in seen.items() if types}
        assert actual and predicted == actual, p.case.name


def test_a_walk_the_stand_ins_cannot_follow_stops_without_guessing():
    """A reshape of a strided view (numpy would copy it): launches after it are left to the
    replayer, and none is given a type it was not launched with."""
    from grader.replay.plan import Plan, Ref, Step

    spec = exercise("vector_add").spec
    plan = Plan(
        (
            Step("param", id=0, name="a"),
            Step("view", id=1, source=0, key=(slice(None, None, 2),)),
            Step("launch", kernel="k_first", grid=(1, 1, 1), block=(1, 1, 1), args=(Ref(1),)),
            Step("view", id=2, source=1, shape=(4, -1)),
            Step("launch", kernel="k_second", grid=(1, 1, 1), block=(1, 1, 1), args=(Ref(2),)),
        )
    )
    assert launch_types(plan, spec, {"n": 64}) == {"k_first": [[["array", "<f4", 1, "A"]]]}


def test_only_an_answer_for_this_device_that_links_nothing_in_is_used():
    answer = {"cubin": "f0VMRg==", "entry": "_Z3addPf", "links": False, "arch": list(H200)}
    assert usable(answer, (9, 0))
    assert not usable(answer, (8, 0)), "compiled for another GPU"
    assert not usable({**answer, "arch": [9, 0, ""]}, (9, 0)), "sm_90 where the replayer links sm_90a"
    assert not usable({**answer, "links": True}, (9, 0)), "NRT or a helper to link in from a file"


@pytest.mark.parametrize("sandboxed", [False, True])
def test_a_compiling_child_answers_with_each_kernels_cubin_for_each_type(sandboxed):
    """A check's kernels, compiled by a compiling child kept for the run: PTX for the replayer's
    target for each kernel and type the plans launch it with; a child that died is replaced."""
    if sandboxed and sandbox.unavailable() is not None:
        pytest.skip(str(sandbox.unavailable()))
    ex = exercise("reduce_sum")
    path = (
        ROOT
        / "tests"
        / "valid"
        / "reduce_sum"
        / sorted(p.name for p in (ROOT / "tests" / "valid" / "reduce_sum").glob("*.py"))[0]
    )
    prepared = prepare(ex, 5)
    message = recorded("reduce_sum", path, prepared)
    requests, kernels = requests_for(ex.spec, message, prepared, False, H200)
    assert requests and set(kernels) <= set(message.kernels)
    compilers = Compilers()
    try:
        compiled = compiled_ahead(
            compilers, ReplayTask(ex, None, message, tuple(prepared), 120.0, sandboxed=sandboxed), H200
        )
        assert sum(len(v) for v in compiled.values()) == len(requests)
        for answers in compiled.values():
            for answer in answers:
                assert usable(answer, (9, 0)) and base64.b64decode(answer["cubin"]).startswith(b"\x7fELF")
        (compiler,) = compilers._all
        compiler.proc.kill()
        compiler.proc.wait()
        again = compiled_ahead(
            compilers, ReplayTask(ex, None, message, tuple(prepared), 120.0, sandboxed=sandboxed), H200
        )
        assert again == compiled and len(compilers._all) == 1
    finally:
        compilers.stop()


def test_a_compiling_child_that_gives_no_answer_in_time_is_stopped_and_the_replayer_compiles():
    ex = exercise("vector_add")
    prepared = prepare(ex, 5)[:1]
    message = recorded("vector_add", ex.solution_file, prepared)
    compilers = Compilers()
    try:
        assert compiled_ahead(compilers, ReplayTask(ex, None, message, tuple(prepared), 0.001), H200) == {}
        assert compilers._all[0].proc is None, "stopped"
    finally:
        compilers.stop()


@pytest.mark.parametrize("exercise_id", ["vector_add", "scan"])
def test_an_exercises_references_are_compiled_ahead_for_the_dispatchers_the_replayer_holds(exercise_id):
    """The baseline's and the target's module-level kernels, each for the types it is launched
    with at the benchmark's size (a target's `view` of its arrays included), named by module and
    global so that the replayer finds its own dispatcher of the same name."""
    import sys

    from grader.children.compiling import Compiler, references_ahead

    compiler = Compiler(False, ())
    try:
        entries = references_ahead(compiler, exercise_id, H200, 300.0)
    finally:
        compiler.stop()
    exercise(exercise_id)  # its module, as the replayer has it
    named = {(e["module"], e["name"]) for e in entries}
    assert len(named) >= 2, "the baseline's kernel and the target's"
    for entry in entries:
        assert getattr(sys.modules[entry["module"]], entry["name"]) is not None
        assert usable(entry, (9, 0)) and base64.b64decode(entry["cubin"]).startswith(b"\x7fELF")


def test_a_learners_recording_still_refuses_a_view_of_a_device_array(tmp_path):
    """`view(dtype)` is read for types only when the grader records its own references."""
    from grader.replay.placeholders import NotOnTheDevice

    recorder = Recorder()
    with recording(recorder):
        x = recorder.start({"x": ((8,), "float32")}, {})["x"]
        with pytest.raises(NotOnTheDevice):
            x.view("uint32")


def test_references_compiled_ahead_land_in_the_replayers_inbox(tmp_path):
    """The grading process's side: once the replayer has said its target, each exercise's
    references are compiled by a compiling child and left in the inbox for the replayer."""
    import json

    from grader.children.folder import ARCH, REFERENCES
    from grader.children.compiling import Compiler
    from grader.children.replayers import _prepare_references

    (tmp_path / ARCH).write_text(json.dumps(list(H200)))
    compiler = Compiler(False, ())
    try:
        _prepare_references(compiler, tmp_path, exercises=("vector_add",))
    finally:
        compiler.stop()
    entries = json.loads((tmp_path / REFERENCES.format("vector_add")).read_text())
    assert entries and all(usable(e, (9, 0)) for e in entries)


def test_a_compiling_child_that_cannot_start_leaves_the_compile_to_the_replayer(monkeypatch):
    """No bubblewrap, no room for a process: the check goes on, its kernels compiled where they run."""
    from grader.children import compiling

    def cannot_start(*args, **kwargs):
        raise OSError("no process for you")

    monkeypatch.setattr(compiling, "start_serving", cannot_start)
    ex = exercise("vector_add")
    prepared = prepare(ex, 5)[:1]
    message = recorded("vector_add", ex.solution_file, prepared)
    compilers = Compilers()
    assert compiled_ahead(compilers, ReplayTask(ex, None, message, tuple(prepared), 30.0), H200) == {}
    compilers.stop()
