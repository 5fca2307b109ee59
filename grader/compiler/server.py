"""The compile helper: Numba's real CUDA compiler in a process of its own.

Without a GPU the grader's processes import numba with the simulator flag set, and then
`numba.cuda` *is* the simulator (its compiler, nvvm and driver modules included), so the real
compiler cannot be reached there. This script runs as `python server.py CACHE_DIR` (by path,
not `-m grader...`: importing the grader package would choose the simulator again), with the
flag removed. It reads one JSON request per line on stdin, compiles the kernel it describes to
PTX with `numba.cuda.compile_ptx`, writes the answer into the cache (CACHE_DIR/<key>.json) and
one JSON line on stdout. numba is imported at the first request only, so a check whose
kernels are all cached pays for a bare interpreter.

It never runs the learner's module: only the `def` statements of the kernel and its device
functions are executed (grader/compiler/rebuild.py, which this script loads by its path).

Answers: "ok"; "error" (numba refused the kernel: its message); "unverifiable" (the kernel
holds something this check cannot carry to the compiler, a list global, a lambda, a default
argument: the learner's to change, with `why` and `fix`); "unchecked" (the grader's own failure:
missing compiler libraries, a driver wanted, a rebuild that failed). Only the first three
depend on the kernel alone, so only they are cached.
"""

from __future__ import annotations

import base64
import importlib
import importlib.util
import json
import os
import re
import sys
from pathlib import Path


