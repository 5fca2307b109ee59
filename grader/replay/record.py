"""Record what a submission's `launch` does, without any data: the recording child's side.

`launch` is called with placeholders (`DeviceRef`: a device array with a shape and a dtype, and
no data) in place of the inputs and outputs. Numba's CUDA API is replaced, for the whole
process, by one that writes each call down (`Recorder`): allocations, uploads of host arrays
the file built itself, fills, copies, views and kernel launches. Reading a placeholder's data on
the host cannot happen (there is none) and stops with a message that says where to compute it
instead. This runs in a process of its own that holds no input, no secret and no GPU context;
what it produces is only a plan (grader/replay/plan.py), checked by the grading process.
"""

from __future__ import annotations

import math
import sys
from contextlib import contextmanager

import numpy as np

from grader.backend.simulator import SIGNATURES
from grader.compiler.describe import LARGEST_CONSTANT_ARRAY, describe_function, jit_python_function
from grader.compiler.dispatch import (
    signature_types,
)
from grader.replay.placeholders import (
    H200,
    Device,
    DeviceConstant,
    DeviceRef,
    NoRoomOnTheDevice,
    NotInTheFile,
    RefusedArgument,
    Stream,
    TooMuchHostData,
    UnfilledDeviceArray,
    bytes_said,
    launch_configuration,
)
from grader.replay.plan import FAILING_VERDICTS, MAX_STEPS, MAX_UPLOAD_BYTES, Failure, Param, Plan, Ref, Step, Value
from grader.steps.explain import explain_exception


def _described(kernel, py_func, options, recorder: "Recorder") -> dict:
    """A launched kernel's description (grader/compiler/describe.py), with its declared types.
    Its text stays behind (but in a notebook's own process): the grading process takes each
    `def` from its own copy of the hand-in (grader/replay/sources.py)."""
    try:
        description = describe_function(py_func, options, resolve=recorder.constant_of)
    except (OSError, TypeError):  # inspect found no text for it
        raise NotInTheFile(
            f"the kernel `{py_func.__name__}` has no `def` in your file that the grader can read: "
            "write each kernel as a `def` under `@cuda.jit` in the file itself (not made by `exec`)"
        ) from None
    if not recorder.own_arrays:
        description = _without_sources(description)
    declared = getattr(kernel, SIGNATURES, ()) or _compiled_only(kernel)
    if declared:  # `@cuda.jit("void(float32[:])")`: the replay compiles for these types only
        description["signatures"] = [list(signature_types(s)) for s in declared]
    return description


def _without_sources(desc: dict) -> dict:
    """A description, device functions too, without the text it was read from."""
    out = {k: v for k, v in desc.items() if k != "source"}
    out["globals"] = {
        name: ["device", _without_sources(value[1])] if value[0] == "device" else value
        for name, value in desc["globals"].items()
    }
    return out


