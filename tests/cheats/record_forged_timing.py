# exercise: vector_add
# expect: unwritten_output
"""Replaces the timing functions a checking child used to time with (grader.gpu.speed.collect,
time.perf_counter) through sys.modules, so that any timing made here would say "fast"; its kernel
does nothing. Nothing is timed in the recording child: there is no figure to forge."""
from numba import cuda, sys

clock = sys.modules["time"]
clock.perf_counter = lambda: 0.0
clock.monotonic = lambda: 0.0
speed = sys.modules.get("grader.gpu.speed")
if speed is not None:
    speed.collect = lambda *args, **kwargs: None


@cuda.jit
def nothing(a, b, c):
    pass


def launch(a, b, c):
    nothing[1, 1](a, b, c)
