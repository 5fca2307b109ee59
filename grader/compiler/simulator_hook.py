"""Numba's simulator, made to compile before it runs and to know `cuda.float32` & co.

Two pieces, both installed by grader/wiring.py: `compiled_first`, a step of every kernel launch
from the host (grader/backend/simulator.py's `BEFORE_LAUNCH`, after the device-array handles
are unwrapped), asks the compile check (client.verify_launch) about its arguments and its
declared signatures, then checks the launch's limits as a GPU does (dispatch.check_launch); and
`add_scalar_types`, a patch applied with the simulator's own, gives the `cuda` a simulated
kernel sees numba's scalar types (`cuda.float32(x)` exists in numba-cuda, not in its
simulator's per-kernel module).
"""

from __future__ import annotations

from grader.backend.simulator import SIGNATURES
from grader.compiler.client import compute_capability, verify_launch
from grader.compiler.dispatch import check_launch


def compiled_first(kernel, args):
    """The arguments a launch goes on with, once its kernel compiled for them and its
    configuration fits a GPU."""
    verified = verify_launch(kernel.fn, args, getattr(kernel, SIGNATURES, ()))
    dynamic = int(getattr(kernel, "dynshared_size", 0) or 0)
    check_launch(
        kernel.fn.__name__, kernel.grid_dim, kernel.block_dim, dynamic, verified.shared_bytes, compute_capability()
    )
    return verified.args


def add_scalar_types() -> None:
    """Give the simulator's per-kernel `cuda` numba-cuda's scalar types (idempotent)."""
    import numba.cuda as real_cuda  # imported only once the simulator is being installed
    from numba.core import types
    from numba.cuda.simulator import kernelapi

    for name in dir(real_cuda):
        value = getattr(real_cuda, name)
        if isinstance(value, (types.Number, types.Boolean)) and not hasattr(kernelapi.FakeCUDAModule, name):
            setattr(kernelapi.FakeCUDAModule, name, value)
