"""SAXPY (y = a*x + y, single precision) in OpenCL through pyopencl.

Run:  python snippets/opencl/saxpy.py [N] [--a 2.0] [--device any|gpu|cpu]
On a machine without a GPU, PoCL (`pip install "pyopencl[pocl]"`) runs it on the CPU.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
import pyopencl as cl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cl_device import KINDS, NoDevice, describe, make_queue, pick_device  # noqa: E402

LOCAL_SIZE = 256

SOURCE = r"""
// --8<-- [start:kernel]
__kernel void saxpy(const long n, const float a,
                    __global const float *x, __global float *y) {
    long i = get_global_id(0);
    if (i < n) {
        y[i] = a * x[i] + y[i];  // the compiler may fuse this into one FMA
    }
}
// --8<-- [end:kernel]
"""


# --8<-- [start:host]
def saxpy_on_device(queue, a: float, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    ctx = queue.context
    kernel = cl.Kernel(cl.Program(ctx, SOURCE).build(), "saxpy")
    mf = cl.mem_flags
    d_x = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    d_y = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=y)  # read and overwritten
    global_size = -(-x.size // LOCAL_SIZE) * LOCAL_SIZE
    kernel(queue, (global_size,), (LOCAL_SIZE,), np.int64(x.size), np.float32(a), d_x, d_y)
    out = np.empty_like(y)
    cl.enqueue_copy(queue, out, d_y)  # blocking: waits for the kernel
    return out
# --8<-- [end:host]


def make_inputs(n: int) -> tuple[np.ndarray, np.ndarray]:
    i = np.arange(n, dtype=np.int64)
    return (i + 1).astype(np.float32), np.full(n, 2.0, dtype=np.float32)


def reference(a: float, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """a*x + y in float64, the value a float32 result must round to."""
    return np.float32(a).astype(np.float64) * x.astype(np.float64) + y.astype(np.float64)


def mismatches(out: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Indices where out is further than 1 float32 ulp from the exact result.

    One rounding (fused multiply-add) or two (multiply, then add) are both correct SAXPY.
    """
    tol = np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64)
    return np.flatnonzero(~(np.abs(out.astype(np.float64) - ref) <= tol))


def format_result(y: np.ndarray) -> str:
    shown = y if y.size <= 10 else np.concatenate([y[:3], y[-3:]])
    words = [f"{v:g}" for v in shown]
    if y.size > 10:
        words.insert(3, "...")
    return "y = a*x + y: " + " ".join(words)


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def finite_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be finite, got {text}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    parser.add_argument("n", nargs="?", type=positive_int, default=6,
                        help="number of elements (default 6: x = 1..6, y = 2)")
    parser.add_argument("--a", type=finite_float, default=2.0, help="the scalar a (default 2)")
    parser.add_argument("--device", choices=KINDS, default="any",
                        help="which kind of OpenCL device to use (default: a GPU if any)")
    parser.add_argument("--verbose", action="store_true", help="print the device used")
    args = parser.parse_args(argv)

    try:
        device = pick_device(args.device)
    except NoDevice as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.verbose:
        print(f"device: {describe(device)}")
    _, queue = make_queue(device)
    x, y = make_inputs(args.n)
    out = saxpy_on_device(queue, args.a, x, y)
    print(format_result(out))
    bad = mismatches(out, reference(args.a, x, y))
    if bad.size:
        print(f"error: {bad.size} of {out.size} elements are wrong (first at index {bad[0]})",
              file=sys.stderr)
        return 1
    print(f"OK: all {out.size} elements within 1 ulp of a*x + y")
    return 0


if __name__ == "__main__":
    sys.exit(main())
