"""Library peers timed the same way (CUDA events, median): CuPy and cuBLAS."""

from __future__ import annotations

import numpy as np

from grader.gpu.ceilings import median_event_seconds


def _cupy():
    try:
        import cupy  # noqa: PLC0415 - optional: CuPy is timed where it is installed

        return cupy
    except ImportError:
        return None


SAME_SIGNATURE = {
    "reduce_sum": "cupy.sum",
    "warp_reduce": "cupy.sum",
    "scan": "cupy.cumsum",
    "transpose": "torch a.T copy",
    "matmul_tiled": "cupy.matmul",
}
"""Exercises whose library peer takes the exercise's own arguments, so that the grader's
harness times it interleaved with the target, under the same L2 flush and input variation."""


def peer_launch(name):
    """A library call with the exercise's signature, by its variant name, or None without the
    library: "cupy.sum" (reduce_sum, warp_reduce), "cupy.cumsum" (scan, CUB), "torch a.T copy"
    (transpose, PyTorch's own kernel), "cupy.matmul" (matmul_tiled, cuBLAS)."""
    try:
        import cupy  # noqa: PLC0415 - optional: CuPy is timed where it is installed

        if name == "cupy.sum":

            def peer(x, out):
                cupy.sum(cupy.asarray(x), out=cupy.asarray(out).reshape(()))

            return peer
        if name == "cupy.cumsum":  # CUB's scan, both arrays in place

            def peer(counts, amounts, counts_scan, amounts_scan):
                cupy.cumsum(cupy.asarray(counts), dtype=cupy.int32, out=cupy.asarray(counts_scan))
                cupy.cumsum(cupy.asarray(amounts), dtype=cupy.float32, out=cupy.asarray(amounts_scan))

            return peer
        if name == "cupy.matmul":  # cuBLAS SGEMM, the ceiling matmul_tiled's goal is set against

            def peer(a, b, c):
                cupy.matmul(cupy.asarray(a), cupy.asarray(b), out=cupy.asarray(c))

            return peer
        if name == "torch a.T copy":
            import torch  # noqa: PLC0415 - optional: PyTorch is timed where it is installed

            def peer(a, out):  # both on the legacy default stream, as Numba's launches
                torch.as_tensor(out, device="cuda").copy_(torch.as_tensor(a, device="cuda").t())

            return peer
    except ImportError:
        return None
    raise ValueError(f"no library peer called {name!r}")


def _median_ms(fn, reps=30, warmup=3):
    return median_event_seconds(fn, reps=reps, warmup=warmup) * 1e3


def time_peer(exercise_id: str, inputs: dict, dims: dict):
    """A library peer of an exercise without a same-signature one (or, for transpose, without
    PyTorch to run it), timed on its own (warm, L2 not flushed): {"name", "ms"}, or None."""
    cp = _cupy()
    if cp is None:
        return None
    g = {k: cp.asarray(v) for k, v in inputs.items() if isinstance(v, np.ndarray)}
    peers = {
        "vector_add": ("cupy.add", lambda: cp.add(g["a"], g["b"])),
        "saxpy": ("cupy alpha*x+y", lambda: inputs["alpha"] * g["x"] + g["y"]),
        "histogram": ("cupy.bincount", lambda: cp.bincount(g["values"], minlength=256)),
        "transpose": ("cupy a.T copy", lambda: cp.ascontiguousarray(g["a"].T)),
        "matmul_naive": ("cuBLAS (cupy)", lambda: g["a"] @ g["b"]),
        "softmax_fused": ("cupy composed", lambda: _softmax(cp, g["x"])),
        "rgb_to_gray": (
            "cupy composed",
            lambda: g["image"][..., 0] * 0.299 + g["image"][..., 1] * 0.587 + g["image"][..., 2] * 0.114,
        ),
    }
    if exercise_id not in peers:
        return None
    name, fn = peers[exercise_id]
    return {"name": name, "ms": _median_ms(fn)}


def _softmax(cp, x):
    e = cp.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def cublas_sgemm_tflops(n: int = 4096):
    cp = _cupy()
    if cp is None:
        return None
    rng = np.random.default_rng(0)
    a = cp.asarray(rng.standard_normal((n, n), dtype=np.float32))
    b = cp.asarray(rng.standard_normal((n, n), dtype=np.float32))
    return 2 * n**3 / (_median_ms(lambda: a @ b) / 1e3) / 1e12
