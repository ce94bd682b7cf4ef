"""SAXPY (y = a*x + y) on the CPU with NumPy, and its effective memory bandwidth.

NumPy runs `y += a * x` on one core as two passes over memory with a temporary array, so it
moves 5 float32 per element; the bandwidth below counts the 3 that SAXPY needs, like every other
version on the page.

Run:  python saxpy_numpy.py [N]     (default N = 2^25 floats; needs saxpy_common.py beside it)
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
from saxpy_common import A, command_line, make_inputs, mismatches, report, seconds_per_call
# --8<-- [end:imports]


# --8<-- [start:kernel]
def saxpy(a, x, y):
    y += a * x  # a * x makes a temporary array; += then updates y in place
# --8<-- [end:kernel]


def main(argv: list[str] | None = None) -> int:
    args = command_line(__doc__, n=2**25, repeats=10).parse_args(argv)
    if mismatches(saxpy, args.n):
        print("error: NumPy SAXPY gave a wrong result", file=sys.stderr)
        return 1
    x, y = make_inputs(args.n)
    s = seconds_per_call(lambda: saxpy(A, x, y), args.repeats)
    report(f"SAXPY, NumPy (1 core), N = {args.n:,} float32", args.n, {"saxpy": (s, 12)})
    print(f"OK: all {args.n} elements match")
    return 0


if __name__ == "__main__":
    sys.exit(main())
