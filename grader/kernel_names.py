"""What a kernel file may name, in one place: the policy (grader/containment/policy.py), the
describer (grader/compiler/describe.py) and the compile helper (grader/compiler/server.py, which
loads this file by its path) read these lists. tests/test_kernel_names.py holds them to what
numba-cuda itself compiles: every form accepted here compiles there, and every form refused
because a GPU would refuse it is refused by numba-cuda too."""

KERNEL_MODULES = (
    "math",
    "cmath",
    "numpy",
    "numba",
    "numba.cuda",
    "numba.cuda.libdevice",
    "numba.cuda.random",
    "numba.core.types",  # `from numba import types` (its module's name): `types.float32` for a shared array
    "operator",
)
"""The modules a kernel's globals may be, by their `__name__`."""

IMPORTABLE_NUMBA = (
    "numba",
    "numba.cuda",
    "numba.cuda.random",
    "numba.cuda.libdevice",
    "numba.types",
    "numba.core.types",
    "numba.np.numpy_support",
)
"""numba's modules a kernel file may import. The rest re-export os, sys, ctypes and numpy
(`from numba.core.utils import os`), which would walk around every other rule of the policy."""

NUMBA_HELPERS = {"numba.np.numpy_support": ("from_dtype", "as_dtype")}
"""Of an importable module that also re-exports modules (numpy_support re-exports numpy as
`np`), the only names a file may take from it: numba-cuda's own kernels use `from_dtype` to
type a shared array after an input's dtype."""

TYPES_MODULES = ("numba.types", "numba.core.types")
"""numba's types, imported by either name (`from numba import types`, `from numba.core import types`)."""

MODULES_IN_TYPES = (
    "abstract", "collections", "common", "config", "containers", "ctypes", "enum", "errors",
    "function_type", "functions", "ir", "iterators", "itertools", "logging", "misc", "np",
    "npytypes", "scalars", "struct", "textwrap", "traceback", "types", "utils", "warnings", "weakref",
)  # fmt: skip
"""The modules numba's types module re-exports (numba 0.68; tests/test_kernel_names.py checks the
installed numba's): a file may take any type from it, and none of these."""
