"""The sum of N float32 with Numba CUDA: five steps, from one atomic add per element to one
pass at the speed of a read, each checked against the exact sum within its error bound.
Run: python reduce_numba.py [N]  (no GPU: NUMBA_ENABLE_CUDASIM=1 python ...; needs
reduce_common.py beside it)"""
import argparse
import math

# --8<-- [start:imports]
import numpy as np
from numba import config, cuda, float32

from reduce_common import check_sum, make_input
# --8<-- [end:imports]

THREADS = 256  # threads per block, a multiple of 32
SUM, MAX = 0, 1  # the two operations block_reduce knows
ZERO, NEG_INF = np.float32(0.0), np.float32(-np.inf)


# --8<-- [start:atomic]
@cuda.jit
def sum_atomic(x, out):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(out, 0, x[i])  # every thread adds to the same float
# --8<-- [end:atomic]


# --8<-- [start:shared]
@cuda.jit
def sum_shared(x, out):
    buf = cuda.shared.array(THREADS, float32)
    i, t = cuda.grid(1), cuda.threadIdx.x
    buf[t] = x[i] if i < x.size else ZERO
    cuda.syncthreads()
    half = cuda.blockDim.x // 2
    while half > 0:            # halve the active threads at each level
        if t < half:
            buf[t] += buf[t + half]
        cuda.syncthreads()     # this level's sums are written before the next level reads
        half //= 2
    if t == 0:
        cuda.atomic.add(out, 0, buf[0])  # one atomic add per block
# --8<-- [end:shared]


# --8<-- [start:shuffle]
@cuda.jit(device=True)
def combine(a, b, op):
    return max(a, b) if op == MAX else a + b


if not config.ENABLE_CUDASIM:
    @cuda.jit(device=True)
    def warp_reduce(v, op):
        offset = 16
        while offset > 0:      # add (or max) the value of lane + offset: five levels
            v = combine(v, cuda.shfl_down_sync(0xFFFFFFFF, v, offset), op)
            offset //= 2
        return v               # lane 0 holds the warp's result
# --8<-- [end:shuffle]
else:  # the simulator has no shuffles: lanes trade values through shared memory
    def warp_reduce(v, op):
        lanes = cuda.shared.array(1024, float32)
        t = cuda.threadIdx.x
        offset = 16
        while offset > 0:
            cuda.syncthreads()
            lanes[t] = v
            cuda.syncthreads()
            if t % 32 + offset < 32:
                v = combine(v, lanes[t + offset], op)
            offset //= 2
        return v


