"""Inline-PTX helpers for the bundled target kernels, where Numba cannot say what the fastest
code needs: 16-byte loads and stores, and a shared-memory count at a precomputed address.

Each is a Numba intrinsic on a GPU and a plain device function with the same meaning on the
simulator, so a target that uses them is checked there like any other kernel. Import this
module after the back end is chosen (as kernels/<id>.py are).

Measured on an H200 (2026-11-30, docs/BENCHMARKS-LOG.md): the histogram target counts 2**28
bytes through count_bytes in 0.068-0.070 ms, about 4.4 instructions a byte, half of them on the
FMA pipe; the same lane-column table indexed through Numba's cuda.atomic.add took 0.130 ms
(512 threads a block, against 0.072 through count_bytes): its 64-bit index arithmetic and
negative-index checks cost about 9 instructions a byte, and a kernel of that many, under
ncu, kept the SM 94% busy while the shared-memory pipe idled at 38%.

Runs of 4 floats (load4, store4, aligned16) are the matmul_tiled target's (from
bench/candidates_matmul.py, commit a80519f): one ld.global.nc.v4.f32 (LDG.128) where 4-byte
loads take four instructions, and one 16-byte store into a shared tile (an LLVM vector store rather than PTX,
so that the compiler still schedules it as a store). On the CPU engines a run is four element
accesses, which the kernel doctor follows and profiles like any others. With them, the
candidate the target comes from ran at 46.2 TFLOP/s on an H200 at 4096³, 90% of cuBLAS.
"""

from numba import config, cuda

__all__ = ["load_pair", "load4", "store4", "aligned16", "shared_address", "count_bytes"]

