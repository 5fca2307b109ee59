"""What numba-cuda and the driver check when a kernel is launched, checked the same way on the
CPU engines, with the GPU's error.

- **Declared signatures.** `@cuda.jit("void(float64[:], float64[:])")` compiles eagerly and then
  stops compiling (numba-cuda's `decorators.jit`: `disp.disable_compile()`); a launch picks the
  declared signature its arguments convert to (numba's type conversion rules: an array only to
  the same dtype and dimensions, a C array to any layout; a number to any number) and is
  otherwise refused with `TypeError: No matching definition for argument type(s) ...`
  (`_explain_matching_error` in numba-cuda's dispatcher.py).
- **Launch limits** (CUDA's programming guide, "Technical Specifications", every compute
  capability numba-cuda supports): a block at most 1024 × 1024 × 64 threads and 1024 in all; a
  grid at most 2³¹−1 × 65,535 × 65,535 blocks; no dimension 0; dynamic shared memory at most
  48 KiB, and static plus dynamic at most 48 KiB when there is any dynamic, since numba-cuda
  never opts a kernel into more (it sets no `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`):
  the driver answers `cuLaunchKernel` with CUDA_ERROR_INVALID_VALUE. Static shared memory alone
  is bounded by what the target's toolchain builds (`STATIC_SHARED_BYTES`).
"""

from __future__ import annotations

import numpy as np

from grader.compiler.describe import describe_argument

MAX_BLOCK = (1024, 1024, 64)
MAX_THREADS_PER_BLOCK = 1024
MAX_GRID = ((1 << 31) - 1, 65535, 65535)
SHARED_BYTES_PER_BLOCK = 48 * 1024
"""Without opting in (numba-cuda does not), on sm_50 to sm_120 alike: the most dynamic shared
memory a launch may ask for (measured on an NVIDIA H100, 2026-12-07, numba-cuda 0.30.4, driver
580.159.04, `python bench/engine_probes.py`: 48 KiB ran, 48 KiB + 4 bytes was refused with
CUDA_ERROR_INVALID_VALUE)."""
STATIC_SHARED_BYTES = {(9, 0): 232448}
"""The static shared memory (`cuda.shared.array` of a fixed size) a kernel may declare, by the
target's compute capability, where more than 48 KiB builds: on an H100 a 64 KiB static array
built and ran with numba-cuda (same measurement); the bound is the device's own per-block limit
(sharedMemPerBlockOptin, 227 KiB on sm_90). Elsewhere 48 KiB, the CUDA linker's limit
("too much shared data ... 0xc000 max"), unmeasured on a GPU of those targets."""


def static_shared_limit(cc) -> int:
    """Bytes of static shared memory a kernel built for compute capability `cc` may declare."""
    return STATIC_SHARED_BYTES.get(tuple(cc or ())[:2], SHARED_BYTES_PER_BLOCK)


AXES = "xyz"


class LaunchRefused(ValueError):
    """A launch a GPU refuses: explained as an `exception` at the launch's line."""

    learner_verdict = "exception"

    def __init__(self, message: str, hint: str, mistake: str = ""):
        super().__init__(message)
        self.learner_hint = hint
        self.learner_mistake = mistake
        """The mistake it names (grader/result `MISTAKES`): a grid of no block is "unwritten_tail",
        the rounded-down block count that leaves a tail unwritten once n ≥ threads."""


# -- declared signatures --------------------------------------------------------------------------
def signature_types(argtypes) -> tuple:
    """A declared signature's numba argument types as the compile check's argument descriptions."""
    return tuple(_described(t) for t in argtypes)


def _described(numba_type) -> list:
    from numba.core import types
    from numba.np.numpy_support import as_dtype

    if isinstance(numba_type, types.Array):
        return ["array", as_dtype(numba_type.dtype).str, numba_type.ndim, numba_type.layout]
    if isinstance(numba_type, (types.Number, types.Boolean)):
        return ["scalar", as_dtype(numba_type).str]
    if isinstance(numba_type, types.BaseTuple):
        return ["tuple", [_described(t) for t in numba_type.types]]
    return ["opaque", str(numba_type)]


def _conversion(launched, declared):
    """numba's conversion kind from a launched argument's type to a declared one (None: none)."""
    from numba.core.typing.context import Context

    from grader.compiler.rebuild import Opaque, argument_type  # noqa: PLC0415 - only for declared signatures; out of `import grader`

    try:
        return Context().can_convert(argument_type(launched), argument_type(declared))
    except Opaque:
        return None


def matching_signature(signatures, launched: list):
    """The declared signature (argument descriptions) a launch's arguments fit best, or None."""
    best, best_cost = None, None
    for declared in signatures:
        if len(declared) != len(launched):
            continue
        kinds = [_conversion(a, d) for a, d in zip(launched, declared)]
        if any(k is None for k in kinds):
            continue
        cost = max((int(k) for k in kinds), default=0)
        if best_cost is None or cost < best_cost:
            best, best_cost = declared, cost
    return best


