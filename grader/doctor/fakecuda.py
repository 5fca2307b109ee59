"""The `cuda` a kernel sees under the kernel doctor, and what replaces numba's scalar types.

Kernels keep their source; only the names they read change: in the doctor's copy of a
kernel's globals, `cuda` (numba.cuda) is `FAKE_CUDA`, `numba` is `FAKE_NUMBA`, and numba's
scalar types (`float32`, `int32`, ...) are NumPy's, which convert values the same way.
Barriers, atomics and shared/local arrays are rewritten by the transformer into calls with a
site number; reaching those methods here means a form the transformer did not recognise.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager

import numpy as np

from grader.doctor.errors import Unsupported
from grader.doctor.memory import CTX, View
from grader.doctor.scalars import F32, F64
from grader.doctor.arrays import global_array, scratch_array
from grader.backend.fp16 import HalfPrecision, fused
from grader.backend.simulator import fresh

WARP = 32


class Dim3:
    __slots__ = ("x", "y", "z")

    def __init__(self, x=1, y=1, z=1):
        self.x, self.y, self.z = x, y, z

    def __iter__(self):
        return iter((self.x, self.y, self.z))

    def __repr__(self):
        return f"({self.x}, {self.y}, {self.z})"


def _unrecognised(what):
    def method(*args, **kwargs):
        raise Unsupported(
            f"`cuda.{what}` used in a form the kernel doctor cannot follow (call it directly as cuda.{what}(...))"
        )

    return method


class _Namespace:
    """cuda.shared / cuda.local / cuda.const / cuda.atomic when not rewritten."""

    def __init__(self, prefix, names):
        for name in names:
            setattr(self, name, _unrecognised(f"{prefix}.{name}"))
        self._prefix = prefix

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise Unsupported(f"`cuda.{self._prefix}.{name}`")


ATOMICS = (
    "add",
    "sub",
    "and_",
    "or_",
    "xor",
    "max",
    "min",
    "nanmax",
    "nanmin",
    "exch",
    "inc",
    "dec",
    "cas",
    "compare_and_swap",
)


class FakeFp16:
    """`cuda.fp16` under the doctor: grader/backend/fp16.py's half precision, exact. What the
    CPU engines do not compute (htanh_approx, an approximation; a function not written there)
    is refused: the doctor leaves the case to the simulator, which refuses it too."""

    zerogpu_stands_for = "numba.cuda.fp16"

    def __init__(self):
        self._half = HalfPrecision()

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        method = getattr(self._half, name, None)
        if method is None or name == "htanh_approx":
            raise Unsupported(f"`cuda.fp16.{name}`")

        def exact(*args):
            try:
                return method(*args)
            except NotImplementedError as why:  # the engines refuse it (grader/backend/fp16.py)
                raise Unsupported(str(why)) from None

        exact.__name__ = name
        setattr(self, name, exact)
        return exact


FAKE_FP16 = FakeFp16()


class FakeCuda:
    """numba.cuda for kernels and launch code running under the kernel doctor."""

    warpsize = WARP

    def __init__(self):
        self.threadIdx = Dim3(0, 0, 0)
        self.blockIdx = Dim3(0, 0, 0)
        self.blockDim = Dim3(1, 1, 1)
        self.gridDim = Dim3(1, 1, 1)
        self.shared = _Namespace("shared", ("array",))
        self.local = _Namespace("local", ("array",))
        self.const = _Namespace("const", ("array_like",))
        self.atomic = _Namespace("atomic", ATOMICS)
        self.syncthreads = _unrecognised("syncthreads")
        self.fp16 = FAKE_FP16
        self.set_launch((1, 1, 1), (1, 1, 1))
        self.set_block(0, 0, 0)

    def set_launch(self, grid: tuple, block: tuple, dynamic_shared: int = 0) -> None:
        """The launch's sizes, and cuda.gridsize(n) for the transformed kernels."""
        self.gridDim, self.blockDim = Dim3(*grid), Dim3(*block)
        self.dynamic_shared = dynamic_shared
        """Bytes of `cuda.shared.array(0, dtype)` (the launch's 4th parameter)."""
        self.gs1 = block[0] * grid[0]
        self.gs2 = (self.gs1, block[1] * grid[1])
        self.gs3 = (*self.gs2, block[2] * grid[2])

    def set_block(self, bx: int, by: int, bz: int) -> None:
        """The block now running, and the first cuda.grid(n) coordinates of its threads."""
        self.blockIdx = Dim3(bx, by, bz)
        d = self.blockDim
        self.gx0, self.gy0, self.gz0 = bx * d.x, by * d.y, bz * d.z

    # -- kernel side ------------------------------------------------------------------------
    @property
    def laneid(self):
        return CTX.lin % WARP

    def grid(self, ndim):
        b, d, t = self.blockIdx, self.blockDim, self.threadIdx
        x = b.x * d.x + t.x
        if ndim == 1:
            return x
        y = b.y * d.y + t.y
        if ndim == 2:
            return (x, y)
        if ndim == 3:
            return (x, y, b.z * d.z + t.z)
        raise ValueError(f"cuda.grid takes 1, 2 or 3, not {ndim}")

    def gridsize(self, ndim):
        d, g = self.blockDim, self.gridDim
        if ndim == 1:
            return d.x * g.x
        if ndim == 2:
            return (d.x * g.x, d.y * g.y)
        if ndim == 3:
            return (d.x * g.x, d.y * g.y, d.z * g.z)
        raise ValueError(f"cuda.gridsize takes 1, 2 or 3, not {ndim}")

    def threadfence(self):
        pass

    threadfence_block = threadfence_system = threadfence

    @staticmethod
    def fma(a, b, c):
        """One rounding, as fma.rn: float32 when all three are float32, else float64."""
        kind = F32 if a.__class__ is F32 and b.__class__ is F32 and c.__class__ is F32 else F64
        return fused(kind, a, b, c)

    @staticmethod
    def selp(a, b, c):
        return b if a else c

    @staticmethod
    def cbrt(a):
        """float32 for a float32 (libdevice's cbrtf), float64 otherwise."""
        root = float(np.cbrt(np.float64(a)))
        return F32(root) if a.__class__ is F32 else root

    @staticmethod
    def popc(val):
        bits = 8 * val.dtype.itemsize if isinstance(val, np.generic) else 64  # popc(int32(-1)) is 32
        return bin(int(val) & ((1 << bits) - 1)).count("1")

    @staticmethod
    def brev(val):
        return int(f"{int(val) & 0xFFFFFFFF:032b}"[::-1], 2)

    @staticmethod
    def clz(val):
        s = f"{int(val) & 0xFFFFFFFF:032b}"
        return len(s) - len(s.lstrip("0"))

    @staticmethod
    def ffs(val):
        s = f"{int(val) & 0xFFFFFFFF:032b}"
        return (len(s) - len(s.rstrip("0")) + 1) % 33

    # -- host side (launch code) --------------------------------------------------------------
    @staticmethod
    def to_device(obj, stream=0, copy=True, to=None):
        if isinstance(obj, View):
            return obj
        data = np.array(obj, copy=True)
        if to is not None:
            to.copy_to_device(data)
            return to
        return global_array(data, "array")

    @staticmethod
    def device_array(shape, dtype=np.float64, strides=None, order="C", stream=0):
        if strides is not None or order != "C":
            raise Unsupported("cuda.device_array with strides or Fortran order")
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        return scratch_array(fresh(shape, numpy_dtype(dtype)), "device_array")  # as the replayer's (replay/launch.py)

    def device_array_like(self, ary, stream=0):
        return self.device_array(ary.shape, ary.dtype)

    @staticmethod
    def synchronize():
        pass

    @staticmethod
    def stream():
        return Stream()

    default_stream = legacy_default_stream = per_thread_default_stream = stream

    make_kernel = None
    """grader/doctor/kernel.py's `cuda.jit` (DoctorKernel), set by grader/wiring.py (kernel.py builds on this module)."""

    def jit(self, func_or_sig=None, device=False, **options):
        return self.make_kernel(func_or_sig, device=device)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        scalar = numpy_scalar_type(getattr(sys.modules.get("numba.cuda"), name, None))
        if scalar is not None:  # cuda.float32 and friends
            return scalar
        raise Unsupported(f"`cuda.{name}`")


