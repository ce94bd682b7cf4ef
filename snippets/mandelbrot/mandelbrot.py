"""The Mandelbrot set seven ways: pure Python, NumPy, Numba on one core and on all cores, and
three Numba CUDA kernels (float64 plain and tuned, float32).

Every variant fills the same array: for each pixel, the number of iterations of z = z*z + c
(z starts at 0) before |z|^2 exceeds 4, or `max_iter` if it never does. The float64 variants do
the same arithmetic with the same rounding, so they agree on every pixel.

Run:  python mandelbrot.py --width 1536 --height 1024 --iterations 20
Without a GPU the CUDA variants run on Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1), slowly.
"""

# --8<-- [start:imports]
from __future__ import annotations

import os
import signal
import sys


def interrupted(signum, frame):
    """Ctrl-C, wherever it lands (even inside a slow import below): one line and exit code 130."""
    os.write(2, b"interrupted\n")
    os._exit(130)  # at once: an exception raised here could land in a C extension or be ignored


if __name__ == "__main__":
    signal.signal(signal.SIGINT, interrupted)

import argparse
import operator
from io import BytesIO
from pathlib import Path

import numpy as np
from numba import config, cuda, njit, prange
from numba.cuda import libdevice
# --8<-- [end:imports]

# The article's region of the complex plane: x in [-2, 1], y in [-1, 1].
REGION = (-2.0, 1.0, -1.0, 1.0)
VARIANTS = ("python", "numpy", "njit", "njit_parallel", "cuda_f64", "cuda_f64_fast", "cuda_f32")
GPU_VARIANTS = ("cuda_f64", "cuda_f64_fast", "cuda_f32")
MAX_SIDE = 32768  # pixels per side
MAX_PIXELS = 2**28  # a 1 GiB count array; the CPU reference needs another
MAX_ITERATIONS = 10**7


def coordinates(width: int, height: int, dtype=np.float64) -> tuple[np.ndarray, np.ndarray]:
    """The x of every column and the y of every row: every variant reads these same numbers."""
    xmin, xmax, ymin, ymax = REGION
    xs = np.linspace(xmin, xmax, width, dtype=np.float64).astype(dtype)
    ys = np.linspace(ymin, ymax, height, dtype=np.float64).astype(dtype)
    return xs, ys


# --8<-- [start:python]
def escape_count(cx: float, cy: float, max_iter: int) -> int:
    x = y = 0.0
    n = 0
    while n < max_iter:
        x2, y2 = x * x, y * y
        if x2 + y2 > 4.0:  # |z|^2 > 4: z escapes to infinity
            break
        t = x * y
        y = t + t + cy  # Im(z*z + c) = 2xy + cy
        x = x2 - y2 + cx  # Re(z*z + c) = x^2 - y^2 + cx
        n += 1
    return n


def mandelbrot_python(xs, ys, max_iter: int) -> np.ndarray:
    counts = np.empty((len(ys), len(xs)), dtype=np.int32)
    for i, cy in enumerate(ys.tolist()):
        for j, cx in enumerate(xs.tolist()):
            counts[i, j] = escape_count(cx, cy, max_iter)
    return counts
# --8<-- [end:python]


# --8<-- [start:numpy]
def mandelbrot_numpy(xs, ys, max_iter: int) -> np.ndarray:
    cx, cy = np.meshgrid(xs, ys)
    cx, cy = cx.ravel(), cy.ravel()
    x, y = np.zeros_like(cx), np.zeros_like(cy)
    counts = np.zeros(cx.size, dtype=np.int32)
    live = np.arange(cx.size)  # pixels that have not escaped yet
    for _ in range(max_iter):
        xl, yl = x[live], y[live]
        x2, y2 = xl * xl, yl * yl
        stay = x2 + y2 <= 4.0
        live, xl, yl, x2, y2 = live[stay], xl[stay], yl[stay], x2[stay], y2[stay]
        if live.size == 0:
            break
        t = xl * yl
        y[live] = t + t + cy[live]
        x[live] = x2 - y2 + cx[live]
        counts[live] += 1
    return counts.reshape(len(ys), len(xs))
