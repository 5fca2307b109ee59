"""Run a submission's `launch` on one case: device inputs, poisoned and fenced outputs.

Each output lives in the middle of a larger device buffer: PAD canary elements before and
after it. After the launch we copy the whole buffer back; the caller (the judge) checks the
canaries and the poison. Nothing here decides a verdict.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from grader.sentinels import PAD, fenced_buffer
from grader.steps.explain import ErrorInfo, explain_exception
from grader.authoring.spec import Dims, Spec


@dataclass
class Outcome:
    """What one run of `launch` left behind, before anyone judges it."""

    buffers: dict
    """Output name -> the whole fenced buffer copied back (canaries included)."""
    error: ErrorInfo | None
    seconds: float


def launch_arguments(spec: Spec, inputs: dict, dims: Dims):
    """Device arrays for every parameter; returns (kwargs for launch, device buffers)."""
    from numba import cuda

    kwargs, device_buffers = {}, {}
    for param in spec.params:
        if param in spec.scalars:
            kwargs[param.name] = np.dtype(param.dtype).type(inputs[param.name])
        elif param.role == "in":
            kwargs[param.name] = cuda.to_device(np.ascontiguousarray(inputs[param.name]))
        else:
            shape = param.shape_for(dims)
            size = int(np.prod(shape))
            buf = cuda.to_device(fenced_buffer(param.dtype, size, param.init))
            device_buffers[param.name] = buf
            kwargs[param.name] = buf[PAD : PAD + size].reshape(shape)
    return kwargs, device_buffers


def execute(spec: Spec, launch, inputs: dict, dims: Dims, learner_files=()) -> Outcome:
    """Call `launch` once on fresh device copies of `inputs`; never raises for learner bugs."""
    from numba import cuda

    kwargs, device_buffers = launch_arguments(spec, inputs, dims)
    start = time.perf_counter()
    error = None
    try:
        launch(**kwargs)
        cuda.synchronize()
    except BaseException as exc:  # noqa: BLE001 - a learner's bug must become a verdict
        if isinstance(exc, KeyboardInterrupt):
            raise
        error = explain_exception(exc, learner_files, kwargs)
    seconds = time.perf_counter() - start
    try:
        buffers = {name: buf.copy_to_host() for name, buf in device_buffers.items()}
    except Exception as exc:  # noqa: BLE001 - e.g. a sticky CUDA error after a bad launch
        return Outcome({}, error or explain_exception(exc, learner_files, kwargs), seconds)
    return Outcome(buffers, error, seconds)
