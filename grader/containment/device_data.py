"""Device arrays are opaque to a submission's host code while its `launch` runs.

The answer must be computed by the learner's kernels, so `launch` may size the grid, slice
device arrays into views, allocate, copy host constants to new device arrays and launch; it
may not read a device array's data on the host (indexing to a value, iteration, `__array__`,
`copy_to_host`, NumPy methods forwarded by the simulator's arrays, arithmetic) nor write data
into one (`copy_to_device`, assignment of anything but a single constant: `out[:] = 0` is a
fill, a memset on a GPU, and computes nothing).

On the CPU engines (the kernel doctor, Numba's simulator) a device array is a Python object
that holds its data (the doctor's `View.arr`, `.vals`...; the simulator's `._ary`), so host
code never gets one: `sealed` hands `launch` a `Handle` for each, and the engines' allocation
functions (`cuda.to_device`, `cuda.device_array`, `cuda.device_array_like`...) give handles
while sealed. A handle has no data attribute at all: the array it stands for is kept here,
in `_ARRAYS`, and a kernel launch unwraps it (`kernel_arguments`, once per launch: elements are
then read and written by the kernel as before). What a handle offers is what `launch` needs:
sizes, views, a fill; everything else is `HostDataAccess`, whichever thread asks and
whenever. Each engine registers its array class here (`register_engine_array`: the doctor's
View when grader/doctor/memory.py is imported, the simulator's FakeCUDAArray in
`seal_numba_arrays`).

On a GPU a device array holds a device pointer, not the data: Numba's arrays are handed to
`launch` as they are, patched once by `seal_numba_arrays` to refuse host access. The seal
(`sealed`) is per thread: it holds in the thread that calls `launch`, so Numba's simulator,
whose GPU threads are Python threads of their own, runs kernels unhindered, and the grader
reads the outputs after `launch` returns. The patches stay on the simulator's arrays too, and
the doctor's arrays still ask `refuse_host_read`/`refuse_host_write` themselves: a second line
behind the handles. The static policy stays the first line, with its teaching messages; the
OS sandbox (sandbox.py) is the wall around all of them.
"""

from __future__ import annotations

import threading
import weakref
from contextlib import contextmanager
from functools import wraps

HINT = (
    "Device arrays are for kernels: read and write them inside your @cuda.jit kernels. "
    "`launch` only chooses the grid and launches (a fill such as `out[:] = 0` is fine)."
)

_state = threading.local()

DOCTOR_INTERNALS = frozenset(
    ("arr", "mem", "vals", "wr", "rd", "ws", "rs", "off", "st", "stype", "rows") + ("n0", "n1", "n2", "s0", "s1", "s2")
)
"""The kernel doctor's device arrays' own bookkeeping (grader/doctor/memory.py `View`'s slots
less the public `shape`, `ndim`, `size`, `dtype`, `name`): their data and shadow memory. Host
code never holds a View while `launch` runs (it holds a `Handle`, which has none of these), but
the static policy refuses them by name, with a message that says why (tests/test_device_data.py
keeps the two in step), and a handle asked for one refuses it as a read. Numba's arrays keep
theirs behind underscores, which the policy refuses as a class."""

ENGINE_INTERNALS = DOCTOR_INTERNALS | {"_ary"}
"""Names of the CPU engines' data attributes (the simulator's is `_ary`): asked of a handle,
each is a host read, refused as one (the handle has no such attribute either way)."""


class HostDataAccess(PermissionError):
    """Host code touched a device array's data while `launch` ran; the verdict is `forbidden`."""

    learner_verdict = "forbidden"
    learner_hint = HINT

    def __init__(self, name: str, action: str, message: str | None = None):
        super().__init__(message or f"host code {action} `{name}`'s data outside a kernel: compute it in a kernel")


