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
