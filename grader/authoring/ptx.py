"""Inline-PTX helpers for the bundled target kernels, where Numba cannot say what the fastest
code needs: a 16-byte load, and a shared-memory count at a precomputed address.

Each is a Numba intrinsic on a GPU and a plain device function with the same meaning on the
simulator, so a target that uses them is checked there like any other kernel. Import this
module after the back end is chosen (as kernels/<id>.py are).

Measured on an H200 (docs/BENCHMARKS.md, eighth session): the histogram target counts 2**28
bytes through count_bytes in 0.068-0.070 ms, about 4.4 instructions a byte, half of them on the
FMA pipe; the same lane-column table indexed through Numba's cuda.atomic.add took 0.130 ms
(512 threads a block, against 0.072 through count_bytes): its 64-bit index arithmetic and
negative-index checks cost about 9 instructions a byte, and a kernel of that many, under
ncu, kept the SM 94% busy while the shared-memory pipe idled at 38%.
"""

from numba import config, cuda

__all__ = ["load_pair", "shared_address", "count_bytes"]

if config.ENABLE_CUDASIM:

    @cuda.jit(device=True)
    def load_pair(words, i):
        """(words[2i], words[2i + 1]) of a uint64 array."""
        return words[2 * i], words[2 * i + 1]

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

    _I32, _I64 = ir.IntType(32), ir.IntType(64)

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
