"""Device arrays are opaque to host code while `launch` runs (grader/containment/device_data.py):
on the kernel doctor and on Numba's simulator, whose arrays the CPU checks hand to `launch`."""

import math

import numpy as np
import pytest
from numba import cuda

from grader.containment.device_data import HostDataAccess, seal_numba_arrays, sealed
from grader.doctor.spaces import global_array


def doctor_array(name="a"):
    return global_array(np.arange(8, dtype=np.float32), name)


def simulator_array():
    from numba import config

    if not config.ENABLE_CUDASIM:
        pytest.skip("Numba's simulator is not the CUDA target in this process")
    seal_numba_arrays()
    return cuda.to_device(np.arange(8, dtype=np.float32))


READS = {
    "an element": lambda a: a[3],
    "iteration": lambda a: list(a),
    "math.fsum": lambda a: math.fsum(a),
    "NumPy conversion": lambda a: np.asarray(a, dtype=np.float32).sum(),
    "copy_to_host": lambda a: a.copy_to_host(),
}
WRITES = {
    "a slice": lambda a: a.__setitem__(slice(0, 2), np.ones(2, np.float32)),
    "copy_to_device": lambda a: a.copy_to_device(np.zeros(8, np.float32)),
}


@pytest.mark.parametrize("make", [doctor_array, simulator_array], ids=["doctor", "simulator"])
@pytest.mark.parametrize("how", list(READS))
def test_host_code_cannot_read_device_data_while_launch_runs(make, how):
    a = make()
    with sealed({"x": a}):
        with pytest.raises(HostDataAccess, match="host code read `x`'s data outside a kernel"):
            READS[how](a)
    assert READS[how](a) is not None  # the grader's own code, after launch, reads as before


@pytest.mark.parametrize("make", [doctor_array, simulator_array], ids=["doctor", "simulator"])
@pytest.mark.parametrize("how", list(WRITES))
def test_host_code_cannot_write_device_data_while_launch_runs(make, how):
    a = make()
    with sealed({"out": a}):
        with pytest.raises(HostDataAccess, match="host code wrote `out`'s data"):
            WRITES[how](a)


@pytest.mark.parametrize("make", [doctor_array, simulator_array], ids=["doctor", "simulator"])
def test_launch_code_may_size_slice_and_fill(make):
    a = make()
    with sealed({"out": a}):
        assert a.shape == (8,) and a.size == 8 and a.dtype == np.float32 and len(a) == 8
        half = a[:4]  # a view: no data moves
        assert half.shape == (4,)
        a[:] = 0  # a fill computes nothing
    assert list(a.copy_to_host()) == [0] * 8


def test_ndarray_methods_forwarded_by_the_simulator_are_reads():
    a = simulator_array()
    with sealed({"a": a}):
        with pytest.raises(HostDataAccess):
            a.dot(a)
        with pytest.raises(HostDataAccess):
            a + 1


@cuda.jit
def double(v):
    i = cuda.grid(1)
    if i < v.size:
        v[i] = 2 * v[i]


def test_a_kernel_launched_while_sealed_runs_on_the_simulator():
    a = simulator_array()
    with sealed({"a": a}):
        double[1, 8](a)  # the simulator's GPU threads are threads of their own: not sealed
    assert list(a.copy_to_host()) == [2.0 * i for i in range(8)]


def test_the_doctor_names_missing_array_methods_in_the_projects_words():
    a = doctor_array()
    with pytest.raises(AttributeError, match="a device array has no attribute `no_such`"):
        a.no_such  # noqa: B018


@cuda.jit
def fill(v):
    i = cuda.grid(1)
    if i < v.size:
        v[i] = i


def test_lesson_code_run_on_the_doctor_still_copies_results_back():
    from grader.doctor import run

    def lesson():
        d = cuda.device_array(4, np.float32)
        fill[1, 4](d)
        return d.copy_to_host()

    assert list(run(lesson)) == [0, 1, 2, 3]


def test_the_policy_knows_every_internal_of_the_doctors_arrays():
    """What the static policy refuses by name is exactly the doctor's bookkeeping: a new slot
    on the doctor's arrays must be refused too (host code could read the data through it)."""
    import grader.doctor.spaces  # noqa: F401 - the View subclasses
    from grader.containment.device_data import DOCTOR_INTERNALS
    from grader.doctor.memory import View

    def classes(cls):
        yield cls
        for sub in cls.__subclasses__():
            yield from classes(sub)

    slots = set().union(*(getattr(c, "__slots__", ()) for c in classes(View)))
    assert DOCTOR_INTERNALS == slots - {"shape", "ndim", "size", "dtype", "name"}