@contextmanager
def sealed(arguments: dict | None = None):
    """Device arrays refuse host access from this thread inside. `arguments` (launch's keyword
    arguments) name the arrays in messages. Yields the arguments to call `launch` with: a CPU
    engine's array as a `Handle` under its parameter's name, anything else as it is.

        with sealed(kwargs) as arguments:
            launch(**arguments)
    """
    arguments = dict(arguments or {})
    previous = getattr(_state, "names", None)
    _state.names = {id(value): name for name, value in arguments.items()}
    try:
        yield {
            name: _handle(value, name) if isinstance(value, _ENGINES) else value for name, value in arguments.items()
        }
    finally:
        _state.names = previous
        _forget_the_dead()


@contextmanager
def handing_out():
    """While a submission's file loads (grader/steps/load.py): the engines' allocation functions
    give handles, as they do while `launch` runs, so that a device array made at module level
    (`SCRATCH = cuda.device_array(n)`) is a handle too. Nothing is sealed: no input exists yet."""
    previous = getattr(_state, "handing_out", False)
    _state.handing_out = True
    try:
        yield
    finally:
        _state.handing_out = previous


def is_sealed() -> bool:
    return getattr(_state, "names", None) is not None


def _submission_running() -> bool:
    """The submission's own code runs in this thread: its `launch` (sealed) or its file loading."""
    return getattr(_state, "names", None) is not None or getattr(_state, "handing_out", False)


def _name(array, fallback: str | None) -> str:
    names = getattr(_state, "names", None) or {}
    return names.get(id(array)) or fallback or "a device array"


def _guarding() -> bool:
    """Sealed, and not inside an allowed fill (Numba fills a GPU array by copying the constant
    to the device first: that inner copy is the fill's own, not the submission's)."""
    return is_sealed() and not getattr(_state, "filling", False)


def refuse_host_read(array, name: str | None = None) -> None:
    if _guarding():
        raise HostDataAccess(_name(array, name), "read")


def refuse_host_write(array, value=None, name: str | None = None) -> None:
    """A write of one constant (a fill) is allowed; any other write from the host is not."""
    if _guarding() and not _is_constant(value):
        raise HostDataAccess(_name(array, name), "wrote")


def _is_constant(value) -> bool:
    """A plain number or a NumPy scalar of NumPy's own types: not a subclass, whose methods,
    run by the fill, would be the submission's code."""
    import numpy as np

    kind = type(value)
    return kind in (int, float, bool, complex) or (issubclass(kind, np.generic) and kind.__module__ == "numpy")


@contextmanager
def _filling():
    previous = getattr(_state, "filling", False)
    _state.filling = True
    try:
        yield
    finally:
        _state.filling = previous


# -- handles: what host code holds of a CPU engine's device array --------------------------------
_ENGINES: tuple = ()
"""The CPU engines' device-array classes (`register_engine_array`)."""

_ARRAYS: dict = {}
"""id(handle) -> (a weak reference to the handle, the array it stands for, its name in messages).
The handle is the key, not a value: the handle holds nothing, and what it stands for lives
only here. Entries of handles that are gone are dropped when a seal ends."""

_KERNEL_THREADS: tuple = ()
"""Classes of the threads that run a simulated kernel (the simulator's BlockThread): kernel
code, compiled by Numba's CUDA compiler first, never host code. A kernel there that reads a
device array the module holds as a global (a handle, made when the file loaded) indexes it as
its own."""

_LOOSE: dict = {}
"""id(array) -> a weak reference to it: simulator arrays made while the submission's code ran
that no handle stands for (made by Numba's internals: `cuda.In(x).to_device(...)`,
`cuda.devicearray`). A kernel launched while sealed refuses them (`kernel_arguments`)."""


def register_engine_array(cls) -> None:
    """A CPU engine's device-array class: host code gets a handle in place of each (idempotent)."""
    global _ENGINES
    if cls not in _ENGINES:
        _ENGINES = (*_ENGINES, cls)


def _handle(array, name: str) -> Handle:
    handle = object.__new__(Handle)
    _ARRAYS[id(handle)] = (weakref.ref(handle), array, name)
    _LOOSE.pop(id(array), None)
    return handle


