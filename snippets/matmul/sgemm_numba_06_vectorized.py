"""Step 6 in Numba: 16-byte loads and stores through @intrinsic, and a transposed, padded A tile."""

# --8<-- [start:imports]
from llvmlite import ir
from numba import cuda, float32, int32, types
from numba.cuda import cgutils
from numba.cuda.extending import intrinsic

from sgemm_numba_tiles import ALIGN, AS_COLS, BK, BM, BN, SIMULATOR, TM, TN
# --8<-- [end:imports]


# --8<-- [start:wide]
# Numba has no float4: arrays hold scalars, and NVVM does not merge four scalar loads into one,
# since it cannot prove they are 16-byte aligned. numba-cuda's @intrinsic lets a few lines of
# Python emit the LLVM IR for one <4 x float> load or store with 16-byte alignment, which
# becomes ld.global.v4.f32 / ld.shared.v4.f32 in the PTX. The caller guarantees alignment:
# j a multiple of 4, rows a multiple of 4 floats long, the array 16-byte aligned (device
# arrays are; shared arrays are declared with alignment=ALIGN). The simulator gets plain Python.
F4 = types.UniTuple(float32, 4)


def _vector_pointer(context, builder, sig, args):
    arrty, ity, jty = sig.args[:3]
    ary = context.make_array(arrty)(context, builder, value=args[0])
    idx = [context.cast(builder, args[1], ity, types.intp),
           context.cast(builder, args[2], jty, types.intp)]
    ptr = cgutils.get_item_pointer(context, builder, arrty, ary, idx, wraparound=False)
    return builder.bitcast(ptr, ir.VectorType(ir.FloatType(), 4).as_pointer(ptr.type.addrspace))


if not SIMULATOR:
    @intrinsic
    def load4(typingctx, arr, i, j):
        """arr[i, j:j+4] as one 16-byte load."""
        def codegen(context, builder, sig, args):
            vec = builder.load(_vector_pointer(context, builder, sig, args), align=16)
            return context.make_tuple(builder, F4, [
                builder.extract_element(vec, ir.Constant(ir.IntType(32), q)) for q in range(4)])
        return F4(arr, i, j), codegen

    @intrinsic
    def store4(typingctx, arr, i, j, v):
        """arr[i, j:j+4] = v (four float32) as one 16-byte store."""
        def codegen(context, builder, sig, args):
            vec = ir.Constant(ir.VectorType(ir.FloatType(), 4), None)
            for q in range(4):
                vec = builder.insert_element(vec, builder.extract_value(args[3], q),
                                             ir.Constant(ir.IntType(32), q))
            builder.store(vec, _vector_pointer(context, builder, sig, args), align=16)
            return context.get_dummy_value()
        return types.void(arr, i, j, v), codegen
else:
    def load4(arr, i, j):
        return (arr[i, j], arr[i, j + 1], arr[i, j + 2], arr[i, j + 3])

    def store4(arr, i, j, v):
        for q in range(4):
            arr[i, j + q] = v[q]


@cuda.jit(device=True, inline=True)
def fetch4(x, r, c, vec_ok):
    """x[r, c:c+4] with one 16-byte load when allowed and inside; zeros outside the matrix."""
    rows, cols = x.shape
    if r < rows and vec_ok and c + 3 < cols:
        return load4(x, r, c)
    v0 = x[r, c] if r < rows and c < cols else float32(0.0)
    v1 = x[r, c + 1] if r < rows and c + 1 < cols else float32(0.0)
    v2 = x[r, c + 2] if r < rows and c + 2 < cols else float32(0.0)
    v3 = x[r, c + 3] if r < rows and c + 3 < cols else float32(0.0)
    return (v0, v1, v2, v3)
# --8<-- [end:wide]


# --8<-- [start:vectorized]
@cuda.jit(fastmath=True)
def vectorized(a, b, c):
    # A's tile is stored transposed (As[k, m]) and padded, so the TM values of A a thread needs
    # for one k are contiguous in shared memory, like B's: both come in as 16-byte loads.
    # Each thread copies one float4 of A and one of B per step.
    M, K = a.shape
    N = b.shape[1]
    As = cuda.shared.array((BK, AS_COLS), float32, alignment=ALIGN)
    Bs = cuda.shared.array((BK, BN), float32, alignment=ALIGN)
    acc = cuda.local.array((TM, TN), float32)
    a_reg = cuda.local.array(TM, float32)
    b_reg = cuda.local.array(TN, float32)
    t = cuda.threadIdx.x
    trow, tcol = t // (BN // TN), t % (BN // TN)
    row0, col0 = cuda.blockIdx.y * BM, cuda.blockIdx.x * BN
    a_vec, b_vec = K % 4 == 0, N % 4 == 0
    ar, ac = t // int32(BK // 4), (t % int32(BK // 4)) * int32(4)
    br, bc = t // int32(BN // 4), (t % int32(BN // 4)) * int32(4)
    for i in range(TM):
        for j in range(TN):
            acc[i, j] = 0.0
    for k0 in range(0, K, BK):
        v = fetch4(a, row0 + ar, k0 + ac, a_vec)
        for q in range(4):
            As[ac + q, ar] = v[q]              # transposed on the way in
        store4(Bs, br, bc, fetch4(b, k0 + br, col0 + bc, b_vec))
        cuda.syncthreads()
        for kk in range(BK):
            for i in range(0, TM, 4):
                v = load4(As, kk, trow * TM + i)
                for q in range(4):
                    a_reg[i + q] = v[q]
            for j in range(0, TN, 4):
                v = load4(Bs, kk, tcol * TN + j)
                for q in range(4):
                    b_reg[j + q] = v[q]
            for i in range(TM):
                for j in range(TN):
                    acc[i, j] += a_reg[i] * b_reg[j]
        cuda.syncthreads()
    for i in range(TM):
        r = row0 + trow * TM + i
        if r < M:
            for j in range(TN):
                cc = col0 + tcol * TN + j
                if cc < N:
                    c[r, cc] = acc[i, j]
# --8<-- [end:vectorized]