# -- handles: what `launch` holds on the CPU engines -----------------------------------------------
# On the doctor and the simulator a device array holds its data in attributes (`.arr`, `.vals`,
# `._ary`), so `launch` gets a Handle instead, which holds nothing: the array stays with the
# grader, and kernel launches unwrap it. These tests reach for the data the way a submission
# could past the static policy (format strings, object.__getattribute__, gc, pickle...).
import copy  # noqa: E402
import gc  # noqa: E402
import pickle  # noqa: E402

from grader.containment.device_data import ENGINE_INTERNALS, Handle, handing_out  # noqa: E402
from grader.doctor.fakecuda import FAKE_CUDA  # noqa: E402

MARK = 1234.5
"""Every element of the arrays below: a value that shows wherever the data does."""


def doctor_engine():
    return global_array(np.full((2, 4), MARK, np.float32), "a"), FAKE_CUDA


def simulator_engine():
    simulator_array()  # skips unless the simulator is the CUDA target; seals Numba's arrays
    return cuda.to_device(np.full((2, 4), MARK, np.float32)), cuda


ENGINES = pytest.mark.parametrize("engine", [doctor_engine, simulator_engine], ids=["doctor", "simulator"])


def finds_data(found, depth=3) -> bool:
    """Does `found` hold array data: an engine's array, a NumPy array or buffer, a value of it,
    a text showing one, or a container of those?"""
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

    from grader.doctor.memory import Memory, View

    if isinstance(found, (np.ndarray, np.generic, memoryview, bytes, bytearray, View, Memory, FakeCUDAArray)):
        return True
    if isinstance(found, (float, int)) and not isinstance(found, bool):
        return float(found) == MARK
    if isinstance(found, str):
        return "1234" in found
    if depth and isinstance(found, (list, tuple, set, frozenset)):
        return any(finds_data(item, depth - 1) for item in found)
    if depth and isinstance(found, dict) or type(found).__name__ == "mappingproxy":
        return any(finds_data(k, depth - 1) or finds_data(v, depth - 1) for k, v in found.items())
    return False


@ENGINES
def test_launch_gets_handles_that_hold_nothing(engine):
    raw, _ = engine()
    with sealed({"a": raw, "n": 8}) as arguments:
        handle = arguments["a"]
        assert type(handle) is Handle and arguments["n"] == 8
        assert type(handle).__slots__ == ("__weakref__",)  # no slot for data, no __dict__
        assert gc.get_referents(handle) == [Handle]


@ENGINES
def test_a_handle_tells_the_form_makes_views_and_fills(engine):
    raw, engine_cuda = engine()
    with sealed({"a": raw}) as arguments:
        a = arguments["a"]
        assert (a.shape, a.size, a.ndim, a.dtype, len(a)) == ((2, 4), 8, 2, np.float32, 2)
        assert (a.strides, a.itemsize, a.nbytes) == ((16, 4), 4, 32)
        assert a.flags["C_CONTIGUOUS"] and a.is_c_contiguous() and not a.is_f_contiguous()
        views = ((a[1:], (1, 4)), (a[:, 0], (2,)), (a[0], (4,)), (a.reshape(8), (8,)), (a.ravel(), (8,)))
        views += ((a.T, (4, 2)), (a.transpose(), (4, 2)), (a[:, 1:].T[2:], (1, 2)))
        for view, shape in views:
            assert type(view) is Handle and view.shape == shape
        a[:] = 0  # a fill computes nothing
        a[1:, 2:] = np.float32(7)
        for made in (
            engine_cuda.device_array_like(a),
            engine_cuda.device_array(3, np.int32),
            engine_cuda.to_device(np.arange(3)),
        ):
            assert type(made) is Handle, type(made)  # an allocation while sealed is a handle too
        assert engine_cuda.device_array_like(a[0]).shape == (4,)
        assert engine_cuda.to_device(a) is a
    expected = np.zeros((2, 4), np.float32)
    expected[1, 2:] = 7
    assert (np.asarray(raw.copy_to_host()) == expected).all()  # the grader reads it back after


