"""Choose the CUDA back end before anything imports numba.

Numba reads NUMBA_ENABLE_CUDASIM when `numba.cuda` is first imported, so the choice must be
made first. We look for a usable GPU through the driver library alone (no numba, no CUDA
context), and fall back to Numba's CUDA simulator. `ZEROGPU_BACKEND=gpu|simulator` forces one.
"""

from __future__ import annotations

import ctypes
import os
import sys

from grader.settings import forced_backend

GPU = "gpu"
SIMULATOR = "simulator"


class BackendError(RuntimeError):
    """The back end cannot be set up as asked; the message says what to do."""


def driver_library():
    """The CUDA driver library, initialised, or None. No CUDA context is created: a grading
    process that only asks the driver questions leaves the GPU to the child it times."""
    for name in ("libcuda.so.1", "libcuda.so", "nvcuda.dll"):
        try:
            libcuda = ctypes.CDLL(name)
            break
        except OSError:
            continue
    else:
        return None
    return libcuda if libcuda.cuInit(0) == 0 else None


def gpu_count() -> int:
    """Number of CUDA devices the driver reports, 0 when there is no usable driver."""
    libcuda = driver_library()
    count = ctypes.c_int(0)
    if libcuda is None or libcuda.cuDeviceGetCount(ctypes.byref(count)) != 0:
        return 0
    return count.value


def decide() -> str:
    forced = forced_backend()
    if forced in (GPU, SIMULATOR):
        return forced
    if forced:
        raise BackendError(f"ZEROGPU_BACKEND={forced!r}: use 'gpu' or 'simulator'.")
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return SIMULATOR
    return GPU if gpu_count() > 0 else SIMULATOR


def activate() -> str:
    """Pick the back end and configure numba for it; returns "gpu" or "simulator"."""
    backend = decide()
    if "numba.cuda" in sys.modules:
        from numba import config

        already = SIMULATOR if config.ENABLE_CUDASIM else GPU
        if already != backend:
            raise BackendError(
                f"numba.cuda was imported before the grader, on the {already} back end, but "
                f"this machine needs the {backend} back end. Restart the kernel (or Python) "
                "and run `import grader` before anything imports numba."
            )
        return backend
    if backend == SIMULATOR:
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
        if "numba" in sys.modules:  # numba imported, numba.cuda not yet: still in time
            from numba import config

            config.ENABLE_CUDASIM = 1
    else:
        os.environ.pop("NUMBA_ENABLE_CUDASIM", None)
    return backend


def current() -> str:
    """The back end this process runs on (after `activate`): "gpu" or "simulator"."""
    from numba import config

    return SIMULATOR if config.ENABLE_CUDASIM else GPU
