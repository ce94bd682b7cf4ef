"""SAXPY (y = a*x + y) on the CPU with NumPy, checked against the same arithmetic.

NumPy runs `y += a * x` on one core as two passes over memory with a temporary array, so it
moves 5 float32 per element where SAXPY needs 3.

Run:  python saxpy_numpy.py [N]     (needs saxpy_common.py beside it)
"""
import argparse

# --8<-- [start:imports]
from saxpy_common import mismatches
# --8<-- [end:imports]


# --8<-- [start:kernel]
def saxpy(a, x, y):
    y += a * x  # a * x makes a temporary array; += then updates y in place
# --8<-- [end:kernel]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Check NumPy's SAXPY.",
                                     usage=argparse.SUPPRESS)  # an error is one line
    parser.add_argument("n", nargs="?", type=int, default=1000,
                        help="float32 elements, 1 to 2**28 (default 1000)")
    n = parser.parse_args().n
    if not 1 <= n <= 2**28:  # 2**28 floats: 1 GiB an array
        parser.error(f"n must be a whole number from 1 to 2**28, got {n}")
    if mismatches(saxpy, n):
        raise SystemExit("error: NumPy SAXPY gave a wrong result")
    print(f"OK: all {n} elements match")