# --8<-- [end:numpy]


# --8<-- [start:njit]
@njit(cache=True)
def escape_count_jit(cx, cy, max_iter):
    x = y = 0.0
    n = 0
    while n < max_iter:
        x2, y2 = x * x, y * y
        if x2 + y2 > 4.0:
            break
        t = x * y
        y = t + t + cy
        x = x2 - y2 + cx
        n += 1
    return n


@njit(cache=True)
def mandelbrot_njit(xs, ys, max_iter):
    counts = np.empty((ys.size, xs.size), dtype=np.int32)
    for i in range(ys.size):
        for j in range(xs.size):
            counts[i, j] = escape_count_jit(xs[j], ys[i], max_iter)
    return counts


@njit(cache=True, parallel=True)
def mandelbrot_njit_parallel(xs, ys, max_iter):
    counts = np.empty((ys.size, xs.size), dtype=np.int32)
    for i in prange(ys.size):  # rows are shared out among all cores
        for j in range(xs.size):
            counts[i, j] = escape_count_jit(xs[j], ys[i], max_iter)
    return counts
# --8<-- [end:njit]


# --8<-- [start:cuda_helpers]
# The arithmetic helpers of the kernels. mul64 is a product that the compiler may not fuse with
# the next addition into one fused multiply-add (FMA): an FMA rounds once where the CPU rounds
# twice, and escape counts would drift apart. fma64(t, 2.0, cy) is an FMA whose product t * 2 is
# exact, so it rounds exactly like the CPU's t + t + cy. bits64 reads a float64's bits as an
# integer: for s >= 0, s > 4.0 exactly when bits64(s) > FOUR_BITS, a test the integer units do.
# Numba's CUDA simulator runs kernels as Python, which never fuses, and has no libdevice.
if config.ENABLE_CUDASIM:
    mul64 = mul32 = operator.mul

    def fma64(a, b, c):
        return a * b + c

    def bits64(value):
        return int(np.float64(value).view(np.int64))
else:
    mul64, mul32 = libdevice.dmul_rn, libdevice.fmul_rn
    fma64, bits64 = libdevice.fma, libdevice.double_as_longlong
FOUR_BITS = 0x4010000000000000  # the bits of 4.0
# --8<-- [end:cuda_helpers]
FOUR32 = np.float32(4.0)  # a float32 constant keeps float32 maths float32


# --8<-- [start:cuda]
@cuda.jit(cache=True)
def mandelbrot_kernel_f64(xs, ys, max_iter, counts):
    j, i = cuda.grid(2)  # column j, row i: one thread per pixel
    if i < counts.shape[0] and j < counts.shape[1]:
        cx, cy = xs[j], ys[i]
        x = y = 0.0
        n = 0
        while n < max_iter:
            x2, y2 = mul64(x, x), mul64(y, y)  # each square computed once, used twice
            if x2 + y2 > 4.0:
                break
            t = mul64(x, y)
            y = t + t + cy
            x = x2 - y2 + cx
            n += 1
        counts[i, j] = n
# --8<-- [end:cuda]


# --8<-- [start:cuda_fast]
@cuda.jit(device=True)
def step64(x, y, cx, cy):
    """One tested iteration: (True, x, y) once z has escaped, else (False, the next x and y)."""
    x2, y2 = mul64(x, x), mul64(y, y)
    if bits64(x2 + y2) > FOUR_BITS:  # x2 + y2 > 4.0, on the integer units
        return True, x, y
    t = mul64(x, y)
    y = fma64(t, 2.0, cy)  # t + t + cy in one instruction, rounded the same
    return False, x2 - y2 + cx, y


@cuda.jit(cache=True)
def mandelbrot_kernel_f64_fast(xs, ys, max_iter, counts):
    j, i = cuda.grid(2)
    if i < counts.shape[0] and j < counts.shape[1]:
        cx, cy = xs[j], ys[i]
        x = y = 0.0
        n = 0
        done = False
        while n + 4 <= max_iter:  # four iterations per trip, each tested: one counter check
            done, x, y = step64(x, y, cx, cy)
            if done:
                break
            done, x, y = step64(x, y, cx, cy)
            if done:
                n += 1
                break
            done, x, y = step64(x, y, cx, cy)
            if done:
                n += 2
                break
            done, x, y = step64(x, y, cx, cy)
            if done:
                n += 3
                break
            n += 4
        if not done:  # the last max_iter % 4 iterations, one at a time
            while n < max_iter:
                done, x, y = step64(x, y, cx, cy)
                if done:
                    break
                n += 1
        counts[i, j] = n
