"""SAXPY (y = a*x + y) on an NVIDIA GPU with CuPy: the plain expression, an ElementwiseKernel
and a RawKernel with 16-byte loads and stores, each timed next to a device-to-device copy.

Run:  python saxpy_cupy.py [N]     (default N = 2^28 floats; needs a GPU and
      `pip install cupy-cuda12x` or `cupy-cuda13x`, matching your CUDA driver)
"""

# --8<-- [start:imports]
import argparse
import sys

import numpy as np
# --8<-- [end:imports]

A = np.float32(2.0)
THREADS = 256
CALLS = 10  # launches per timed sample: keeps Python's launch overhead out of the figure

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


def make_inputs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Exactly representable values: a*x + y is exact in float32, with or without an FMA."""
    i = np.arange(n, dtype=np.int64)
    return ((i % 1000) * 0.5 - 250).astype(np.float32), ((i % 777) * 0.25).astype(np.float32)


def check(cp, fn, n: int) -> int:
    """Run one version once; how many elements differ from NumPy's result."""
    x, y = make_inputs(n)
    d_x, d_y = cp.asarray(x), cp.asarray(y)
    fn(A, d_x, d_y)
    return int(np.count_nonzero(cp.asnumpy(d_y) != A * x + y))


def seconds_per_call(cp, fn, repeats: int = 20) -> float:
    """Median over `repeats` samples of CALLS calls between two CUDA events, per call."""
    for _ in range(3):
        fn()  # warm-up (the first call also compiles)
    samples = []
    for _ in range(repeats):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        for _ in range(CALLS):
            fn()
        end.record()
        end.synchronize()
        samples.append(cp.cuda.get_elapsed_time(start, end) / 1e3 / CALLS)
    return float(np.median(samples))


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 1 <= value <= 2**32:
        raise argparse.ArgumentTypeError(f"must be from 1 to 2^32, got {value}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    parser.add_argument("n", nargs="?", type=positive_int, default=2**28,
                        help="number of float32 elements (default 2^28 = 268435456)")
    parser.add_argument("--repeats", type=positive_int, default=20,
                        help="timed samples after warm-up; the median is reported (default 20)")
    args = parser.parse_args(argv)
    cp = import_cupy()
    if cp is None:
        print("error: CuPy is not installed or found no CUDA GPU", file=sys.stderr)
        return 1
    versions = kernels(cp)
    for name, fn in versions.items():
        wrong = check(cp, fn, args.n)
        if wrong:
            print(f"error: {name}: {wrong} of {args.n} elements differ from NumPy", file=sys.stderr)
            return 1
    x, y = make_inputs(args.n)
    d_x, d_y, d_copy = cp.asarray(x), cp.asarray(y), cp.empty_like(cp.asarray(x))
    copy_s = seconds_per_call(cp, lambda: d_copy.data.copy_from_device(d_x.data, d_x.nbytes),
                              args.repeats)
    copy_bw = 8 * args.n / copy_s  # read 1 float, write 1 float per element
    print(f"SAXPY, CuPy, N = {args.n:,} float32 (bandwidth counts 3 accesses per element)")
    print(f"{'device copy':12s} {copy_s * 1e3:9.4f} ms {copy_bw / 1e9:8.1f} GB/s")
    for name, fn in versions.items():
        s = seconds_per_call(cp, lambda fn=fn: fn(A, d_x, d_y), args.repeats)
        bw = 12 * args.n / s
        print(f"{name:12s} {s * 1e3:9.4f} ms {bw / 1e9:8.1f} GB/s  "
              f"{100 * bw / copy_bw:5.1f}% of the copy")
    print(f"OK: all {args.n} elements match")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
