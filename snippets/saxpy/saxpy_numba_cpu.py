"""SAXPY (y = a*x + y) on every CPU core with Numba's parallel loops: the fair CPU baseline.

Run:  python saxpy_numba_cpu.py [N]     (needs saxpy_common.py beside it)
Numba uses all cores it may run on; NUMBA_NUM_THREADS=1 restricts it to one.
"""
import argparse

# --8<-- [start:imports]
import numpy as np
from numba import njit, prange

from saxpy_common import make_inputs, mismatches
# --8<-- [end:imports]


# --8<-- [start:kernel]
@njit(parallel=True)
def saxpy(a, x, y):
    for i in prange(y.size):  # iterations split across all cores, each vectorised with SIMD
        y[i] = a * x[i] + y[i]
# --8<-- [end:kernel]


@njit(parallel=True)
def copy(src, dst):
    for i in prange(dst.size):
        dst[i] = src[i]


@njit(parallel=True, fastmath=True)  # fastmath: a vectorised sum, not one long
# chain of dependent adds (the values are exact in float64, so the order does not matter)
def read(x):
    """Sum the array: reads only, so no write-allocate traffic: the CPU's read bandwidth."""
    total = 0.0
    for i in prange(x.size):
        total += x[i]
    return total


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Check the parallel SAXPY, copy and sum.",
                                     usage=argparse.SUPPRESS)  # an error is one line
    parser.add_argument("n", nargs="?", type=int, default=1000,
                        help="float32 elements, 1 to 2**28 (default 1000)")
    n = parser.parse_args().n
    if not 1 <= n <= 2**28:  # 2**28 floats: 1 GiB an array
        parser.error(f"n must be a whole number from 1 to 2**28, got {n}")
    x, _ = make_inputs(n)
    dst = np.empty_like(x)
    copy(x, dst)
    if mismatches(saxpy, n) or np.count_nonzero(dst != x) \
            or read(x) != np.sum(x, dtype=np.float64):  # exact: the values are halves
        raise SystemExit("error: the parallel SAXPY, copy or sum gave a wrong result")
    print(f"OK: all {n} elements match")
