"""Array addition on an NVIDIA GPU with Numba: the CUDA C example, in Python.

Run:  python vector_add_numba.py [N]
Without a GPU, run it on Numba's CUDA simulator: NUMBA_ENABLE_CUDASIM=1 python ...
"""

# --8<-- [start:imports]
import argparse
import os
import sys

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


def host_memory() -> int:
    """Bytes of physical memory (0 where the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


def element_count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 1 <= value <= MAX_N:
        raise argparse.ArgumentTypeError(f"must be from 1 to {MAX_N:,}, got {value:,}")
    need, have = 16 * value, host_memory()  # a, b, c and the reference a + b, float32 each
    if have and need > have:
        raise argparse.ArgumentTypeError(
            f"{value:,} elements need {need / 2**30:.1f} GiB of host memory; this machine has "
            f"{have / 2**30:.1f} GiB")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")  # one line, no usage dump
    parser.add_argument("n", nargs="?", type=element_count, default=6,
                        help="number of elements (default 6: A = 1..6, B = 7..12)")
    args = parser.parse_args(argv)

    if not cuda.is_available():
        print("error: no CUDA GPU found; to try this on the CPU, set NUMBA_ENABLE_CUDASIM=1",
              file=sys.stderr)
        return 1
    try:
        a, b = make_inputs(args.n)
        c = add_on_gpu(a, b)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
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
