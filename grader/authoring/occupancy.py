"""How many blocks the GPU runs at once, for sizing a grid-stride loop's grid.

A grid-stride kernel whose grid is a whole number of waves keeps every SM busy to the end;
2.67 waves leave a third of them idle for the last part (ncu on the H200, 2026-11-29: the
64 × 32 transpose target's 16 blocks per SM were 2.67 waves at its 39 registers a thread; one
wave, 6 per SM, ran 3% faster). The count comes from the CUDA occupancy calculator through
Numba's public `max_cooperative_grid_blocks`, so it follows the kernel's registers and
shared memory and the GPU's SM count.
"""

from __future__ import annotations

from numba import config

SIMULATED_WAVE = 132 * 6
"""On the simulator nothing runs at once: a grid of an H200's size, so that multi-block code
paths are still exercised."""

_WAVES: dict = {}


def one_wave(kernel, args, threads: int) -> int:
    """Blocks of `threads` threads of `kernel` (for these argument types) that fit on the GPU
    at once. Compiles the kernel if needed; a child's call, never the grading process's (it
    needs the CUDA context)."""
    if config.ENABLE_CUDASIM:
        return SIMULATED_WAVE
    types = tuple(kernel.typeof_pyval(x) for x in args)
    key = (kernel, types, threads)
    if key not in _WAVES:
        _WAVES[key] = kernel.compile(types).max_cooperative_grid_blocks(threads)
    return _WAVES[key]
