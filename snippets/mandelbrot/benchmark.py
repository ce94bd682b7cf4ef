"""Mandelbrot, registered with the benchmark runner: cases, variants, reference, check, work.

Run it with:  python snippets/bench/run.py mandelbrot --output mandelbrot.json
"""

from __future__ import annotations

import numpy as np
from bench.runner import Benchmark, Case, Prepared, register

import mandelbrot as mb  # the teaching file beside this one (bench.runner.load puts it on the path)

# --8<-- [start:flops]
# Floating-point operations, counted from the loop body: a completed iteration does
# 3 multiplications (x*x, y*y, x*y) and 5 additions or subtractions (x2 + y2, t + t, + cy,
# x2 - y2, + cx) = 8; a pixel that escapes also does the 3 of its final, failed test.
# The comparison with 4 is not counted.
FLOPS_PER_ITERATION = 8
FLOPS_PER_ESCAPE = 3
# --8<-- [end:flops]
F64_BAR = 1.5e12  # pixel-iterations per second that cuda_f64_fast must reach on the large case
F32_TOLERANCE = 0.1  # float32 may disagree with float64 on this fraction of pixels at most

# --8<-- [start:register]
CASES = {
    "smoke": Case({"width": 32, "height": 16, "iterations": 20}, default=False),  # seconds, anywhere
    "article": Case({"width": 1536, "height": 1024, "iterations": 20}),
    "deep": Case({"width": 1536, "height": 1024, "iterations": 1000},
                 variants=("njit_parallel", "cuda_f64", "cuda_f64_fast", "cuda_f32"),
                 note="pure Python, NumPy and one-core Numba left out by default (seconds to "
                      "minutes per run; the article case compares them)"),
    "large": Case({"width": 6144, "height": 4096, "iterations": 1000},
                  variants=("njit_parallel", "cuda_f64", "cuda_f64_fast", "cuda_f32"),
                  note="only the best CPU variant (Numba parallel on all cores) runs by default"),
}
DEVICES = {v: "gpu" if v in mb.GPU_VARIANTS else "cpu" for v in mb.VARIANTS}
CPU_FUNCS = {"python": mb.mandelbrot_python, "numpy": mb.mandelbrot_numpy,
             "njit": mb.mandelbrot_njit, "njit_parallel": mb.mandelbrot_njit_parallel}


def setup(variant: str, p: dict) -> Prepared:
    xs, ys = mb.coordinates(p["width"], p["height"])
    it = p["iterations"]
    if DEVICES[variant] == "cpu":
        func = CPU_FUNCS[variant]
        return Prepared(run=lambda: func(xs, ys, it))
    from numba import cuda

    kernel, dtype, threads = mb.KERNELS[variant]
    d_xs, d_ys = cuda.to_device(xs.astype(dtype)), cuda.to_device(ys.astype(dtype))
    d_counts = cuda.device_array((p["height"], p["width"]), dtype=np.int32)
    launch = kernel[mb.blocks_for(p["width"], p["height"], threads), threads]
    return Prepared(run=lambda: mb.mandelbrot_cuda(xs, ys, it, variant),  # copies included
                    kernel=lambda: launch(d_xs, d_ys, it, d_counts),  # device work only
                    fetch=d_counts.copy_to_host)


def reference(p: dict) -> np.ndarray:
    """float64 on all CPU cores; the tests check it against pure Python, pixel for pixel."""
    xs, ys = mb.coordinates(p["width"], p["height"])
    return mb.mandelbrot_njit_parallel(xs, ys, p["iterations"])


def check(variant: str, counts: np.ndarray, ref: np.ndarray) -> dict:
    wrong = mb.differing_fraction(counts, ref) if counts.shape == ref.shape else 1.0
    limit = F32_TOLERANCE if variant == "cuda_f32" else 0.0
    return {"metric": "differing_fraction", "value": wrong, "ok": wrong <= limit}


def warp_iterations(ref: np.ndarray, threads: tuple[int, int]) -> int:
    """Iterations the warps run: a warp of 32 threads loops until its slowest pixel is done, so
    it costs 32 x that pixel's count. A block of (bx, by) threads forms its warps from 32/bx
    consecutive rows of bx pixels. Pixels outside the image (partial blocks) count as 0."""
    bx, by = threads
    rows = 32 // bx
    h = -(-ref.shape[0] // by) * by
    w = -(-ref.shape[1] // bx) * bx
    padded = np.zeros((h, w), dtype=np.int64)
    padded[:ref.shape[0], :ref.shape[1]] = ref
    return 32 * int(padded.reshape(h // rows, rows, w // bx, bx).max(axis=(1, 3)).sum())


def counts(variant: str, p: dict, ref: np.ndarray) -> dict:
    pixel_iterations = int(ref.sum(dtype=np.int64))
    escaped = int(np.count_nonzero(ref < p["iterations"]))
    itemsize = 4 if variant == "cuda_f32" else 8
    work = {"pixel_iterations": pixel_iterations, "pixels": int(ref.size)}
    if variant in mb.KERNELS:  # for the lane efficiency: pixel_iterations / warp_iterations
        work["warp_iterations"] = warp_iterations(ref, mb.KERNELS[variant][2])
    return {"flops": FLOPS_PER_ITERATION * pixel_iterations + FLOPS_PER_ESCAPE * escaped,
            "bytes": ref.size * 4 + (p["width"] + p["height"]) * itemsize,  # counts + coordinates
            "work": work}


BENCHMARK = register(Benchmark(
    name="mandelbrot", variants=DEVICES, cases=CASES, setup=setup, reference=reference,
    check=check, counts=counts,
    compiled=("njit", "njit_parallel", "cuda_f64_fast", "cuda_f32"),
    probe_params={"width": 64, "height": 32, "iterations": 20}))
# --8<-- [end:register]
