"""A plan made into a `launch` of grader code alone: the trusted replayer's side.

`launch_from(plan, functions)` returns a plain function with `launch`'s keyword parameters. It
never imports or runs the submission's module: the kernels it launches are `functions`, each
rebuilt from its `def` alone (`rebuild`; decorators, defaults and annotations never evaluated,
globals only the frozen constants of the description). Which engine runs them is chosen when
it is called: the CUDA module it holds is numba's (a GPU, or the simulator), and the kernel
doctor swaps it for its own as it does for a learner's `launch` (grader/doctor/rebind.py), so
one plan runs on every engine. Before the doctor or the simulator runs a kernel, Numba's real
compiler types it for the launch's arguments (grader/compiler/client.py): device code cannot
reach a Python object, so running its source on the CPU is running the kernel.
"""

from __future__ import annotations

import copy
import linecache

import numpy as np

from grader.backend import current
from grader.compiler.prebuilt import install
from grader.compiler.server import Opaque, argument_type, build_function
from grader.replay.plan import Param, Plan, Ref, Value


class RebuildError(Exception):
    """A kernel's description could not be made into a function: a kernel a GPU cannot compile
    (a default argument, a global that is not a constant), or a description no recording child
    of ours makes. `line`: the kernel's `def`, when known."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.message, self.line = message, line


def rebuild(kernels: dict, filename: str | None, source: str | None = None) -> dict:
    """kernel key -> the plain Python function of its `def`, compiled as from `filename` (the
    submission's name, for messages), with the file's text (`source`, else the kernels' own lines)
    registered for tracebacks and the doctor; never executed. `filename` None: each kernel keeps
    the file it names (a notebook's cells, recorded in the learner's own process)."""
    texts: dict = {}
    functions = {}
    for key, desc in kernels.items():
        desc = _named(desc, filename, texts)
        name = key.split("_", 1)[-1]
        try:
            functions[key] = build_function(desc)
        except Opaque as why:
            fix = f" Fix: {why.fix}." if why.fix else ""
            raise RebuildError(
                f"Your kernel `{name}` cannot be compiled the way a GPU compiles it: {why.what}. A GPU "
                f"refuses such a kernel, and the grader runs only kernels it can compile.{fix}",
                int(desc["firstline"]),
            ) from None
        except RecursionError:
            raise RebuildError(
                f"Your kernel `{name}` nests too deeply to be compiled.", int(desc["firstline"])
            ) from None
        except Exception as exc:  # noqa: BLE001 - whatever the description holds, it is data
            raise RebuildError(
                f"Kernel `{name}` could not be rebuilt ({type(exc).__name__}: {str(exc)[:300]})."
            ) from None
    for file, lines in texts.items():
        if file == filename and source is not None:
            linecache.cache[file] = (len(source), None, source.splitlines(True), file)
        else:
            text = [lines.get(number, "") + "\n" for number in range(1, max(lines, default=0) + 1)]
            linecache.cache[file] = (0, None, text, file)
    return functions


def _named(desc: dict, filename: str | None, texts: dict) -> dict:
    """The description with the grader's file name in place of the one it came with (device
    functions too; kept when `filename` is None), its lines noted at their places in their file
    (`texts`: file -> line number -> text)."""
    desc = copy.deepcopy(desc)
    todo = [desc]
    while todo:
        d = todo.pop()
        if filename is not None:
            d["filename"] = filename
        lines = texts.setdefault(d["filename"], {})
        for offset, line in enumerate(str(d["source"]).splitlines()):
            lines.setdefault(int(d["firstline"]) + offset, line)
        todo += [v[1] for v in d["globals"].values() if v[0] == "device"]
    return desc


def launch_from(
    plan: Plan,
    functions: dict,
    options: dict | None = None,
    filename: str = "<plan>",
    jitted: dict | None = None,
    scratch=None,
    compiled: dict | None = None,
):
    """`launch(**kwargs)` that does what the plan says on the arrays it is given. Each kernel
    launch runs as a line of `filename` at the line that launched it while recording, so that an
    error there (a refused launch, a kernel that faults) names the learner's line. `jitted`: the
    dispatchers of the plans of one check, shared, so that a kernel compiles once for all its
    cases and the benchmark rather than once per plan (on a GPU, most of a check's time).
    `scratch` (grader/gpu/harness.py `Scratch`): where the plan's own device arrays go on
    numba's engine, at the same places at every launch; where it has no room, numba's allocator.
    `compiled`: kernel key -> its code compiled ahead for the types it is launched with
    (grader/compiler/prebuilt.py), used on a GPU only; other launches compile here."""
    import numba.cuda as cuda_module

    compiled = compiled if compiled and current() == "gpu" else {}

    options = options or {}
    built: dict = {} if jitted is None else jitted
    at_line = {
        step.line: compile("\n" * (step.line - 1) + "kernel[config](*arguments)", filename, "eval")
        for step in plan.steps
        if step.op == "launch" and step.line
    }
    plain = compile("kernel[config](*arguments)", "<plan>", "eval")

    def launch(**kwargs):
        cuda = cuda_module  # the doctor's own when the doctor runs it (grader/doctor/rebind.py)
        kernels = built.setdefault(id(cuda), {})
        buffers: dict = {}
        placed = scratch if scratch is not None and cuda is cuda_module else None
        if placed is not None:
            placed.start()
        for step in plan.steps:
            if step.op == "param":
                buffers[step.id] = kwargs[step.name]
            elif step.op in ("alloc", "upload"):
                taken = placed.take(step.shape, np.dtype(step.dtype)) if placed is not None else None
                if taken is None:
                    taken = cuda.device_array(step.shape, np.dtype(step.dtype))
                if step.op == "upload":
                    taken.copy_to_device(_host(step.data, step.dtype, step.shape))
                buffers[step.id] = taken
            elif step.op == "fill":
                target = buffers[step.target]
                target[(slice(None),) if target.ndim else ()] = step.value
            elif step.op == "copy":
                buffers[step.target].copy_to_device(buffers[step.source])
            elif step.op == "write":
                target = buffers[step.target]
                target.copy_to_device(_host(step.data, step.dtype, target.shape).astype(target.dtype, copy=False))
            elif step.op == "view":
                source = buffers[step.source]
                buffers[step.id] = source.reshape(step.shape) if step.shape else source[step.key]
            elif step.op == "launch":
                kernel = kernels.get(step.kernel)
                if kernel is None:
                    jit_options = dict(options.get(step.kernel, {}))
                    declared = jit_options.pop("signatures", None)
                    jit = cuda.jit(_signatures(declared), **jit_options) if declared else cuda.jit(**jit_options)
                    kernel = kernels[step.kernel] = jit(functions[step.kernel])
                    if step.kernel in compiled and not declared and cuda is cuda_module:
                        install(kernel, compiled[step.kernel], bool(jit_options.get("fastmath")))
                config = (step.grid, step.block) if not step.shared else (step.grid, step.block, 0, step.shared)
                arguments = tuple(_argument(a, buffers, kwargs) for a in step.args)
                code = at_line.get(step.line, plain)
                eval(code, {"kernel": kernel, "config": config, "arguments": arguments})  # noqa: S307 - our own line

    return launch


def _signatures(declared: list) -> list:
    """Declared signatures (argument descriptions, grader/compiler/dispatch.py) as numba's
    `void(...)` signatures for `cuda.jit`."""
    from numba.core import types

    return [types.void(*(argument_type(d) for d in signature)) for signature in declared]


def _host(data: bytes, dtype: str, shape: tuple) -> np.ndarray:
    return np.frombuffer(data, dtype=np.dtype(dtype)).reshape(shape).copy()


def _argument(arg, buffers: dict, kwargs: dict):
    if isinstance(arg, Ref):
        return buffers[arg.id]
    if isinstance(arg, Param):
        return np.dtype(arg.dtype).type(kwargs[arg.name])
    if isinstance(arg, Value):
        return value_of(arg)
    return tuple(_argument(a, buffers, kwargs) for a in arg)


def value_of(arg: Value):
    """A number the host code passed, as the replayer passes it (what numba-cuda types)."""
    if arg.dtype in ("<i8", "<f8", "<c16", "|b1", "?") and not isinstance(arg.value, np.generic):
        return arg.value  # a Python number, typed as numba types one (int64, float64)
    return np.dtype(arg.dtype).type(arg.value)
