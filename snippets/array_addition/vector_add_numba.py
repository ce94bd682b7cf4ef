"""Array addition on an NVIDIA GPU with Numba: the CUDA C example, in Python.

Run:  python vector_add_numba.py [N]
Without a GPU, run it on Numba's CUDA simulator: NUMBA_ENABLE_CUDASIM=1 python ...
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
import argparse

import numpy as np
from numba import cuda
# --8<-- [end:imports]

MAX_N = 2**31


# --8<-- [start:kernel]
@cuda.jit
def vector_add(a, b, c):
    i = cuda.grid(1)  # blockIdx.x * blockDim.x + threadIdx.x
    if i < c.size:  # the last block may run past the end of the arrays
        c[i] = a[i] + b[i]
# --8<-- [end:kernel]


# --8<-- [start:launch]
THREADS_PER_BLOCK = 256


def add_on_gpu(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    d_a = cuda.to_device(a)
    d_b = cuda.to_device(b)
    d_c = cuda.device_array_like(a)
    blocks = (a.size + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
    vector_add[blocks, THREADS_PER_BLOCK](d_a, d_b, d_c)
    return d_c.copy_to_host()  # waits for the kernel to finish
# --8<-- [end:launch]


def make_inputs(n: int) -> tuple[np.ndarray, np.ndarray]:
    i = np.arange(n, dtype=np.int64)
    return (i + 1).astype(np.float32), (i + 7).astype(np.float32)


def format_result(c: np.ndarray) -> str:
    shown = c if c.size <= 10 else np.concatenate([c[:3], c[-3:]])
    words = [f"{x:.0f}" for x in shown]
    if c.size > 10:
        words.insert(3, "...")
    return "C = A + B: " + " ".join(words)


def number(kind, low, high):
    """An argparse type: a `kind` (int or float) from low to high; anything else is a one-line error."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {'a whole number' if kind is int else 'a number'}: {text!r}") from None
        if not low <= value <= high:  # false for nan too
            raise argparse.ArgumentTypeError(f"must be from {low} to {high}, got {text}")
        return value
    return parse


def host_memory() -> int:
    """Bytes of physical memory (0 where the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")  # one line, no usage dump
    parser.add_argument("n", nargs="?", type=number(int, 1, MAX_N), default=6,
                        help="number of elements (default 6: A = 1..6, B = 7..12)")
    args = parser.parse_args(argv)
    need, have = 16 * args.n, host_memory()  # a, b, c and the reference a + b, float32 each
    if have and need > have:
        parser.error(f"{args.n:,} elements need {need / 2**30:.1f} GiB of host memory; this "
                     f"machine has {have / 2**30:.1f} GiB")

    if not cuda.is_available():
        print("error: no CUDA GPU found; to try this on the CPU, set NUMBA_ENABLE_CUDASIM=1",
              file=sys.stderr)
        return 1
    a, b = make_inputs(args.n)
    c = add_on_gpu(a, b)
    print(format_result(c))
    bad = np.flatnonzero(c != a + b)  # the same float32 additions, done by NumPy on the CPU
    if bad.size:
        print(f"error: {bad.size} of {c.size} elements are wrong (first at index {bad[0]})",
              file=sys.stderr)
        return 1
    print(f"OK: all {c.size} elements match")
    return 0


if __name__ == "__main__":
    sys.exit(main())