HANDLE_READS = {
    "an element": lambda a: a[1, 2],
    "a row's element": lambda a: a[1][2],
    "iteration": lambda a: list(a),
    "math.fsum": lambda a: math.fsum(a.ravel()),
    "sum": lambda a: sum(a.ravel()),
    "NumPy conversion": lambda a: np.asarray(a),
    "np.array of a view": lambda a: np.array(a[0]),
    "copy_to_host": lambda a: a.copy_to_host(),
    "tolist": lambda a: a.tolist(),
    "a forwarded NumPy method": lambda a: a.dot(a.T),
    "arithmetic": lambda a: a + 1,
    "reflected arithmetic": lambda a: 1.0 * a,
    "NumPy arithmetic": lambda a: np.float32(2) * a,
    "a negation": lambda a: -a,
    "a comparison": lambda a: a < 1,
    "equality": lambda a: a == a,
    "a truth test": lambda a: bool(a[0, :1]),
    "float()": lambda a: float(a[0, :1]),
    "an index": lambda a: [0, 1][a[0, :1]],
    "in": lambda a: MARK in a,
    "a format field": lambda a: "{0[1][2]}".format(a),
    "a data attribute": lambda a: a.data,
    "the base array": lambda a: a.base,
    "tobytes": lambda a: a.tobytes(),
    "__array_interface__ by format": lambda a: "{0.__array_interface__}".format(a),
}
HANDLE_WRITES = {
    "an array into a slice": lambda a: a.__setitem__(slice(0, 1), np.ones((1, 4), np.float32)),
    "a list into a row": lambda a: a.__setitem__(0, [1, 2, 3, 4]),
    "another device array": lambda a: a.__setitem__(slice(None), a),
    "copy_to_device": lambda a: a.copy_to_device(np.zeros((2, 4), np.float32)),
    "in-place arithmetic": lambda a: a.__iadd__(1),
    "a scalar of the submission's own NumPy subclass": lambda a: a.__setitem__(slice(None), _OwnScalar(1.0)),
}


class _OwnScalar(np.float32):
    """A fill's value whose methods are the submission's code: not a constant."""


@ENGINES
@pytest.mark.parametrize("how", list(HANDLE_READS))
def test_a_handle_refuses_every_read_of_the_data(engine, how):
    raw, _ = engine()
    with sealed({"x": raw}) as arguments:
        handle = arguments["x"]
        with pytest.raises(HostDataAccess, match="host code read `x`'s data outside a kernel"):
            HANDLE_READS[how](handle)
    with pytest.raises(HostDataAccess):  # a handle is opaque whenever and wherever it is used
        HANDLE_READS[how](handle)


@ENGINES
@pytest.mark.parametrize("how", list(HANDLE_WRITES))
def test_a_handle_refuses_every_write_but_a_fill(engine, how):
    raw, _ = engine()
    with sealed({"out": raw}) as arguments:
        with pytest.raises(HostDataAccess, match="host code (wrote|read) `out`'s data"):
            HANDLE_WRITES[how](arguments["out"])
    assert (np.asarray(raw.copy_to_host()) == MARK).all()


INTROSPECTION = {
    "vars": vars,
    "__dict__": lambda h: h.__dict__,
    "dir": dir,
    "__slots__": lambda h: h.__slots__,
    "type's __dict__": lambda h: dict(type(h).__dict__),
    "every attribute dir names, by object.__getattribute__": lambda h: [
        object.__getattribute__(h, name) for name in dir(h) if name not in ("__dict__",)
    ],
    "__reduce__": lambda h: h.__reduce__(),
    "__reduce_ex__": lambda h: h.__reduce_ex__(2),
    "object.__reduce_ex__": lambda h: object.__reduce_ex__(h, 2),
    "object.__getstate__": lambda h: object.__getstate__(h),
    "copy.copy": copy.copy,
    "copy.deepcopy": copy.deepcopy,
    "pickle": pickle.dumps,
    "gc.get_referents": gc.get_referents,
    "the weak-reference slot": lambda h: h.__weakref__,
    "repr": repr,
    "str": str,
    "an f-string": lambda h: f"{h}",
    "memoryview": memoryview,
}
for _name in sorted(ENGINE_INTERNALS | {"data", "base", "_item"}):
    INTROSPECTION[f"object.__getattribute__ .{_name}"] = lambda h, name=_name: object.__getattribute__(h, name)
    INTROSPECTION[f"a format field .{_name}"] = lambda h, name=_name: ("{0." + name + "}").format(h)


