"""Device call 1 for the Mandelbrot float64 kernel: time variants on the large case
(6144 x 4096, 1000 iterations), check each pixel for pixel against the CPU reference, dump SASS.

Run from the repository root, with the lesson's folder on the import path:
    PYTHONPATH=snippets/mandelbrot python gpu/explore/mandelbrot-variants.py OUTDIR
Kept as the record of what device call 1 ran (its log: gpu/logs/h200-2026-12-01/
mandelbrot-variants-log.txt); the winner moved into snippets/mandelbrot/. The log was made by
this script as of commit 6b62744, which wrote every kernel out in full; here the kernels use the
lesson's helpers and its winner, and compute the same counts with the same operations.
"""
import json
import os
import subprocess
import sys
import time

import numpy as np
from numba import config, cuda

import mandelbrot as mb  # snippets/mandelbrot/mandelbrot.py, through PYTHONPATH

SIM = config.ENABLE_CUDASIM


@cuda.jit(device=True)
def step_fma8(x, y, cx, cy):
    """The lesson's step64 with the float escape test: y = fma(t, 2, cy), exact (t*2 is exact)."""
    x2, y2 = mb.mul64(x, x), mb.mul64(y, y)
    if x2 + y2 > 4.0:
        return True, x, y
    return False, x2 - y2 + cx, mb.fma64(mb.mul64(x, y), 2.0, cy)


def one_by_one(step):
    """A device function that iterates `step` (one tested iteration) from (x, y, n) on, until
    escape or max_iter; returns the count."""
    @cuda.jit(device=True)
    def finish(x, y, cx, cy, n, max_iter):
        while n < max_iter:
            done, x, y = step(x, y, cx, cy)
            if done:
                break
            n += 1
        return n
    return finish


# int7: the lesson's step64, whose escape test runs on the integer pipe
finish_fma8, finish_int7 = one_by_one(step_fma8), one_by_one(mb.step64)


def from_zero(finish):
    @cuda.jit
    def kernel(xs, ys, max_iter, counts):
        j, i = cuda.grid(2)
        if i < counts.shape[0] and j < counts.shape[1]:
            counts[i, j] = finish(0.0, 0.0, xs[j], ys[i], 0, max_iter)
    return kernel


k_fma8, k_int7 = from_zero(finish_fma8), from_zero(finish_int7)
k_unroll4 = mb.mandelbrot_kernel_f64_fast  # k_int7, four tested iterations per trip: the winner


@cuda.jit
def k_chunk8(xs, ys, max_iter, counts):  # 8 iterations untested, then test; on escape redo 1 by 1
    j, i = cuda.grid(2)
    if i < counts.shape[0] and j < counts.shape[1]:
        cx, cy = xs[j], ys[i]
        x = y = 0.0
        n = 0
        while n + 8 <= max_iter:
            sx, sy = x, y
            for _ in range(8):
                x2, y2 = mb.mul64(x, x), mb.mul64(y, y)
                t = mb.mul64(x, y)
                y = mb.fma64(t, 2.0, cy)
                x = x2 - y2 + cx
            if not (mb.mul64(x, x) + mb.mul64(y, y) <= 4.0):
                x, y = sx, sy  # escaped (or overflowed to inf/nan) somewhere in these 8
                break
            n += 8
        counts[i, j] = finish_int7(x, y, cx, cy, n, max_iter)


VARIANTS = [  # name, kernel, block shape
    ("base9_32x8", mb.mandelbrot_kernel_f64, (32, 8)),
    ("fma8_32x8", k_fma8, (32, 8)),
    ("int7_32x8", k_int7, (32, 8)),
    ("int7_8x16", k_int7, (8, 16)),
    ("int7_16x8", k_int7, (16, 8)),
    ("unroll4_32x8", k_unroll4, (32, 8)),
    ("unroll4_8x16", k_unroll4, (8, 16)),
    ("chunk8_32x8", k_chunk8, (32, 8)),
    ("chunk8_8x16", k_chunk8, (8, 16)),
]


def lane_efficiency(counts, bx):
    """Useful pixel-iterations over what the warps execute (32 lanes x their slowest pixel)."""
    h, w = counts.shape
    r = 32 // bx
    c = counts.astype(np.int64).reshape(h // r, r, w // bx, bx)
    return float(c.sum() / (32 * c.max(axis=(1, 3)).sum()))


def sass_of(kernel, outdir, name):
    sig = list(kernel.overloads)[0]
    try:
        return kernel.inspect_sass(sig)
    except Exception as exc:  # no nvdisasm: cubin through cuobjdump
        cc = cuda.get_current_device().compute_capability
        cubin = kernel.overloads[sig].library.get_cubin(cc)
        path = os.path.join(outdir, f"{name}.cubin")
        with open(path, "wb") as f:
            f.write(cubin)
        out = subprocess.run(["cuobjdump", "-sass", path], capture_output=True, text=True)
        os.remove(path)
        return f"# inspect_sass failed ({exc!r}); cuobjdump -sass:\n" + out.stdout + out.stderr


def main():
    outdir = sys.argv[1]
    w, h, it = (6144, 4096, 1000) if not SIM else (64, 32, 50)
    xs, ys = mb.coordinates(w, h)
    t0 = time.time()
    ref = mb.mandelbrot_njit_parallel(xs, ys, it)
    work = int(ref.sum(dtype=np.int64))
    print(f"reference {time.time() - t0:.1f} s, {work} pixel-iterations", flush=True)
    d_xs, d_ys = cuda.to_device(xs), cuda.to_device(ys)
    d_counts = cuda.device_array((h, w), dtype=np.int32)
    rows, sass = [], {}
    for name, kernel, block in VARIANTS:
        grid = ((w + block[0] - 1) // block[0], (h + block[1] - 1) // block[1])
        launch = kernel[grid, block]
        launch(d_xs, d_ys, it, d_counts)
        cuda.synchronize()
        same = bool(np.array_equal(d_counts.copy_to_host(), ref))
        samples = []
        calls = 10 if not SIM else 1
        for _ in range(15 if not SIM else 1):
            start, stop = cuda.event(), cuda.event()
            start.record()
            for _ in range(calls):
                launch(d_xs, d_ys, it, d_counts)
            stop.record()
            stop.synchronize()
            samples.append(start.elapsed_time(stop) / 1e3 / calls)
        med = float(np.median(samples))
        row = {"variant": name, "block": block, "median_s": med, "min_s": min(samples),
               "max_s": max(samples), "rate": work / med, "exact": same,
               "lane_efficiency": lane_efficiency(ref, block[0])}
        rows.append(row)
        print(json.dumps(row), flush=True)
        kname = name.split("_")[0]  # the kernel: base9, fma8, int7, unroll4, chunk8
        if kname not in sass and not SIM:
            sass[kname] = sass_of(kernel, outdir, kname)
    with open(os.path.join(outdir, "mandelbrot-variants.json"), "w") as f:
        json.dump({"work": work, "params": [w, h, it], "rows": rows}, f, indent=1)
    with open(os.path.join(outdir, "mandelbrot-variants-sass.txt"), "w") as f:
        for kname, text in sass.items():
            f.write(f"===== {kname}\n{text}\n")


if __name__ == "__main__":
    main()
