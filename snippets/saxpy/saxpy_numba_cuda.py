"""SAXPY (y = a*x + y) on an NVIDIA GPU with Numba CUDA: a grid-stride kernel and its bandwidth.

Prints the kernel's effective bandwidth and, measured in the same run, the device-to-device copy
bandwidth (the practical ceiling for a kernel that only streams memory) and host<->device
transfer rates with pageable and pinned host memory.

Run:  python snippets/saxpy/saxpy_numba_cuda.py [N]     (default N = 2^28 floats)
Without a GPU, run it on Numba's CUDA simulator: NUMBA_ENABLE_CUDASIM=1 python ... 1000
"""

import argparse
import sys
from pathlib import Path

import numpy as np
from numba import config, cuda

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench import timing  # noqa: E402  (the shared timing core: warm-up, CUDA events, median)

THREADS = 256
CALLS = 10  # launches per timed sample: keeps Python's launch overhead out of the figure
A = np.float32(2.0)


# --8<-- [start:kernel]
@cuda.jit
def saxpy(a, x, y):
    i = cuda.grid(1)           # this thread's first element
    stride = cuda.gridsize(1)  # number of threads in the whole grid
    n = y.size
    # Four elements per trip, all loads before any store: eight loads in flight per thread.
    while i + 3 * stride < n:
        x0, x1, x2, x3 = x[i], x[i + stride], x[i + 2 * stride], x[i + 3 * stride]
        y0, y1, y2, y3 = y[i], y[i + stride], y[i + 2 * stride], y[i + 3 * stride]
        y[i] = a * x0 + y0
        y[i + stride] = a * x1 + y1
        y[i + 2 * stride] = a * x2 + y2
        y[i + 3 * stride] = a * x3 + y3
        i += 4 * stride
    while i < n:               # the last few elements, one per trip
        y[i] = a * x[i] + y[i]
        i += stride
# --8<-- [end:kernel]


