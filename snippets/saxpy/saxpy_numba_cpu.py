"""SAXPY (y = a*x + y) on every CPU core with Numba's parallel loops: the fair CPU baseline.

Run:  python saxpy_numba_cpu.py [N]     (default N = 2^25 floats; needs saxpy_common.py beside it)
Numba uses all cores it may run on; NUMBA_NUM_THREADS=1 restricts it to one.
"""

import os
import signal
import sys


def interrupted(signum, frame):
    """Ctrl-C, wherever it lands (even inside a slow import below): one line and exit code 130."""
    os.write(2, b"interrupted\n")
    os._exit(130)  # at once: an exception raised here could land in a C extension or be ignored


if __name__ == "__main__":
    signal.signal(signal.SIGINT, interrupted)

# --8<-- [start:imports]
import time

import numba
import numpy as np
from numba import njit, prange

from saxpy_common import A, command_line, make_inputs, mismatches, report, seconds_per_call
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


def main(argv: list[str] | None = None) -> int:
    args = command_line(__doc__, n=2**25, repeats=10).parse_args(argv)
    t0 = time.perf_counter()
    saxpy(A, *make_inputs(1))  # the first call compiles (for float32 arrays of any size)
    compile_s = time.perf_counter() - t0
    x, y = make_inputs(args.n)
    dst = np.empty_like(x)
    copy(x, dst)
    if mismatches(saxpy, args.n) or np.count_nonzero(dst != x) \
            or read(x) != np.sum(x, dtype=np.float64):  # exact: the values are halves
        print("error: the parallel SAXPY, copy or sum gave a wrong result", file=sys.stderr)
        return 1
    timed = {"saxpy": (seconds_per_call(lambda: saxpy(A, x, y), args.repeats), 12),
             "copy": (seconds_per_call(lambda: copy(x, dst), args.repeats), 8),
             "read": (seconds_per_call(lambda: read(x), args.repeats), 4)}
    report(f"SAXPY, Numba parallel (threads: {numba.get_num_threads()}), N = {args.n:,} float32 "
           f"(first call with compilation: {compile_s:.2f} s)", args.n, timed)
    print(f"OK: all {args.n} elements match")
    return 0


if __name__ == "__main__":
    sys.exit(main())
