"""Library calls that would do an exercise's work for the learner (for grader/containment/policy.py).

`cuda.reduce` writes the reduction kernel, `vectorize`/`guvectorize` with a CUDA target build
an elementwise kernel from a scalar function, CuPy and PyTorch compute on the GPU without a
kernel of the learner's. Each is refused as `forbidden` naming the rule, unless the exercise's
SPEC lists it in `Spec.allowed_library_calls` (by the names below).
"""

from __future__ import annotations

LIBRARY_CALLS = {
    "cuda.reduce": "`cuda.reduce` builds the reduction kernel for you",
    "cuda.Reduce": "`cuda.Reduce` builds the reduction kernel for you",
    "vectorize": "`vectorize` builds an elementwise kernel for you from a scalar function",
    "guvectorize": "`guvectorize` builds the kernel for you from a function on slices",
    "cupy": "CuPy computes on the GPU without a kernel of yours",
    "cupyx": "CuPy computes on the GPU without a kernel of yours",
    "torch": "PyTorch computes on the GPU without a kernel of yours",
}
RULE = "library"


def library_message(name: str) -> str:
    return (
        f"{LIBRARY_CALLS[name]}; this exercise is about writing that kernel yourself "
        f"(rule: no library calls that do the exercise's work)"
    )


def refused_call(dotted: str, cuda_names, allowed) -> str | None:
    """The LIBRARY_CALLS key that `dotted` (an attribute path or imported name) uses, unless
    the exercise allows it."""
    parts = dotted.split(".")
    if parts[0] in ("cupy", "cupyx", "torch"):
        key = parts[0]
    elif len(parts) >= 2 and parts[-2] in cuda_names and f"cuda.{parts[-1]}" in LIBRARY_CALLS:
        key = f"cuda.{parts[-1]}"
    elif parts[-1] in ("vectorize", "guvectorize") and (parts[0] in ("numba", *cuda_names) or len(parts) == 1):
        key = parts[-1]
    else:
        return None
    return None if key in allowed else key