# --8<-- [end:cuda_fast]


@cuda.jit(cache=True)
def mandelbrot_kernel_f32(xs, ys, max_iter, counts):
    j, i = cuda.grid(2)
    if i < counts.shape[0] and j < counts.shape[1]:
        cx, cy = xs[j], ys[i]
        x = y = cx - cx  # a float32 zero
        n = 0
        while n < max_iter:
            x2, y2 = mul32(x, x), mul32(y, y)
            if x2 + y2 > FOUR32:
                break
            t = mul32(x, y)
            y = t + t + cy
            x = x2 - y2 + cx
            n += 1
        counts[i, j] = n


# --8<-- [start:launch]
# variant: (kernel, float type, threads per block). (32, 8): a warp is 32 neighbouring pixels of
# one row; (8, 16): a warp is 8 x 4 pixels, closer together, so its pixels escape more alike.
KERNELS = {"cuda_f64": (mandelbrot_kernel_f64, np.float64, (32, 8)),
           "cuda_f64_fast": (mandelbrot_kernel_f64_fast, np.float64, (8, 16)),
           "cuda_f32": (mandelbrot_kernel_f32, np.float32, (32, 8))}


def blocks_for(width: int, height: int, threads: tuple[int, int]) -> tuple[int, int]:
    return (width + threads[0] - 1) // threads[0], (height + threads[1] - 1) // threads[1]


def mandelbrot_cuda(xs, ys, max_iter: int, variant: str = "cuda_f64") -> np.ndarray:
    kernel, dtype, threads = KERNELS[variant]
    d_xs = cuda.to_device(xs.astype(dtype))  # host -> device
    d_ys = cuda.to_device(ys.astype(dtype))
    d_counts = cuda.device_array((ys.size, xs.size), dtype=np.int32)
    kernel[blocks_for(xs.size, ys.size, threads), threads](d_xs, d_ys, max_iter, d_counts)
    return d_counts.copy_to_host()  # device -> host; waits for the kernel
# --8<-- [end:launch]


def compute(variant: str, width: int, height: int, max_iter: int) -> np.ndarray:
    """Escape counts of one variant for the article's region at the given size."""
    xs, ys = coordinates(width, height)
    if variant in GPU_VARIANTS:
        return mandelbrot_cuda(xs, ys, max_iter, variant)
    func = {"python": mandelbrot_python, "numpy": mandelbrot_numpy, "njit": mandelbrot_njit,
            "njit_parallel": mandelbrot_njit_parallel}[variant]
    return func(xs, ys, max_iter)


def differing_fraction(counts: np.ndarray, reference: np.ndarray) -> float:
    return float(np.count_nonzero(counts != reference)) / reference.size


