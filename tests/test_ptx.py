"""grader/authoring/ptx.py: the simulator forms of the inline-PTX helpers mean what the PTX does (the
GPU forms run in the histogram and matmul_tiled targets, checked at full size by `-m gpu` tests)."""

import numpy as np
from numba import cuda, uint32

from grader.authoring.ptx import aligned16, count_bytes, load4, load_pair, shared_address, store4

ROWS, COLUMNS = 256, 32
TABLE_WORDS = ROWS * COLUMNS  # a shared shape must be a name of a constant on a GPU


@cuda.jit
def _count_into_table(words, table_out):
    """Each of 32 threads counts its uint32 words into its own column of a shared table."""
    table = cuda.shared.array(TABLE_WORDS, uint32)
    t = cuda.threadIdx.x
    for w in range(t, ROWS * COLUMNS, COLUMNS):
        table[w] = 0
    cuda.syncthreads()
    column = shared_address(table) + 4 * t
    for k in range(words.shape[1]):
        count_bytes(table, column, words[t, k])
    cuda.syncthreads()
    for w in range(t, ROWS * COLUMNS, COLUMNS):
        table_out[w] = table[w]


@cuda.jit
def _pairs(words, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i, 0], out[i, 1] = load_pair(words, i)


@cuda.jit
def _runs(a, out, ok):
    """Thread t copies the run of 4 at column 4t of each row through load4 and store4."""
    t = cuda.threadIdx.x
    for row in range(a.shape[0]):
        v0, v1, v2, v3 = load4(a, row, 4 * t)
        store4(out, row, 4 * t, v0, v1, v2, v3)
    ok[t] = aligned16(a)


def test_load4_and_store4_move_the_run_of_four_floats_at_a_column():
    """Runs at columns 0, 4, ..., 124: every start of store4's rotated order (col >> 5 & 3)."""
    a = np.arange(3 * 132, dtype=np.float32).reshape(3, 132)
    out = np.full((3, 132), -1.0, np.float32)
    ok = np.zeros(32, np.bool_)
    _runs[1, 32](a, out, ok)
    assert np.array_equal(out[:, :128], a[:, :128]) and np.all(out[:, 128:] == -1.0)
    assert ok.all()


def test_count_bytes_adds_one_to_row_x_of_the_column_for_every_byte_x():
    rng = np.random.default_rng(0)
    words = rng.integers(0, 2**32, (COLUMNS, 3), dtype=np.uint64).astype(np.uint32)
    words[0, 0] = 0x00FF00FF  # a byte 0 and a byte 255, twice each
    table = np.zeros(ROWS * COLUMNS, np.uint32)
    _count_into_table[1, COLUMNS](words, table)
    counts = table.reshape(ROWS, COLUMNS)  # row x, column lane
    for lane in range(COLUMNS):
        expected = np.bincount(words[lane].view(np.uint8), minlength=ROWS)
        assert np.array_equal(counts[:, lane], expected)
    assert counts[0, 0] >= 2 and counts[255, 0] >= 2


def test_load_pair_reads_words_2i_and_2i_plus_1():
    words = np.arange(10, dtype=np.uint64) * np.uint64(0x0101010101)
    out = np.zeros((5, 2), np.uint64)
    _pairs[1, 8](words, out)
    assert np.array_equal(out, words.reshape(5, 2))


def test_the_histogram_target_counts_exactly_through_its_main_loop():
    """The ladder's cases are too small for the target's two-loads-a-step loop (it needs more
    than 16 values per thread of a 1024-thread block); 24009 values run it, its one-pair loop
    and the last n % 16 values."""
    from grader.exercises import exercise

    rng = np.random.default_rng(2)
    values = rng.integers(0, 256, 16 * 1500 + 9, dtype=np.uint8)
    values[rng.integers(0, 2, values.size) == 0] = 131  # a hot bin, as in the benchmark
    bins = cuda.to_device(np.zeros(256, np.int32))
    exercise("histogram").target(cuda.to_device(values), bins)
    assert np.array_equal(bins.copy_to_host(), np.bincount(values, minlength=256))