def _entry(handle) -> tuple:
    """(weak reference, array, name) of a handle the grader made, else TypeError."""
    entry = _ARRAYS.get(id(handle))
    if entry is None or entry[0]() is not handle:
        raise TypeError("this device-array handle stands for no array: only the grader makes them")
    return entry


def _name_of(handle) -> str:
    entry = _ARRAYS.get(id(handle))
    return entry[2] if entry is not None and entry[0]() is handle else "a device array"


def _forget_the_dead() -> None:
    for key, entry in list(_ARRAYS.items()):
        if entry[0]() is None:
            _ARRAYS.pop(key, None)
    for key, ref in list(_LOOSE.items()):
        if ref() is None:
            _LOOSE.pop(key, None)


def opaque(array):
    """What an engine's allocation function returns to the submission's code: a handle for a
    CPU engine's array while `launch` runs or the file loads, else `array` itself (lesson code,
    the grader's own allocations, a GPU's arrays)."""
    if isinstance(array, _ENGINES) and _submission_running():
        return _handle(array, _name(array, None))
    return array


def kernel_arguments(args) -> tuple:
    """A kernel launch's arguments as the engine runs them: each handle replaced by the array it
    stands for (in tuples too). The engines call it once per launch, never per element access.
    While sealed, a simulator array made by the submission's code that no handle stands for
    (Numba's internals) is refused: a kernel could fill it for host code to read."""
    return tuple(_kernel_argument(value) for value in args)


def _kernel_argument(value):
    if value.__class__ is Handle:
        return _entry(value)[1]
    if value.__class__ is tuple:
        return kernel_arguments(value)
    if _LOOSE and is_sealed():
        ref = _LOOSE.get(id(value))
        if ref is not None and ref() is value:
            raise HostDataAccess(
                "",
                "",
                "host code launched a kernel on a device array made through Numba's internals: "
                "allocate with cuda.device_array(...) or cuda.to_device(...)",
            )
    return value


