"""Row-wise RMSNorm with Numba CUDA, y = x / sqrt(mean(x^2) + eps) * w: one block per row, the
row held in registers and moved in 16-byte loads and stores, one block reduction (the sum of
squares). Checked against a float64 RMSNorm within its relative error bound.
Run: python rmsnorm_numba.py [ROWS COLS]  (no GPU: NUMBA_ENABLE_CUDASIM=1 python ...; needs
reduce_numba.py and reduce_common.py beside it)"""
import argparse
import math

# --8<-- [start:imports]
import numpy as np
from numba import cuda, float32

from reduce_numba import SUM, ZERO, block_reduce, load4, store4
# --8<-- [end:imports]

THREADS = 256
PER_THREAD = 16  # elements of a row each thread holds: rows of up to 16 * THREADS = 4096
EPS = 1e-6       # as torch.nn.functional.rms_norm(x, (cols,), w, eps=1e-6)
U = 2.0**-24
ONE = np.float32(1.0)


# --8<-- [start:rmsnorm]
@cuda.jit
def rmsnorm_rows(x, w, y, cols, eps):
    """x and y: the rows end to end (1-D, 16-byte aligned); w: one weight per column."""
    row, t, step = cuda.blockIdx.x, cuda.threadIdx.x, cuda.blockDim.x
    first, n4 = row * (cols // 4), cols // 4
    v = cuda.local.array(PER_THREAD, float32)
    for k in range(PER_THREAD // 4):  # four 16-byte loads in flight per thread
        if t + k * step < n4:
            v[4 * k], v[4 * k + 1], v[4 * k + 2], v[4 * k + 3] = load4(x, first + t + k * step)
        else:
            v[4 * k] = v[4 * k + 1] = v[4 * k + 2] = v[4 * k + 3] = ZERO
    s = ZERO
    for k in range(PER_THREAD):
        s += v[k] * v[k]
    s = block_reduce(s, SUM)
    r = ONE / math.sqrt(s / float32(cols) + eps)  # once per row
    for k in range(PER_THREAD // 4):
        i = t + k * step
        if i < n4:
            w0, w1, w2, w3 = load4(w, i)  # 16 KiB of weights, read by every row: from cache
            store4(y, first + i, v[4 * k] * r * w0, v[4 * k + 1] * r * w1, v[4 * k + 2] * r * w2,
                   v[4 * k + 3] * r * w3)
# --8<-- [end:rmsnorm]


def rmsnorm(d_x, d_w, d_y, threads: int = THREADS):
    """One block of `threads` per row of d_x into d_y (the same shape)."""
    rows, cols = d_x.shape
    if cols > PER_THREAD * threads or cols % 4:
        raise ValueError(f"rows must be a multiple of 4 and at most {PER_THREAD * threads} "
                         f"long, got {cols}")
    rmsnorm_rows[rows, threads](d_x.reshape(d_x.size), d_w, d_y.reshape(d_y.size), cols,
                                np.float32(EPS))


# --8<-- [start:check]
def relative_error_bound(cols: int, threads: int = THREADS) -> float:
    """Per element, to first order, in units of u = 2^-24. The sum of squares: each square
    rounded (u) and the sum's tree (cols/threads serial adds, then log2(threads) levels); the
    division by cols and the + eps add u each. The square root halves that relative error; the
    root and the reciprocal, or rsqrtf's 2 ulp, add up to 4u; the two products 2u."""
    depth = math.ceil(cols / threads) + math.log2(threads)
    return ((depth + 3) / 2 + 4 + 2) * U


def reference(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    x64 = x.astype(np.float64)
    return x64 / np.sqrt(np.mean(x64 * x64, axis=1, keepdims=True) + EPS) * w


def check(y: np.ndarray, x: np.ndarray, w: np.ndarray, threads: int = THREADS) -> float:
    """The largest relative error of y against a float64 RMSNorm of x; raises ValueError when
    it is above the bound (an element of a zero row must be exactly 0)."""
    want = reference(x, w)
    with np.errstate(divide="ignore", invalid="ignore"):
        error = np.where(want != 0, np.abs(y - want) / np.abs(want), np.where(y == 0, 0, np.inf))
    worst = float(np.max(np.nan_to_num(error, nan=np.inf)))
    bound = relative_error_bound(x.shape[1], threads)
    if not worst <= bound:
        raise ValueError(f"RMSNorm off by {worst:.3g} (relative), more than its bound {bound:.3g}")
    return worst
# --8<-- [end:check]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Check the Numba RMSNorm against float64 NumPy.",
                                     usage=argparse.SUPPRESS)  # an error is one line
    parser.add_argument("shape", nargs="*", type=int, default=[2, 100],
                        help="ROWS COLS: COLS a multiple of 4 up to 4096, at most 2**28 in all")
    shape = parser.parse_args().shape
    if (len(shape) != 2 or min(shape) < 1 or shape[1] % 4 or shape[1] > PER_THREAD * THREADS
            or shape[0] * shape[1] > 2**28):
        parser.error(f"give ROWS COLS, whole numbers of at least 1, COLS a multiple of 4 up to "
                     f"{PER_THREAD * THREADS}, at most 2**28 in all, got {shape}")
    rows, cols = shape
    rng = np.random.default_rng(0)
    x = rng.uniform(-4, 4, (rows, cols)).astype(np.float32)
    w = rng.uniform(0.5, 1.5, cols).astype(np.float32)
    d_y = cuda.device_array_like(x)
    rmsnorm(cuda.to_device(x), cuda.to_device(w), d_y)
    print(f"OK: {rows} rows of {cols}, largest relative error {check(d_y.copy_to_host(), x, w):.3g}")
