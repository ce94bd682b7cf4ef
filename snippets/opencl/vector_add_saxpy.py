"""Vector add and SAXPY in OpenCL through pyopencl: the CUDA kernels, ported, checked against NumPy.

Run:  python vector_add_saxpy.py [N] [--kernel both|vector_add|saxpy] [--device any|gpu|cpu]
Needs cl_device.py beside it, pyopencl and one OpenCL driver: a GPU's, or a CPU runtime (PoCL:
pip install "pyopencl[pocl]"; Intel's: pip install intel-opencl-rt intel-cmplr-lib-rt,
registered with register_intel_cpu.py).
"""

# --8<-- [start:imports]
import argparse
import sys

import numpy as np

# cl_device.py, beside this file: the device handling, and cl, which is pyopencl.
from cl_device import OpenCLProblem, build, cl, pick_device
# --8<-- [end:imports]

VECTOR_ADD_SOURCE = r"""
// --8<-- [start:vector_add]
__kernel void vector_add(__global const float *a, __global const float *b,
                         __global float *c, const long n) {
    // The global index of this work-item: CUDA's blockIdx.x * blockDim.x + threadIdx.x.
    long i = get_global_id(0);
    if (i < n) {  // the global size is rounded up to a whole number of work-groups
        c[i] = a[i] + b[i];
    }
}
// --8<-- [end:vector_add]
"""
SAXPY_SOURCE = r"""
// --8<-- [start:saxpy]
__kernel void saxpy(const long n, const float a,
                    __global const float *x, __global float *y) {
    long i = get_global_id(0);
    if (i < n) {
        y[i] = a * x[i] + y[i];  // the compiler may fuse this into one FMA
    }
}
// --8<-- [end:saxpy]
"""


# --8<-- [start:host]
SOURCE = VECTOR_ADD_SOURCE + SAXPY_SOURCE  # one OpenCL program, both kernels above
LOCAL_SIZE = 256  # work-items per work-group: OpenCL's name for threads per block


def open_device(kind: str):
    """A context on the first device of this kind, a command queue, SOURCE compiled for it."""
    device = pick_device(kind)
    ctx = cl.Context([device])
    return ctx, cl.CommandQueue(ctx), build(ctx, SOURCE)  # compiled now, by the driver


def to_device(queue, host: np.ndarray, writable: bool = False):
    mf = cl.mem_flags
    access = mf.READ_WRITE if writable else mf.READ_ONLY
    return cl.Buffer(queue.context, access | mf.COPY_HOST_PTR, hostbuf=host)  # copied in


def launch(queue, kernel, n: int, *args) -> None:
    global_size = -(-n // LOCAL_SIZE) * LOCAL_SIZE  # round up, like ceil(N / 256) blocks
    kernel(queue, (global_size,), (LOCAL_SIZE,), *args)


def from_device(queue, buffer, like: np.ndarray) -> np.ndarray:
    host = np.empty_like(like)
    cl.enqueue_copy(queue, host, buffer)  # blocking copy back: waits for the kernel
    return host


def add_on_device(queue, program, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    d_a, d_b = to_device(queue, a), to_device(queue, b)
    d_c = cl.Buffer(queue.context, cl.mem_flags.WRITE_ONLY, a.nbytes)
    launch(queue, cl.Kernel(program, "vector_add"), a.size, d_a, d_b, d_c, np.int64(a.size))
    return from_device(queue, d_c, a)


def saxpy_on_device(queue, program, alpha: float, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    d_x, d_y = to_device(queue, x), to_device(queue, y, writable=True)  # y: read, overwritten
    kernel = cl.Kernel(program, "saxpy")
    launch(queue, kernel, x.size, np.int64(x.size), np.float32(alpha), d_x, d_y)
    return from_device(queue, d_y, y)
# --8<-- [end:host]


def add_inputs(n: int) -> tuple[np.ndarray, np.ndarray]:
    i = np.arange(n, dtype=np.int64)
    return (i + 1).astype(np.float32), (i + 7).astype(np.float32)


def saxpy_inputs(n: int) -> tuple[np.ndarray, np.ndarray]:
    i = np.arange(n, dtype=np.int64)
    return (i + 1).astype(np.float32), np.full(n, 2.0, dtype=np.float32)


def saxpy_reference(alpha: float, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """a*x + y in float64, the value a float32 result must round to."""
    return np.float32(alpha).astype(np.float64) * x.astype(np.float64) + y.astype(np.float64)


def mismatches(out: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Indices where out is further than 1 float32 ulp from the exact result.

    One rounding (fused multiply-add) or two (multiply, then add) are both correct SAXPY.
    """
    tol = np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64)
    return np.flatnonzero(~(np.abs(out.astype(np.float64) - ref) <= tol))


def report(label: str, out: np.ndarray, bad: np.ndarray, ok: str, spec: str = "g") -> bool:
    """Print the first and last elements and the check; True if every element passed."""
    shown = out if out.size <= 10 else np.concatenate([out[:3], out[-3:]])
    words = [format(v, spec) for v in shown]
    if out.size > 10:
        words.insert(3, "...")
    print(f"{label}: " + " ".join(words))
    if bad.size:
        print(f"error: {bad.size} of {out.size} elements are wrong (first at index {bad[0]})",
              file=sys.stderr)
        return False
    print(f"OK: all {out.size} elements {ok}")
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", nargs="?", type=int, default=6)
    parser.add_argument("--kernel", choices=("both", "vector_add", "saxpy"), default="both")
    parser.add_argument("--device", choices=("any", "gpu", "cpu"), default="any")
    args = parser.parse_args(argv)
    try:  # no device, or a driver that cannot compile: one line naming the cause and the fix
        ctx, queue, program = open_device(args.device)  # keep ctx referenced while queue is used
    except OpenCLProblem as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    passed = True
    if args.kernel in ("both", "vector_add"):
        a, b = add_inputs(args.n)
        c = add_on_device(queue, program, a, b)
        passed &= report("C = A + B", c, np.flatnonzero(c != a + b), "match", spec=".0f")
    if args.kernel in ("both", "saxpy"):
        x, y = saxpy_inputs(args.n)
        out = saxpy_on_device(queue, program, 2.0, x, y)
        bad = mismatches(out, saxpy_reference(2.0, x, y))
        passed &= report("y = a*x + y", out, bad, "within 1 ulp of a*x + y")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
