"""Array addition in OpenCL through pyopencl: the CUDA array-addition kernel, ported.

Run:  python snippets/opencl/vector_add.py [N] [--device any|gpu|cpu]
On a machine without a GPU, PoCL (`pip install "pyopencl[pocl]"`) runs it on the CPU.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pyopencl as cl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cl_device import KINDS, NoDevice, describe, make_queue, pick_device  # noqa: E402

LOCAL_SIZE = 256  # work-items per work-group: OpenCL's name for threads per block

SOURCE = r"""
// --8<-- [start:kernel]
__kernel void vector_add(__global const float *a, __global const float *b,
                         __global float *c, const long n) {
    // The global index of this work-item: CUDA's blockIdx.x * blockDim.x + threadIdx.x.
    long i = get_global_id(0);
    if (i < n) {  // the global size is rounded up to a whole number of work-groups
        c[i] = a[i] + b[i];
    }
}
// --8<-- [end:kernel]
"""


# --8<-- [start:host]
def add_on_device(queue, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    ctx = queue.context
    program = cl.Program(ctx, SOURCE).build()  # compiled at run time by the driver
    mf = cl.mem_flags
    d_a = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)  # copy to the device
    d_b = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b)
    d_c = cl.Buffer(ctx, mf.WRITE_ONLY, a.nbytes)
    global_size = -(-a.size // LOCAL_SIZE) * LOCAL_SIZE  # round up, like ceil(N / 256) blocks
    kernel = cl.Kernel(program, "vector_add")
    kernel(queue, (global_size,), (LOCAL_SIZE,), d_a, d_b, d_c, np.int64(a.size))
    c = np.empty_like(a)
    cl.enqueue_copy(queue, c, d_c)  # blocking copy back: waits for the kernel
    return c
# --8<-- [end:host]


def make_inputs(n: int) -> tuple[np.ndarray, np.ndarray]:
    i = np.arange(n, dtype=np.int64)
    return (i + 1).astype(np.float32), (i + 7).astype(np.float32)


def format_result(c: np.ndarray) -> str:
    shown = c if c.size <= 10 else np.concatenate([c[:3], c[-3:]])
    words = [f"{x:.0f}" for x in shown]
    if c.size > 10:
        words.insert(3, "...")
    return "C = A + B: " + " ".join(words)


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
    parser.add_argument("n", nargs="?", type=positive_int, default=6,
                        help="number of elements (default 6: A = 1..6, B = 7..12)")
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
    a, b = make_inputs(args.n)
    c = add_on_device(queue, a, b)
    print(format_result(c))
    bad = np.flatnonzero(c != a + b)  # the same float32 additions, done by NumPy
    if bad.size:
        print(f"error: {bad.size} of {c.size} elements are wrong (first at index {bad[0]})",
              file=sys.stderr)
        return 1
    print(f"OK: all {c.size} elements match")
    return 0


if __name__ == "__main__":
    sys.exit(main())