class Recorder:
    """The steps of one plan, as `launch` makes them. Buffers made at import time (the file's
    own module-level device arrays) are steps of every plan, recorded once before the first."""

    def __init__(self, own_arrays: bool = False):
        self.own_arrays = own_arrays
        """Recording in the learner's own process (a notebook): its device arrays made before
        the check (a global table) are uploaded as they are. Never in a recording child."""
        self.module_steps: list = []
        self.steps: list | None = None
        self.next_id = 0
        self.kernels: dict = {}
        """kernel key -> its description (grader/compiler/describe.py)."""
        self.keys: dict = {}
        """id(py_func) -> kernel key."""
        self.dispatchers: dict = {}
        """kernel key -> the dispatcher launched (grader/replay/references.py: the grader's own)."""
        self.types_only = False
        """Recording the grader's references for their kernels' types alone (grader/replay/
        references.py): a device array's `view(dtype)` is then allowed, written down as a new
        array of that type, so the plan is read for types, never replayed."""
        self.scalars: dict = {}
        self.uploaded = 0
        self.known: set = set()
        """Buffers of the plan under way (and the file's own, from import time)."""
        self.refs: dict = {}
        self.filename: str | None = None
        """The submission's file: a launch step notes the line of it that launched."""
        self.contents: dict = {}
        """Buffer id -> its values as a NumPy array, for the file's own module-level arrays
        filled from the host (a table of weights): a kernel that reads one as a global reads
        these constants (`constant_of`)."""
        self.device_memory = H200["TOTAL_MEMORY"]

    # -- one plan --------------------------------------------------------------------------------
    def start(self, params: dict, scalars: dict) -> dict:
        """Begin a plan; returns launch's keyword arguments: placeholders for `params`
        (name -> (shape, dtype)) and the scalars as they are."""
        self.steps = list(self.module_steps)
        self.known = {s.id for s in self.module_steps if s.id >= 0}
        self.uploaded = sum(len(s.data) for s in self.module_steps)
        self.scalars = dict(scalars)
        kwargs = {}
        for name, (shape, dtype) in params.items():
            ref = self._new(shape, dtype)
            self._add(Step("param", id=ref._id, name=name))
            kwargs[name] = ref
        return {**kwargs, **self.scalars}

    def finish(self) -> Plan:
        plan, self.steps = Plan(tuple(self.steps)), None
        return plan

    def _steps(self) -> list:
        return self.module_steps if self.steps is None else self.steps

    def _add(self, step: Step) -> None:
        for ref in (step.target, step.source, *_refs(step.args)):
            if ref >= 0 and ref not in self.known and self.steps is not None:
                self._carried(ref)
        if step.id >= 0:
            self.known.add(step.id)
        steps = self._steps()
        if len(steps) >= MAX_STEPS:
            raise RuntimeError(
                f"`launch` did more than {MAX_STEPS} things (launches, allocations, copies) for one call: "
                "a loop that launches a kernel per element? Launch one kernel over all the elements."
            )
        steps.append(step)

    def _carried(self, ref_id: int) -> None:
        """A device array kept from an earlier call of `launch` (a cached scratch buffer): in this
        call's plan it is a fresh allocation, holding whatever it holds, as on a GPU it would hold
        what the last call left."""
        ref = self.refs[ref_id]
        self.known.add(ref_id)
        self._steps().append(Step("alloc", id=ref_id, shape=ref.shape, dtype=ref.dtype.str))

    def _new(self, shape, dtype) -> DeviceRef:
        ref = DeviceRef(self, self.next_id, tuple(int(s) for s in shape), np.dtype(dtype))
        self.refs[ref._id] = ref
        self.next_id += 1
        return ref

    # -- what the API calls become ----------------------------------------------------------------
    def viewed_as(self, ref: DeviceRef, dtype) -> DeviceRef:
        """`ref.view(dtype)` of a contiguous array, for its type (`types_only`)."""
        dtype = np.dtype(dtype)
        last = ref.shape[-1] * ref.dtype.itemsize // dtype.itemsize if ref.shape else 1
        return self.alloc((*ref.shape[:-1], last), dtype)

    def constant_of(self, value):
        """A global a kernel reads, as the compile check and the replay see it: a module-level
        device array filled from the host is its values (numba-cuda bakes a global's address
        into the kernel; its values are what the kernel reads)."""
        if not isinstance(value, DeviceRef):
            return value
        data = self.contents.get(value._id)
        if data is None or data.size > LARGEST_CONSTANT_ARRAY:
            return UnfilledDeviceArray(value.shape, value.dtype)
        return DeviceConstant(data.reshape(value.shape))

    def _note_contents(self, ref_id: int, values) -> None:
        """Values of a module-level buffer (while the file loads): a kernel may read it as a global."""
        if self.steps is None:
            self.contents[ref_id] = values

    def alloc(self, shape, dtype) -> DeviceRef:
        shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
        if any(s < 0 for s in shape):
            raise ValueError(f"negative dimensions are not allowed: {shape}")
        dtype = _dtype(dtype)
        asked = math.prod(shape) * dtype.itemsize
        if asked > self.device_memory:
            raise NoRoomOnTheDevice(
                f"`launch` asks for a device array of {bytes_said(asked)} ({dtype}, shape {shape}); "
                f"the GPU it is graded on has {bytes_said(self.device_memory)} of memory in all"
            )
        ref = self._new(shape, dtype)
        self._add(Step("alloc", id=ref._id, shape=ref.shape, dtype=ref.dtype.str))
        return ref

    def upload(self, host) -> DeviceRef:
        if isinstance(host, DeviceRef):
            ref = self.alloc(host.shape, host.dtype)
            self._add(Step("copy", target=ref._id, source=host._id))
            return ref
        array = _host_array(host)
        flat = array.reshape(-1)
        if _constant(flat):
            ref = self.alloc(array.shape, array.dtype)  # a constant array (np.zeros): a fill, not bytes
            self._add(Step("fill", target=ref._id, value=flat[0].item()))
            self._note_contents(ref._id, array.copy())
            return ref
        ref = self._new(array.shape, array.dtype)
        self._add(Step("upload", id=ref._id, shape=ref.shape, dtype=ref.dtype.str, data=self._bytes(array)))
        self._note_contents(ref._id, array.copy())
        return ref

    def _bytes(self, array: np.ndarray) -> bytes:
        """The array's bytes, counted against the plan's cap before they are copied."""
        self.uploaded += array.nbytes
        if self.uploaded > MAX_UPLOAD_BYTES:
            raise TooMuchHostData(
                f"`launch` copied more than {MAX_UPLOAD_BYTES >> 10} KiB of host data to the device "
                f"({bytes_said(self.uploaded)} with this array of shape {array.shape})"
            )
        return np.ascontiguousarray(array).tobytes()

    def view(self, source: DeviceRef, key: tuple, shape: tuple) -> DeviceRef:
        ref = self._new(shape, source.dtype)
        self._add(Step("view", id=ref._id, source=source._id, key=key))
        return ref

    def reshaped(self, source: DeviceRef, shape: tuple) -> DeviceRef:
        ref = self._new(shape, source.dtype)
        self._add(Step("view", id=ref._id, source=source._id, shape=shape))
        return ref

    def assign(self, target: DeviceRef, value) -> None:
        if isinstance(value, DeviceRef):
            if value.shape != target.shape:
                raise ValueError(f"cannot copy a device array of shape {value.shape} into one of shape {target.shape}")
            self._add(Step("copy", target=target._id, source=value._id))
        elif isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating)):
            self._add(Step("fill", target=target._id, value=_number(value)))
            self.contents.pop(target._id, None)  # a fill of a whole array or of a view: not followed
        else:
            array = _host_array(value)
            if array.size != target.size:
                raise ValueError(f"cannot copy {array.size} elements into a device array of {target.size}")
            array = array.astype(target.dtype, copy=False)
            self._add(Step("write", target=target._id, dtype=array.dtype.str, data=self._bytes(array)))
            self.contents.pop(target._id, None)

    def launch(self, kernel, config, args) -> None:
        py_func, device, options = jit_python_function(kernel)
        if device:
            raise TypeError(f"`{py_func.__name__}` is a device function: a kernel calls it, the host cannot launch it")
        grid, block, shared = launch_configuration(config)
        key = self.keys.get(id(py_func))
        if key is None:
            key = f"k{len(self.kernels)}_{py_func.__name__}"[:100]
            # types_only: compiled from the dispatcher itself (grader/replay/references.py)
            self.kernels[key] = {} if self.types_only else _described(kernel, py_func, options, self)
            self.keys[id(py_func)] = key
            self.dispatchers[key] = kernel
        names = py_func.__code__.co_varnames[: py_func.__code__.co_argcount]
        converted = tuple(self._argument(a, n) for a, n in zip(args, names + ("",) * len(args)))
        line = self._line()
        self._add(Step("launch", kernel=key, grid=grid, block=block, shared=shared, args=converted, line=line))

    def _line(self) -> int:
        """The line of the submission that is launching (the innermost frame in its file)."""
        frame = sys._getframe(1)
        while frame is not None:
            if frame.f_code.co_filename == self.filename:
                return frame.f_lineno
            frame = frame.f_back
        return 0

    def _argument(self, value, name: str):
        if isinstance(value, DeviceRef):
            return Ref(value._id)
        if isinstance(value, np.ndarray) and value.ndim > 0:
            return Ref(self.upload(value)._id)  # numba copies a host array in (and back, to a copy nobody reads)
        if isinstance(value, tuple):
            return tuple(self._argument(v, name) for v in value)
        for param, given in self.scalars.items():
            if value is given or (type(value) is type(given) and value == given):
                return Param(param, np.asarray(given).dtype.str)
        if isinstance(value, (bool, np.bool_)):
            return Value("|b1", bool(value))
        if isinstance(value, np.generic) and value.dtype.kind in "iufc":
            return Value(value.dtype.str, _number(value))
        if isinstance(value, int):
            return Value("<i8" if -(1 << 63) <= value < (1 << 63) else "<u8", value)
        if isinstance(value, float):
            return Value("<f8", value)
        if isinstance(value, complex):
            return Value("<c16", value)
        kind = type(value)
        if self.own_arrays and hasattr(value, "copy_to_host") and kind.__module__.startswith("numba"):
            return Ref(self.upload(value.copy_to_host())._id)
        if kind.__module__.startswith("numba"):
            raise RefusedArgument(
                f"a kernel argument ({name or 'an argument'}) made by numba's internals ({kind.__name__})"
            )
        raise TypeError(
            f"a kernel argument ({name or 'an argument'}) of type {kind.__name__}: pass device arrays and numbers"
        )


