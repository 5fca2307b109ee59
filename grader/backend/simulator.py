"""Make Numba's CUDA simulator honest about uninitialised memory.

The simulator backs `cuda.shared.array` and `cuda.local.array` with `np.empty`, whose
leftover bytes are often the same from run to run, so a missing `syncthreads` (or a read of
shared memory no thread wrote) passes on some seeds and fails on others. On a GPU that memory
holds whatever the last kernel left. The simulator also shares one array across all the
blocks of a launch; we give each block its own. We fill new shared arrays with fresh random
bytes (so
such a bug gives different answers on every run, which the checker reports as a race) and
local arrays with NaN or a sentinel (so an unset accumulator is plainly wrong).

Its `cuda.fp16` computed in float32 (`hadd` was `a + b`): grader/backend/fp16.py's functions
replace it, in half precision, exact, as the kernel doctor's `cuda.fp16` is.

A kernel launch from the host goes through `BEFORE_LAUNCH` first, the steps upper layers
provide (grader/wiring.py lists them): the compile check.

`@cuda.jit("void(float64[:], ...)")`: the simulator drops a declared signature; we keep it on the
kernel (`SIGNATURES`), checked as numba-cuda checks it when it compiles eagerly (a kernel must
return void), so that a launch whose arguments fit no declared signature is refused as on a GPU
(grader/compiler/dispatch.py).
"""

from __future__ import annotations

import os
import sys
import threading
import traceback
from contextlib import contextmanager

import numpy as np

from grader.backend import fp16, races
from grader.sentinels import fresh_value, poison_value

_lock = threading.Lock()
_installed = False
ON_INSTALL: list = []
"""More patches to apply with ours, from layers far above this one (grader/wiring.py lists them)."""
BEFORE_LAUNCH: list = []
"""What a kernel launch from the host does before the simulator runs it, in order: each
`step(kernel, args)` returns the arguments to go on with (grader/wiring.py lists them)."""


SIGNATURES = "zerogpu_signatures"
"""The attribute of a kernel holding its declared signatures: a tuple of argument-type tuples."""


def declared_signatures(func_or_sig, device: bool = False) -> tuple:
    """`cuda.jit`'s first argument as numba-cuda reads it when it is a signature (a string, a
    numba signature, or a list of them): each signature's argument types; () for a function.
    Raises what numba-cuda's `cuda.jit` raises at decoration for one it refuses."""
    from numba.core import sigutils, types

    if func_or_sig is None or not (sigutils.is_signature(func_or_sig) or isinstance(func_or_sig, list)):
        return ()
    found = []
    for sig in func_or_sig if isinstance(func_or_sig, list) else [func_or_sig]:
        argtypes, restype = sigutils.normalize_signature(sig)
        if restype and not device and restype != types.void:
            raise TypeError("CUDA kernel must have void return type.")
        found.append(tuple(argtypes))
    return tuple(found)


def _jit_keeping_signatures(plain_jit):
    def jit(func_or_sig=None, device=False, **options):
        made = plain_jit(func_or_sig, device=device, **options)
        signatures = declared_signatures(func_or_sig, device)
        if not signatures:
            return made

        def decorate(fn):
            kernel = made(fn)
            setattr(kernel, SIGNATURES, signatures)
            return kernel

        return decorate

    jit.__doc__ = plain_jit.__doc__
    return jit


KERNEL_VALUES: list = []
"""What a simulated kernel's globals and closure values become while it runs, beside numba.cuda:
each `step(value)` returns the replacement or None. grader/wiring.py lists them: the GPU's
`math` (float32 in, float32 out: `math.exp(float32(90))` is inf, as on a GPU)."""


def _swapping_closures_too(swapped_cuda_module):
    """The simulator puts its per-launch `cuda` in place of numba.cuda in a kernel's globals
    only. Here a launch from the host also swaps closure cells holding numba.cuda (a kernel
    defined inside a function after `from numba import cuda`, as numba's own reduction code
    does) and whatever KERNEL_VALUES replaces, in its globals and cells. Device functions,
    called from the simulator's block threads at once, share what the launch swapped."""

    @contextmanager
    def swapped(fn, fake_cuda_module):
        if hasattr(threading.current_thread(), "blockIdx"):  # a device function: already swapped
            with swapped_cuda_module(fn, fake_cuda_module):
                yield
            return
        undo = _swap_values(fn, fake_cuda_module)
        try:
            with swapped_cuda_module(fn, fake_cuda_module):
                yield
        finally:
            for restore in reversed(undo):
                restore()

    return swapped