if config.ENABLE_CUDASIM:

    @cuda.jit(device=True)
    def load_pair(words, i):
        """(words[2i], words[2i + 1]) of a uint64 array."""
        return words[2 * i], words[2 * i + 1]

    @cuda.jit(device=True)
    def load4(a, row, col):
        """(a[row, col], a[row, col + 1], a[row, col + 2], a[row, col + 3]) of a float32 matrix."""
        return a[row, col], a[row, col + 1], a[row, col + 2], a[row, col + 3]

    @cuda.jit(device=True)
    def store4(a, row, col, v0, v1, v2, v3):
        """a[row, col], a[row, col + 1], a[row, col + 2], a[row, col + 3] = v0, v1, v2, v3 in a
        float32 matrix. The four stores start at element (col >> 5) & 3 of the run and wrap
        around: a warp storing 32 consecutive runs then hits 32 banks at each of them, so the
        kernel doctor, which counts bank conflicts of 4-byte accesses, finds what a GPU's
        16-byte stores do (no conflict: 4 wavefronts for 512 bytes), where in order it would
        find four 4-way conflicts."""
        values = (v0, v1, v2, v3)
        turn = (col >> 5) & 3
        for t in range(4):
            q = (t + turn) & 3
            a[row, col + q] = values[q]

    @cuda.jit(device=True)
    def aligned16(a):
        """Does a's element 0 start on 16 bytes? (the CPU engines' runs need no alignment)"""
        return True

    @cuda.jit(device=True)
    def shared_address(table):
        """The address of a shared uint32 array's element 0 (0 on the simulator)."""
        return 0

    @cuda.jit(device=True)
    def count_bytes(table, column, w):
        """For each byte x of the uint32 w, add 1 to the table word at byte address
        column + 128 * x: row x of a table of 32 columns, `column` being row 0 of one."""
        for b in range(4):
            cuda.atomic.add(table, (column + (((w >> (8 * b)) & 0xFF) << 7)) // 4, 1)

else:
    from llvmlite import ir
    from numba import types
    from numba.cuda.extending import intrinsic

    from numba.core import cgutils

    _I32, _I64, _F32 = ir.IntType(32), ir.IntType(64), ir.FloatType()

    @intrinsic
    def load_pair(typingctx, words, i):
        """(words[2i], words[2i + 1]) of a uint64 array, as one ld.global.v2.u64: Numba has
        no 16-byte integer type, and two 8-byte loads cost the L1 twice the requests. The
        array must start on 16 bytes (device allocations start on 256)."""
        sig = types.UniTuple(types.uint64, 2)(words, i)

        def codegen(context, builder, sig, args):
            array = context.make_array(sig.args[0])(context, builder, value=args[0])
            index = context.cast(builder, args[1], sig.args[1], types.intp)
            ptr = builder.gep(array.data, [builder.mul(index, ir.Constant(index.type, 2))])
            asm = ir.InlineAsm(
                ir.FunctionType(ir.LiteralStructType([_I64, _I64]), [ptr.type]),
                "ld.global.v2.u64 {$0, $1}, [$2];",
                "=l,=l,l",
            )
            both = builder.call(asm, [ptr])
            return context.make_tuple(
                builder, sig.return_type, [builder.extract_value(both, 0), builder.extract_value(both, 1)]
            )

        return sig, codegen

    def _run_pointer(context, builder, sig, args):
        """The address of a[row, col] (args: a, row, col), without wrap-around of negative
        indices."""
        aryty = sig.args[0]
        array = context.make_array(aryty)(context, builder, value=args[0])
        return cgutils.get_item_pointer2(
            context,
            builder,
            data=array.data,
            shape=cgutils.unpack_tuple(builder, array.shape),
            strides=cgutils.unpack_tuple(builder, array.strides),
            layout=aryty.layout,
            inds=[context.cast(builder, args[k], sig.args[k], types.intp) for k in (1, 2)],
            wraparound=False,
        )

    def _float32_matrix(a) -> bool:
        return isinstance(a, types.Array) and a.dtype == types.float32 and a.ndim == 2

    @intrinsic
    def load4(typingctx, a, row, col):
        """(a[row, col], ..., a[row, col + 3]) of a float32 matrix as one ld.global.nc.v4.f32
        (LDG.128; Numba has no 16-byte float vector). The run must start on 16 bytes: rows of
        contiguous elements, a whole number of 16 bytes apart, col a multiple of 4 and
        aligned16(a) (device allocations start on 256 bytes). The .nc (read-only) path assumes
        that nothing writes `a` while the kernel runs: an input."""
        if not _float32_matrix(a):
            return None
        sig = types.UniTuple(types.float32, 4)(a, row, col)

        def codegen(context, builder, sig, args):
            ptr = _run_pointer(context, builder, sig, args)
            asm = ir.InlineAsm(
                ir.FunctionType(ir.LiteralStructType([_F32] * 4), [ptr.type]),
                "ld.global.nc.v4.f32 {$0, $1, $2, $3}, [$4];",
                "=f,=f,=f,=f,l",
            )
            four = builder.call(asm, [ptr])
            values = [builder.extract_value(four, q) for q in range(4)]
            return context.make_tuple(builder, sig.return_type, values)

        return sig, codegen

    @intrinsic
    def store4(typingctx, a, row, col, v0, v1, v2, v3):
        """a[row, col], ..., a[row, col + 3] = v0, ..., v3 (as float32) in a float32 matrix,
        as one 16-byte vector store (st.shared.v4.f32, STS.128, into a shared tile), which
        does not depend on LLVM's vectoriser proving the alignment. The run must start on 16
        bytes: a shared array declared 16-byte aligned, rows a whole number of 16 bytes apart,
        col a multiple of 4."""
        if not _float32_matrix(a):
            return None
        sig = types.void(a, row, col, v0, v1, v2, v3)

        def codegen(context, builder, sig, args):
            ptr = _run_pointer(context, builder, sig, args)
            vector = ir.Constant(ir.VectorType(_F32, 4), ir.Undefined)
            for q in range(4):
                value = context.cast(builder, args[3 + q], sig.args[3 + q], types.float32)
                vector = builder.insert_element(vector, value, ir.Constant(_I32, q))
            target = builder.bitcast(ptr, ir.PointerType(ir.VectorType(_F32, 4), ptr.type.addrspace))
            builder.store(vector, target, align=16)
            return context.get_dummy_value()

        return sig, codegen

    @intrinsic
    def aligned16(typingctx, a):
        """Does a's element 0 start on 16 bytes?"""
        sig = types.boolean(a)

        def codegen(context, builder, sig, args):
            array = context.make_array(sig.args[0])(context, builder, value=args[0])
            low = builder.and_(builder.ptrtoint(array.data, _I64), ir.Constant(_I64, 15))
            return builder.icmp_unsigned("==", low, ir.Constant(_I64, 0))

        return sig, codegen

    @intrinsic
    def shared_address(typingctx, table):
        """The .shared byte address (32 bits) of a shared array's element 0."""
        sig = types.uint32(table)

        def codegen(context, builder, sig, args):
            array = context.make_array(sig.args[0])(context, builder, value=args[0])
            generic = builder.ptrtoint(array.data, _I64)
            asm = ir.InlineAsm(
                ir.FunctionType(_I32, [_I64]), "{ .reg .u64 s; cvta.to.shared.u64 s, $1; cvt.u32.u64 $0, s; }", "=r,l"
            )
            return builder.call(asm, [generic])

        return sig, codegen

    # Per byte: a shift, a mask, an add and the red.shared; ptxas emits ATOMS.POPC.INC.
    _COUNT_BYTES = (
        "{ .reg .u32 m<4>; "
        + " ".join(
            ["shl.b32 m0, $1, 7;", "shr.u32 m1, $1, 1;", "shr.u32 m2, $1, 9;", "shr.u32 m3, $1, 17;"]
            + [f"and.b32 m{b}, m{b}, 0x7F80; add.u32 m{b}, $0, m{b}; red.shared.add.u32 [m{b}], 1;" for b in range(4)]
        )
        + " }"
    )

    @intrinsic
    def count_bytes(typingctx, table, column, w):
        """For each byte x of the uint32 w, add 1 to the table word at byte address
        column + 128 * x: row x of a table of 32 columns, `column` being row 0 of one
        (a .shared address from shared_address). `table` only ties the count to its array."""
        sig = types.void(table, column, w)

        def codegen(context, builder, sig, args):
            operands = [context.cast(builder, args[k], sig.args[k], types.uint32) for k in (1, 2)]
            asm = ir.InlineAsm(
                ir.FunctionType(ir.VoidType(), [_I32, _I32]), _COUNT_BYTES, "r,r,~{memory}", side_effect=True
            )
            builder.call(asm, operands)
            return context.get_dummy_value()

        return sig, codegen