class Handle:
    """A CPU engine's device array as the submission's host code holds it (grader/containment/
    device_data.py): its form (`shape`, `size`, `ndim`, `dtype`, `strides`, `itemsize`, `nbytes`,
    `flags`, `len()`), views (`a[1:]`, `a[:, 0]`, `reshape`, `ravel`, `T`, `transpose`, `view`,
    `squeeze`, `split`), a fill (`out[:] = 0`); every read or write of the data is HostDataAccess.
    It has no attribute of its own (only a weak-reference slot, which the grader's own registry
    fills): the array it stands for is kept in `_ARRAYS`, and kernel launches unwrap it."""

    __slots__ = ("__weakref__",)
    __hash__ = object.__hash__

    def __new__(cls, *args, **kwargs):
        raise TypeError("device arrays come from launch's arguments, cuda.to_device and cuda.device_array")

    # -- the form of the array ----------------------------------------------------------------
    @property
    def shape(self):
        return _entry(self)[1].shape

    @property
    def size(self):
        return _entry(self)[1].size

    @property
    def ndim(self):
        return _entry(self)[1].ndim

    @property
    def dtype(self):
        return _entry(self)[1].dtype

    @property
    def strides(self):
        return _entry(self)[1].strides

    @property
    def itemsize(self):
        return _entry(self)[1].itemsize

    @property
    def nbytes(self):
        return _entry(self)[1].nbytes

    @property
    def flags(self):
        array = _entry(self)[1]
        return {"C_CONTIGUOUS": bool(array.is_c_contiguous()), "F_CONTIGUOUS": bool(array.is_f_contiguous())}

    def is_c_contiguous(self):
        return bool(_entry(self)[1].is_c_contiguous())

    def is_f_contiguous(self):
        return bool(_entry(self)[1].is_f_contiguous())

    def __len__(self):
        return len(_entry(self)[1])

    def __repr__(self):
        entry = _ARRAYS.get(id(self))
        if entry is None or entry[0]() is not self:
            return "<device array handle of nothing>"
        array, name = entry[1], entry[2]
        return f"<device array `{name}` {tuple(array.shape)} {array.dtype}>"

    # -- views: another handle on the same data -----------------------------------------------
    def __getitem__(self, key):
        if _KERNEL_THREADS and isinstance(threading.current_thread(), _KERNEL_THREADS):
            return _entry(self)[1][key]  # a simulated kernel reading a global device array
        return _view(self, lambda array: array[key])

    @property
    def T(self):
        return _view(self, lambda array: array.T)

    def transpose(self, *args, **kwargs):
        return _view(self, lambda array: array.transpose(*args, **kwargs))

    def reshape(self, *args, **kwargs):
        return _view(self, lambda array: array.reshape(*args, **kwargs))

    def ravel(self, *args, **kwargs):
        return _view(self, lambda array: array.ravel(*args, **kwargs))

    def view(self, *args, **kwargs):
        return _view(self, lambda array: array.view(*args, **kwargs))

    def squeeze(self, *args, **kwargs):
        return _view(self, lambda array: array.squeeze(*args, **kwargs))

    def split(self, *args, **kwargs):
        return _view(self, lambda array: array.split(*args, **kwargs))

    # -- a fill ---------------------------------------------------------------------------
    def __setitem__(self, key, value):
        _, array, name = _entry(self)
        if _KERNEL_THREADS and isinstance(threading.current_thread(), _KERNEL_THREADS):
            array[key] = value  # a simulated kernel writing a global device array
            return
        if not _is_constant(value):
            raise HostDataAccess(name, "wrote")
        try:
            array[key] = value
        except HostDataAccess:
            raise HostDataAccess(name, "wrote") from None

    def __getattr__(self, name):
        """Only names a handle lacks arrive here: the engines' data attributes, NumPy's array
        attributes (`.data`, `.base`, `.sum`...) and its data protocols (`__array_interface__`)
        are reads of the data; anything else is missing (Python's own probes, such as `dir`'s
        `__dict__`, find nothing)."""
        import numpy as np

        if (
            name in ENGINE_INTERNALS
            or name in _DATA_PROTOCOLS
            or (not name.startswith("__") and hasattr(np.ndarray, name))
        ):
            raise HostDataAccess(_name_of(self), "read")
        raise AttributeError(f"a device array has no attribute `{name}`")


_DATA_PROTOCOLS = frozenset(("__array_interface__", "__array_struct__", "__dlpack__", "__dlpack_device__"))


def _view(handle, take):
    """`take(array)` as a handle of the same name: a view, or HostDataAccess when it is data."""
    _, array, name = _entry(handle)
    try:
        result = take(array)
    except HostDataAccess:
        raise HostDataAccess(name, "read") from None
    if isinstance(result, _ENGINES):
        return _handle(result, name)
    if isinstance(result, list) and all(isinstance(part, _ENGINES) for part in result):  # split
        return [_handle(part, name) for part in result]
    raise HostDataAccess(name, "read")  # a value: the engine's own seal holds only in launch's thread


def _refusing(action: str):
    def refuse(self, *args, **kwargs):
        raise HostDataAccess(_name_of(self), action)

    return refuse


_OPERATORS = ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "divmod", "pow")
_OPERATORS += ("lshift", "rshift", "and", "xor", "or")
_HANDLE_READS = (
    ("copy_to_host", "tolist", "__array__", "__iter__", "__reversed__", "__contains__", "__bool__")
    + ("__index__", "__int__", "__float__", "__complex__", "__round__", "__trunc__", "__floor__", "__ceil__")
    + ("__neg__", "__pos__", "__abs__", "__invert__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__")
    + ("__copy__", "__deepcopy__", "__reduce__", "__reduce_ex__", "__getstate__")
    + tuple(f"__{prefix}{op}__" for op in _OPERATORS for prefix in ("", "r", "i"))
)
"""Everything that reads a handle's data (copies and pickles included: a copy is a read)."""
for _method in _HANDLE_READS:
    setattr(Handle, _method, _refusing("read"))
