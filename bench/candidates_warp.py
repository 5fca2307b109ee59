"""Candidates for the warp rungs' targets and softmax_fused's (bench/variants.py --candidates).

scan: decoupled look-back with one 64-bit status word per tile (flag in the high half, the
value's bits in the low half), read and written with single atomics: no fence and no second
read per predecessor, against the current target's flag word, fence and value word. Tile
shapes swept, since the look-back's window time bounds how many tiles a second can finish.
warp_reduce: pairs (8-byte loads), contiguous chunks per block, more or fewer accumulators.
softmax_fused: warp-shuffle reductions over the pairs kernel, fewer threads with more pairs,
and persistent blocks that load the next row before reducing the current one.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda, float32, int32, int64, uint64
from numba.cuda import libdevice

from grader.authoring.occupancy import one_wave

FULL_MASK = 0xFFFFFFFF
AGGREGATE, INCLUSIVE = 1, 2
LOW = 0xFFFFFFFF


@cuda.jit(device=True, inline=True)
def _as_u64(i):
    """An index Numba need not check for wrap-around (no negative-index select per access)."""
    return uint64(i)


@cuda.jit(device=True, inline=True)
def _same(i):
    return i


# ---------------------------------------------------------------------------------------- scan
@cuda.jit(device=True, inline=True)
def _pack_f32(flag, value):
    return (int64(flag) << 32) | (int64(libdevice.float_as_int(value)) & LOW)


@cuda.jit(device=True, inline=True)
def _unpack_f32(word):
    return libdevice.int_as_float(int32(word & LOW))


@cuda.jit(device=True, inline=True)
def _pack_i32(flag, value):
    return (int64(flag) << 32) | (int64(value) & LOW)


@cuda.jit(device=True, inline=True)
def _unpack_i32(word):
    return int32(word & LOW)


def _make_look_back(pack, unpack):
    @cuda.jit(device=True, inline=True)
    def look_back(tile_id, aggregate, status, zero, epoch):
        lane = cuda.threadIdx.x % 32
        mark = int64(epoch) * 4  # words of earlier calls read as 'nothing yet'
        if tile_id == 0:
            if lane == 0:
                cuda.atomic.exch(status, 0, pack(mark + INCLUSIVE, aggregate))
            return zero
        if lane == 0:
            cuda.atomic.exch(status, tile_id, pack(mark + AGGREGATE, aggregate))
        carry = zero
        newest = tile_id - 1
        while True:
            p = newest - lane
            word = pack(mark + INCLUSIVE, zero)  # before tile 0: an inclusive 0
            if p >= 0:
                word = cuda.atomic.or_(status, p, 0)
            while cuda.any_sync(FULL_MASK, (word >> 32) - mark <= 0):
                if p >= 0 and (word >> 32) - mark <= 0:
                    word = cuda.atomic.or_(status, p, 0)
            flag = (word >> 32) - mark
            value = unpack(word)
            nearest = cuda.ffs(cuda.ballot_sync(FULL_MASK, flag == INCLUSIVE))
            if nearest != 0 and lane >= nearest:
                value = zero
            for offset in (16, 8, 4, 2, 1):
                value += cuda.shfl_xor_sync(FULL_MASK, value, offset)
            carry += value
            if nearest != 0:
                break
            newest -= 32
        if lane == 0:
            cuda.atomic.exch(status, tile_id, pack(mark + INCLUSIVE, carry + aggregate))
        return carry

    return look_back


def _make_scan(items, threads, pack, unpack, look_back_on=True):
    warps = threads // 32
    tile = threads * items
    padded = tile + tile // 32

    @cuda.jit(device=True, inline=True)
    def padded_index(k):
        return uint64(k + k // 32)

    look_back = _make_look_back(pack, unpack)

    @cuda.jit
    def scan_tiles(x, out, status, counter):
        buffer = cuda.shared.array(padded, x.dtype)
        warp_totals = cuda.shared.array(warps, x.dtype)
        tile_of_block = cuda.shared.array(1, int32)
        carry_in = cuda.shared.array(1, x.dtype)
        vals = cuda.local.array(items, x.dtype)
        t = cuda.threadIdx.x
        lane = t % 32
        warp = t // 32
        zero = x.dtype.type(0)
        n = x.size
        if t == 0:
            tile_of_block[0] = cuda.atomic.add(counter, 0, 1)
        cuda.syncthreads()
        tile_id = tile_of_block[0]
        base = tile_id * tile
        if base + tile <= n:  # a full tile: no bounds checks
            for j in range(items):
                k = j * threads + t
                buffer[padded_index(k)] = x[uint64(base + k)]
        else:
            for j in range(items):
                k = j * threads + t
                v = zero
                if base + k < n:
                    v = x[uint64(base + k)]
                buffer[padded_index(k)] = v
        cuda.syncthreads()
        running = zero
        for j in range(items):
            running += buffer[padded_index(t * items + j)]
            vals[j] = running
        total = running
        offset = 1
        while offset < 32:
            up = cuda.shfl_up_sync(FULL_MASK, total, offset)
            if lane >= offset:
                total += up
            offset *= 2
        before = cuda.shfl_up_sync(FULL_MASK, total, 1)
        if lane == 0:
            before = zero
        if lane == 31:
            warp_totals[warp] = total
        cuda.syncthreads()
        aggregate = zero
        for w in range(warps):
            if w < warp:
                before += warp_totals[w]
            aggregate += warp_totals[w]
        if look_back_on:
            if warp == 0:
                carry = look_back(tile_id, aggregate, status, zero, 0)
                if lane == 0:
                    carry_in[0] = carry
            cuda.syncthreads()
            before += carry_in[0]
        for j in range(items):
            buffer[padded_index(t * items + j)] = before + vals[j]
        cuda.syncthreads()
        if base + tile <= n:
            for j in range(items):
                k = j * threads + t
                out[uint64(base + k)] = buffer[padded_index(k)]
        else:
            for j in range(items):
                k = j * threads + t
                if base + k < n:
                    out[uint64(base + k)] = buffer[padded_index(k)]

    return scan_tiles, tile


@cuda.jit
def _clear(status, counter):
    i = cuda.grid(1)
    if i < status.size:
        status[i] = 0
    if i == 0:
        counter[0] = 0


_STATUS: dict = {}


def _status(tiles):
    if tiles not in _STATUS:
        if len(_STATUS) >= 4:
            _STATUS.clear()
        _STATUS[tiles] = (cuda.device_array(tiles, np.int64), cuda.device_array(1, np.int32))
    return _STATUS[tiles]


def packed_scan(items, threads, look_back_on=True):
    int_kernel, tile = _make_scan(items, threads, _pack_i32, _unpack_i32, look_back_on)
    float_kernel, _ = _make_scan(items, threads, _pack_f32, _unpack_f32, look_back_on)

    def one(kernel, x, out):
        tiles = (x.size + tile - 1) // tile
        status, counter = _status(tiles)
        _clear[(tiles + 255) // 256, 256](status, counter)
        kernel[tiles, threads](x, out, status, counter)

    def launch(counts, amounts, counts_scan, amounts_scan):
        one(int_kernel, counts, counts_scan)
        one(float_kernel, amounts, amounts_scan)

    return launch


@cuda.jit(device=True, inline=True)
def _load2_i32(x2, i):
    w = x2[uint64(i)]
    return int32(w & LOW), int32(w >> 32)


@cuda.jit(device=True, inline=True)
def _store2_i32(out2, i, lo, hi):
    out2[uint64(i)] = (int64(hi) << 32) | (int64(lo) & LOW)


@cuda.jit(device=True, inline=True)
def _load2_f32(x2, i):
    v = x2[uint64(i)]
    return v.real, v.imag


@cuda.jit(device=True, inline=True)
def _store2_f32(out2, i, lo, hi):
    out2[uint64(i)] = complex(lo, hi)


def _make_pair_scan(items, threads, pack, unpack, load2, store2, epochs=False):
    """The packed-status scan, its full tiles loaded and stored as pairs (8-byte accesses),
    its thread prefixes made again from shared memory rather than kept in registers."""
    warps = threads // 32
    tile = threads * items
    padded = tile + tile // 32
    look_back = _make_look_back(pack, unpack)

    @cuda.jit(device=True, inline=True)
    def padded_index(k):
        return uint64(k + k // 32)

    @cuda.jit
    def scan_tiles(x, out, x2, out2, status, counter, start, epoch):
        buffer = cuda.shared.array(padded, x.dtype)
        warp_totals = cuda.shared.array(warps, x.dtype)
        tile_of_block = cuda.shared.array(1, int32)
        carry_in = cuda.shared.array(1, x.dtype)
        t = cuda.threadIdx.x
        lane = t % 32
        warp = t // 32
        zero = x.dtype.type(0)
        n = x.size
        if t == 0:
            tile_of_block[0] = cuda.atomic.add(counter, 0, 1) - start
        cuda.syncthreads()
        tile_id = tile_of_block[0]
        base = tile_id * tile
        full = base + tile <= n
        if full:
            for j in range(items // 2):
                k = j * threads + t
                lo, hi = load2(x2, base // 2 + k)
                buffer[padded_index(2 * k)] = lo
                buffer[padded_index(2 * k + 1)] = hi
        else:
            for j in range(items):
                k = j * threads + t
                v = zero
                if base + k < n:
                    v = x[uint64(base + k)]
                buffer[padded_index(k)] = v
        cuda.syncthreads()
        running = zero
        for j in range(items):
            running += buffer[padded_index(t * items + j)]
        total = running
        offset = 1
        while offset < 32:
            up = cuda.shfl_up_sync(FULL_MASK, total, offset)
            if lane >= offset:
                total += up
            offset *= 2
        before = cuda.shfl_up_sync(FULL_MASK, total, 1)
        if lane == 0:
            before = zero
        if lane == 31:
            warp_totals[warp] = total
        cuda.syncthreads()
        aggregate = zero
        for w in range(warps):
            if w < warp:
                before += warp_totals[w]
            aggregate += warp_totals[w]
        if warp == 0:
            carry = look_back(tile_id, aggregate, status, zero, epoch)
            if lane == 0:
                carry_in[0] = carry
        cuda.syncthreads()
        running = before + carry_in[0]
        for j in range(items):
            running += buffer[padded_index(t * items + j)]
            buffer[padded_index(t * items + j)] = running
        cuda.syncthreads()
        if full:
            for j in range(items // 2):
                k = j * threads + t
                store2(out2, base // 2 + k, buffer[padded_index(2 * k)], buffer[padded_index(2 * k + 1)])
        else:
            for j in range(items):
                k = j * threads + t
                if base + k < n:
                    out[uint64(base + k)] = buffer[padded_index(k)]

    return scan_tiles, tile


def pair_scan(items, threads, epochs=False):
    """epochs: no clearing launch; each call's status words carry its number, and its tiles
    are counted on from where the last call's ended."""
    int_kernel, tile = _make_pair_scan(items, threads, _pack_i32, _unpack_i32, _load2_i32, _store2_i32)
    float_kernel, _ = _make_pair_scan(items, threads, _pack_f32, _unpack_f32, _load2_f32, _store2_f32)
    calls = {}

    def one(kernel, x, out, pair_type):
        tiles = (x.size + tile - 1) // tile
        key = (tiles, pair_type)
        if key not in _STATUS:
            status, counter = cuda.device_array(tiles, np.int64), cuda.device_array(1, np.int64)
            status[:] = 0
            counter[:] = 0
            _STATUS[key] = (status, counter)
            calls[key] = 0
        status, counter = _STATUS[key]
        even = x.size - x.size % 2
        x2, out2 = x[:even].view(pair_type), out[:even].view(pair_type)
        if epochs:
            calls[key] += 1
            kernel[tiles, threads](x, out, x2, out2, status, counter, (calls[key] - 1) * tiles, calls[key])
        else:
            _clear[(tiles + 255) // 256, 256](status, counter)
            kernel[tiles, threads](x, out, x2, out2, status, counter, 0, 0)

    def launch(counts, amounts, counts_scan, amounts_scan):
        one(int_kernel, counts, counts_scan, np.int64)
        one(float_kernel, amounts, amounts_scan, np.complex64)

    return launch


# --------------------------------------------------------------------------------- warp_reduce
@cuda.jit(device=True, inline=True)
def _warp_sum(value):
    for offset in (16, 8, 4, 2, 1):
        value += cuda.shfl_down_sync(FULL_MASK, value, offset)
    return value


def _block_finish(threads):
    warps = threads // 32

    @cuda.jit(device=True, inline=True)
    def finish(per_warp, total, out):
        lane = cuda.threadIdx.x % 32
        warp = cuda.threadIdx.x // 32
        total = _warp_sum(total)
        if lane == 0:
            per_warp[warp] = total
        cuda.syncthreads()
        if warp == 0:
            total = float32(0.0)
            if lane < warps:
                total = per_warp[lane]
            total = _warp_sum(total)
            if lane == 0:
                cuda.atomic.add(out, 0, total)

    return finish


def pairs_reduce(threads=256, accumulators=8, waves=1, unsigned=False):
    """8-byte loads: x seen as complex64 pairs; the odd last element added by thread 0."""
    finish = _block_finish(threads)
    warps = threads // 32
    ix = _as_u64 if unsigned else _same

    @cuda.jit
    def kernel(x2, x, out):
        per_warp = cuda.shared.array(warps, float32)
        acc = cuda.local.array(accumulators, float32)
        for k in range(accumulators):
            acc[k] = float32(0.0)
        stride = cuda.gridsize(1)
        n = x2.size
        i = cuda.grid(1)
        while i + (accumulators - 1) * stride < n:
            for k in range(accumulators):
                v = x2[ix(i + k * stride)]
                acc[k] += v.real + v.imag
            i += accumulators * stride
        while i < n:
            v = x2[ix(i)]
            acc[0] += v.real + v.imag
            i += stride
        total = float32(0.0)
        for k in range(accumulators):
            total += acc[k]
        if cuda.grid(1) == 0 and x.size % 2 == 1:
            total += x[x.size - 1]
        finish(per_warp, total, out)

    def launch(x, out):
        even = x.size - x.size % 2
        x2 = x[:even].view(np.complex64)
        blocks = one_wave(kernel, (x2, x, out), threads) * waves
        blocks = max(1, min(blocks, (max(x2.size, 1) + threads - 1) // threads))
        kernel[blocks, threads](x2, x, out)

    return launch


def quad_reduce(threads=256, accumulators=4):
    """16-byte loads (ld.global.v2.u64, grader/authoring/ptx.py): 4 floats a load."""
    from grader.authoring.ptx import load_pair

    finish = _block_finish(threads)
    warps = threads // 32

    @cuda.jit(device=True, inline=True)
    def both(w):
        return libdevice.int_as_float(int32(w & LOW)) + libdevice.int_as_float(int32(w >> 32))

    @cuda.jit
    def kernel(words, x, out):
        per_warp = cuda.shared.array(warps, float32)
        acc = cuda.local.array(accumulators, float32)
        for k in range(accumulators):
            acc[k] = float32(0.0)
        stride = cuda.gridsize(1)
        quads = words.size // 2
        i = cuda.grid(1)
        while i + (accumulators - 1) * stride < quads:
            for k in range(accumulators):
                a, b = load_pair(words, i + k * stride)
                acc[k] += both(a) + both(b)
            i += accumulators * stride
        while i < quads:
            a, b = load_pair(words, i)
            acc[0] += both(a) + both(b)
            i += stride
        total = float32(0.0)
        for k in range(accumulators):
            total += acc[k]
        if cuda.grid(1) == 0:
            for r in range(4 * quads, x.size):
                total += x[r]
        finish(per_warp, total, out)

    def launch(x, out):
        whole = x.size - x.size % 4
        words = x[:whole].view(np.uint64)
        blocks = one_wave(kernel, (words, x, out), threads)
        blocks = max(1, min(blocks, (max(whole // 4, 1) + threads - 1) // threads))
        kernel[blocks, threads](words, x, out)

    return launch


def chunked_reduce(threads=256, accumulators=8, blocks_per_sm_wave=1):
    """Each block sums one contiguous chunk (DRAM pages read by one block, not the grid)."""
    finish = _block_finish(threads)
    warps = threads // 32

    @cuda.jit
    def kernel(x2, x, out, chunk):
        per_warp = cuda.shared.array(warps, float32)
        acc = cuda.local.array(accumulators, float32)
        for k in range(accumulators):
            acc[k] = float32(0.0)
        start = cuda.blockIdx.x * chunk
        end = min(start + chunk, x2.size)
        i = start + cuda.threadIdx.x
        step = cuda.blockDim.x
        while i + (accumulators - 1) * step < end:
            for k in range(accumulators):
                v = x2[i + k * step]
                acc[k] += v.real + v.imag
            i += accumulators * step
        while i < end:
            v = x2[i]
            acc[0] += v.real + v.imag
            i += step
        total = float32(0.0)
        for k in range(accumulators):
            total += acc[k]
        if cuda.grid(1) == 0 and x.size % 2 == 1:
            total += x[x.size - 1]
        finish(per_warp, total, out)

    def launch(x, out):
        even = x.size - x.size % 2
        x2 = x[:even].view(np.complex64)
        blocks = one_wave(kernel, (x2, x, out, 1), threads) * blocks_per_sm_wave
        blocks = max(1, min(blocks, (max(x2.size, 1) + threads - 1) // threads))
        chunk = (x2.size + blocks - 1) // blocks
        chunk = (chunk + threads - 1) // threads * threads
        kernel[blocks, threads](x2, x, out, chunk)

    return launch


# ------------------------------------------------------------------------------- softmax_fused
MAX_THREADS = 1024


@cuda.jit(device=True, inline=True)
def _warp_max(value):
    for offset in (16, 8, 4, 2, 1):
        value = max(value, cuda.shfl_xor_sync(FULL_MASK, value, offset))
    return value


@cuda.jit(device=True, inline=True)
def _warp_total(value):
    for offset in (16, 8, 4, 2, 1):
        value += cuda.shfl_xor_sync(FULL_MASK, value, offset)
    return value


def _softmax_pairs_shuffle(pairs, threads, unsigned=False):
    warps = threads // 32
    ix = _as_u64 if unsigned else _same

    @cuda.jit(device=True, inline=True)
    def block_max(shared, value):
        value = _warp_max(value)
        if cuda.threadIdx.x % 32 == 0:
            shared[cuda.threadIdx.x // 32] = value
        cuda.syncthreads()
        result = shared[0]
        for w in range(1, warps):
            result = max(result, shared[w])
        return result

    @cuda.jit(device=True, inline=True)
    def block_sum(shared, value):
        value = _warp_total(value)
        if cuda.threadIdx.x % 32 == 0:
            shared[cuda.threadIdx.x // 32] = value
        cuda.syncthreads()
        result = shared[0]
        for w in range(1, warps):
            result += shared[w]
        return result

    @cuda.jit
    def kernel(x2, out2):
        maxes = cuda.shared.array(32, float32)
        sums = cuda.shared.array(32, float32)
        lo = cuda.local.array(pairs, float32)
        hi = cuda.local.array(pairs, float32)
        tid = cuda.threadIdx.x
        cols = x2.shape[1]
        row = cuda.blockIdx.x
        m = float32(-math.inf)
        for j in range(pairs):
            c = tid + j * threads
            a = float32(-math.inf)
            b = float32(-math.inf)
            if c < cols:
                v = x2[ix(row), ix(c)]
                a = v.real
                b = v.imag
            lo[j] = a
            hi[j] = b
            m = max(m, max(a, b))
        m = block_max(maxes, m)
        s = float32(0.0)
        for j in range(pairs):
            ea = float32(math.exp(lo[j] - m))
            eb = float32(math.exp(hi[j] - m))
            lo[j] = ea
            hi[j] = eb
            s += ea + eb
        inv = float32(1.0) / block_sum(sums, s)
        for j in range(pairs):
            c = tid + j * threads
            if c < cols:
                out2[ix(row), ix(c)] = complex(lo[j] * inv, hi[j] * inv)

    return kernel


def _softmax_pairs_persistent(pairs, threads):
    """Blocks loop over rows; row r + grid's loads are issued before row r is reduced."""
    warps = threads // 32

    @cuda.jit
    def kernel(x2, out2):
        maxes = cuda.shared.array(2 * 32, float32)
        sums = cuda.shared.array(2 * 32, float32)
        lo = cuda.local.array(pairs, float32)
        hi = cuda.local.array(pairs, float32)
        nlo = cuda.local.array(pairs, float32)
        nhi = cuda.local.array(pairs, float32)
        tid = cuda.threadIdx.x
        lane = tid % 32
        warp = tid // 32
        rows = x2.shape[0]
        cols = x2.shape[1]
        row = cuda.blockIdx.x
        parity = 0
        for j in range(pairs):
            c = tid + j * threads
            a = float32(-math.inf)
            b = float32(-math.inf)
            if row < rows and c < cols:
                v = x2[row, c]
                a = v.real
                b = v.imag
            lo[j] = a
            hi[j] = b
        while row < rows:
            following = row + cuda.gridDim.x
            for j in range(pairs):  # the next row's loads, in flight during this row's work
                c = tid + j * threads
                a = float32(-math.inf)
                b = float32(-math.inf)
                if following < rows and c < cols:
                    v = x2[following, c]
                    a = v.real
                    b = v.imag
                nlo[j] = a
                nhi[j] = b
            m = float32(-math.inf)
            for j in range(pairs):
                m = max(m, max(lo[j], hi[j]))
            m = _warp_max(m)
            if lane == 0:
                maxes[parity * 32 + warp] = m
            cuda.syncthreads()
            m = maxes[parity * 32]
            for w in range(1, warps):
                m = max(m, maxes[parity * 32 + w])
            s = float32(0.0)
            for j in range(pairs):
                ea = float32(math.exp(lo[j] - m))
                eb = float32(math.exp(hi[j] - m))
                lo[j] = ea
                hi[j] = eb
                s += ea + eb
            s = _warp_total(s)
            if lane == 0:
                sums[parity * 32 + warp] = s
            cuda.syncthreads()
            s = sums[parity * 32]
            for w in range(1, warps):
                s += sums[parity * 32 + w]
            inv = float32(1.0) / s
            for j in range(pairs):
                c = tid + j * threads
                if c < cols:
                    out2[row, c] = complex(lo[j] * inv, hi[j] * inv)
            for j in range(pairs):
                lo[j] = nlo[j]
                hi[j] = nhi[j]
            parity = 1 - parity  # the other halves: no barrier needed before the next writes
            row = following

    return kernel


def softmax_pairs(kernel_factory, pairs, threads, persistent_waves=0, **options):
    kernel = kernel_factory(pairs, threads, **options)

    def launch(x, out):
        rows, cols = x.shape
        assert cols % 2 == 0 and cols // 2 <= pairs * threads, "candidate covers even rows that fit"
        x2, out2 = x.view(np.complex64), out.view(np.complex64)
        blocks = rows
        if persistent_waves:
            blocks = min(rows, one_wave(kernel, (x2, out2), threads) * persistent_waves)
        kernel[blocks, threads](x2, out2)

    return launch


VARIANTS = {
    "scan": {"clear_pairs_16x256": pair_scan(16, 256), "cupy.cumsum": "peer"},
}
