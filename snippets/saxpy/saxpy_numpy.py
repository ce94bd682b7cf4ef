"""SAXPY (y = a*x + y) on the CPU with NumPy, and its effective memory bandwidth.

NumPy runs `y += a * x` on one core as two passes over memory with a temporary array, so it
moves 5 float32 per element; the bandwidth below counts the 3 that SAXPY needs, like every other
version on the page.

Run:  python saxpy_numpy.py [N]     (default N = 2^25 floats)
"""

# --8<-- [start:imports]
import argparse
import statistics
import sys
import timeit

import numpy as np
# --8<-- [end:imports]

A = np.float32(2.0)


# --8<-- [start:kernel]
def saxpy(a, x, y):
    y += a * x  # a * x makes a temporary array; += then updates y in place
# --8<-- [end:kernel]


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
    saxpy(A, x, y)
    if np.count_nonzero(y != want):
        raise RuntimeError("NumPy SAXPY gave a wrong result")
    return {"saxpy": seconds_per_call(lambda: saxpy(A, x, y), repeats)}


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
    stats = measure(args.n, args.repeats)["saxpy"]
    print(f"SAXPY, NumPy (1 core), N = {args.n:,} float32: {stats * 1e3:.3f} ms, "
          f"{12 * args.n / stats / 1e9:.1f} GB/s")
    print(f"OK: all {args.n} elements match")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
