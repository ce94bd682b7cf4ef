"""SAXPY (y = a*x + y) with Numba CUDA: four kernels, from one element per thread to 16-byte
accesses. Run: python saxpy_numba_cuda.py [N]  (no GPU: NUMBA_ENABLE_CUDASIM=1 python ...)"""
import argparse

# --8<-- [start:imports]
from numba import config, cuda

from saxpy_common import mismatches
# --8<-- [end:imports]


# --8<-- [start:one]
@cuda.jit
def saxpy_one(a, x, y):
    i = cuda.grid(1)           # one thread per element
    if i < y.size:
        y[i] = a * x[i] + y[i]
# --8<-- [end:one]


# --8<-- [start:grid_stride]
@cuda.jit
def saxpy_grid_stride(a, x, y):
    i = cuda.grid(1)           # this thread's first element
    stride = cuda.gridsize(1)  # number of threads in the whole grid
    while i < y.size:
        y[i] = a * x[i] + y[i]
        i += stride
# --8<-- [end:grid_stride]


# --8<-- [start:unrolled]
@cuda.jit
def saxpy_unrolled(a, x, y):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    n = y.size
    # Four elements per trip, all eight loads before the first store.
    while i + 3 * stride < n:
        x0, x1, x2, x3 = x[i], x[i + stride], x[i + 2 * stride], x[i + 3 * stride]
        y0, y1, y2, y3 = y[i], y[i + stride], y[i + 2 * stride], y[i + 3 * stride]
        y[i] = a * x0 + y0
        y[i + stride] = a * x1 + y1
        y[i + 2 * stride] = a * x2 + y2
        y[i + 3 * stride] = a * x3 + y3
        i += 4 * stride
    while i < n:               # the last few elements, one per trip
        y[i] = a * x[i] + y[i]
        i += stride
# --8<-- [end:unrolled]


# --8<-- [start:vector_access]
# Numba turns x[i] on a float32 array into a 4-byte load, whatever the code around it. Two
# intrinsics (numba.cuda.extending.intrinsic: code that writes LLVM IR) load and store four
# float32 at once as one 16-byte vector, which the compiler emits as ld.global.v4.f32 and
# st.global.v4.f32. The array's start must be 16-byte aligned (device allocations are).
if config.ENABLE_CUDASIM:  # the simulator runs kernels as Python: plain element accesses
    def load4(a, i):
        return a[4 * i], a[4 * i + 1], a[4 * i + 2], a[4 * i + 3]

    def store4(a, i, v):
        a[4 * i], a[4 * i + 1], a[4 * i + 2], a[4 * i + 3] = v
else:
    from llvmlite import ir
    from numba import types
    from numba.cuda.extending import intrinsic

    VEC4 = ir.VectorType(ir.FloatType(), 4)

    def _vector_pointer(context, builder, sig, args):
        """Address of the i-th group of four float32 of a float32 array, as <4 x float>*."""
        data = context.make_array(sig.args[0])(context, builder, value=args[0]).data
        i = context.cast(builder, args[1], sig.args[1], types.intp)
        return builder.gep(builder.bitcast(data, VEC4.as_pointer()), [i])

    @intrinsic
    def load4(typingctx, a, i):
        """(a[4i], a[4i+1], a[4i+2], a[4i+3]) with one 16-byte load."""
        sig = types.UniTuple(types.float32, 4)(a, i)

        def codegen(context, builder, sig, args):
            v = builder.load(_vector_pointer(context, builder, sig, args), align=16)
            parts = [builder.extract_element(v, ir.Constant(ir.IntType(32), k)) for k in range(4)]
            return context.make_tuple(builder, sig.return_type, parts)
        return sig, codegen

    @intrinsic
    def store4(typingctx, a, i, v):
        """a[4i : 4i+4] = v (a tuple of four float32) with one 16-byte store."""
        sig = types.void(a, i, v)

        def codegen(context, builder, sig, args):
            vec = ir.Constant(VEC4, ir.Undefined)
            for k in range(4):
                part = context.cast(builder, builder.extract_value(args[2], k),
                                    sig.args[2].types[k], types.float32)
                vec = builder.insert_element(vec, part, ir.Constant(ir.IntType(32), k))
            builder.store(vec, _vector_pointer(context, builder, sig, args), align=16)
        return sig, codegen
# --8<-- [end:vector_access]


# --8<-- [start:vector]
@cuda.jit
def saxpy_vector(a, x, y):
    i = cuda.grid(1)           # one thread per four elements
    n4 = y.size // 4
    if i < n4:
        x0, x1, x2, x3 = load4(x, i)
        y0, y1, y2, y3 = load4(y, i)
        store4(y, i, (a * x0 + y0, a * x1 + y1, a * x2 + y2, a * x3 + y3))
    if i < y.size - 4 * n4:    # the 0 to 3 elements left over
        j = 4 * n4 + i
        y[j] = a * x[j] + y[j]
# --8<-- [end:vector]


# --8<-- [start:launch]
KERNELS = {"one": saxpy_one, "grid_stride": saxpy_grid_stride, "unrolled": saxpy_unrolled,
           "vector": saxpy_vector}
THREADS = 256  # threads per block


def blocks_for(variant: str, n: int, per_sm: int = 32) -> int:
    """One thread per element (per four for "vector"), or `per_sm` blocks per SM (grid-stride)."""
    if variant == "vector":
        return max(1, -(-(n // 4) // THREADS))
    needed = -(-n // THREADS)
    if variant == "one":
        return needed
    sms = getattr(cuda.get_current_device(), "MULTIPROCESSOR_COUNT", 1)  # 1 on the simulator
    return max(1, min(per_sm * sms, needed))


def saxpy(variant: str, a, d_x, d_y):
    if variant == "forall":  # step 1's kernel; Numba asks the occupancy API for the block size
        return saxpy_one.forall(d_y.size)(a, d_x, d_y)
    if variant == "vector":  # 16-byte accesses need 16-byte aligned, contiguous arrays
        for d in (d_x, d_y):
            address = 0 if config.ENABLE_CUDASIM else d.device_ctypes_pointer.value
            if address % 16 or not d.is_c_contiguous():
                raise ValueError("the vector kernel needs contiguous, 16-byte aligned arrays")
    KERNELS[variant][blocks_for(variant, d_y.size), THREADS](a, d_x, d_y)
# --8<-- [end:launch]


def check(variant: str, n: int) -> int:
    return mismatches(lambda a, x, y: saxpy(variant, a, x, y), n, cuda.to_device,
                      lambda d: d.copy_to_host())


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Check every SAXPY kernel against NumPy.",
                                     usage=argparse.SUPPRESS)  # an error is one line
    parser.add_argument("n", nargs="?", type=int, default=1027,
                        help="float32 elements, 1 to 2**28 (default 1027)")
    n = parser.parse_args().n
    if not 1 <= n <= 2**28:  # 2**28 floats: 1 GiB an array
        parser.error(f"n must be a whole number from 1 to 2**28, got {n}")
    wrong = {variant: check(variant, n) for variant in (*KERNELS, "forall")}
    if any(wrong.values()):
        raise SystemExit(f"error: elements that differ from NumPy, per kernel: {wrong}")
    print(f"OK: all {n} elements match")
