"""Kernels under the kernel doctor: `kernel[blocks, threads](args)` runs every block in turn,
and every thread of a block in this one OS thread.

A kernel without barriers is a plain function: each thread runs to its end, one after the
other. A kernel with barriers is a generator (grader/doctor/transform.py): the scheduler steps
every thread of the block to its next `yield` (a barrier) round-robin, checks that they all
reached the same barrier (or all finished), starts a new epoch, and goes on. A kernel with warp
collectives (shuffles, votes, `syncwarp`) has its own scheduler, grader/doctor/warps.py. Epochs are what
the shadow memory compares to find races (grader/doctor/memory.py).
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from grader.backend.simulator import SIGNATURES, declared_signatures
from grader.compiler.dispatch import check_launch
from grader.doctor.efficiency import RECORDER, Efficiency, swap
from grader.doctor.errors import Unsupported
from grader.doctor.fakecuda import FAKE_CUDA, Dim3
from grader.doctor.findings import Findings, Launch
from grader.doctor.memory import CTX, EPOCH_SHIFT, View, element_class
from grader.doctor.arrays import global_array, read_only
from grader.doctor.runtime import BLOCK
from grader.doctor.transform import transform
from grader.compiler.client import compute_capability, verify_launch
from grader.doctor.warps import run_warps


MAX_THREADS_PER_LAUNCH = 1 << 24
"""Every thread runs on the CPU (about a microsecond each, more with accesses): a launch past
this many threads would take minutes to hours, so it stops with an explanation instead."""


class Session:
    """One run under the doctor (one case): what was found, the memory-efficiency logs, and
    the epoch counter that orders everything."""

    def __init__(self, profile: bool = True):
        self.findings = Findings()
        self.efficiency = Efficiency() if profile else None
        self.epoch = _NEXT_EPOCH[0]
        """Epochs only grow, across sessions too: an array that outlives a session (one the
        launch code keeps) must never hold stamps that look like the next session's."""
        self.kernels: list[str] = []
        self.where: tuple | None = None
        """(thread, block) of the thread running when a launch stopped with an exception."""
        self.launches: list[tuple] = []
        """(grid, block) of every launch, in order: to tell a grid too small from an index
        that ignores the block (grader.steps.diagnose)."""


_SESSION: list[Session] = []
_NEXT_EPOCH = [1]


@contextmanager
def session(profile: bool = True):
    s = Session(profile)
    if _SESSION:
        s.epoch = max(s.epoch, _SESSION[-1].epoch + 1)
    _SESSION.append(s)
    CTX.on_conflict, CTX.on_uninit = s.findings.conflict, s.findings.uninit
    try:
        yield s
    finally:
        _SESSION.pop()
        _NEXT_EPOCH[0] = max(_NEXT_EPOCH[0], s.epoch + 1)
        if _SESSION:
            _SESSION[-1].epoch = max(_SESSION[-1].epoch, s.epoch + 1)
            CTX.on_conflict, CTX.on_uninit = _SESSION[-1].findings.conflict, _SESSION[-1].findings.uninit


def current_session() -> Session:
    if not _SESSION:  # a kernel launched outside `session()`: keep its findings nowhere
        _SESSION.append(Session(profile=False))
        CTX.on_conflict, CTX.on_uninit = _SESSION[0].findings.conflict, _SESSION[0].findings.uninit
    return _SESSION[-1]


def _dims(value, what) -> tuple:
    if isinstance(value, (int, np.integer)):
        dims = (int(value),)
    elif isinstance(value, (tuple, list)) and 1 <= len(value) <= 3:
        dims = tuple(value)
        if not all(isinstance(v, (int, np.integer)) for v in dims):
            raise TypeError(f"the {what} size must be integers, not {value!r}")
        dims = tuple(int(v) for v in dims)
    else:
        raise TypeError(f"the {what} size must be an integer or a tuple of 1 to 3 integers, not {value!r}")
    return dims + (1,) * (3 - len(dims))  # sizes a GPU refuses (0, past its limits): check_launch


def _shared_bytes(value) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
        raise TypeError(f"the 4th launch parameter is dynamic shared memory in bytes, an integer, not {value!r}")
    return int(value)


class DoctorKernel:
    """What `cuda.jit` gives under the doctor: launch with `[blocks, threads]`, or
    `[blocks, threads, stream, shared_bytes]`. A stream runs in order with every other launch
    (as the default stream does); `shared_bytes` sizes `cuda.shared.array(0, dtype)`.
    `signatures`: the argument types `@cuda.jit("...")` declared (as numba types), if any."""

    def __init__(self, py_func, device: bool = False, original=None, signatures=None):
        self.py_func, self.device, self.original = py_func, device, original
        self.signatures = getattr(original, SIGNATURES, ()) if signatures is None else signatures
        self.__name__ = getattr(py_func, "__name__", "kernel")

    def __getitem__(self, config):
        if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
            raise ValueError("launch a kernel as kernel[blocks, threads_per_block](arguments)")
        grid, block = _dims(config[0], "grid"), _dims(config[1], "block")
        shared = _shared_bytes(config[3]) if len(config) == 4 else 0

        def launch(*args):
            current_session().launches.append((grid, block))
            return run_launch(self, grid, block, args, shared)

        return launch

    def forall(self, ntasks, tpb=0, stream=0, sharedmem=0):
        return self[max(int(ntasks), 1), 1]

    def __call__(self, *args):
        if self.device:
            raise Unsupported("calling a device function from the host")
        raise TypeError(
            f"kernel `{self.__name__}` launched without a configuration: write {self.__name__}[blocks, threads](...)"
        )