def _compiled_only(kernel) -> tuple:
    """The argument types of a numba-cuda kernel jitted with signatures (on a GPU host: it
    compiled them at decoration and compiles nothing else), else ()."""
    if getattr(kernel, "_can_compile", True):
        return ()
    return tuple(getattr(kernel, "overloads", {}))


def _refs(args) -> list:
    """Buffer ids a launch's arguments name (tuples included)."""
    out = []
    for arg in args:
        if isinstance(arg, Ref):
            out.append(arg.id)
        elif isinstance(arg, tuple):
            out += _refs(arg)
    return out


def _constant(flat: np.ndarray) -> bool:
    """Is every element the same number (np.zeros: a fill, not bytes)? Past the upload cap, a few
    elements first: a large array that is not constant is refused without reading it all."""
    if not flat.size or flat.dtype.kind not in "biuf" or np.isnan(flat[:1]).any():
        return False
    if flat.nbytes > MAX_UPLOAD_BYTES:
        picks = np.linspace(0, flat.size - 1, 64).astype(np.int64)
        if (flat[picks] != flat[0]).any():
            return False
    return bool((flat == flat[0]).all())


def _number(value):
    value = value.item() if isinstance(value, np.generic) else value
    return bool(value) if isinstance(value, bool) else value


def _dtype(dtype) -> np.dtype:
    try:
        return np.dtype(getattr(dtype, "key", None) or dtype)
    except TypeError:
        from numba.np.numpy_support import as_dtype

        return as_dtype(dtype)