Handle.copy_to_device = _refusing("wrote")


_READS = (
    "copy_to_host",
    "__array__",
    "__iter__",
    "tolist",
    "getitem",
    "__add__",
    "__sub__",
    "__mul__",
    "__truediv__",
    "__floordiv__",
    "__mod__",
    "__pow__",
    "__eq__",
    "__ne__",
    "__lt__",
    "__le__",
    "__gt__",
    "__ge__",
)
_WRITES = ("copy_to_device", "setitem")


def _refusing_read(original):
    @wraps(original)
    def method(self, *args, **kwargs):
        refuse_host_read(self)
        return original(self, *args, **kwargs)

    return method


def _refusing_write(original):
    @wraps(original)
    def method(self, *args, **kwargs):
        refuse_host_write(self)
        return original(self, *args, **kwargs)

    return method


def _getitem(original, array_class):
    @wraps(original)
    def method(self, key):
        value = original(self, key)
        if is_sealed() and not isinstance(value, array_class):  # a value, not a view
            refuse_host_read(self)
        return value

    return method


def _setitem(original):
    @wraps(original)
    def method(self, key, value):
        refuse_host_write(self, value)
        if not is_sealed():
            return original(self, key, value)
        with _filling():  # a constant: what Numba does with it is the fill's own work
            return original(self, key, value)

    return method


METADATA = frozenset(("shape", "size", "ndim", "dtype", "strides", "itemsize", "nbytes", "flags", "alloc_size"))
"""What host code may ask of a device array: its form, never its values."""


def _getattr(original):
    @wraps(original)
    def method(self, name):
        value = original(self, name)  # the simulator forwards names it lacks to the NumPy array
        if name not in METADATA:
            refuse_host_read(self)
        return value

    return method


def _defines(cls, name: str) -> bool:
    """`cls` or a base of it other than `object` defines `name` (object's `__eq__` is identity)."""
    return any(name in vars(base) for base in cls.__mro__ if base is not object)


def _shown(original):
    """A repr that shows the data (the simulator's) shows only the array's form while sealed."""

    @wraps(original)
    def method(self):
        if is_sealed():
            return f"<device array {tuple(self.shape)} {self.dtype}>"
        return original(self)

    return method


def _patch(cls, array_class) -> None:
    if vars(cls).get("_zerogpu_sealed"):
        return
    for name in _READS:
        if _defines(cls, name):
            setattr(cls, name, _refusing_read(getattr(cls, name)))
    for name in _WRITES:
        if _defines(cls, name):
            setattr(cls, name, _refusing_write(getattr(cls, name)))
    if _defines(cls, "__getitem__"):
        cls.__getitem__ = _getitem(cls.__getitem__, array_class)
    if _defines(cls, "__setitem__"):
        cls.__setitem__ = _setitem(cls.__setitem__)
    if _defines(cls, "__getattr__"):
        cls.__getattr__ = _getattr(cls.__getattr__)
    if not _defines(cls, "__iter__"):  # else iteration would go through __getitem__, value by value
        cls.__iter__ = _refusing_read(lambda self: (self[i] for i in range(len(self))))
    for name in ("__repr__", "__str__"):
        if _defines(cls, name):
            setattr(cls, name, _shown(getattr(cls, name)))
    cls._zerogpu_sealed = True


def seal_numba_arrays() -> None:
    """Patch the device arrays of whichever Numba CUDA target is loaded (idempotent). Outside
    `sealed`, every patched method does what it did. On the simulator, also hand out handles
    (`simulator_handles`) and make sure our simulator patches, which unwrap them, are in."""
    from numba import config

    if config.ENABLE_CUDASIM:
        from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

        from grader.backend.simulator import install

        _patch(FakeCUDAArray, FakeCUDAArray)
        simulator_handles()
        install()
    else:
        from numba.cuda.args import Out
        from numba.cuda.cudadrv.devicearray import DeviceNDArray, DeviceNDArrayBase

        _patch(DeviceNDArray, DeviceNDArrayBase)
        _patch_copy_back(Out)


