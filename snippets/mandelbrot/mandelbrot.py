"""The Mandelbrot set six ways: pure Python, NumPy, Numba on one core and on all cores, Numba CUDA.

Every variant fills the same array: for each pixel, the number of iterations of z = z*z + c
(z starts at 0) before |z|^2 exceeds 4, or `max_iter` if it never does. The float64 variants do
the same arithmetic in the same order, so they agree on every pixel.

Run:  python snippets/mandelbrot/mandelbrot.py --width 1536 --height 1024 --iterations 20
Without a GPU the CUDA variants run on Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1), slowly.
"""

from __future__ import annotations

import argparse
import operator
import sys

import numpy as np
from numba import config, cuda, njit, prange
from numba.cuda import libdevice

# The article's region of the complex plane: x in [-2, 1], y in [-1, 1].
REGION = (-2.0, 1.0, -1.0, 1.0)
THREADS = (32, 8)  # threads per block: a warp is 32 neighbouring pixels of one row
VARIANTS = ("python", "numpy", "njit", "njit_parallel", "cuda_f64", "cuda_f32")
GPU_VARIANTS = ("cuda_f64", "cuda_f32")


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


# A product the compiler may not fuse with the next addition into one fused multiply-add (FMA):
# an FMA rounds once where the CPU rounds twice, and escape counts would drift apart.
# The simulator runs kernels as Python, which never fuses, and has no libdevice.
if config.ENABLE_CUDASIM:
    mul64 = mul32 = operator.mul
else:
    mul64, mul32 = libdevice.dmul_rn, libdevice.fmul_rn
TWO32, FOUR32 = np.float32(2.0), np.float32(4.0)  # float32 constants keep float32 maths float32


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


KERNELS = {"cuda_f64": (mandelbrot_kernel_f64, np.float64),
           "cuda_f32": (mandelbrot_kernel_f32, np.float32)}


# --8<-- [start:launch]
def blocks_for(width: int, height: int) -> tuple[int, int]:
    return (width + THREADS[0] - 1) // THREADS[0], (height + THREADS[1] - 1) // THREADS[1]


def mandelbrot_cuda(xs, ys, max_iter: int, variant: str = "cuda_f64") -> np.ndarray:
    kernel, dtype = KERNELS[variant]
    d_xs = cuda.to_device(xs.astype(dtype))  # host -> device
    d_ys = cuda.to_device(ys.astype(dtype))
    d_counts = cuda.device_array((ys.size, xs.size), dtype=np.int32)
    kernel[blocks_for(xs.size, ys.size), THREADS](d_xs, d_ys, max_iter, d_counts)
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


def save_image(counts: np.ndarray, max_iter: int, path: str) -> None:
    """A PNG of the set: escape counts on a log colour scale, the set itself in black."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shade = np.log1p(counts.astype(np.float64)) / np.log1p(max_iter)
    rgba = plt.get_cmap("magma")(shade)
    rgba[counts == max_iter] = (0.0, 0.0, 0.0, 1.0)
    plt.imsave(path, rgba, origin="lower")


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def variant_list(text: str) -> list[str]:
    names = [v.strip() for v in text.split(",") if v.strip()]
    unknown = [v for v in names if v not in VARIANTS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown variant {', '.join(unknown) or text!r}; choose from {', '.join(VARIANTS)}")
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    parser.add_argument("--width", type=positive_int, default=1536, help="pixels (default 1536)")
    parser.add_argument("--height", type=positive_int, default=1024, help="pixels (default 1024)")
    parser.add_argument("--iterations", type=positive_int, default=20,
                        help="maximum iterations per pixel (default 20, as in the article)")
    parser.add_argument("--variants", type=variant_list, default=["njit", "cuda_f64"],
                        help=f"comma-separated, from {','.join(VARIANTS)} (default njit,cuda_f64)")
    parser.add_argument("--image", help="write a PNG of the set computed by the first variant")
    args = parser.parse_args(argv)

    if set(args.variants) & set(GPU_VARIANTS) and not cuda.is_available():
        print("error: no CUDA GPU found; to try the CUDA variants on the CPU, set "
              "NUMBA_ENABLE_CUDASIM=1", file=sys.stderr)
        return 1
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
        save_image(first, args.iterations, args.image)
        print(f"image written to {args.image}")
    return status


if __name__ == "__main__":
    sys.exit(main())
