"""A kernel compiled in another process, made launchable here (on a GPU).

A GPU's replayer spent most of a check's correctness phase compiling the submission's kernels:
typing, lowering and NVVM, CPU work that held the GPU's queue. The grading process has them
compiled ahead, on every core, by compiling children (grader/children/compiling.py); the
replayer only loads what they send (grader/compiler/server.py `compiled_ahead`): the cubin
numba-cuda's `cuda.jit` makes on a GPU host with nvJitLink (LTO-IR linked by nvJitLink, which
needs no device), built step for step as it builds it, so the replayer loads the very code it
would have made itself. `install` gives
a dispatcher those kernels as overloads for the argument types they were compiled for; a
launch with other types compiles as before, so a missing or mistaken answer costs time, never
a result.

Not used, and compiled in the replayer as before: a dispatcher that would not link with LTO
(no nvJitLink), a kernel whose code names functions numba-cuda links in from files (NRT,
reshape helpers, cudadevrt for grid sync), an answer for another device.
"""

from __future__ import annotations

import base64

from grader.compiler.rebuild import argument_type


def arch_of(compute_capability) -> tuple:
    """The target numba-cuda compiles a kernel for on a device of this compute capability: from
    9.0 on its architecture-specific variant (sm_90a), as `CUDACodeLibrary` does."""
    major, minor = (int(v) for v in tuple(compute_capability)[:2])
    return (major, minor, "a" if (major, minor) >= (9, 0) else "")


def usable(answer: dict, cc: tuple) -> bool:
    """Whether a compiling child's answer can be linked on a device of compute capability `cc`."""
    return (
        isinstance(answer.get("cubin"), str)
        and isinstance(answer.get("entry"), str)
        and answer.get("links") is False
        and list(answer.get("arch", ())) == list(arch_of(cc))
    )


def kernel_from(answer: dict, argtypes: tuple, fastmath: bool):
    """numba-cuda's kernel object for an answer, taking `argtypes`, as its own cache rebuilds
    one; loaded at its first launch."""
    from cuda.core import ObjectCode  # noqa: PLC0415 - numba-cuda's driver layer, loaded with numba
    from numba.core import types
    from numba.cuda.codegen import CUDACodeLibrary
    from numba.cuda.dispatcher import _Kernel

    arch = tuple(answer["arch"])
    library = CUDACodeLibrary._rebuild(
        codegen=None,
        name=answer["entry"],
        entry_name=answer["entry"],
        llvm_strs=[],
        ptx_cache={},
        cubin_cache={},
        linkerinfo_cache={},
        max_registers=None,
        nvvm_options={"fastmath": bool(fastmath), "opt": 3},
        needs_cudadevrt=False,
        nrt=False,
        use_cooperative=False,
        lto=True,
    )
    library._cubin_cache[arch] = ObjectCode.from_cubin(base64.b64decode(answer["cubin"]))
    return _Kernel._rebuild(
        cooperative=False,
        name=answer["entry"],
        signature=types.void(*argtypes),
        codelibrary=library,
        debug=False,
        lineinfo=False,
        call_helper=None,
        extensions=[],
    )


def install(dispatcher, answers: list, fastmath: bool) -> int:
    """Add each usable answer ({"args", "cubin", "entry", "links", "arch"}) to `dispatcher` as
    the overload for its argument types; how many were added."""
    from numba.cuda import get_current_device

    if not dispatcher.targetoptions.get("lto"):  # it would link PTX, not LTO-IR: other code
        return 0
    cc = get_current_device().compute_capability
    added = 0
    for answer in answers:
        if not usable(answer, cc):
            continue
        try:
            argtypes = tuple(argument_type(a) for a in answer["args"])
        except Exception:  # noqa: BLE001 - a description we cannot type: compiled here instead
            continue
        if argtypes in dispatcher.overloads:
            continue
        dispatcher.add_overload(kernel_from(answer, argtypes, fastmath), argtypes)
        added += 1
    return added
