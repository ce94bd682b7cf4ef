"""SAXPY (y = a*x + y) on an NVIDIA GPU with CuPy: the plain expression, an ElementwiseKernel
and a RawKernel with 16-byte loads and stores, each checked against NumPy.

Run:  python saxpy_cupy.py [N]     (needs a GPU, `pip install cupy-cuda12x` or `cupy-cuda13x`
      matching your CUDA driver, and saxpy_common.py beside it)
"""
import argparse

# --8<-- [start:imports]
import cupy as cp
import numpy as np

from saxpy_common import mismatches
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


KERNELS = {"expression": expression, "elementwise": elementwise,
           "elementwise_256": elementwise_256, "raw": saxpy_raw}

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Check every CuPy SAXPY against NumPy.",
                                     usage=argparse.SUPPRESS)  # an error is one line
    parser.add_argument("n", nargs="?", type=int, default=1027,
                        help="float32 elements, 1 to 2**28 (default 1027)")
    n = parser.parse_args().n
    if not 1 <= n <= 2**28:  # 2**28 floats: 1 GiB an array
        parser.error(f"n must be a whole number from 1 to 2**28, got {n}")
    wrong = {name: mismatches(fn, n, cp.asarray, cp.asnumpy) for name, fn in KERNELS.items()}
    if any(wrong.values()):
        raise SystemExit(f"error: elements that differ from NumPy, per version: {wrong}")
    print(f"OK: all {n} elements match")
