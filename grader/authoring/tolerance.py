"""Tolerance rules, derived from the dtype and the length of each sum — never from what
our own solution happens to produce.

float32 unit roundoff u = 2**-24. A result built from a few float32 operations on terms
t_1..t_k is within k·u·Σ|t_i| of the exact value; we allow twice that. A sum of L terms
in *any* order (tree, atomics, sequential) is, with overwhelming probability, within
λ·√L·u·Σ|t_i| (Higham & Mary, "A new approach to probabilistic rounding error analysis",
2019) — we take λ = 8 and add the few roundings around the sum. Integer results are exact.
"""

from __future__ import annotations

import math

import numpy as np

U32 = 2.0**-24
LAMBDA = 8.0
TINY = 1e-30
"""Keeps a zero bound from rejecting an exact zero computed as -0.0."""


def exact(inputs: dict, expected: np.ndarray) -> float:
    return 0.0


def few_ops(operations: int, abs_terms: np.ndarray) -> np.ndarray:
    """Bound for `operations` float32 roundings over terms whose |sum| is `abs_terms`."""
    return 2.0 * operations * U32 * np.asarray(abs_terms, dtype=np.float64) + TINY


def summed(length: int, abs_terms: np.ndarray, extra_ops: int = 2) -> np.ndarray:
    """Bound for a float32 sum of `length` terms in any order, plus a few more roundings."""
    factor = LAMBDA * math.sqrt(max(length, 1)) + 2.0 * extra_ops
    return factor * U32 * np.asarray(abs_terms, dtype=np.float64) + TINY


def scanned(abs_terms: np.ndarray, extra_ops: int = 2) -> np.ndarray:
    """Bound for each float32 prefix sum of a scan: element i sums the i + 1 terms up to it,
    in any order (a warp's shuffles, a block's partial sums, the totals of the blocks before),
    so it gets summed(i + 1, Σ_{j<=i} |t_j|)."""
    sums = np.cumsum(np.asarray(abs_terms, dtype=np.float64))
    # factor * U32 * sums + TINY, factor = LAMBDA * sqrt(i + 1) + 2 * extra_ops: the same
    # operations in the same order, in one array (a scan's benchmark has 2^27 elements)
    bound = np.arange(1, sums.size + 1, dtype=np.float64)
    np.sqrt(bound, out=bound)
    bound *= LAMBDA
    bound += 2.0 * extra_ops
    bound *= U32
    bound *= sums
    bound += TINY
    return bound
