"""Turn an exception raised by a learner's code into something a learner can act on.

We never show a grader traceback: we find the innermost frame of the learner's own code,
the source line, the CUDA thread and block (the simulator prefixes them), and for an
out-of-range index, which array and how big it is.
"""

from __future__ import annotations

import linecache
import re
import sysconfig
import traceback
from dataclasses import asdict, dataclass
from pathlib import Path

from grader.steps import compile_errors
from grader.result.stored import rebuilt

_GRADER_DIR = str(Path(__file__).resolve().parent)
_LIBRARY_DIRS = tuple(
    str(Path(p).resolve()) for p in {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"]}
)
_THREAD = re.compile(r"^tid=\[([\d, ]+)\] ctaid=\[([\d, ]+)\]:\s*")
_OUT_OF_RANGE = re.compile(r"index (-?\d+) is out of bounds for axis (\d+) with size (\d+)")


@dataclass(frozen=True)
class ErrorInfo:
    """A learner-facing account of one failure."""

    verdict: str
    """"exception", "out_of_bounds" or "crashed"."""
    message: str
    error_type: str = ""
    line: int | None = None
    source: str = ""
    """The learner's source line where it happened."""
    thread: tuple | None = None
    block: tuple | None = None
    hint: str = ""
    """The fix for this particular mistake, when it is known (else the verdict's hint)."""
    mistake: str = ""
    """This mistake by name (grader.result.MISTAKES), when it is known."""

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "ErrorInfo":
        return rebuilt(cls, data, tuples=("thread", "block"))


def is_learner_frame(filename: str, learner_files=()) -> bool:
    if learner_files:
        return filename in learner_files
    path = str(Path(filename).resolve()) if not filename.startswith("<") else filename
    if path.startswith(_GRADER_DIR) or "site-packages" in path:
        return False
    return not any(path.startswith(d) for d in _LIBRARY_DIRS)


def _learner_frame(exc: BaseException, learner_files):
    """Innermost traceback frame in the learner's code, or None."""
    found = None
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        if is_learner_frame(frame.f_code.co_filename, learner_files):
            found = (frame, lineno)
    return found


def _dims(text: str) -> tuple:
    return tuple(int(v) for v in text.split(","))


def _launch_rank(exc: BaseException) -> int | None:
    """1, 2 or 3: how many dimensions the simulator launch used (from its block manager)."""
    for frame, _ in traceback.walk_tb(exc.__traceback__):
        for value in frame.f_locals.values():
            grid, block = getattr(value, "_grid_dim", None), getattr(value, "_block_dim", None)
            if grid is not None and block is not None:
                sizes = [max(g, b) for g, b in zip(grid, block)]
                return max([i + 1 for i, size in enumerate(sizes) if size > 1] + [1])
    return None


def _shown_dims(thread: tuple, block: tuple, rank: int | None) -> tuple[tuple, tuple]:
    """As many components as the launch has dimensions (x only for a 1-D launch)."""
    if rank is None:
        rank = 3
        while rank > 1 and thread[rank - 1] == 0 and block[rank - 1] == 0:
            rank -= 1
    return thread[:rank], block[:rank]


def _fmt(values: tuple) -> str:
    return str(values[0]) if len(values) == 1 else "(" + ", ".join(map(str, values)) + ")"


def _which_array(frame, source: str, axis: int, size: int, write: bool) -> str | None:
    """The subscripted name on the source line whose shape matches the error: on the left
    of the assignment for a write, on the right (then anywhere) for a read."""
    if frame is None:
        return None
    assign = re.search(r"(?<![=!<>])=(?!=)", source)
    lhs, rhs = (source[: assign.start()], source[assign.end() :]) if assign else (source, source)
    parts = [lhs] if write else [rhs, lhs]
    for part in parts:
        for name in re.findall(r"([A-Za-z_]\w*)\s*\[", part):
            value = frame.f_locals.get(name)
            shape = getattr(value, "shape", None)
            if shape is not None and len(shape) > axis and shape[axis] == size:
                return name
    return None


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _was_write(exc: BaseException) -> bool:
    names = [f.f_code.co_name for f, _ in traceback.walk_tb(exc.__traceback__)]
    return "__setitem__" in names


def _refused_by_the_compiler(exc: BaseException, learner_files) -> ErrorInfo | None:
    """A GPU's own compile of a kernel failed (numba-cuda's TypingError and kin): the same
    words as the compile check gives without a GPU, at the learner's line."""
    if not type(exc).__module__.startswith("numba.core.errors"):
        return None
    text = compile_errors.ANSI.sub("", str(exc))
    returns = "void return type" in text
    line = source = None
    for path, number in compile_errors.FILE_LINE.findall(text):
        if any(path.endswith(Path(f).name) for f in learner_files):
            line, source = int(number), linecache.getline(path, int(number)).strip()
    misspelt = None if returns else missing_attribute(exc, text)
    reason, hint = misspelt if misspelt else (compile_errors.why("the kernel", text, returns), "")
    return ErrorInfo(
        "exception", f"A GPU would not compile your kernel: {reason}", type(exc).__name__, line, source or "", hint=hint
    )


def explain_exception(exc: BaseException, learner_files=(), arguments=None) -> ErrorInfo:
    if isinstance(getattr(exc, "learner_info", None), ErrorInfo):  # grader/compiler's refusals
        return exc.learner_info
    refused = _refused_by_the_compiler(exc, learner_files)
    if refused is not None:
        return refused
    text = str(exc)
    thread = block = None
    match = _THREAD.match(text)
    if match:
        thread, block = _shown_dims(_dims(match.group(1)), _dims(match.group(2)), _launch_rank(exc))
        text = text[match.end() :]
    found = _learner_frame(exc, learner_files)
    frame, line = found if found else (None, None)
    source = linecache.getline(frame.f_code.co_filename, line).strip() if frame else ""
    error_type = type(exc).__name__
    who = f"thread {_fmt(thread)} of block {_fmt(block)}" if thread else "your code"

    oob = _OUT_OF_RANGE.search(text) if isinstance(exc, IndexError) else None
    if oob:
        index, axis, size = (int(g) for g in oob.groups())
        write = _was_write(exc)
        name = _which_array(frame, source, axis, size, write) or "an array"
        verb = "wrote" if write else "read"
        value = frame.f_locals.get(name) if frame is not None else None
        ndim = len(getattr(value, "shape", ())) or 1
        if ndim == 1:
            shown, extent = f"`{name}[{index}]`", _plural(size, "element")
            guard = "`if i < n:`"
        else:
            what = (
                {0: "row", 1: "column"}.get(axis, f"index along axis {axis}")
                if ndim == 2
                else f"index along axis {axis}"
            )
            shown = f"{what} {index} of `{name}`"
            extent = (
                (_plural(size, "row") if axis == 0 else _plural(size, "column"))
                if ndim == 2
                else f"size {size} on axis {axis}"
            )
            guard = "`if row < rows and col < cols:`"
        message = f"{who} {verb} {shown}, but `{name}` has {extent} — is your bounds guard right (e.g. {guard})?"
        mistake = "negative_index" if index < 0 else "missing_bounds_guard"
        hint = bounds_hint(name, index, size, guard)
        return ErrorInfo("out_of_bounds", message, error_type, line, source, thread, block, hint, mistake=mistake)

    verdict = getattr(exc, "learner_verdict", None)
    if verdict:  # a refusal raised at run time (e.g. grader/replay/record.py: host code reading device data)
        message = f"{who}: {text.strip()}" if thread else text.strip()[:1].upper() + text.strip()[1:]
        hint = getattr(exc, "learner_hint", "")
        return ErrorInfo(verdict, message, error_type, line, source, thread, block, hint, refusal_mistake(exc, text))

    if _looks_like_crash(exc):
        message = f"The GPU reported an error that ends the program: {text.strip()}"
        if "ILLEGAL_ADDRESS" in text or "illegal memory" in text:
            # On a GPU nothing checks indices: a far-off index shows up only as this.
            message += (
                " — a thread read or wrote memory outside every array. On a GPU "
                "indices are not checked: is your bounds guard right, and does "
                "every index stay within its array's shape?"
            )
        return ErrorInfo("crashed", message, error_type, line, source, thread, block)

    missing = missing_attribute(exc, text)
    if missing is not None:
        message, hint = missing
        return ErrorInfo("exception", f"{who}: {message}", error_type, line, source, thread, block, hint)
    if isinstance(exc, MemoryError):
        message = f"{who} ran out of memory — is a launch configuration or an allocation far larger than the data?"
        return ErrorInfo("exception", message, error_type, line, source, thread, block)
    message = f"{who} raised {error_type}: {text.strip()}"
    return ErrorInfo("exception", message, error_type, line, source, thread, block)


_NO_BLOCKS = re.compile(r"the grid has 0 blocks along")
"""A launch refusal's words for a grid of no block (grader/compiler/dispatch.py `check_launch`)."""


def refusal_mistake(exc: BaseException, text: str) -> str:
    """The mistake a refusal raised at run time names: its own `learner_mistake`, else a launch
    of no block at all, `n // threads` rounded down ("unwritten_tail", as the same launch leaves
    the tail unwritten once n ≥ threads); "" when it names none."""
    named = getattr(exc, "learner_mistake", "")
    if named:
        return named
    return "unwritten_tail" if _NO_BLOCKS.search(text) else ""


def bounds_hint(name: str, index: int, size: int, guard: str) -> str:
    """The fix for an index outside an array, from where it landed."""
    if index < 0:
        return (
            f"An index below 0 reached `{name}`: a neighbour's offset such as `i - 1` needs its own "
            "guard where it would leave the array (`if i > 0:`), or the edge's value handled apart."
        )
    if index == size:
        return (
            f"Index {size} is the first one past the end of `{name}` (its last is {size - 1}): a guard "
            f"`<=` instead of `<`, or none, lets that thread through. Guard every access with {guard} "
            "(in a grid-stride loop, `range(start, n, stride)` stops before n)."
        )
    return (
        f"Threads past the end of `{name}` reached the access unguarded: a grid rounded up to whole "
        f"blocks has more threads than elements, so every thread checks {guard} first."
    )


def _looks_like_crash(exc: BaseException) -> bool:
    text = str(exc)
    return type(exc).__name__ in ("CudaAPIError", "CudaDriverError") or any(
        marker in text for marker in ("ILLEGAL_ADDRESS", "LAUNCH_FAILED", "MISALIGNED_ADDRESS", "illegal memory")
    )


_NO_ATTRIBUTE = re.compile(
    r"'(\w+)' object has no attribute '(\w+)'|module '([\w.]+)' has no attribute '(\w+)'"
    r"|Unknown attribute '(\w+)' of type Module\(<module '([\w.]+)'"
)
_CUDA_TYPES = {
    "FakeCUDAModule": "cuda",
    "FakeCUDAAtomic": "cuda.atomic",
    "FakeCUDAShared": "cuda.shared",
    "FakeCUDALocal": "cuda.local",
    "FakeCUDAConst": "cuda.const",
    "FakeCuda": "cuda",
}
"""The simulator's and the doctor's stand-ins for numba.cuda and its namespaces, as a learner
writes them."""
KERNEL_NAMES = (
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "grid",
    "gridsize",
    "syncthreads",
    "shared",
    "local",
    "const",
    "atomic",
    "threadfence",
    "threadfence_block",
    "warpsize",
    "laneid",
    "jit",
    "to_device",
    "device_array",
    "device_array_like",
    "synchronize",
    "shfl_sync",
    "shfl_down_sync",
    "shfl_up_sync",
    "shfl_xor_sync",
    "all_sync",
    "any_sync",
    "ballot_sync",
    "activemask",
    "selp",
    "fma",
    "cbrt",
    "popc",
    "clz",
    "ffs",
    "brev",
)
"""Names a kernel reaches for in numba.cuda, for suggestions whichever engine ran."""


def _public_names(obj) -> list:
    return [n for n in dir(obj) if not n.startswith("_")] if obj is not None else []


def missing_attribute(exc: BaseException, text: str) -> tuple[str, str] | None:
    """("cuda has no `threadidx`; did you mean `threadIdx`?", hint) for a misspelt attribute of
    numba.cuda (or of any object), in the project's words rather than the simulator's class names."""
    import difflib  # noqa: PLC0415 - only for a misspelt name; out of `import grader`

    match = _NO_ATTRIBUTE.search(text)
    if match is None:
        return None
    type_name, name = match.group(1), match.group(2)
    module = match.group(3) or match.group(6)
    name = name or match.group(4) or match.group(5)
    owner = _CUDA_TYPES.get(type_name or "")
    if module in ("numba.cuda", "cuda"):
        owner = "cuda"
    candidates = _public_names(getattr(exc, "obj", None))
    if owner == "cuda":
        import numba.cuda

        candidates = list(dict.fromkeys([*KERNEL_NAMES, *_public_names(numba.cuda), *candidates]))
    owner = owner or (module.rsplit(".", 1)[-1] if module else f"a {type_name}")
    if name in candidates:  # not a misspelling: numba.cuda has it, the simulator that ran does not
        if owner != "cuda":
            return None
        return (
            f"`cuda.{name}` exists on a GPU, but Numba's CUDA simulator, which ran this kernel "
            "because the kernel doctor could not, does not have it.",
            "The result's doctor section says why the doctor did not run the kernel; on a GPU, "
            f"`cuda.{name}` works as written.",
        )
    same = [c for c in candidates if c.lower() == name.lower()]
    close = same or difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    guess = f"; did you mean `{close[0]}`?" if close else "."
    message = f"{owner} has no `{name}`{guess}"
    hint = (
        f"Names are case-sensitive: write `{owner}.{close[0]}`."
        if same
        else f"Write `{owner}.{close[0]}`."
        if close
        else f"Check the spelling of `{owner}.{name}` against the lesson's examples."
    )
    if owner.startswith("cuda"):
        hint += " The ones kernels use most: cuda.threadIdx, cuda.blockIdx, cuda.blockDim, cuda.grid(1), cuda.syncthreads()."
    return message, hint