def _sibling(name: str):
    """A module of this folder that imports nothing of the grader's, loaded by its path: this
    script runs outside the grader package."""
    spec = importlib.util.spec_from_file_location(f"zerogpu_{name}", Path(__file__).with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


if __package__:  # imported as grader.compiler.server: one rebuild module, one Opaque
    from grader.compiler import rebuild as _rebuild
else:  # run as a script, by its path
    _rebuild = _sibling("rebuild")
Opaque, argument_type, build_function = _rebuild.Opaque, _rebuild.argument_type, _rebuild.build_function
MISSING_LIBRARIES = ("libnvrtc", "libnvvm", "NVVM", "NVRTC", "DynamicLibNotFound")
MISSING_FIX = "install numba-cuda's compiler libraries: `pip install 'numba-cuda[cu12]'` (or `make install`)"


class _NamedDevice:
    """The GPU device functions are compiled for: numba-cuda asks the current device for its
    compute capability when a kernel calls a device function (or `max` of a list), and there
    is no device here."""

    compute_capability = (9, 0)


def _compile_without_a_device(cc) -> None:
    import numba.cuda.dispatcher as dispatcher

    _NamedDevice.compute_capability = tuple(cc)[:2]
    dispatcher.get_current_device = lambda: _NamedDevice


def compile_request(request: dict) -> dict:
    """{"status": "ok" | "error" | "unchecked", ...} for one kernel and one launch's types."""
    from numba import cuda

    _compile_without_a_device(request["cc"])

    try:
        pyfunc = build_function(request["kernel"])
        signature = tuple(argument_type(a) for a in request["args"])
    except Opaque as why:
        return {"status": "unverifiable", "why": why.what, "fix": why.fix, "grader": why.grader}
    except Exception as exc:  # noqa: BLE001 - our rebuilding failed: never the learner's fault
        return {"status": "unchecked", "why": f"the compile check failed ({type(exc).__name__}: {exc})"}
    options = request["kernel"].get("options", {})
    try:
        if request.get("ahead"):  # for a GPU's replayer (grader/compiler/prebuilt.py)
            return {"status": "ok", **compiled_ahead(pyfunc, signature, request["cc"], bool(options.get("fastmath")))}
        ptx, _ = cuda.compile_ptx(
            pyfunc, signature, cc=tuple(request["cc"]), fastmath=bool(options.get("fastmath", False))
        )
    except Exception as exc:  # noqa: BLE001 - Numba's refusal is the answer
        text = f"{type(exc).__name__}: {exc}"
        if any(mark in text for mark in MISSING_LIBRARIES):
            # Typing passed, but without NVVM/NVRTC (pip extra [cu12]) lowering was not checked.
            return {
                "status": "unchecked",
                "why": f"Numba's CUDA compiler libraries are missing ({text.splitlines()[0][:200]})",
                "fix": MISSING_FIX,
            }
        if type(exc).__name__ == "CudaSupportError":  # wants a driver: unchecked, not wrong
            return {"status": "unchecked", "why": text.splitlines()[0][:300]}
        if "readonly array" in text and _device_constants(request["kernel"]):
            return {"status": "unverifiable", "why": WRITES_DEVICE_CONSTANT, "fix": DEVICE_CONSTANT_FIX, "grader": True}
        return {"status": "error", "error_type": type(exc).__name__, "message": str(exc)}
    return {"status": "ok", "ptx": True, "ptx_bytes": len(ptx), "shared_bytes": static_shared_bytes(ptx)}


WRITES_DEVICE_CONSTANT = (
    "it writes to a device array made at module level, which the grader replays as constants "
    "(the values uploaded while the file loaded)"
)
DEVICE_CONSTANT_FIX = "pass an array the kernel writes to it as an argument (allocate it in `launch`)"


def _device_constants(desc: dict) -> bool:
    """Does the kernel, or a device function it calls, read a module-level device array?"""
    for value in desc.get("globals", {}).values():
        if value[0] == "array" and value[4:] == ["device"]:
            return True
        if value[0] == "device" and _device_constants(value[1]):
            return True
    return False


def compiled_ahead(pyfunc, signature, arch, fastmath: bool) -> dict:
    """The kernel as numba-cuda's `cuda.jit` builds it on a GPU host with nvJitLink for a device
    of `arch` ((major, minor, variant)): typed for the device's compute capability, NVVM's
    LTO-IR for the variant, linked by nvJitLink (no device needed) into the cubin the device
    loads (base64). Also its entry name, and whether its PTX names functions numba-cuda would
    link in from files (then the cubin is not what the replayer would make)."""
    from numba import types
    from numba.cuda.compiler import compile_cuda, kernel_fixup
    from numba.cuda.cudadrv.driver import _Linker

    arch = tuple(arch)
    _compile_without_a_device(arch)  # a kernel that calls a device function asks for one
    # numba-cuda's _Kernel.__init__ and CUDACodeLibrary.get_cubin, step for step
    result = compile_cuda(
        pyfunc,
        types.void,
        signature,
        debug=False,
        lineinfo=False,
        forceinline=False,
        fastmath=fastmath,
        nvvm_options={"fastmath": fastmath, "opt": 3},
        cc=arch[:2],
        max_registers=None,
        lto=True,
    )
    library = result.library
    kernel_fixup(library.get_function(result.fndesc.llvm_func_name), False)
    library._entry_name = result.fndesc.llvm_func_name
    ptx = library.get_asm_str(cc=arch)
    linker = _Linker(max_registers=None, cc=arch, lto=True)
    linker.add_ltoir(library.get_ltoir(cc=arch))
    return {
        "cubin": base64.b64encode(bytes(linker.complete().code)).decode(),
        "entry": library._entry_name,
        "links": bool(EXTERN.search(ptx)) or len(ENTRY.findall(ptx)) != 1,
        "arch": list(arch),
    }


AHEAD_DEFAULTS = {
    "debug": False,
    "lineinfo": False,
    "link": None,
    "opt": True,
    "device": False,
    "forceinline": False,
    "extensions": None,
    "launch_bounds": None,
    "lto": True,
    "shared_memory_carveout": None,
}
"""A dispatcher's options `compiled_ahead` builds its kernels with (fastmath aside, and `inline`,
which only kernels' callees read): a dispatcher with others is compiled where it runs."""


def compiles_ahead(targetoptions: dict) -> bool:
    return all(k in AHEAD_DEFAULTS or k in ("fastmath", "inline") for k in targetoptions) and all(
        (targetoptions.get(k) or None) == (v or None) for k, v in AHEAD_DEFAULTS.items()
    )


ENTRY = re.compile(r"^\s*\.(?:visible\s+)?\.entry\s+([\w$]+)\s*\(", re.M)
EXTERN = re.compile(r"^\s*\.extern\s", re.M)


SHARED_DECLARATION = re.compile(r"^[.\w ]*?\.shared\s+(?:\.align\s+\d+\s+)?\.[bufs](\d+)\s+[\w$.]+\[(\d+)\];", re.M)


def static_shared_bytes(ptx: str) -> int:
    """Bytes of `cuda.shared.array`s with a fixed size in the PTX (dynamic ones are `[]`)."""
    return sum(int(bits) // 8 * int(count) for bits, count in SHARED_DECLARATION.findall(ptx))


def serve(cache: Path) -> None:
    cache.mkdir(parents=True, exist_ok=True)
    for line in sys.stdin:
        request = json.loads(line)
        try:
            answer = compile_request(request)
        except Exception as exc:  # noqa: BLE001 - the helper's own failure: the grader's, said as such
            answer = {"status": "unchecked", "why": f"the compile helper failed ({type(exc).__name__}: {exc})"}
        if answer["status"] != "unchecked":
            tmp = cache / f"{request['key']}.{os.getpid()}.tmp"
            tmp.write_text(json.dumps(answer))
            os.replace(tmp, cache / f"{request['key']}.json")
        sys.stdout.write(json.dumps({"key": request["key"], **answer}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    os.environ.pop("NUMBA_ENABLE_CUDASIM", None)
    serve(Path(sys.argv[1]))
