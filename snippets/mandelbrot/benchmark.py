"""Mandelbrot's registry: every variant of mandelbrot.py. Run: python snippets/bench/run.py mandelbrot"""
from bench import run  # first: its Ctrl-C handler covers the imports below

import numpy as np

from bench.adapters import Lesson
from bench.registry import Benchmark, Case, Variant
import mandelbrot as mb  # the lesson beside this file (a script's own folder is on sys.path)

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
cuda = lambda v: Lesson(mb.mandelbrot_cuda, mb.kernel_arguments, mb.launch, (v,))  # noqa: E731
# --8<-- [start:register]
VARIANTS = {
    "python": Variant("pure Python", "cpu", measure=Lesson(mb.mandelbrot_python)),
    "numpy": Variant("NumPy (vectorised)", "cpu", measure=Lesson(mb.mandelbrot_numpy)),
    "njit": Variant("Numba @njit (1 core)", "cpu", measure=Lesson(mb.mandelbrot_njit)),
    "njit_parallel": Variant("Numba @njit(parallel=True)", "cpu",
                             measure=Lesson(mb.mandelbrot_njit_parallel)),
    "cuda_f64": Variant("Numba CUDA float64", step="1", measure=cuda("cuda_f64")),
    "cuda_f64_fast": Variant("Numba CUDA float64, tuned", step="2", measure=cuda("cuda_f64_fast")),
    "cuda_f32": Variant("Numba CUDA float32", measure=cuda("cuda_f32")),
}
BEST = ("njit_parallel", "cuda_f64", "cuda_f64_fast", "cuda_f32")
CASES = {
    "smoke": Case({"width": 32, "height": 16, "iterations": 20}, default=False),  # seconds, anywhere
    "article": Case({"width": 1536, "height": 1024, "iterations": 20}),
    "deep": Case({"width": 1536, "height": 1024, "iterations": 1000}, variants=BEST,
                 note="pure Python, NumPy and one-core Numba left out by default (seconds to "
                      "minutes per run; the article case compares them)"),
    "large": Case({"width": 6144, "height": 4096, "iterations": 1000}, variants=BEST,
                  note="only the best CPU variant (Numba parallel on all cores) runs by default"),
}
# --8<-- [end:register]


def inputs(p: dict) -> tuple:
    return (*mb.coordinates(p["width"], p["height"]), p["iterations"])


def reference(p: dict) -> np.ndarray:
    """float64 on all CPU cores; the tests check it against pure Python, pixel for pixel."""
    return mb.mandelbrot_njit_parallel(*inputs(p))


def check(variant: str, counts: np.ndarray, ref: np.ndarray) -> dict:
    wrong = mb.differing_fraction(counts, ref) if counts.shape == ref.shape else 1.0
    limit = F32_TOLERANCE if variant == "cuda_f32" else 0.0
    return {"metric": "differing_fraction", "value": wrong, "ok": wrong <= limit}


def warp_iterations(ref: np.ndarray, threads: tuple[int, int]) -> int:
    """Iterations the warps run: a warp of 32 threads loops until its slowest pixel is done, so
    it costs 32 x that pixel's count. A block of (bx, by) threads forms its warps from 32/bx
    consecutive rows of bx pixels. Pixels outside the image (partial blocks) count as 0."""
    bx, by = threads
    rows, h, w = 32 // bx, -(-ref.shape[0] // by) * by, -(-ref.shape[1] // bx) * bx
    padded = np.zeros((h, w), dtype=np.int64)
    padded[:ref.shape[0], :ref.shape[1]] = ref
    return 32 * int(padded.reshape(h // rows, rows, w // bx, bx).max(axis=(1, 3)).sum())


def counts(variant: str, p: dict, ref: np.ndarray) -> dict:
    pixel_iterations = int(ref.sum(dtype=np.int64))
    escaped = int(np.count_nonzero(ref < p["iterations"]))
    work = {"pixel_iterations": pixel_iterations, "pixels": int(ref.size)}
    if variant in mb.KERNELS:  # for the lane efficiency: pixel_iterations / warp_iterations
        work["warp_iterations"] = warp_iterations(ref, mb.KERNELS[variant][2])
    return {"flops": FLOPS_PER_ITERATION * pixel_iterations + FLOPS_PER_ESCAPE * escaped,
            "bytes": ref.size * 4 + (p["width"] + p["height"]) * (4 if variant == "cuda_f32" else 8),
            "work": work}  # bytes: the counts written, the coordinates read


BENCHMARK = Benchmark("mandelbrot", VARIANTS, CASES, reference, check, counts, inputs,
                      compiled=("njit", "njit_parallel", "cuda_f64_fast", "cuda_f32"),
                      probe_params={"width": 64, "height": 32, "iterations": 20})
if __name__ == "__main__":
    raise SystemExit(run.main(BENCHMARK))
