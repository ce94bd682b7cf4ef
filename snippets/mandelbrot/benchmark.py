"""Mandelbrot's registry: every variant of mandelbrot.py. Run: python snippets/bench/run.py mandelbrot
MANDELBROT_TUNE=1: the chunked kernels' sweep only; MANDELBROT_PICKED=cuda_f64_chunk=k8_8x16,...: picks."""
from bench import run  # first: its Ctrl-C handler covers the imports below
import os
import numpy as np

from bench.adapters import Lesson
from bench.registry import Benchmark, Case, Variant
import mandelbrot as mb  # the lesson beside this file (a script's own folder is on sys.path)

# Flops of the reference's loop: an iteration 3 products, 5 sums; an escape the 3 of its last test.
FLOPS_PER_ITERATION, FLOPS_PER_ESCAPE = 8, 3
F64_BAR = 2.1e12  # pixel-iterations per second the best float64 kernel must reach (issue 48)
F32_TOLERANCE = 0.1  # float32 may disagree with float64 on this fraction of pixels at most
SWEEP = [f"k{k}_{b}" for k in (4, 8, 16) for b in ("8x16", "16x16")]  # the tuning run's candidates
TUNE = os.environ.get("MANDELBROT_TUNE") == "1"
PICKED = dict(p.split("=") for p in os.environ.get("MANDELBROT_PICKED", "").split(",") if p)

def cuda(v: str, label: str, step: str = "") -> tuple[str, Variant]:
    return v, Variant(label, step=step, measure=Lesson(mb.mandelbrot_cuda, mb.kernel_arguments, mb.launch, (v,)))

def chunked(kernel: str, dtype, step: str):
    """Every candidate of the sweep (TUNE), else the one picked (by default the lesson's)."""
    for c in SWEEP if TUNE else [PICKED.get(kernel, "k8_8x16")]:  # k{chunk length}_{block}
        k, bx, by = map(int, c[1:].replace("x", "_").split("_"))
        mb.KERNELS[v := f"{kernel}/{c}" if TUNE else kernel] = (mb.chunked_kernel(dtype, k), dtype, (bx, by))
        yield cuda(v, f"Numba CUDA {np.dtype(dtype).name}, chunked" + f", k = {k}, {bx} x {by}" * TUNE, step)

VARIANTS = dict([
    ("python", Variant("pure Python", "cpu", measure=Lesson(mb.mandelbrot_python))),
    ("numpy", Variant("NumPy (vectorised)", "cpu", measure=Lesson(mb.mandelbrot_numpy))),
    ("njit", Variant("Numba @njit (1 core)", "cpu", measure=Lesson(mb.mandelbrot_njit))),
    ("njit_parallel", Variant("Numba @njit(parallel=True)", "cpu", measure=Lesson(mb.mandelbrot_njit_parallel))),
    cuda("cuda_f64", "Numba CUDA float64", "1"), cuda("cuda_f64_fast", "Numba CUDA float64, tuned", "2"),
    *chunked("cuda_f64_chunk", np.float64, "3"), cuda("cuda_f32", "Numba CUDA float32"),
    *chunked("cuda_f32_chunk", np.float32, "")])
VARIANTS = {k: v for k, v in VARIANTS.items() if "/" in k} if TUNE else VARIANTS
FASTEST = "of the CPU variants only the fastest, Numba on all cores (the others take minutes)"
BEST = tuple(v for v in VARIANTS if v.startswith("cuda") or v == "njit_parallel")
CASES = {"smoke": Case({"width": 32, "height": 16, "iterations": 20}, default=False),  # anywhere
         "article": Case({"width": 1536, "height": 1024, "iterations": 20}),
         "deep": Case({"width": 1536, "height": 1024, "iterations": 1000}, variants=BEST, note=FASTEST),
         "large": Case({"width": 6144, "height": 4096, "iterations": 1000}, variants=BEST, note=FASTEST)}
inputs = lambda p: (*mb.coordinates(p["width"], p["height"]), p["iterations"])  # noqa: E731
reference = lambda p: mb.mandelbrot_njit_parallel(*inputs(p))  # noqa: E731  float64, all cores

def check(variant: str, counts: np.ndarray, ref: np.ndarray) -> dict:
    wrong = mb.differing_fraction(counts, ref) if counts.shape == ref.shape else 1.0
    return {"metric": "differing_fraction", "value": wrong, "ok": wrong <= F32_TOLERANCE * ("f32" in variant)}

def warp_iterations(ref: np.ndarray, threads: tuple[int, int]) -> int:
    """Iterations the warps run: 32 x each warp's slowest pixel (a warp: 32 / bx rows of bx pixels)."""
    (bx, by), rows = threads, 32 // threads[0]
    padded = np.zeros((-(-ref.shape[0] // by) * by, -(-ref.shape[1] // bx) * bx), dtype=np.int64)
    padded[:ref.shape[0], :ref.shape[1]] = ref
    return 32 * int(padded.reshape(-1, rows, padded.shape[1] // bx, bx).max(axis=(1, 3)).sum())

def counts(variant: str, p: dict, ref: np.ndarray) -> dict:
    work = {"pixel_iterations": int(ref.sum(dtype=np.int64)), "pixels": int(ref.size)}
    if variant in mb.KERNELS:  # lanes busy: pixel_iterations / warp_iterations
        work["warp_iterations"] = warp_iterations(ref, mb.KERNELS[variant][2])
    escapes = int(np.count_nonzero(ref < p["iterations"]))
    return {"flops": FLOPS_PER_ITERATION * work["pixel_iterations"] + FLOPS_PER_ESCAPE * escapes,
            "work": work, "bytes": ref.size * 4 + (p["width"] + p["height"]) * (4 if "f32" in variant else 8)}

BENCHMARK = Benchmark("mandelbrot", VARIANTS, CASES, reference, check, counts, inputs,
                      compiled=() if TUNE else ("njit", "njit_parallel", "cuda_f64_fast", "cuda_f32"),
                      probe_params={"width": 64, "height": 32, "iterations": 20})
if __name__ == "__main__":
    raise SystemExit(run.main(BENCHMARK))
