"""Mandelbrot's registry, every variant of mandelbrot.py: python snippets/bench/run.py mandelbrot.
gpu/mandelbrot.sh: MANDELBROT_TUNE=1 (the sweep), then MANDELBROT_PICKED=<kernel>=k8_8x16,..."""
import os
import numpy as np

from bench.adapters import Lesson
from bench.registry import Benchmark, Case, Variant
import mandelbrot as mb  # the lesson beside this file (a script's own folder is on sys.path)

F32_TOLERANCE = 0.1  # float32 may disagree with float64 on this fraction of pixels at most
SWEEP = {f"k{k}_{bx}x16": (k, bx, 16) for k in (4, 8, 16) for bx in (8, 16)}  # the tuning run's
TUNE = os.environ.get("MANDELBROT_TUNE") == "1"  # the sweep's rows only
PICKED = dict(p.split("=") for p in os.environ.get("MANDELBROT_PICKED", "").split(",") if p)
CPU = {"python": "pure Python", "numpy": "NumPy (vectorised)", "njit": "Numba @njit (1 core)",
       "njit_parallel": "Numba @njit(parallel=True)"}  # the lesson's mb.CPU functions

def cuda(v: str, label: str = "", step: str = "") -> tuple[str, Variant]:  # a row of mb.KERNELS
    return v, Variant(f"Numba CUDA {mb.KERNELS[v][1].__name__}{label}", step=step,
                      measure=Lesson(mb.mandelbrot_cuda, mb.kernel_arguments, mb.launch, (v,)))

def chunked(kernel: str, step: str = ""):  # the sweep (TUNE), else the pick (default: the lesson's)
    dtype = mb.KERNELS[kernel][1]
    for c in SWEEP if TUNE else [PICKED.get(kernel, "k8_8x16")]:  # k{chunk length}_{block}
        k, bx, by = SWEEP[c]
        v = f"{kernel}/{c}" if TUNE else kernel
        mb.KERNELS[v] = (mb.chunked_kernel(dtype, k), dtype, (bx, by))
        yield cuda(v, ", chunked" + f", k = {k}, {bx} x {by}" * TUNE, step)

VARIANTS = {**{k: Variant(label, "cpu", measure=Lesson(mb.CPU[k])) for k, label in CPU.items()},
            **dict([cuda("cuda_f64", step="1"), cuda("cuda_f64_fast", ", tuned", "2"),
                    *chunked("cuda_f64_chunk", "3"), cuda("cuda_f32"), *chunked("cuda_f32_chunk")])}
VARIANTS = {k: v for k, v in VARIANTS.items() if "/" in k} if TUNE else VARIANTS
BEST = {"variants": tuple(v for v in VARIANTS if v.startswith("cuda") or v == "njit_parallel"),
        "note": "of the CPU variants only the fastest, Numba on all cores (the others take minutes)"}
CASES = {name: Case({"width": w, "height": h, "iterations": i}, **kw) for name, w, h, i, kw in [
    ("smoke", 32, 16, 20, {"default": False}), ("article", 1536, 1024, 20, {}),  # smoke: anywhere
    ("deep", 1536, 1024, 1000, BEST), ("large", 6144, 4096, 1000, BEST)]}

def reference(p: dict) -> np.ndarray:  # the lesson's float64 loop, on all cores
    return mb.compute("njit_parallel", **p)

def check(variant: str, counts: np.ndarray, ref: np.ndarray) -> dict:  # float64: every pixel
    wrong = mb.differing_fraction(counts, ref) if counts.shape == ref.shape else 1.0
    ok = wrong <= F32_TOLERANCE * ("f32" in variant)
    return {"metric": "differing_fraction", "value": wrong, "ok": ok}

def warp_iterations(ref: np.ndarray, threads: tuple[int, int]) -> int:
    """Iterations the warps run: 32 x each warp's slowest pixel (a warp: 32 / bx rows of bx)."""
    (bx, by), rows = threads, 32 // threads[0]
    padded = np.pad(ref.astype(np.int64), ((0, -ref.shape[0] % by), (0, -ref.shape[1] % bx)))
    return 32 * int(padded.reshape(-1, rows, padded.shape[1] // bx, bx).max(axis=(1, 3)).sum())

def counts(variant: str, p: dict, ref: np.ndarray) -> dict:
    """Flops of the reference's loop (an iteration: 3 products, 5 sums; an escape: the 3 of its
    last test); bytes: the counts written, x and y read; lanes busy: pixel / warp iterations."""
    work = {"pixel_iterations": int(ref.sum(dtype=np.int64)), "pixels": int(ref.size)}
    if variant in mb.KERNELS:
        work["warp_iterations"] = warp_iterations(ref, mb.KERNELS[variant][2])
    escapes = int(np.count_nonzero(ref < p["iterations"]))
    return {"flops": 8 * work["pixel_iterations"] + 3 * escapes, "work": work,
            "bytes": ref.size * 4 + (p["width"] + p["height"]) * (4 if "f32" in variant else 8)}

BENCHMARK = Benchmark("mandelbrot", VARIANTS, CASES, reference, check, counts,
                      inputs=lambda p: (*mb.coordinates(p["width"], p["height"]), p["iterations"]),
                      probe_params={"width": 64, "height": 32, "iterations": 20}, compiled=(
                          () if TUNE else ("njit", "njit_parallel", "cuda_f64_fast", "cuda_f32")))
