"""SAXPY (y = a*x + y) on an NVIDIA GPU with CuPy: a fused elementwise kernel and the plain expression.

`a * x + y` written as a CuPy expression runs two kernels and a temporary array (5 memory
accesses per element instead of 3); an ElementwiseKernel does it in one pass. Both are timed
with CUDA events, next to a device-to-device copy measured in the same run.

Run:  python snippets/saxpy/saxpy_cupy.py [N]     (default N = 2^28 floats; needs a GPU and
      `pip install cupy-cuda12x` or `cupy-cuda13x`, matching your CUDA driver)
"""

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench import timing  # noqa: E402  (the shared timing core: warm-up, CUDA events, median)
from bench.timing import Stats  # noqa: E402  (the shared result type: median, min, max)

A = np.float32(2.0)


def import_cupy():
    """CuPy, or None when it is not installed or finds no GPU."""
    try:
        import cupy as cp

        cp.cuda.runtime.getDeviceCount()
    except Exception:  # ImportError, or a CUDA error without a driver or device
        return None
    return cp


def kernels(cp):
    # --8<-- [start:kernel]
    saxpy = cp.ElementwiseKernel(
        "float32 a, float32 x",  # inputs
        "float32 y",             # output, also read: y is updated in place
        "y = a * x + y",         # the body, run once per element
        "saxpy")
    # --8<-- [end:kernel]
    return saxpy


def time_cupy(cp, fn, repeats: int = 20, warmup: int = 3) -> Stats:
    """CUDA-event timing on CuPy's current stream, after warm-up (the shared bench.timing code)."""
    return timing.time_cupy(cp, fn, repeats, warmup)


def make_inputs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Exactly representable values: a*x + y is exact in float32, with or without an FMA."""
    i = np.arange(n, dtype=np.int64)
    return ((i % 1000) * 0.5 - 250).astype(np.float32), ((i % 777) * 0.25).astype(np.float32)


def measure(cp, n: int, repeats: int = 20) -> dict:
    x, y = make_inputs(n)
    d_x, d_y = cp.asarray(x), cp.asarray(y)
    saxpy = kernels(cp)
    saxpy(A, d_x, d_y)                                 # first call compiles the kernel
    if np.count_nonzero(cp.asnumpy(d_y) != A * x + y):
        raise RuntimeError("the CuPy ElementwiseKernel result differs from NumPy")
    d_copy = cp.empty_like(d_x)
    nbytes = d_x.nbytes
    # --8<-- [start:measure]
    out = {
        "saxpy_kernel": time_cupy(cp, lambda: saxpy(A, d_x, d_y), repeats),
        "saxpy_expression": time_cupy(cp, lambda: A * d_x + d_y, repeats),  # 2 kernels + temporary
        "device_copy": time_cupy(cp, lambda: d_copy.data.copy_from_device(d_x.data, nbytes), repeats),
    }
    # --8<-- [end:measure]
    if np.count_nonzero(cp.asnumpy(d_copy) != x):
        raise RuntimeError("the device-to-device copy is wrong")
    return out


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    parser.add_argument("n", nargs="?", type=positive_int, default=2**28,
                        help="number of float32 elements (default 2^28 = 268435456)")
    parser.add_argument("--repeats", type=positive_int, default=20,
                        help="timed repeats after warm-up; the median is reported (default 20)")
    args = parser.parse_args(argv)
    cp = import_cupy()
    if cp is None:
        print("error: CuPy is not installed or found no CUDA GPU", file=sys.stderr)
        return 1
    res = measure(cp, args.n, args.repeats)
    moved = {"saxpy_kernel": 12 * args.n, "saxpy_expression": 12 * args.n, "device_copy": 8 * args.n}
    print(f"SAXPY, CuPy, N = {args.n:,} float32 (bandwidth counts 3 accesses per element)")
    for name, stats in res.items():
        print(f"{name:17s} {stats.median_s * 1e3:10.4f} ms  "
              f"{moved[name] / stats.median_s / 1e9:8.1f} GB/s")
    ratio = (moved["saxpy_kernel"] / res["saxpy_kernel"].median_s) / (
        moved["device_copy"] / res["device_copy"].median_s)
    print(f"saxpy / copy bandwidth: {ratio:.3f}")
    print(f"OK: all {args.n} elements match")
    return 0


if __name__ == "__main__":
    sys.exit(main())