def png_bytes(counts: np.ndarray, max_iter: int) -> bytes:
    """A PNG of the set: escape counts on a log colour scale, the set itself in black."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shade = np.log1p(counts.astype(np.float64)) / np.log1p(max_iter)
    rgba = plt.get_cmap("magma")(shade)
    rgba[counts == max_iter] = (0.0, 0.0, 0.0, 1.0)
    png = BytesIO()
    plt.imsave(png, rgba, origin="lower", format="png")
    return png.getvalue()


def output_file(text: str) -> Path:
    """An argparse type: a file path in an existing, writable folder, checked before any work."""
    try:  # a real write: os.access says yes to root everywhere, even in /proc
        path = Path(text)
        if path.is_dir():
            raise IsADirectoryError(text)
        probe = path.with_name(f".{path.name}.partial")  # write_atomically's temporary file
        probe.touch()
        probe.unlink()
    except (OSError, ValueError):
        raise argparse.ArgumentTypeError(f"{text}: not a file in an existing, writable folder") from None
    return path


def write_atomically(path: Path, data: str | bytes) -> None:
    """Write through a temporary file and rename it: a reader never sees half a file."""
    tmp = path.with_name(f".{path.name}.partial")
    try:
        tmp.write_bytes(data) if isinstance(data, bytes) else tmp.write_text(data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)  # after a failed write (a full disk, say): no leftover


def sass_text(variants: list[str]) -> str:
    """The SASS (GPU machine code) of the CUDA kernels that ran; needs nvdisasm on PATH."""
    parts = []
    for variant in variants:
        kernel = KERNELS[variant][0]
        for signature in kernel.overloads:
            parts.append(f"===== {variant} {kernel.py_func.__name__}\n"
                         f"{kernel.inspect_sass(signature)}\n")
    return "".join(parts)


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


def variant_list(text: str) -> list[str]:
    names = [v.strip() for v in text.split(",") if v.strip()]
    unknown = [v for v in names if v not in VARIANTS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown variant {', '.join(unknown) or text!r}; choose from {', '.join(VARIANTS)}")
    return names


def output_ending(suffix: str):
    """output_file for a name that ends in `suffix`."""
    def parse(text: str) -> Path:
        if Path(text).suffix.lower() != suffix:
            raise argparse.ArgumentTypeError(f"{text}: the file name must end in {suffix}")
        return output_file(text)
    return parse


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    side = number(int, 1, MAX_SIDE)
    parser.add_argument("--width", type=side, default=1536, help="pixels (default 1536)")
    parser.add_argument("--height", type=side, default=1024, help="pixels (default 1024)")
    parser.add_argument("--iterations", type=number(int, 1, MAX_ITERATIONS), default=20,
                        help="maximum iterations per pixel (default 20, as in the article)")
    parser.add_argument("--variants", type=variant_list, default=["njit", "cuda_f64"],
                        help=f"comma-separated, from {','.join(VARIANTS)} (default njit,cuda_f64)")
    parser.add_argument("--image", type=output_ending(".png"),
                        help="write a PNG of the set computed by the first variant")
    parser.add_argument("--sass", type=output_ending(".txt"), help="write the SASS of the CUDA "
                        "kernels that ran to this .txt file (needs a GPU and nvdisasm)")
    args = parser.parse_args(argv)
    if args.width * args.height > MAX_PIXELS:
        parser.error(f"{args.width} x {args.height} is more than {MAX_PIXELS:,} pixels")
    gpu = [v for v in args.variants if v in GPU_VARIANTS]
    if gpu and not cuda.is_available():
        print("error: no CUDA GPU found; to try the CUDA variants on the CPU, set "
              "NUMBA_ENABLE_CUDASIM=1", file=sys.stderr)
        return 1
    if args.sass and (config.ENABLE_CUDASIM or not gpu):
        parser.error("--sass needs a real GPU and at least one CUDA variant")
    return run(args, gpu)


def run(args, gpu: list[str]) -> int:
    reference = compute("njit", args.width, args.height, args.iterations)
    print(f"{args.width} x {args.height} pixels, {args.iterations} iterations: "
          f"{int(reference.sum(dtype=np.int64)):,} pixel-iterations")
    status, first = 0, None
    for variant in args.variants:
        counts = compute(variant, args.width, args.height, args.iterations)
        first = counts if first is None else first
        wrong = differing_fraction(counts, reference)
        if variant == "cuda_f32":  # float32 rounds differently: report, do not fail
            verdict = f"{wrong:.4%} of pixels differ from float64"
        elif wrong:
            verdict = f"MISMATCH: {wrong:.4%} of pixels differ from the reference"
            status = 1
        else:
            verdict = "matches the reference"
        print(f"{variant:>13}: {verdict}")
    if args.image:
        write_atomically(args.image, png_bytes(first, args.iterations))
        print(f"image written to {args.image}")
    if args.sass:
        write_atomically(args.sass, sass_text(gpu))
        print(f"SASS written to {args.sass}")
    return status


if __name__ == "__main__":
    sys.exit(main())
