"""An exercise's baseline and target kernels, compiled ahead for a GPU's replayer.

The replayer compiled every exercise's references at its first timed check: 14 s of an
H200's class run, all of it spent while the GPU waited (docs/BENCHMARKS.md, "Class pace"). A
compiling child now builds them at the run's start, from grader code alone: it records the
baseline's and the target's launches at the benchmark's size on placeholders (the recording
CUDA API, grader/replay/record.py), reads the types each kernel is launched with from the plan
(grader/replay/signatures.py) and compiles each module-level dispatcher's kernel as numba-cuda
would (grader/compiler/server.py `compiled_ahead`). The replayer adds them to its own
dispatchers of the same name (`install_references`) before it warms the references up; a
kernel not among them compiles there, as before.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from grader.compiler.prebuilt import install
from grader.compiler.rebuild import argument_type
from grader.compiler.server import compiled_ahead, compiles_ahead
from grader.exercises import ROOT, exercise
from grader.replay.record import Recorder, recording
from grader.replay.signatures import launch_types
from grader.steps.cases import prepare

KERNELS = ROOT / "kernels"


def _kernel_modules() -> list:
    """The loaded modules of kernels/ (an exercise's references may use another's)."""
    return [m for m in list(sys.modules.values()) if _in_kernels(getattr(m, "__file__", None))]


def _in_kernels(path) -> bool:
    try:
        return path is not None and Path(path).resolve().parent == KERNELS.resolve()
    except OSError:
        return False


def _named(dispatcher) -> tuple | None:
    """(module, global name) of a module-level dispatcher of kernels/, else None."""
    for module in _kernel_modules():
        for name, value in vars(module).items():
            if value is dispatcher:
                return module.__name__, name
    return None


def references_compiled(exercise_id: str, arch: tuple) -> list:
    """[{"module", "name", "args", "cubin", "entry", "links", "arch"}]: each module-level kernel
    the baseline and the target launch at the benchmark's size, compiled for each type it is
    launched with. A reference the recording cannot follow is left out (compiled where it runs)."""
    ex = exercise(exercise_id)
    if ex.spec.benchmark is None:
        return []
    dims = dict(ex.spec.benchmark.dims)
    first = prepare(ex, 0)[0]
    params = {a.name: (a.shape_for(dims), a.dtype) for a in ex.spec.arrays}
    scalars = {s.name: np.dtype(s.dtype).type(np.asarray(first.inputs[s.name]).item()) for s in ex.spec.scalars}
    entries = []
    for reference in (ex.baseline, ex.target):
        recorder = Recorder()
        recorder.types_only = True
        try:
            with recording(recorder):
                reference(**recorder.start(params, scalars))
                plan = recorder.finish()
        except Exception:  # noqa: BLE001 - what the recorder refuses compiles in the replayer
            continue
        for key, types in launch_types(plan, ex.spec, dims).items():
            dispatcher = recorder.dispatchers.get(key)
            where = _named(dispatcher)
            options = getattr(dispatcher, "targetoptions", None)  # None: the simulator's kernel
            if where is None or options is None or not compiles_ahead(options):
                continue
            for args in types:
                argtypes = tuple(argument_type(a) for a in args)
                code = compiled_ahead(
                    dispatcher.py_func, argtypes, arch, bool(dispatcher.targetoptions.get("fastmath"))
                )
                entries.append({"module": where[0], "name": where[1], "args": args, **code})
    return entries


def install_references(entries: list) -> int:
    """Add compiled references to this process's dispatchers of the same module and name (a
    module of kernels/ only); how many kernels were added."""
    from numba.cuda.dispatcher import CUDADispatcher

    added = 0
    for entry in entries:
        module = sys.modules.get(str(entry.get("module")))
        dispatcher = getattr(module, str(entry.get("name")), None) if module is not None else None
        if not _in_kernels(getattr(module, "__file__", None)) or not isinstance(dispatcher, CUDADispatcher):
            continue
        added += install(dispatcher, [entry], bool(dispatcher.targetoptions.get("fastmath")))
    return added