def _host_array(value) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, (list, tuple, int, float, np.generic)):
        return np.asarray(value)
    raise TypeError(f"cannot copy a {type(value).__name__} to the device")


# -- numba.cuda while recording ------------------------------------------------------------------
REFUSED = {
    "pinned_array": "page-locked host memory",
    "mapped_array": "mapped host memory",
    "managed_array": "managed memory",
    "pinned": "page-locked host memory",
    "mapped": "mapped host memory",
    "event": "CUDA events (the grader times kernels itself)",
    "as_cuda_array": "foreign device arrays",
    "from_cuda_array_interface": "foreign device arrays",
    "reduce": "Numba's built-in reduction",
    "Reduce": "Numba's built-in reduction",
    "external_stream": "external streams",
}


@contextmanager
def recording(recorder: Recorder, device: dict | None = None):
    """While inside, Numba's CUDA API is `recorder`'s for the whole process: entered before the
    submission is loaded, so that names it imports (`from numba.cuda import to_device`) are
    ours. Kernels stay numba's own objects, whose launches record: the simulator's in a
    recording child, and numba-cuda's too in a notebook on a GPU host (`record_here`), where
    nothing then reaches the GPU. Everything is put back on leaving."""
    import numba.cuda as cuda
    from numba.cuda.simulator.kernel import FakeCUDAKernel

    info = Device(dict(H200, **(device or {})))
    recorder.device_memory = int(info.TOTAL_MEMORY)
    api = {
        "to_device": lambda obj, stream=0, copy=True, to=None: (
            recorder.assign(to, obj) or to if to is not None else recorder.upload(obj)
        ),
        "device_array": lambda shape, dtype=np.float64, strides=None, order="C", stream=0: recorder.alloc(shape, dtype),
        "device_array_like": lambda ary, stream=0: recorder.alloc(ary.shape, ary.dtype),
        "synchronize": lambda: None,
        "stream": lambda: Stream(),
        "default_stream": lambda: Stream(),
        "per_thread_default_stream": lambda: Stream(),
        "legacy_default_stream": lambda: Stream(),
        "get_current_device": lambda: info,
        "select_device": lambda device_id=0: info,
        "close": lambda: None,
        "is_available": lambda: True,
        "detect": lambda: True,
    }
    for name, what in REFUSED.items():
        api[name] = _refusal(name, what)

    def configure(kernel, config):
        config = config if isinstance(config, tuple) else (config,)
        return lambda *args: recorder.launch(kernel, config, args)

    def call(kernel, *args, **kwargs):
        name, device, _ = jit_python_function(kernel)
        name = name.__name__
        if device:
            raise TypeError(f"`{name}` is a device function: a kernel calls it, the host cannot")
        raise TypeError(f"kernel `{name}` launched without a configuration: write {name}[blocks, threads](...)")

    def forall(kernel, ntasks, tpb=0, stream=0, sharedmem=0):
        return configure(kernel, (max(-(-int(ntasks) // (tpb or 128)), 1), tpb or 128, stream, sharedmem))

    targets = [(cuda, name, value) for name, value in api.items()]
    simulator = sys.modules.get("numba.cuda.simulator")
    if simulator is not None and simulator is not cuda:
        targets += [(simulator, name, value) for name, value in api.items()]
    for kind in _kernel_classes(FakeCUDAKernel):
        targets += [(kind, "__getitem__", configure), (kind, "__call__", call), (kind, "forall", forall)]
        targets += [(kind, "configure", lambda kernel, *config: configure(kernel, config))]
    saved = [(owner, name, owner.__dict__.get(name, _ABSENT)) for owner, name, _ in targets]
    for owner, name, value in targets:
        setattr(owner, name, value)
    try:
        yield recorder
    finally:
        for owner, name, value in reversed(saved):
            if value is _ABSENT:
                delattr(owner, name)
            else:
                setattr(owner, name, value)


_ABSENT = object()


def _kernel_classes(simulated) -> list:
    """The kernel types whose launches record: the simulator's, and numba-cuda's dispatcher when
    this process loaded it (a GPU host)."""
    kinds = [simulated]
    dispatcher = sys.modules.get("numba.cuda.dispatcher")
    real = getattr(dispatcher, "CUDADispatcher", None)
    if isinstance(real, type):
        kinds.append(real)
    return kinds


def _refusal(name: str, what: str):
    def refused(*args, **kwargs):
        raise NotImplementedError(f"`cuda.{name}` ({what}) cannot be graded: use device arrays and kernels")

    return refused


def record_cases(recorder: Recorder, launch, spec, wanted: dict, learner_files=()) -> dict:
    """Plan key -> the Plan of one call of `launch` per wanted case ({"dims", "scalars"}), or
    the Failure it met, in a learner's words (only a failing verdict). Inside `recording`."""
    plans: dict = {}
    for key, case in wanted.items():
        params = {a.name: (a.shape_for(case["dims"]), a.dtype) for a in spec.arrays}
        scalars = {p.name: np.dtype(p.dtype).type(case["scalars"][p.name]) for p in spec.scalars}
        try:
            launch(**recorder.start(params, scalars))
            plans[key] = recorder.finish()
        except BaseException as exc:  # noqa: BLE001 - a learner's bug becomes their verdict
            if isinstance(exc, KeyboardInterrupt):
                raise
            recorder.finish()
            info = explain_exception(exc, learner_files)
            verdict = info.verdict if info.verdict in FAILING_VERDICTS else "exception"
            plans[key] = Failure(verdict, info.message, info.line, info.source, info.error_type, info.hint)
    return plans