# --8<-- [start:launch]
def grid_for(n: int, threads: int = THREADS, per_sm: int = 32) -> int:
    """Blocks to launch: 32 per SM keeps every SM busy; never more than the data needs."""
    sms = getattr(cuda.get_current_device(), "MULTIPROCESSOR_COUNT", 1)  # 1 on the simulator
    return max(1, min(per_sm * sms, (n + threads - 1) // threads))


def run_saxpy(a, d_x, d_y, blocks=None, threads=THREADS):
    blocks = blocks or grid_for(d_y.size, threads)
    saxpy[blocks, threads](a, d_x, d_y)
# --8<-- [end:launch]


def make_inputs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Exactly representable values: a*x + y is exact in float32, with or without an FMA."""
    i = np.arange(n, dtype=np.int64)
    x = ((i % 1000) * 0.5 - 250).astype(np.float32)
    y = ((i % 777) * 0.25).astype(np.float32)
    return x, y


# --8<-- [start:bytes]
def saxpy_bytes(n: int) -> int:
    return 3 * 4 * n  # read x, read y, write y: 3 float32 per element


def copy_bytes(n: int) -> int:
    return 2 * 4 * n  # read the source, write the destination
# --8<-- [end:bytes]


def check_saxpy(n: int, blocks=None, threads=THREADS) -> int:
    """Run SAXPY once and return how many elements differ from NumPy's result."""
    x, y = make_inputs(n)
    d_x, d_y = cuda.to_device(x), cuda.to_device(y)
    run_saxpy(A, d_x, d_y, blocks, threads)
    return int(np.count_nonzero(d_y.copy_to_host() != A * x + y))


def measure(n: int, repeats: int = 20, transfers: bool = True, per_sm: int = 32) -> dict:
    """Time SAXPY, the device copy and (optionally) host<->device copies; {name: Stats}."""
    x, y = make_inputs(n)
    d_x, d_y = cuda.to_device(x), cuda.to_device(y)
    d_copy = cuda.device_array_like(d_x)
    blocks = grid_for(n, per_sm=per_sm)
    out = {"compile_first_s": timing.time_once(lambda: (run_saxpy(A, d_x, d_y, blocks),
                                                        cuda.synchronize()))}
    # --8<-- [start:measure]
    out["saxpy"] = timing.time_cuda(lambda: run_saxpy(A, d_x, d_y, blocks), repeats, warmup=3,
                                    calls=CALLS)
    out["device_copy"] = timing.time_cuda(lambda: d_copy.copy_to_device(d_x), repeats, warmup=3,
                                          calls=CALLS)
    # --8<-- [end:measure]
    if np.count_nonzero(d_copy.copy_to_host() != x):
        raise RuntimeError("the device-to-device copy is wrong")
    if transfers:
        # --8<-- [start:transfers]
        pageable = np.empty_like(x)             # ordinary host memory, may be paged out
        pinned = cuda.pinned_array(n, np.float32)  # page-locked: the GPU can DMA it directly
        pinned[:] = x
        pageable[:] = x
        out["h2d_pageable"] = timing.time_cuda(lambda: d_copy.copy_to_device(pageable), repeats)
        out["h2d_pinned"] = timing.time_cuda(lambda: d_copy.copy_to_device(pinned), repeats)
        out["d2h_pageable"] = timing.time_cuda(lambda: d_copy.copy_to_host(pageable), repeats)
        out["d2h_pinned"] = timing.time_cuda(lambda: d_copy.copy_to_host(pinned), repeats)
        # --8<-- [end:transfers]
    return out


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def gbps(nbytes: int, seconds: float) -> float:
    return nbytes / seconds / 1e9


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    parser.add_argument("n", nargs="?", type=positive_int, default=2**28,
                        help="number of float32 elements (default 2^28 = 268435456)")
    parser.add_argument("--repeats", type=positive_int, default=20,
                        help="timed repeats after warm-up; the median is reported (default 20)")
    parser.add_argument("--no-transfers", action="store_true",
                        help="skip the host<->device copies")
    parser.add_argument("--blocks-per-sm", type=positive_int, default=32,
                        help="blocks of 256 threads per SM in the grid (default 32)")
    parser.add_argument("--check-only", action="store_true",
                        help="check the result against NumPy and stop (no timing)")
    args = parser.parse_args(argv)
    if not cuda.is_available():
        print("error: no CUDA GPU found; to try this on the CPU, set NUMBA_ENABLE_CUDASIM=1",
              file=sys.stderr)
        return 1

    blocks = grid_for(args.n, per_sm=args.blocks_per_sm)
    wrong = check_saxpy(args.n, blocks)
    if wrong:
        print(f"error: {wrong} of {args.n} elements differ from NumPy", file=sys.stderr)
        return 1
    if args.check_only:
        print(f"OK: all {args.n} elements match")
        return 0
    res = measure(args.n, args.repeats, transfers=not args.no_transfers, per_sm=args.blocks_per_sm)
    nbytes = 4 * args.n
    sizes = {"saxpy": saxpy_bytes(args.n), "device_copy": copy_bytes(args.n)}
    print(f"SAXPY, Numba CUDA, N = {args.n:,} float32, {blocks} blocks x {THREADS} threads "
          f"(first call with compilation: {res['compile_first_s']:.2f} s)")
    if config.ENABLE_CUDASIM:
        print("(CUDA simulator: these are times of Python threads on the CPU, not of a GPU)")
    for name, stats in res.items():
        if name == "compile_first_s":
            continue
        moved = sizes.get(name, nbytes)
        print(f"{name:13s} {stats.median_s * 1e3:10.4f} ms  {gbps(moved, stats.median_s):8.1f} GB/s")
    ratio = (sizes["saxpy"] / res["saxpy"].median_s) / (sizes["device_copy"] / res["device_copy"].median_s)
    print(f"saxpy / copy bandwidth: {ratio:.3f}")
    print(f"OK: all {args.n} elements match")
    return 0


if __name__ == "__main__":
    sys.exit(main())
