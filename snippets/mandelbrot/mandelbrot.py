"""The Mandelbrot set nine ways: pure Python, NumPy, Numba on one core and on all cores, and
five Numba CUDA kernels (float64 plain, tuned and chunked; float32 plain and chunked). Each counts, for every pixel, the
iterations of z = z*z + c from z = 0 until |z|^2 > 4 (at most `iterations` times); the float64 variants
round alike, so they agree on every pixel. Run:  NUMBA_ENABLE_CUDASIM=1 python mandelbrot.py
(the CUDA variants on Numba's CUDA simulator; leave the variable out on an NVIDIA GPU)."""

# --8<-- [start:imports]
import operator
import sys
import warnings

import numpy as np
from numba import config, cuda, njit, prange
from numba.cuda import libdevice
# --8<-- [end:imports]

REGION = (-2.0, 1.0, -1.0, 1.0)  # the article's region of the plane: x in [-2, 1], y in [-1, 1]


def coordinates(width, height, dtype=np.float64):
    """The x of every column and the y of every row: every variant reads these same numbers."""
    xmin, xmax, ymin, ymax = REGION
    xs = np.linspace(xmin, xmax, width, dtype=np.float64).astype(dtype)
    ys = np.linspace(ymin, ymax, height, dtype=np.float64).astype(dtype)
    return xs, ys


# --8<-- [start:python]
def escape_count(cx: float, cy: float, iterations: int) -> int:
    x = y = 0.0
    n = 0
    while n < iterations:
        x2, y2 = x * x, y * y
        if x2 + y2 > 4.0:  # |z|^2 > 4: z escapes to infinity
            break
        t = x * y
        y = t + t + cy  # Im(z*z + c) = 2xy + cy
        x = x2 - y2 + cx  # Re(z*z + c) = x^2 - y^2 + cx
        n += 1
    return n


def mandelbrot_python(xs, ys, iterations: int) -> np.ndarray:
    counts = np.empty((len(ys), len(xs)), dtype=np.int32)
    for i, cy in enumerate(ys.tolist()):
        for j, cx in enumerate(xs.tolist()):
            counts[i, j] = escape_count(cx, cy, iterations)
    return counts
# --8<-- [end:python]


# --8<-- [start:numpy]
def mandelbrot_numpy(xs, ys, iterations: int) -> np.ndarray:
    cx, cy = np.meshgrid(xs, ys)
    cx, cy = cx.ravel(), cy.ravel()
    x, y = np.zeros_like(cx), np.zeros_like(cy)
    counts = np.zeros(cx.size, dtype=np.int32)
    live = np.arange(cx.size)  # pixels that have not escaped yet
    for _ in range(iterations):
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
def escape_count_jit(cx, cy, iterations):
    x = y = 0.0
    n = 0
    while n < iterations:
        x2, y2 = x * x, y * y
        if x2 + y2 > 4.0:
            break
        t = x * y
        y = t + t + cy
        x = x2 - y2 + cx
        n += 1
    return n


@njit(cache=True)
def mandelbrot_njit(xs, ys, iterations):
    counts = np.empty((ys.size, xs.size), dtype=np.int32)
    for i in range(ys.size):
        for j in range(xs.size):
            counts[i, j] = escape_count_jit(xs[j], ys[i], iterations)
    return counts


@njit(cache=True, parallel=True)
def mandelbrot_njit_parallel(xs, ys, iterations):
    counts = np.empty((ys.size, xs.size), dtype=np.int32)
    for i in prange(ys.size):  # rows are shared out among all cores
        for j in range(xs.size):
            counts[i, j] = escape_count_jit(xs[j], ys[i], iterations)
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
    fma32 = fma64
    # the chunked kernels overflow to inf on purpose, silently on a GPU, with a warning here
    warnings.filterwarnings("ignore", ".*(overflow|invalid value)", RuntimeWarning)

    def bits64(value):
        return int(np.float64(value).view(np.int64))
else:
    mul64, mul32 = libdevice.dmul_rn, libdevice.fmul_rn
    fma64, fma32, bits64 = libdevice.fma, libdevice.fmaf, libdevice.double_as_longlong
FOUR_BITS = 0x4010000000000000  # the bits of 4.0
# --8<-- [end:cuda_helpers]
FOUR32 = np.float32(4.0)  # a float32 constant keeps float32 maths float32


# --8<-- [start:cuda]
@cuda.jit(cache=True)
def mandelbrot_kernel_f64(xs, ys, iterations, counts):
    j, i = cuda.grid(2)  # column j, row i: one thread per pixel
    if i < counts.shape[0] and j < counts.shape[1]:
        cx, cy = xs[j], ys[i]
        x = y = 0.0
        n = 0
        while n < iterations:
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
def mandelbrot_kernel_f64_fast(xs, ys, iterations, counts):
    j, i = cuda.grid(2)
    if i < counts.shape[0] and j < counts.shape[1]:
        cx, cy = xs[j], ys[i]
        x = y = 0.0
        n = 0
        done = False
        while n + 4 <= iterations:  # four iterations per trip, each tested: one counter check
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
        if not done:  # the last iterations % 4 iterations, one at a time
            while n < iterations:
                done, x, y = step64(x, y, cx, cy)
                if done:
                    break
                n += 1
        counts[i, j] = n
# --8<-- [end:cuda_fast]


@cuda.jit(cache=True)
def mandelbrot_kernel_f32(xs, ys, iterations, counts):
    j, i = cuda.grid(2)
    if i < counts.shape[0] and j < counts.shape[1]:
        cx, cy = xs[j], ys[i]
        x = y = cx - cx  # a float32 zero
        n = 0
        while n < iterations:
            x2, y2 = mul32(x, x), mul32(y, y)
            if x2 + y2 > FOUR32:
                break
            t = mul32(x, y)
            y = t + t + cy
            x = x2 - y2 + cx
            n += 1
        counts[i, j] = n