@ENGINES
@pytest.mark.parametrize("route", list(INTROSPECTION))
def test_introspecting_a_handle_finds_no_data(engine, route):
    raw, _ = engine()
    with sealed({"a": raw}) as arguments:
        try:
            found = INTROSPECTION[route](arguments["a"])
        except (HostDataAccess, AttributeError, TypeError):
            return  # refused, or nothing there
    assert not finds_data(found), found


@cuda.jit
def add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


@cuda.jit
def copy_kernel(src, dst):
    i = cuda.grid(1)
    if i < dst.size:
        dst[i] = src[i]


def run_case(engine_name, launch, n=8):
    """One vector_add case through the engine's own execution step (no policy: `launch` is a
    function object), inputs all MARK."""
    from grader.doctor.execute import execute as on_the_doctor
    from grader.exercises import exercise
    from grader.steps.execute import execute as on_the_simulator

    if engine_name == "simulator":
        simulator_array()
    spec = exercise("vector_add").spec
    inputs = {"a": np.full(n, MARK, np.float32), "b": np.full(n, MARK, np.float32)}
    execute = on_the_doctor if engine_name == "doctor" else on_the_simulator
    return execute(spec, launch, inputs, {"n": n})


ENGINE_NAMES = pytest.mark.parametrize("engine_name", ["doctor", "simulator"])


@ENGINE_NAMES
@pytest.mark.parametrize("route", list(INTROSPECTION) + list(HANDLE_READS))
def test_a_launch_reaching_for_its_inputs_data_gets_forbidden_or_nothing(engine_name, route):
    """At run time, past the policy: `launch` tries each route on its input `a`; the case is
    `forbidden`, or fails finding nothing, or goes on with nothing that holds data."""
    take = {**INTROSPECTION, **HANDLE_READS}[route]
    found = []

    def launch(a, b, c):
        found.append(take(a.reshape(2, 4)))  # the routes index in 2-D

    outcome = run_case(engine_name, launch)
    error = outcome.error
    if error is not None:
        assert error.verdict == "forbidden" or error.error_type in ("AttributeError", "TypeError"), error
        assert not found
    else:
        assert found and not finds_data(found[0]), found


@ENGINE_NAMES
def test_an_honest_launch_on_handles_passes(engine_name):
    """Views, a scratch array, a fill, kernels launched on handles: the kernels see the arrays."""

    def launch(a, b, c):
        blocks = (c.size + 127) // 128
        scratch = cuda.device_array_like(c)
        scratch[:] = 0
        add[blocks, 128](a, b, scratch)
        copy_kernel[blocks, 128](scratch.reshape(c.shape)[:], c)

    outcome = run_case(engine_name, launch)
    assert outcome.error is None, outcome.error
    from grader.sentinels import PAD

    assert (outcome.buffers["c"][PAD:-PAD] == 2 * MARK).all()


@ENGINE_NAMES
def test_a_kernel_writing_a_host_array_while_sealed_is_a_host_read(engine_name):
    """Numba copies a host array a kernel was given back after the launch: while `launch` runs,
    that copy is a host read of device data (on the doctor as on the simulator and a GPU)."""

    def launch(a, b, c):
        host = np.zeros(a.size, np.float32)
        copy_kernel[1, 128](a, host)  # `a` copied into a NumPy array...
        copy_kernel[1, 128](cuda.to_device(host + host), c)  # ...and the answer made on the host

    outcome = run_case(engine_name, launch)
    assert outcome.error is not None and outcome.error.verdict == "forbidden", outcome.error
    assert "`dst`" in outcome.error.message or "a device array" in outcome.error.message


def test_on_a_gpu_a_host_array_handed_to_a_kernel_is_refused_before_the_launch():
    """On a GPU, Numba copies a host array handed to a kernel back with the driver's own copy,
    not `copy_to_host`: the argument hint refuses it while sealed. A stand-in with the protocol
    of numba.cuda.args.Out (`to_device(retr, stream)` queues the copy back); tests/test_gpu.py
    runs Numba's own on a GPU (tests/cheats/host_array_round_trip.py)."""
    from grader.containment.device_data import _patch_copy_back

    class Out:
        def __init__(self, on_host: bool):
            self.on_host = on_host

        def to_device(self, retr, stream=0):
            if self.on_host:
                retr.append(lambda: "copied back")
            return "device array"

    class InOut(Out):  # Numba's default for a kernel argument
        pass

    _patch_copy_back(Out)
    retr: list = []
    assert InOut(True).to_device(retr) == "device array" and len(retr) == 1  # not sealed: as before
    with sealed():
        with pytest.raises(HostDataAccess, match="copies back"):
            InOut(True).to_device([])
        retr = []
        assert Out(False).to_device(retr) == "device array" and retr == []  # a device array: no copy