# --8<-- [start:block_reduce]
@cuda.jit(device=True)
def block_reduce(v, op):
    """The sum (op=SUM) or max (op=MAX) of v over the block, returned to every thread. Every
    thread of the block must call it."""
    warp_result = cuda.shared.array(32, float32)
    result = cuda.shared.array(1, float32)
    lane = cuda.threadIdx.x % 32
    v = warp_reduce(v, op)
    cuda.syncthreads()         # a previous call has finished reading both arrays
    if lane == 0:
        warp_result[cuda.threadIdx.x // 32] = v
    cuda.syncthreads()
    v = warp_result[lane] if lane < cuda.blockDim.x // 32 else (NEG_INF if op == MAX else ZERO)
    v = warp_reduce(v, op)     # every warp reduces the warps' results: no thread branches off
    if cuda.threadIdx.x == 0:
        result[0] = v
    cuda.syncthreads()
    return result[0]


@cuda.jit
def sum_shuffle(x, out):
    i = cuda.grid(1)
    v = block_reduce(x[i] if i < x.size else ZERO, SUM)
    if cuda.threadIdx.x == 0:
        cuda.atomic.add(out, 0, v)
# --8<-- [end:block_reduce]


# --8<-- [start:load4]
# x[i] on a float32 array is always a 4-byte load in Numba. These intrinsics load (store) four
# float32 as one 16-byte vector (ld.global.v4.f32); the array must start 16-byte aligned.
if config.ENABLE_CUDASIM:  # the simulator runs kernels as Python: four plain loads
    def load4(a, i):
        return a[4 * i], a[4 * i + 1], a[4 * i + 2], a[4 * i + 3]

    def store4(a, i, v0, v1, v2, v3):
        a[4 * i], a[4 * i + 1], a[4 * i + 2], a[4 * i + 3] = v0, v1, v2, v3
else:
    from llvmlite import ir
    from numba import types
    from numba.cuda.extending import intrinsic

    @intrinsic
    def load4(typingctx, a, i):
        """(a[4i], a[4i+1], a[4i+2], a[4i+3]) with one 16-byte load."""
        sig = types.UniTuple(types.float32, 4)(a, i)

        def codegen(context, builder, sig, args):
            vec4 = ir.VectorType(ir.FloatType(), 4)
            data = context.make_array(sig.args[0])(context, builder, value=args[0]).data
            k = context.cast(builder, args[1], sig.args[1], types.intp)
            v = builder.load(builder.gep(builder.bitcast(data, vec4.as_pointer()), [k]), align=16)
            parts = [builder.extract_element(v, ir.Constant(ir.IntType(32), j)) for j in range(4)]
            return context.make_tuple(builder, sig.return_type, parts)
        return sig, codegen

    @intrinsic
    def store4(typingctx, a, i, v0, v1, v2, v3):
        """a[4i:4i+4] = (v0, v1, v2, v3) with one 16-byte store (st.global.v4.f32)."""
        sig = types.void(a, i, v0, v1, v2, v3)

        def codegen(context, builder, sig, args):
            vec4 = ir.VectorType(ir.FloatType(), 4)
            data = context.make_array(sig.args[0])(context, builder, value=args[0]).data
            k = context.cast(builder, args[1], sig.args[1], types.intp)
            v = ir.Constant(vec4, ir.Undefined)
            for j in range(4):
                part = context.cast(builder, args[2 + j], sig.args[2 + j], types.float32)
                v = builder.insert_element(v, part, ir.Constant(ir.IntType(32), j))
            builder.store(v, builder.gep(builder.bitcast(data, vec4.as_pointer()), [k]), align=16)
            return context.get_dummy_value()
        return sig, codegen
# --8<-- [end:load4]


# --8<-- [start:vector]
@cuda.jit(device=True)
def thread_sum(x):
    """This thread's share of a grid-stride walk in 16-byte loads, four loads in flight."""
    n4 = x.size // 4
    first, stride = cuda.grid(1), cuda.gridsize(1)
    i, s = first, ZERO
    while i + 3 * stride < n4:
        a0, a1, a2, a3 = load4(x, i)
        b0, b1, b2, b3 = load4(x, i + stride)
        c0, c1, c2, c3 = load4(x, i + 2 * stride)
        d0, d1, d2, d3 = load4(x, i + 3 * stride)
        s += (((a0 + a1) + (a2 + a3)) + ((b0 + b1) + (b2 + b3))
              + (((c0 + c1) + (c2 + c3)) + ((d0 + d1) + (d2 + d3))))
        i += 4 * stride
    while i < n4:
        a0, a1, a2, a3 = load4(x, i)
        s += (a0 + a1) + (a2 + a3)
        i += stride
    if first < x.size - 4 * n4:  # the 0 to 3 elements left over
        s += x[4 * n4 + first]
    return s


@cuda.jit
def sum_vector(x, out):
    v = block_reduce(thread_sum(x), SUM)
    if cuda.threadIdx.x == 0:
        cuda.atomic.add(out, 0, v)
# --8<-- [end:vector]


# --8<-- [start:one_pass]
@cuda.jit
def sum_one_pass(x, partial, blocks_done, out):
    last = cuda.shared.array(1, np.int32)
    v = block_reduce(thread_sum(x), SUM)
    if cuda.threadIdx.x == 0:
        partial[cuda.blockIdx.x] = v
        cuda.threadfence()     # this block's total is visible to all before it counts itself
        last[0] = cuda.atomic.add(blocks_done, 0, 1) == cuda.gridDim.x - 1
    cuda.syncthreads()
    if last[0]:                # the last block to finish adds the totals in a fixed order
        s = ZERO
        for b in range(cuda.threadIdx.x, cuda.gridDim.x, cuda.blockDim.x):
            s += partial[b]
        s = block_reduce(s, SUM)
        if cuda.threadIdx.x == 0:
            out[0] = s
            blocks_done[0] = 0  # ready for the next launch
# --8<-- [end:one_pass]


# --8<-- [start:read]
@cuda.jit
def read_vector(x, never, out):
    s = thread_sum(x)          # the ceiling: read everything, keep nothing
    if s == never:             # never true (never is NaN), but the loads cannot be dropped
        out[0] = s
# --8<-- [end:read]


@cuda.jit
def zero(out):
    out[0] = 0


# --8<-- [start:launch]
KERNELS = {"atomic": sum_atomic, "shared": sum_shared, "shuffle": sum_shuffle,
           "vector": sum_vector, "one_pass": sum_one_pass, "read_vector": read_vector}
SCRATCH = {}  # (blocks) -> the one-pass kernel's partial sums and counter, kept between calls


def blocks_for(variant: str, n: int, threads: int = THREADS, per_sm: int = 8) -> int:
    """Steps 1-3: a thread per element. The others: `per_sm` blocks per SM (fewer for small n)."""
    if variant in ("atomic", "shared", "shuffle"):
        return max(1, -(-n // threads))
    sms = getattr(cuda.get_current_device(), "MULTIPROCESSOR_COUNT", 1)  # 1 on the simulator
    return max(1, min(per_sm * sms, -(-(n // 4) // threads)))


def depth(variant: str, n: int, threads: int = THREADS) -> float:
    """Depth of the summation tree each kernel builds (for the error bound)."""
    blocks, levels = blocks_for(variant, n, threads), math.log2(threads)
    per_thread = math.ceil(n / (blocks * threads))
    return {"atomic": n, "shared": levels + blocks, "shuffle": levels + blocks,
            "vector": per_thread + levels + blocks,
            "one_pass": per_thread + 2 * levels + math.ceil(blocks / threads)}[variant]


def total(variant: str, d_x, out, threads: int = THREADS):
    """Launch one step's kernel on device array d_x; the sum lands in out[0] (device)."""
    if not (config.ENABLE_CUDASIM or d_x.device_ctypes_pointer.value % 16 == 0):
        raise ValueError("the 16-byte loads need a 16-byte aligned array")
    blocks = blocks_for(variant, d_x.size, threads)
    kernel = KERNELS[variant][blocks, threads]
    if variant == "one_pass":
        if (blocks, threads) not in SCRATCH:
            SCRATCH[blocks, threads] = (cuda.device_array(blocks, np.float32),
                                        cuda.to_device(np.zeros(1, np.int32)))
        kernel(d_x, *SCRATCH[blocks, threads], out)
    elif variant == "read_vector":
        kernel(d_x, np.float32(np.nan), out)
    else:
        zero[1, 1](out)          # the atomic steps add into out: start it at 0
        kernel(d_x, out)
# --8<-- [end:launch]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Check every Numba sum against the exact one.",
                                     usage=argparse.SUPPRESS)  # an error is one line
    parser.add_argument("n", nargs="?", type=int, default=301,
                        help="float32 elements, 1 to 2**28 (default 301)")
    n = parser.parse_args().n
    if not 1 <= n <= 2**28:  # 2**28 floats: 1 GiB an array
        parser.error(f"n must be a whole number from 1 to 2**28, got {n}")
    x = make_input(n)
    d_x, out = cuda.to_device(x), cuda.device_array(1, np.float32)
    for variant in ("atomic", "shared", "shuffle", "vector", "one_pass"):
        total(variant, d_x, out)
        error, bound = check_sum(out.copy_to_host()[0], x, depth(variant, n))
        print(f"{variant:9} error {error:.3g} (bound {bound:.3g})")
    print(f"OK: every sum of {n} float32 within its bound")