# --8<-- [start:cuda_chunk]
def chunked_kernel(float_type, k: int):
    """A kernel of `float_type` (np.float64 or np.float32) that runs k iterations with no test,
    then tests once; where z escaped within those k, it goes back to their start and redoes them
    one at a time, so every count is the exact count. The k iterations need no test because |z|
    only grows once it has passed 2, up to inf or nan, which `not (... <= 4)` also catches."""
    mul, fma = (mul64, fma64) if float_type == np.float64 else (mul32, fma32)
    two, four = float_type(2.0), float_type(4.0)  # constants of the kernel's float type

    @cuda.jit
    def mandelbrot_kernel_chunked(xs, ys, iterations, counts):
        j, i = cuda.grid(2)
        if i < counts.shape[0] and j < counts.shape[1]:
            cx, cy = xs[j], ys[i]
            x = y = cx - cx  # a zero of the float type
            n = 0
            while n + k <= iterations:
                x0, y0 = x, y
                for _ in range(k):  # unrolled: 6 float instructions per iteration, no branch
                    x2, y2 = mul(x, x), mul(y, y)
                    y = fma(mul(x, y), two, cy)  # rounds like t + t + cy (t * 2 is exact)
                    x = x2 - y2 + cx
                if not (mul(x, x) + mul(y, y) <= four):  # escaped within these k
                    x, y = x0, y0  # back to their start
                    break
                n += k
            while n < iterations:  # one tested iteration at a time: the last k, or the rest
                x2, y2 = mul(x, x), mul(y, y)
                if x2 + y2 > four:
                    break
                y = fma(mul(x, y), two, cy)
                x = x2 - y2 + cx
                n += 1
            counts[i, j] = n
    return mandelbrot_kernel_chunked
# --8<-- [end:cuda_chunk]


# --8<-- [start:launch]
# variant: (kernel, float type, threads per block). (32, 8): a warp is 32 neighbouring pixels of
# one row; (8, 16): a warp is 8 x 4 pixels, closer together, so its pixels escape more alike.
# The chunked kernels' k and block here are defaults; the GPU's tuning run picks its own.
KERNELS = {"cuda_f64": (mandelbrot_kernel_f64, np.float64, (32, 8)),
           "cuda_f64_fast": (mandelbrot_kernel_f64_fast, np.float64, (8, 16)),
           "cuda_f64_chunk": (chunked_kernel(np.float64, 8), np.float64, (8, 16)),
           "cuda_f32": (mandelbrot_kernel_f32, np.float32, (32, 8)),
           "cuda_f32_chunk": (chunked_kernel(np.float32, 8), np.float32, (8, 16))}


def blocks_for(width: int, height: int, threads: tuple[int, int]) -> tuple[int, int]:
    return (width + threads[0] - 1) // threads[0], (height + threads[1] - 1) // threads[1]


def kernel_arguments(xs, ys, iterations: int, variant: str = "cuda_f64"):
    """The coordinates copied to the device in the kernel's float type, and the counts' array."""
    dtype = KERNELS[variant][1]
    return (cuda.to_device(xs.astype(dtype)), cuda.to_device(ys.astype(dtype)),  # host -> device
            iterations, cuda.device_array((ys.size, xs.size), dtype=np.int32))


def launch(d_xs, d_ys, iterations: int, d_counts, variant: str = "cuda_f64"):
    kernel, _, threads = KERNELS[variant]
    kernel[blocks_for(d_xs.size, d_ys.size, threads), threads](d_xs, d_ys, iterations, d_counts)
    return d_counts


def mandelbrot_cuda(xs, ys, iterations: int, variant: str = "cuda_f64") -> np.ndarray:
    d_counts = launch(*kernel_arguments(xs, ys, iterations, variant), variant)
    return d_counts.copy_to_host()  # device -> host; waits for the kernel
# --8<-- [end:launch]


CPU = {"python": mandelbrot_python, "numpy": mandelbrot_numpy, "njit": mandelbrot_njit,
       "njit_parallel": mandelbrot_njit_parallel}
VARIANTS = (*CPU, *KERNELS)


def compute(variant: str, width: int, height: int, iterations: int) -> np.ndarray:
    xs, ys = coordinates(width, height)
    if variant in KERNELS:
        return mandelbrot_cuda(xs, ys, iterations, variant)
    return CPU[variant](xs, ys, iterations)


def differing_fraction(counts: np.ndarray, reference: np.ndarray) -> float:
    return float(np.count_nonzero(counts != reference)) / reference.size


if __name__ == "__main__":  # every variant against the float64 CPU result, on a small image
    if sys.argv[1:]:
        print(f"error: {sys.argv[0]} takes no arguments (timing: python snippets/bench/run.py "
              "mandelbrot)", file=sys.stderr)
        raise SystemExit(2)
    width, height, iterations = 48, 32, 20
    reference = compute("njit", width, height, iterations)
    print(f"{width} x {height} pixels, {iterations} iterations: {reference.sum():,} pixel-iterations")
    for variant in VARIANTS if cuda.is_available() else CPU:  # CUDA: a GPU or the simulator
        wrong = differing_fraction(compute(variant, width, height, iterations), reference)
        print(f"{variant:>14}: {wrong:.4%} of pixels differ from the reference")
        assert wrong == 0 or "f32" in variant, f"{variant} differs"  # float32 may differ
