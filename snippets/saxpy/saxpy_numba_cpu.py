"""SAXPY (y = a*x + y) on every CPU core with Numba's parallel loops: the fair CPU baseline.

Run:  python saxpy_numba_cpu.py [N]     (default N = 2^25 floats)
Numba uses all cores it may run on; NUMBA_NUM_THREADS=1 restricts it to one.
"""

# --8<-- [start:imports]
import argparse
import statistics
import sys
import time
import timeit

import numba
import numpy as np
from numba import njit, prange
# --8<-- [end:imports]

A = np.float32(2.0)


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


def seconds_per_call(fn, repeats: int = 10) -> float:
    """Median of `repeats` timed calls, after one warm-up call."""
    fn()
    return statistics.median(timeit.repeat(fn, number=1, repeat=repeats))  # stdlib timer


def make_inputs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Exactly representable values: a*x + y is exact in float32, with or without an FMA."""
    i = np.arange(n, dtype=np.int64)
    return ((i % 1000) * 0.5 - 250).astype(np.float32), ((i % 777) * 0.25).astype(np.float32)


def measure(n: int, repeats: int = 10) -> dict:
    x, y = make_inputs(n)
    want = A * x + y
    t0 = time.perf_counter()
    saxpy(A, x, y)  # the first call compiles
    compile_s = time.perf_counter() - t0
    if np.count_nonzero(y != want):
        raise RuntimeError("Numba SAXPY gave a wrong result")
    dst = np.empty_like(x)
    copy(x, dst)
    if np.count_nonzero(dst != x) or read(x) != np.sum(x, dtype=np.float64):  # exact: halves
        raise RuntimeError("the parallel copy or sum is wrong")
    return {"compile_first_s": compile_s,
            "saxpy": seconds_per_call(lambda: saxpy(A, x, y), repeats),
            "copy": seconds_per_call(lambda: copy(x, dst), repeats),
            "read": seconds_per_call(lambda: read(x), repeats)}


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 1 <= value <= 2**32:
        raise argparse.ArgumentTypeError(f"must be from 1 to 2^32, got {value}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    parser.add_argument("n", nargs="?", type=positive_int, default=2**25,
                        help="number of float32 elements (default 2^25 = 33554432)")
    parser.add_argument("--repeats", type=positive_int, default=10,
                        help="timed repeats after warm-up; the median is reported (default 10)")
    args = parser.parse_args(argv)
    res = measure(args.n, args.repeats)
    print(f"SAXPY, Numba parallel (threads: {numba.get_num_threads()}), N = {args.n:,} float32 "
          f"(first call with compilation: {res['compile_first_s']:.2f} s)")
    for name, moved in (("saxpy", 12 * args.n), ("copy", 8 * args.n), ("read", 4 * args.n)):
        s = res[name]
        print(f"{name:6s} {s * 1e3:10.3f} ms  {moved / s / 1e9:8.1f} GB/s")
    print(f"OK: all {args.n} elements match")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
