# expect: passed
# gpu: passed, reasoned from numba-cuda 0.30.4's source, not yet measured on a GPU (numba-cuda's own kernels/reduction.py builds its kernels after `from numba import cuda` inside a function)
# defect: with the import inside the factory, the CPU engines failed in their own code (crashed)
_WARPSIZE = 32
_NUMWARPS = 4


def _reduce_factory(fn):
    from numba import cuda, float32

    reduce_op = cuda.jit(device=True)(fn)
    block_size = _NUMWARPS * _WARPSIZE  # a closure constant, frozen into the kernel

    @cuda.jit
    def partial_sums(arr, partials):
        sm = cuda.shared.array(block_size, float32)
        tid = cuda.threadIdx.x
        start = tid + cuda.blockDim.x * cuda.blockIdx.x
        step = cuda.blockDim.x * cuda.gridDim.x
        tmp = float32(0)
        for i in range(start, arr.size, step):
            tmp = reduce_op(tmp, arr[i])
        sm[tid] = tmp
        cuda.syncthreads()
        width = cuda.blockDim.x // 2
        while width:
            if tid < width:
                sm[tid] = reduce_op(sm[tid], sm[tid + width])
            cuda.syncthreads()
            width //= 2
        if tid == 0:
            cuda.atomic.add(partials, 0, sm[0])

    return partial_sums


def _add(a, b):
    return a + b


def launch(x, out):
    out[:] = 0
    kernel = _reduce_factory(_add)
    kernel[min(64, (x.size + 127) // 128), _NUMWARPS * _WARPSIZE](x, out)