def doctor_jit(func_or_sig, device: bool = False):
    """`cuda.jit` in launch code run on the doctor (a signature is checked as numba-cuda does);
    grader/wiring.py makes it the doctor's `cuda.jit` (`FAKE_CUDA.make_kernel`)."""
    signatures = declared_signatures(func_or_sig, device)
    if signatures or func_or_sig is None:
        return lambda fn: DoctorKernel(fn, device=device, signatures=signatures)
    return DoctorKernel(func_or_sig, device=device)


def _kernel_argument(value, copies, name):
    if isinstance(value, View):
        return value
    if isinstance(value, np.ndarray):  # numba copies host arrays to the device and back
        view = global_array(np.array(value, copy=True), "host array")
        copies.append((value, view, name))
        return view
    if isinstance(value, (int, float, complex, bool, np.generic, tuple, type(None))):
        return value
    raise Unsupported(f"a kernel argument of type {type(value).__name__}")


def _within_the_doctors_reach(grid: tuple, block: tuple) -> None:
    threads = grid[0] * grid[1] * grid[2] * block[0] * block[1] * block[2]
    if threads > MAX_THREADS_PER_LAUNCH:
        raise ValueError(
            f"this launch has {threads:,} threads; the kernel doctor runs each one on the CPU "
            f"and stops past {MAX_THREADS_PER_LAUNCH:,}. Launch about as many threads as there "
            "are elements (blocks = ceil(n / threads))."
        )


def run_launch(kernel: DoctorKernel, grid: tuple, block: tuple, args: tuple, shared: int = 0) -> None:
    """One launch of `kernel` on the doctor, checked first as a GPU checks it: its declared
    signatures, Numba's CUDA compiler, the launch's limits (grader/compiler/dispatch.py)."""
    copies: list = []
    params = kernel.py_func.__code__.co_varnames[: kernel.py_func.__code__.co_argcount]
    args = tuple(_kernel_argument(a, copies, p) for a, p in zip(args, params + ("",) * len(args)))
    verified = verify_launch(kernel.py_func, args, getattr(kernel, "signatures", ()))
    args = tuple(_number(a) for a in verified.args)  # numbers as the declared signature types them
    check_launch(kernel.__name__, grid, block, shared, verified.shared_bytes, compute_capability())
    _within_the_doctors_reach(grid, block)
    try:
        arrays = frozenset(p for p, a in zip(params, args) if isinstance(a, View))
        code = transform(kernel.py_func, arrays, classes=_launch_classes(params, args))
    except Unsupported:
        raise
    except Exception as exc:  # noqa: BLE001 - our limitation, not the learner's bug
        raise Unsupported(
            f"the kernel doctor could not prepare `{kernel.__name__}` ({type(exc).__name__}: {exc})"
        ) from exc
    if code.read_only:
        args = _read_only_arguments(kernel.py_func, args, code.read_only)
    s = current_session()
    s.kernels.append(code.name)
    findings = s.findings
    launch = Launch(code.name, grid, block)
    findings.launch, findings.relaxed = launch, code.uses_threadfence
    FAKE_CUDA.set_launch(grid, block, shared)
    threads = _threads(block)
    CTX.lfloor = s.epoch << EPOCH_SHIFT
    profiler = s.efficiency.start_launch(code.name, block, kernel.py_func) if s.efficiency else None
    RUNNING.append(launch)
    try:
        for bz in range(grid[2]):
            for by in range(grid[1]):
                for bx in range(grid[0]):
                    here = (bx, by, bz)
                    FAKE_CUDA.set_block(bx, by, bz)
                    findings.current_block = here
                    launch.block_starts.append(s.epoch)
                    CTX.bfloor = s.epoch << EPOCH_SHIFT
                    BLOCK.shared = {}
                    watch = None
                    if profiler is not None and profiler.wants_block():
                        watch = BLOCK.views = [a for a in args if isinstance(a, View)]
                    try:
                        if code.uses_warp:
                            run_warps(code.func, args, threads, s, watch, _barrier)
                        elif code.is_generator:
                            _run_stepped(code.func, args, threads, s, watch)
                        else:
                            _run_plain(code.func, args, threads, s, watch)
                    finally:
                        if watch is not None:
                            _profile(False, watch)
                            profiler.add_block(RECORDER.log)
    except BaseException:
        s.where = (launch.thread(CTX.lin), tuple(FAKE_CUDA.blockIdx)[: launch.rank], launch.rank)
        raise
    finally:
        RUNNING.pop()
        BLOCK.shared = {}
        for arg in args:
            if isinstance(arg, View):
                if arg.rows is None:  # not a read-only twin: it may have been written
                    arg.mem.dirty = True
                arg.mem.flush()
        findings.end_launch(args)  # elements several threads stored to, counted during the launch
    for host, view, name in copies:
        host[...] = view.arr