def shown_type(desc) -> str:
    """An argument description as numba prints the type (`array(float32, 1d, C)`)."""
    kind = desc[0]
    if kind == "array":
        return f"array({np.dtype(desc[1]).name}, {desc[2]}d, {desc[3]})"
    if kind == "scalar":
        return "bool" if desc[1] == "?" else np.dtype(desc[1]).name
    if kind == "tuple":
        return f"Tuple({', '.join(shown_type(d) for d in desc[1])})"
    return str(desc[-1])


def no_matching_definition(name: str, signatures, launched: list) -> LaunchRefused:
    declared = " or ".join(f"({', '.join(shown_type(d) for d in sig)})" for sig in signatures)
    numba_says = f"No matching definition for argument type(s) {', '.join(shown_type(d) for d in launched)}"
    return LaunchRefused(
        f"A GPU never runs this launch of `{name}`: numba-cuda refuses it (TypeError: {numba_says}). "
        f"The kernel was declared for {declared}, and a kernel with a signature in `@cuda.jit(...)` "
        "is compiled for those types only",
        f"Make the signature in `@cuda.jit(\"...\")` name the types `{name}` is launched with "
        "(float32[:] for a float32 array), or write plain `@cuda.jit` and let numba compile it "
        "for whatever it is given.",
    )


def converted(args: tuple, declared) -> tuple:
    """The arguments as the kernel receives them: numbers cast to the declared scalar types."""
    return tuple(
        np.dtype(d[1]).type(a) if d[0] == "scalar" and describe_argument(a)[0] == "scalar" else a
        for a, d in zip(args, declared)
    )


# -- launch limits --------------------------------------------------------------------------------
def check_launch(
    name: str, grid: tuple, block: tuple, dynamic_shared: int = 0, static_shared: int = 0, cc=None
) -> None:
    """Raise LaunchRefused, with the GPU's answer, for a launch a GPU refuses (`cc`: the target
    compiled for, which bounds static shared memory)."""
    most = static_shared_limit(cc)
    if static_shared > most:
        raise LaunchRefused(
            f"A GPU would not build `{name}`: its `cuda.shared.array`s take {static_shared:,} bytes, and a "
            f"block may have {most:,} ({most // 1024} KiB; the CUDA linker says \"too much shared data\")",
            SHARED_HINT,
        )
    problem = _dimension_problem(grid, block) or _shared_problem(dynamic_shared, static_shared)
    if problem:
        why, hint = problem
        mistake = "unwritten_tail" if any(size <= 0 for size in grid) else ""
        raise LaunchRefused(
            f"A GPU refuses this launch of `{name}` (CUDA_ERROR_INVALID_VALUE, and nothing runs): {why}", hint, mistake
        )


def _dimension_problem(grid: tuple, block: tuple):
    for what, dims in (("grid", grid), ("block", block)):
        for axis, size in zip(AXES, dims):
            if size <= 0:
                return (
                    f"the {what} has {size} {'blocks' if what == 'grid' else 'threads'} along {axis} "
                    f"(kernel[{_shown(grid)}, {_shown(block)}]), so the launch has no thread at all",
                    "Round the number of blocks up, never down: blocks = (n + threads - 1) // threads "
                    "is at least 1 for every n ≥ 1.",
                )
    for axis, size, most in zip(AXES, block, MAX_BLOCK):
        if size > most:
            return (
                f"a block has at most {most} threads along {axis}, and this one asks for {size}",
                "Keep a block within 1024 threads along x and y, 64 along z and 1024 in all; "
                "cover more elements with more blocks.",
            )
    threads = block[0] * block[1] * block[2]
    if threads > MAX_THREADS_PER_BLOCK:
        return (
            f"a block has at most {MAX_THREADS_PER_BLOCK} threads, and {block!r} is {threads}",
            "Use at most 1024 threads per block (e.g. 32 × 32, or 256) and more blocks.",
        )
    for axis, size, most in zip(AXES, grid, MAX_GRID):
        if size > most:
            return (
                f"a grid has at most {most:,} blocks along {axis}, and this one asks for {size:,}",
                "Put the long dimension on the grid's x (up to 2³¹−1 blocks), or let each thread "
                "cover several elements with a grid-stride loop.",
            )
    return None


def _shared_problem(dynamic_shared: int, static_shared: int):
    if dynamic_shared < 0:
        return f"{dynamic_shared} bytes of dynamic shared memory", "Give the 4th launch parameter in bytes, ≥ 0."
    total = dynamic_shared + static_shared
    if dynamic_shared == 0 or total <= SHARED_BYTES_PER_BLOCK:
        return None
    parts = f"{static_shared:,} bytes of `cuda.shared.array`s and {dynamic_shared:,} dynamic (the 4th launch parameter)"
    return (
        f"a block may use {SHARED_BYTES_PER_BLOCK:,} bytes (48 KiB) of shared memory, and this one needs "
        f"{total:,}: {parts}",
        SHARED_HINT,
    )


SHARED_HINT = "Use smaller shared tiles (a 32 × 32 float32 tile is 4 KiB), or fewer of them per block."


def _shown(dims: tuple) -> str:
    """Launch dimensions as a learner writes them: (128, 1, 1) as 128, (16, 16, 1) as (16, 16)."""
    kept = list(dims)
    while len(kept) > 1 and kept[-1] == 1:
        kept.pop()
    return str(kept[0]) if len(kept) == 1 else str(tuple(kept))