class Stream:
    """A CUDA stream under the doctor: launches run at once, in the order they are made, as on
    the default stream; so there is nothing to wait for."""

    def synchronize(self):
        pass

    @contextmanager
    def auto_synchronize(self):
        yield self


FAKE_CUDA = FakeCuda()
FAKE_CUDA.zerogpu_stands_for = "numba.cuda"  # how grader/compiler/describe.py names it


def numpy_dtype(dtype) -> np.dtype:
    """np.dtype of a numba type, a NumPy type or a string."""
    if isinstance(dtype, np.dtype):
        return dtype
    try:
        from numba.core import types
        from numba.np.numpy_support import as_dtype

        if isinstance(dtype, types.Type):
            return as_dtype(dtype)
    except ImportError:  # pragma: no cover - numba is always there in this project
        pass
    return np.dtype(dtype)


def numpy_scalar_type(value):
    """NumPy's scalar type for a numba scalar type (float32 -> np.float32), else None."""
    from numba.core import types

    if isinstance(value, (types.Number, types.Boolean)):
        return numpy_dtype(value).type
    return None


class FakeNumba:
    """`numba` as a kernel sees it: numba.cuda is ours, numba.float32 is np.float32."""

    def __getattr__(self, name):
        import numba

        if name == "cuda":
            return FAKE_CUDA
        value = getattr(numba, name)
        return numpy_scalar_type(value) or value


