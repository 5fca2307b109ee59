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
from grader.backend.simulator import fresh
from grader.compiler.prebuilt import install
from grader.compiler.describe import DESCRIPTION, jit_python_function
from grader.compiler.rebuild import Opaque, argument_type, build_function
from grader.replay.plan import Param, Plan, Ref, Value
from grader.replay.sources import HandIn, NotInHandIn, pinned


class RebuildError(Exception):
    """A kernel's description could not be made into a function: a kernel a GPU cannot compile
    (a default argument, a global that is not a constant), or a description no recording child
    of ours makes. `line`: the kernel's `def`, when known."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.message, self.line = message, line


def rebuild(kernels: dict, filename: str | None, source: str | None = None) -> dict:
    """kernel key -> the plain Python function of its `def`, compiled as from `filename` (the
    submission's name, for messages); never executed. With the hand-in's text (`source`), each
    `def` is taken from it (grader/replay/sources.py), whatever text a description carries, and
    that text is registered for tracebacks, the compile check and the doctor: every engine reads
    the one text. `filename` None: each kernel keeps the file and text it names (a notebook's
    cells, recorded in the learner's own process). Each function keeps the description it was
    built from (`DESCRIPTION`): the compile check compiles exactly that."""
    if filename is not None and source is not None:
        try:
            kernels = pinned(kernels, HandIn(source, filename))
        except NotInHandIn as why:
            raise RebuildError(f"{str(why)[:1].upper()}{str(why)[1:]}.") from None
    texts: dict = {}
    functions = {}
    for key, desc in kernels.items():
        desc = _named(desc, filename, texts)
        name = key.split("_", 1)[-1]
        try:
            functions[key] = _built(desc)
        except Opaque as why:
            fix = f" Fix: {why.fix}." if why.fix else ""
            who = (
                "The grader cannot replay it, so it did not run it (a GPU would)."
                if why.grader
                else "A GPU refuses such a kernel, and the grader runs only kernels it can compile."
            )
            raise RebuildError(
                f"Your kernel `{name}` cannot be compiled the way a GPU compiles it: {why.what}. {who}{fix}",
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


def _built(desc: dict):
    """The kernel's function (build_function), with its description and its device functions' kept."""
    function = build_function(desc)
    _keep_descriptions(function, desc)
    return function


def _keep_descriptions(function, desc: dict, depth: int = 0) -> None:
    setattr(function, DESCRIPTION, desc)
    for name, value in desc["globals"].items():
        found = jit_python_function(function.__globals__.get(name)) if value[0] == "device" else None
        if found is not None and depth < 16:
            _keep_descriptions(found[0], value[1], depth + 1)


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
    `scratch` (grader/gpu/arena.py `Scratch`): where the plan's own device arrays go on
    numba's engine, at the same places at every launch; where it has no room, numba's allocator.
    `compiled`: kernel key -> its code compiled ahead for the types it is launched with
    (grader/compiler/prebuilt.py), used on a GPU only; other launches compile here."""
    import numba.cuda as cuda_module

    compiled = compiled if compiled and current() == "gpu" else {}

    options = options or {}
    built: dict = {} if jitted is None else jitted
    plain = compile("kernel[config](*arguments)", "<plan>", "eval")
    in_file = compile("kernel[config](*arguments)", filename, "eval")
    at_line = {  # a line of the learner's file, without compiling that many lines
        step.line: in_file.replace(co_firstlineno=step.line) for step in plan.steps if step.op == "launch" and step.line
    }

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
                buffers[step.id] = _allocated(step, cuda, placed, cuda is cuda_module)
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


def _allocated(step, cuda, placed, numbas: bool):
    """A plan's allocation or upload. An allocation holds one value (grader/sentinels.py
    `fresh_value`) on every engine until a kernel writes it (the doctor's own arrays do; numba's
    are filled here): a kernel that reads memory nothing wrote reads the same values on a GPU,
    the doctor and the simulator, and on each rerun of a case, so it gets one verdict everywhere
    (`wrong_result`, the doctor naming the read), never a `race` on one engine by the luck of
    what a fresh allocation held. A timed plan's arrays (`placed`) stay as they are: a fill
    there would be timed."""
    dtype = np.dtype(step.dtype)
    taken = placed.take(step.shape, dtype) if placed is not None else None
    if taken is None:
        taken = cuda.device_array(step.shape, dtype)
    if step.op == "upload":
        taken.copy_to_device(_host(step.data, step.dtype, step.shape))
    elif placed is None and numbas and taken.size:
        taken.copy_to_device(fresh(step.shape, dtype))
    return taken


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
