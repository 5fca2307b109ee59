"""grader/authoring/occupancy.py: the grid of one wave, asked once per kernel and argument types."""

from numba import config

from grader.authoring import occupancy
from grader.authoring.occupancy import SIMULATED_WAVE, one_wave


class FakeKernel:
    """Stands in for a Numba dispatcher: records what the occupancy query compiles."""

    def __init__(self, per_sm, sms=132):
        self.compiled = []
        self.per_sm, self.sms = per_sm, sms

    def typeof_pyval(self, value):
        return type(value).__name__

    def compile(self, types):
        self.compiled.append(types)
        kernel = self

        class Overload:
            def max_cooperative_grid_blocks(self, threads):
                return kernel.per_sm * kernel.sms

        return Overload()


def test_on_the_simulator_a_multi_block_grid_without_compiling(monkeypatch):
    monkeypatch.setattr(config, "ENABLE_CUDASIM", 1)
    kernel = FakeKernel(per_sm=6)
    assert one_wave(kernel, (1.0,), 256) == SIMULATED_WAVE > 1
    assert kernel.compiled == []


def test_on_a_gpu_the_occupancy_is_asked_once_per_argument_types(monkeypatch):
    monkeypatch.setattr(config, "ENABLE_CUDASIM", 0)
    monkeypatch.setattr(occupancy, "_WAVES", {})
    kernel = FakeKernel(per_sm=6)
    assert one_wave(kernel, (1.0, 2), 256) == 6 * 132
    assert one_wave(kernel, (3.0, 4), 256) == 6 * 132  # launches after the first: no new query
    assert kernel.compiled == [("float", "int")]
    assert one_wave(kernel, (3.0, 4.0), 256) == 6 * 132
    assert kernel.compiled == [("float", "int"), ("float", "float")]