FAKE_NUMBA = FakeNumba()
FAKE_NUMBA.zerogpu_stands_for = "numba"


class FakeLibdevice:
    """numba.cuda.libdevice under the doctor: the bit casts (a float's bits as an integer and
    back), which kernels use to pack a value beside a flag in one word."""

    zerogpu_stands_for = "numba.cuda.libdevice"

    @staticmethod
    def float_as_int(x):
        return np.float32(x).view(np.int32)

    @staticmethod
    def int_as_float(x):
        return np.int32(x).view(np.float32)

    @staticmethod
    def double_as_longlong(x):
        return np.float64(x).view(np.int64)

    @staticmethod
    def longlong_as_double(x):
        return np.int64(x).view(np.float64)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise Unsupported(f"`libdevice.{name}`")


FAKE_LIBDEVICE = FakeLibdevice()


def replacement(value):
    """What a global (or closure) value of a kernel becomes under the doctor, or None to keep
    it: numba.cuda, numba, numba.cuda.libdevice, numba.cuda.fp16, numba's scalar types."""
    if value is None:  # never a module: sys.modules.get gives None for one not imported yet
        return None
    if value is sys.modules.get("numba.cuda"):
        return FAKE_CUDA
    if value is sys.modules.get("numba"):
        return FAKE_NUMBA
    if value is sys.modules.get("numba.cuda.libdevice"):
        return FAKE_LIBDEVICE
    if value is sys.modules.get("numba.cuda.fp16"):  # `from numba.cuda import fp16` (on a GPU host)
        return FAKE_FP16
    if callable(value) and getattr(value, "__module__", None) == "numba.cuda.libdevice":
        return getattr(FAKE_LIBDEVICE, value.__name__)  # from numba.cuda.libdevice import float_as_int
    if type(value).__module__.startswith("numba.core.types"):
        return numpy_scalar_type(value)
    return None


def builtins_importing_fakes(original) -> dict:
    """Python's builtins for launch code run on the doctor, whose `import` of numba gives the
    doctor's numba and cuda: `from numba import cuda` inside `launch` (numba's own reduction
    code does it) then makes doctor kernels, as the module's `cuda` does."""
    names = dict(original if isinstance(original, dict) else vars(original))
    plain = names["__import__"]

    def doctor_import(name, globals=None, locals=None, fromlist=(), level=0):
        module = plain(name, globals, locals, fromlist, level)
        if level == 0 and name.split(".")[0] == "numba":
            return replacement(module) or module
        return module

    names["__import__"] = doctor_import
    return names
