"""Numba's simulator, made to compile before it runs and to know `cuda.float32` & co.

Two patches, both idempotent: a kernel launch from the host (grader/backend/simulator.py's
`BEFORE_LAUNCH`, after the device-array handles are unwrapped) first asks the compile check
(client.verify_launch) about its arguments and its declared signatures, then checks the launch's
limits as a GPU does (dispatch.check_launch); and the `cuda` a simulated kernel sees gets
numba's scalar types (`cuda.float32(x)` exists in numba-cuda, not in its simulator's per-kernel
module).
"""

from __future__ import annotations

_installed = False


def install() -> None:
    global _installed
    if _installed:
        return
    import numba.cuda as real_cuda
    from numba.core import types
    from numba.cuda.simulator import kernelapi

    from grader.backend.simulator import BEFORE_LAUNCH, SIGNATURES
    from grader.compiler.client import verify_launch
    from grader.compiler.dispatch import check_launch

    for name in dir(real_cuda):
        value = getattr(real_cuda, name)
        if isinstance(value, (types.Number, types.Boolean)) and not hasattr(kernelapi.FakeCUDAModule, name):
            setattr(kernelapi.FakeCUDAModule, name, value)

    def compiled_first(kernel, args):
        verified = verify_launch(kernel.fn, args, getattr(kernel, SIGNATURES, ()))
        dynamic = int(getattr(kernel, "dynshared_size", 0) or 0)
        check_launch(kernel.fn.__name__, kernel.grid_dim, kernel.block_dim, dynamic, verified.shared_bytes)
        return verified.args

    BEFORE_LAUNCH.append(compiled_first)
    _installed = True
