"""Row-wise softmax with Numba CUDA, built on the block reduction of reduce_numba.py: one block
per row, the row's max, then the sum of exp(x - max), then the outputs. Three versions: three
passes over the row, the row held in registers, and held with 16-byte loads and stores.
Run: python softmax_numba.py [ROWS COLS]  (no GPU: NUMBA_ENABLE_CUDASIM=1 python ...; needs
reduce_numba.py and reduce_common.py beside it)"""
import argparse
import math

# --8<-- [start:imports]
import numpy as np
from numba import cuda, float32

from reduce_numba import MAX, NEG_INF, SUM, ZERO, block_reduce, load4, store4
# --8<-- [end:imports]

THREADS = 256
PER_THREAD = 16  # elements of a row each thread holds: rows of up to 16 * THREADS = 4096
U = 2.0**-24
ONE = np.float32(1.0)


# --8<-- [start:softmax]
@cuda.jit
def softmax_rows(x, y):
    row, t, step = cuda.blockIdx.x, cuda.threadIdx.x, cuda.blockDim.x
    m = NEG_INF
    for j in range(t, x.shape[1], step):
        m = max(m, x[row, j])
    m = block_reduce(m, MAX)   # the row's max, in every thread: exp(x - m) <= 1 cannot overflow
    s = ZERO
    for j in range(t, x.shape[1], step):  # the row was just read: these loads hit the cache
        s += math.exp(x[row, j] - m)
    s = block_reduce(s, SUM)
    for j in range(t, x.shape[1], step):
        y[row, j] = math.exp(x[row, j] - m) / s
# --8<-- [end:softmax]


# --8<-- [start:held]
@cuda.jit
def softmax_rows_held(x, y):
    row, t, step = cuda.blockIdx.x, cuda.threadIdx.x, cuda.blockDim.x
    v = cuda.local.array(PER_THREAD, float32)  # this thread's elements, kept in registers
    for k in range(PER_THREAD):  # 16 independent loads in flight before the first is used
        j = t + k * step
        v[k] = x[row, j] if j < x.shape[1] else NEG_INF
    m = NEG_INF
    for k in range(PER_THREAD):
        m = max(m, v[k])
    m = block_reduce(m, MAX)
    s = ZERO
    for k in range(PER_THREAD):
        v[k] = math.exp(v[k] - m)  # once per element; exp(-inf) = 0 for the padding
        s += v[k]
    s = block_reduce(s, SUM)
    for k in range(PER_THREAD):
        j = t + k * step
        if j < x.shape[1]:
            y[row, j] = v[k] / s
# --8<-- [end:held]


# --8<-- [start:vector]
@cuda.jit
def softmax_rows_vector(x, y, cols):
    """x and y: the rows end to end (1-D, 16-byte aligned), `cols` a multiple of 4."""
    row, t, step = cuda.blockIdx.x, cuda.threadIdx.x, cuda.blockDim.x
    first, n4 = row * (cols // 4), cols // 4  # the row's first float4, and its float4s
    v = cuda.local.array(PER_THREAD, float32)
    for k in range(PER_THREAD // 4):  # four 16-byte loads in flight per thread
        if t + k * step < n4:
            v[4 * k], v[4 * k + 1], v[4 * k + 2], v[4 * k + 3] = load4(x, first + t + k * step)
        else:
            v[4 * k] = v[4 * k + 1] = v[4 * k + 2] = v[4 * k + 3] = NEG_INF
    m = NEG_INF
    for k in range(PER_THREAD):
        m = max(m, v[k])
    m = block_reduce(m, MAX)
    s = ZERO
    for k in range(PER_THREAD):
        v[k] = math.exp(v[k] - m)
        s += v[k]
    r = ONE / block_reduce(s, SUM)  # one division per row, then a product per element
    for k in range(PER_THREAD // 4):
        if t + k * step < n4:
            store4(y, first + t + k * step, v[4 * k] * r, v[4 * k + 1] * r, v[4 * k + 2] * r,
                   v[4 * k + 3] * r)
# --8<-- [end:vector]


VERSIONS = ("three_pass", "held", "vector")


def softmax(version: str, d_x, d_y, threads: int = THREADS):
    """One block of `threads` per row of d_x into d_y. version: "three_pass" (the row read three
    times), "held" (held in registers: read once) or "vector" (held, 16-byte loads and stores;
    columns a multiple of 4)."""
    rows, cols = d_x.shape
    if version != "three_pass" and cols > PER_THREAD * threads:
        raise ValueError(f"rows longer than {PER_THREAD * threads} need more threads per block")
    if version == "vector":
        if cols % 4:
            raise ValueError(f"16-byte loads need a multiple of 4 columns, got {cols}")
        softmax_rows_vector[rows, threads](d_x.reshape(d_x.size), d_y.reshape(d_y.size), cols)
    else:
        (softmax_rows_held if version == "held" else softmax_rows)[rows, threads](d_x, d_y)


# --8<-- [start:check]
def relative_error_bound(cols: int, spread: float, threads: int = THREADS) -> float:
    """Per element, to first order, in units of u = 2^-24. Numerator and every term of the sum:
    rounding x - max (up to |x - max| * u, which exp turns into a relative error) and exp's own
    error: up to 2 ulp from the correctly rounded result, so 2.5 ulp from the exact one, and an
    ulp is up to 2u relative: 5u. The sum adds its tree's depth (cols/threads serial adds, then
    log2(threads) levels); the division adds u, or a reciprocal and a product 2u."""
    depth = math.ceil(cols / threads) + math.log2(threads)
    return (2 * (spread + 5) + depth + 2) * U


def check(y: np.ndarray, x: np.ndarray, threads: int = THREADS) -> float:
    """The largest relative error of y against a float64 softmax of x; raises ValueError when
    it is above the bound."""
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    want = e / e.sum(axis=1, keepdims=True)
    error = float(np.max(np.abs(y - want) / want))
    bound = relative_error_bound(x.shape[1], float(np.ptp(x, axis=1).max()), threads)
    if not error <= bound:
        raise ValueError(f"softmax off by {error:.3g} (relative), more than its bound {bound:.3g}")
    return error
# --8<-- [end:check]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Check the Numba softmax against float64 NumPy.",
                                     usage=argparse.SUPPRESS)  # an error is one line
    parser.add_argument("shape", nargs="*", type=int, default=[2, 100],
                        help="ROWS COLS, whole numbers of at least 1, at most 2**28 in all")
    shape = parser.parse_args().shape
    if len(shape) != 2 or min(shape) < 1 or shape[0] * shape[1] > 2**28:
        parser.error(f"give ROWS COLS, whole numbers of at least 1, at most 2**28 in all, "
                     f"got {shape}")
    rows, cols = shape
    x = np.random.default_rng(0).uniform(-4, 4, (rows, cols)).astype(np.float32)
    for version in VERSIONS:
        if version == "vector" and cols % 4:
            continue  # the 16-byte version needs a multiple of 4 columns
        d_y = cuda.device_array_like(x)
        softmax(version, cuda.to_device(x), d_y)
        print(f"OK ({version}): {rows} rows of {cols}, "
              f"largest relative error {check(d_y.copy_to_host(), x):.3g}")
