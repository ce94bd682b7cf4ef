"""SAXPY (y = a*x + y) on an NVIDIA GPU with CuPy: the plain expression, an ElementwiseKernel
and a RawKernel with 16-byte loads and stores, each timed next to a device-to-device copy.

Run:  python saxpy_cupy.py [N]     (default N = 2^28 floats; needs a GPU,
      `pip install cupy-cuda12x` or `cupy-cuda13x` matching your CUDA driver, and
      saxpy_common.py beside it)
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
import numpy as np

from saxpy_common import A, CALLS, command_line, make_inputs, mismatches, report, seconds_per_call
# --8<-- [end:imports]

# --8<-- [start:raw_source]
RAW_SOURCE = r"""
extern "C" __global__ void saxpy_float4(long long n, float a, const float* __restrict__ x,
                                        float* __restrict__ y) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long n4 = n / 4;
    if (i < n4) {  // one float4 per thread: 16-byte loads and stores
        float4 xv = reinterpret_cast<const float4*>(x)[i];
        float4 yv = reinterpret_cast<float4*>(y)[i];
        yv.x = a * xv.x + yv.x; yv.y = a * xv.y + yv.y;
        yv.z = a * xv.z + yv.z; yv.w = a * xv.w + yv.w;
        reinterpret_cast<float4*>(y)[i] = yv;
    }
    if (i < n - 4 * n4) y[4 * n4 + i] = a * x[4 * n4 + i] + y[4 * n4 + i];  // 0-3 left over
}
"""
THREADS = 256  # threads per block of the RawKernel
# --8<-- [end:raw_source]


def import_cupy():
    """CuPy, or None when it is not installed or finds no GPU."""
    try:
        import cupy as cp

        cp.cuda.runtime.getDeviceCount()
    except Exception:  # ImportError, or a CUDA error without a driver or device
        return None
    return cp


def kernels(cp) -> dict:
    """{"expression", "elementwise", "elementwise_256", "raw"}: ways to run y = a*x + y in place."""
    # --8<-- [start:kernel]
    elementwise = cp.ElementwiseKernel(
        "float32 a, float32 x",  # inputs
        "float32 y",             # output, also read: y is updated in place
        "y = a * x + y",         # the body, run once per element
        "saxpy")
    # --8<-- [end:kernel]
    # --8<-- [start:raw]
    raw = cp.RawKernel(RAW_SOURCE, "saxpy_float4")

    def saxpy_raw(a, x, y):
        n = y.size
        blocks = max(1, (n // 4 + THREADS - 1) // THREADS)
        raw((blocks,), (THREADS,), (np.int64(n), np.float32(a), x, y))
    # --8<-- [end:raw]

    def expression(a, x, y):
        cp.add(a * x, y, out=y)  # two kernels and a temporary array for a * x

    def elementwise_256(a, x, y):
        elementwise(a, x, y, block_size=256)  # the same kernel, launched with 256-thread blocks

    return {"expression": expression, "elementwise": elementwise,
            "elementwise_256": elementwise_256, "raw": saxpy_raw}


def main(argv: list[str] | None = None) -> int:
    args = command_line(__doc__, n=2**28, repeats=20).parse_args(argv)
    cp = import_cupy()
    if cp is None:
        print("error: CuPy is not installed or found no CUDA GPU", file=sys.stderr)
        return 1
    versions = kernels(cp)
    for name, fn in versions.items():
        wrong = mismatches(fn, args.n, cp.asarray, cp.asnumpy)
        if wrong:
            print(f"error: {name}: {wrong} of {args.n} elements differ from NumPy", file=sys.stderr)
            return 1
    x, y = make_inputs(args.n)
    d_x, d_y, d_copy = cp.asarray(x), cp.asarray(y), cp.empty_like(cp.asarray(x))
    wait = cp.cuda.Device().synchronize

    def device_copy():  # cudaMemcpy, device to device
        d_copy.data.copy_from_device(d_x.data, d_x.nbytes)
    timed = {"device copy": (seconds_per_call(device_copy, args.repeats, CALLS, wait), 8)}
    for name, fn in versions.items():
        timed[name] = (seconds_per_call(lambda: fn(A, d_x, d_y), args.repeats, CALLS, wait), 12)
    report(f"SAXPY, CuPy, N = {args.n:,} float32", args.n, timed, ceiling="device copy")
    print(f"OK: all {args.n} elements match")
    return 0


if __name__ == "__main__":
    sys.exit(main())
