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
    parser = argparse.ArgumentParser(description="Check NumPy's SAXPY.")
    parser.add_argument("n", nargs="?", type=int, default=1000, help="float32 elements")
    n = parser.parse_args().n
    if mismatches(saxpy, n):
        raise SystemExit("error: NumPy SAXPY gave a wrong result")
    print(f"OK: all {n} elements match")