COPY_BACK = (
    "a kernel was handed a host (NumPy) array, which Numba copies back to the host after the "
    "launch: host code would read the kernel's output. Hand kernels device arrays "
    "(`cuda.to_device(w)` for a host constant)"
)


def _patch_copy_back(hint_class) -> None:
    """On a GPU, Numba copies a host array handed to a kernel (wrapped in `cuda.Out` or
    `cuda.InOut`, the default) back after the launch with the driver's own copy, not
    `copy_to_host`, so the array patches never see it. While sealed, a hint whose `to_device`
    queues a copy back is refused before the launch: the same host read the doctor and the
    simulator refuse after it. `cuda.In` queues none and stays allowed. Idempotent."""
    if vars(hint_class).get("_zerogpu_sealed"):
        return
    original = hint_class.to_device

    @wraps(original)
    def to_device(self, retr, stream=0):
        queued: list = []
        devary = original(self, queued, stream)
        if queued and _guarding():
            raise HostDataAccess("a host array", "read", COPY_BACK)
        retr.extend(queued)
        return devary

    hint_class.to_device = to_device
    hint_class._zerogpu_sealed = True


SIMULATOR_ALLOCATIONS = ("to_device", "device_array", "device_array_like", "mapped_array", "auto_device")
"""numba.cuda's functions that make a device array on the simulator: while the submission's
code runs they give handles. (`pinned_array`, `managed_array` are NumPy arrays there: host
memory, which a kernel launch copies back, a host read refused while sealed.)"""

_simulator_ready = False


def simulator_handles() -> None:
    """Numba's simulator hands out handles (idempotent): its FakeCUDAArray is an engine array,
    numba.cuda's allocation functions give handles while the submission's code runs, and a
    kernel launch from the host unwraps them first (grader/backend/simulator.py's
    BEFORE_LAUNCH; the facade adds this to the simulator's patches, which go in before any
    submission loads, so `from numba.cuda import device_array` binds the handing one)."""
    global _simulator_ready, _KERNEL_THREADS
    if _simulator_ready:
        return
    import numba.cuda as cuda
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray
    from numba.cuda.simulator.kernel import BlockThread

    from grader.backend.simulator import BEFORE_LAUNCH

    register_engine_array(FakeCUDAArray)
    _KERNEL_THREADS = (BlockThread,)
    made = FakeCUDAArray.__init__

    @wraps(made)
    def __init__(self, *args, **kwargs):
        made(self, *args, **kwargs)
        if _submission_running():  # kept only until a handle stands for it (`_handle`)
            _LOOSE[id(self)] = weakref.ref(self)

    FakeCUDAArray.__init__ = __init__
    for name in SIMULATOR_ALLOCATIONS:
        if hasattr(cuda, name):
            setattr(cuda, name, _allocating(getattr(cuda, name), name))
    BEFORE_LAUNCH.insert(0, _simulator_kernel_arguments)  # before the compile check sees them
    _simulator_ready = True


def _allocating(original, name: str):
    @wraps(original)
    def allocate(*args, **kwargs):
        if name in ("to_device", "auto_device") and args and args[0].__class__ is Handle and kwargs.get("to") is None:
            return args[0] if name == "to_device" else (args[0], False)  # on the device already, as on a GPU
        made = original(*args, **kwargs)
        if isinstance(made, tuple):  # auto_device: (array, converted)
            return (opaque(made[0]), *made[1:])
        return opaque(made)

    return allocate


def _simulator_kernel_arguments(kernel, args) -> tuple:
    """BEFORE_LAUNCH's first step: `kernel_arguments`, inside numba's argument hints too
    (`cuda.In(a)`)."""
    from numba.cuda.simulator.args import ArgHint

    return tuple(
        type(value)(kernel_arguments((value.value,))[0]) if isinstance(value, ArgHint) else _kernel_argument(value)
        for value in args
    )