def test_lesson_code_still_gets_a_kernels_writes_to_a_host_array():
    from grader.doctor import run

    def lesson():
        host = np.zeros(4, np.float32)
        fill[1, 4](host)
        return host

    assert list(run(lesson)) == [0, 1, 2, 3]


def test_an_array_made_by_numbas_internals_cannot_reach_a_kernel_while_sealed():
    """`cuda.In(x).to_device(...)` makes a plain simulator array, with its data in `._ary`: a
    kernel launched while sealed refuses it (it could fill it for host code to read)."""
    a = simulator_array()
    with sealed({"a": a}) as arguments:
        loose = cuda.In(np.zeros(8, np.float32)).to_device([])
        with pytest.raises(HostDataAccess, match="made through Numba's internals"):
            copy_kernel[1, 8](arguments["a"], loose)
    copy_kernel[1, 8](a, loose)  # outside, lesson code may


def test_a_handle_kept_from_an_earlier_launch_still_launches():
    a = simulator_array()
    with sealed({"a": a}) as arguments:
        kept = cuda.device_array_like(arguments["a"])
    with sealed({"a": a}) as arguments:
        copy_kernel[1, 8](arguments["a"], kept)
        with pytest.raises(HostDataAccess):
            kept.copy_to_host()


def test_device_arrays_made_while_a_submission_loads_are_handles():
    from grader.steps.load import load_namespace

    simulator_array()
    namespace = load_namespace(
        "import numpy as np\nfrom numba import cuda\nSCRATCH = cuda.device_array(4, np.float32)\n", "scratch.py"
    )
    assert type(namespace["SCRATCH"]) is Handle
    with handing_out():
        assert type(cuda.to_device(np.zeros(2))) is Handle
    assert type(cuda.to_device(np.zeros(2))) is not Handle  # lesson code and the grader: Numba's own


def test_outside_grading_the_engines_give_their_own_arrays():
    from grader.doctor.memory import View

    simulator_array()
    assert type(FAKE_CUDA.device_array(3)) is not Handle and isinstance(FAKE_CUDA.to_device(np.zeros(3)), View)
    assert type(cuda.device_array(3)) is not Handle


GLOBAL_ARRAY_SUBMISSION = """
import numpy as np
from numba import cuda

ONES = cuda.to_device(np.ones(64, np.float32))  # a handle: made while the file loads


@cuda.jit
def add_scaled(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i] * ONES[i]  # numba-cuda captures a global device array by its pointer


def launch(a, b, c):
    add_scaled[(c.size + 127) // 128, 128](a, b, c)
"""


def test_a_kernel_reads_a_device_array_the_module_holds(tmp_path):
    """A module-level device array is a handle to host code; a kernel that names it as a global
    indexes the array: the doctor hands such a kernel to the simulator, whose kernel threads
    (never host code's) may index a handle."""
    from grader.doctor.execute import execute_or_simulate
    from grader.exercises import exercise
    from grader.steps.load import load_launch

    simulator_array()
    spec = exercise("vector_add").spec
    path = tmp_path / "global_array.py"
    path.write_text(GLOBAL_ARRAY_SUBMISSION)
    launch = load_launch(spec, GLOBAL_ARRAY_SUBMISSION, str(path))
    assert type(launch.__globals__["ONES"]) is Handle
    inputs = {"a": np.full(8, MARK, np.float32), "b": np.full(8, MARK, np.float32)}
    outcome = execute_or_simulate(spec, launch, inputs, {"n": 8}, (str(path),))
    assert outcome.error is None, outcome.error
    assert "`ONES`, a device array the kernel reads as a global" in outcome.report.reason
    from grader.sentinels import PAD

    assert (outcome.buffers["c"][PAD:-PAD] == 2 * MARK).all()
    with pytest.raises(HostDataAccess):
        launch.__globals__["ONES"][0]  # host code still cannot read it