def _swap_values(fn, fake_cuda_module) -> list:
    import numba.cuda

    def replaced(value):
        if value is numba.cuda:
            return fake_cuda_module
        return next((r for r in (step(value) for step in KERNEL_VALUES) if r is not None), None)

    undo = []
    for cell in fn.__closure__ or ():
        try:
            new = replaced(cell.cell_contents)
        except ValueError:  # an empty cell
            continue
        if new is not None:
            undo.append(lambda cell=cell, old=cell.cell_contents: setattr(cell, "cell_contents", old))
            cell.cell_contents = new
    names = fn.__globals__
    for name, value in list(names.items()):
        new = replaced(value) if value is not numba.cuda else None  # numba.cuda: the simulator's own swap
        if new is not None:
            undo.append(lambda name=name, old=value: names.__setitem__(name, old))
            names[name] = new
    return undo


def garbage(shape, dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    count = int(np.prod(shape)) * dtype.itemsize
    return np.frombuffer(bytearray(os.urandom(count)), dtype=np.uint8).view(dtype).reshape(shape)


def unset(shape, dtype) -> np.ndarray:
    return np.full(shape, poison_value(dtype)[0], dtype=dtype)


def fresh(shape, dtype) -> np.ndarray:
    """A new device allocation's contents on every engine (grader/sentinels.py `fresh_value`)."""
    return np.full(shape, fresh_value(dtype)[0], dtype=dtype)


def install() -> None:
    """Patch the simulator's shared and local arrays (idempotent; simulator only)."""
    global _installed
    if _installed:
        return
    from numba.cuda.simulator import kernel, kernelapi
    from numba.np import numpy_support

    from numba.core import types

    def as_dtype(dtype):
        return numpy_support.as_dtype(dtype) if isinstance(dtype, types.Type) else np.dtype(dtype)

    shared_array = kernelapi.FakeCUDAShared.array

    def shared(self, shape, dtype, alignment=None):
        if shape == 0 or alignment is not None:
            res = shared_array(self, shape, dtype, alignment)
            if races.RECORD is None or not isinstance(res, np.ndarray):
                return res
            return races.watch_shared(res, traceback.extract_stack(sys._getframe())[-2].line or "")
        # One array per block, as on a GPU (the simulator would share one across the launch).
        block = tuple(getattr(threading.current_thread(), "blockIdx", ()))
        caller = (*traceback.extract_stack(sys._getframe())[-2][0:2], block)
        with _lock:  # every thread of the block must get the same, already-filled array
            res = self._allocations.get(caller)
            if res is None:
                res = garbage(shape, as_dtype(dtype))
                if races.RECORD is not None:
                    res = races.watch_shared(res, traceback.extract_stack(sys._getframe())[-2].line or "")
                self._allocations[caller] = res
        return res

    def local(self, shape, dtype, alignment=None):
        if alignment is not None:
            raise RuntimeError("Array alignment is not supported in cudasim")
        return unset(shape, as_dtype(dtype))

    kernelapi.FakeCUDAShared.array = shared
    kernelapi.FakeCUDALocal.array = local
    for name in fp16.NAMES:  # half precision, exact, where the simulator's hadd was float32's a + b
        setattr(kernelapi.FakeCUDAFp16, name, getattr(fp16.HalfPrecision, name))
    launch = kernel.FakeCUDAKernel.__call__

    def launch_from_host(self, *args):
        if not self._device and not kernel._kernel_context:  # not a device function, not from a kernel
            for step in BEFORE_LAUNCH:
                args = step(self, args)
            if races.RECORD is not None:
                args = races.watch_arguments(self, args)
        return launch(self, *args)

    kernel.FakeCUDAKernel.__call__ = launch_from_host
    races.install(kernel, kernelapi)
    kernel.swapped_cuda_module = _swapping_closures_too(kernelapi.swapped_cuda_module)
    import numba.cuda
    import numba.cuda.simulator
    from numba.cuda.simulator import api

    api.jit = numba.cuda.jit = numba.cuda.simulator.jit = _jit_keeping_signatures(api.jit)
    for patch in ON_INSTALL:
        patch()
    _installed = True


def install_if_simulating() -> None:
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        install()