def _number(value):
    """A kernel's signed integer argument as a Python int, which stands for an int64 on the
    doctor: Numba computes with any signed integer in 64 bits (int32 * int32 is an int64)."""
    return int(value) if isinstance(value, np.signedinteger) else value


def _launch_classes(params, args) -> tuple:
    """(parameter, the class of its values) for grader/doctor/promote.py: ("array", the class
    of its elements (grader/doctor/memory.py `element_class`), dimensions, scalar type) for an
    array, the class of a number."""
    out = []
    for param, arg in zip(params, args):
        if isinstance(arg, View):
            out.append((param, ("array", element_class(arg.dtype), arg.ndim, arg.dtype.type)))
        elif isinstance(arg, (int, float, np.number, np.bool_)):
            out.append((param, arg.__class__))
    return tuple(out)


RUNNING: list = []
"""The `Launch` being run, while one is (`running_thread`)."""


def running_thread() -> tuple | None:
    """(thread, block) the doctor is running at this moment, as a learner names them (the
    launch's dimensions only), or None outside a launch. For a thread that watches this one
    (grader/children/stuck.py, when a case runs out of time): the state of the moment."""
    launch = RUNNING[-1] if RUNNING else None
    if launch is None:
        return None
    return launch.thread(CTX.lin), tuple(FAKE_CUDA.blockIdx)[: launch.rank]


def _read_only_arguments(func, args, names) -> tuple:
    """Read-only twins of the array arguments the kernel never writes (unless the same memory
    is also passed as another argument, which the kernel might write)."""
    params = func.__code__.co_varnames[: func.__code__.co_argcount]
    memories = [a.mem for a in args if isinstance(a, View)]
    return tuple(
        read_only(a) if p in names and isinstance(a, View) and memories.count(a.mem) == 1 else a
        for p, a in zip(params, args)
    )


_THREADS: dict = {}


def _threads(block: tuple) -> list:
    """threadIdx of every thread of a block, in linear order (x fastest)."""
    found = _THREADS.get(block)
    if found is None:
        found = _THREADS[block] = [
            Dim3(x, y, z) for z in range(block[2]) for y in range(block[1]) for x in range(block[0])
        ]
    return found


def _profile(on: bool, views) -> None:
    """Arrays log their accesses (a profiled block's threads) or stop logging."""
    BLOCK.profiling = on
    swap(views, on)


def _run_plain(func, args, threads, s, watch) -> None:
    cuda, ctx = FAKE_CUDA, CTX
    ctx.set_epoch(s.epoch)
    efloor = ctx.efloor
    if watch is not None:
        _profile(True, watch)
    for lin, tid in enumerate(threads):
        cuda.threadIdx = tid
        ctx.lin = lin
        ctx.me = me = efloor | lin << 1
        ctx.meh = me >> 1
        func(*args)
    if watch is not None:
        _profile(False, watch)
    s.epoch += 1


def _run_stepped(func, args, threads, s, watch) -> None:
    cuda, ctx = FAKE_CUDA, CTX
    gens = [func(*args) for _ in threads]
    sends = [None] * len(threads)
    pending = list(range(len(threads)))
    while pending:
        ctx.set_epoch(s.epoch)
        efloor = ctx.efloor
        arrived, finished = [], []
        logging = watch is not None
        if logging:
            _profile(True, watch)
        for lin in pending:
            cuda.threadIdx = threads[lin]
            ctx.lin = lin
            ctx.me = me = efloor | lin << 1
            ctx.meh = me >> 1
            try:
                arrived.append((lin, gens[lin].send(sends[lin])))
            except StopIteration:
                finished.append(lin)
        if logging:
            _profile(False, watch)
        s.epoch += 1
        if not arrived:
            return
        _barrier(arrived, finished, sends, s)
        pending = [lin for lin, _ in arrived]


def _barrier(arrived, finished, sends, s) -> None:
    """Every thread in `arrived` waits at a barrier: check they all wait at the same one and
    none has left; compute syncthreads_count/and/or."""
    first = arrived[0][1]
    site = first if first.__class__ is int else first[0]
    uniform = not finished
    for _, y in arrived:
        if (y if y.__class__ is int else y[0]) != site:
            uniform = False
            break
    if not uniform:
        at: dict = {}
        for lin, y in arrived:
            at.setdefault(y if y.__class__ is int else y[0], []).append(lin)
        s.findings.divergence(at, finished, None)
    if first.__class__ is not int:
        values = [bool(y[2]) if y.__class__ is tuple and len(y) > 2 else False for _, y in arrived]
        op = first[1]
        result = {"count": sum(values), "and": int(all(values)), "or": int(any(values))}[op]
        for lin, _ in arrived:
            sends[lin] = result
    else:
        for lin, _ in arrived:
            sends[lin] = None
