"""Measure your machine, registered with the benchmark runner: the ceilings of a roofline.

CPU: read, copy and SAXPY bandwidth on all cores (Numba parallel loops) and FP32 and FP64
matrix-product rates (NumPy's BLAS). GPU (through PyTorch): device copy and SAXPY bandwidth,
host<->device copies with pageable and pinned memory, and FP64, FP32, TF32 and BF16
matrix-product rates (cuBLAS). Every result is checked before it is timed.

Run it with:  python snippets/bench/run.py machine --output machine.json
         (or:  python snippets/machine/benchmark.py --output machine.json)
A quick check with small sizes:  python snippets/bench/run.py machine --cases quick-cpu ...
"""

from __future__ import annotations

from bench import run  # first: its Ctrl-C handler covers the imports below

import functools
import sys

import numpy as np
from numba import njit, prange

from bench.runner import Benchmark, Case, Prepared, Variant

A = np.float32(2.0)
# Largest relative error (Frobenius norm, against float64) each precision may show.
TOLERANCE = {"fp64": 1e-12, "fp32": 1e-4, "tf32": 1e-2, "bf16": 2e-2}


# --8<-- [start:counts]
def counts(variant: str, p: dict, ref) -> dict:
    """Bytes moved and FLOPs done, and which part of the roofline the figure is."""
    n = p["n"]
    if variant.endswith(("_read",)):
        return {"bytes": 4 * n, "flops": n, "role": "ceiling"}          # read 1 float32, add
    if variant.endswith("_copy"):
        return {"bytes": 2 * 4 * n, "flops": 0, "role": "ceiling"}      # read 1, write 1
    if variant.endswith("_saxpy"):
        role = "ceiling+point" if variant.startswith("cpu") else "point"
        return {"bytes": 3 * 4 * n, "flops": 2 * n, "role": role}       # read 2, write 1
    if variant.startswith(("h2d", "d2h")):
        return {"bytes": 4 * n, "flops": 0, "role": "transfer"}
    itemsize = {"fp64": 8, "bf16": 2}.get(variant.split("_")[1], 4)
    return {"bytes": 3 * n * n * itemsize, "flops": 2 * n**3, "role": "ceiling",
            "precision": variant.split("_")[1].upper()}                 # n^3 multiply-adds
# --8<-- [end:counts]


# ---------------------------------------------------------------- CPU kernels

@njit(parallel=True)
def cpu_copy(src, dst):
    for i in prange(dst.size):
        dst[i] = src[i]


@njit(parallel=True, fastmath=True)  # fastmath: a vectorised sum (exact here)
def cpu_read(x):
    total = 0.0
    for i in prange(x.size):
        total += x[i]
    return total


@njit(parallel=True)
def cpu_saxpy(a, x, y):
    for i in prange(y.size):
        y[i] = a * x[i] + y[i]


# ---------------------------------------------------------------- cases and variants

STREAM = ("read", "copy", "saxpy")
CPU_MM = ("cpu_fp64", "cpu_fp32")
GPU_MM = ("gpu_fp64", "gpu_fp32", "gpu_tf32", "gpu_bf16")
PCIE = ("h2d_pageable", "h2d_pinned", "d2h_pageable", "d2h_pinned")
# The registry: the label the page's table shows (the size is added there), and the roofline
# group: a ceiling (memory or compute roof), a point, or a host<->device transfer.
VARIANTS = {
    "cpu_read": Variant("read (sum) bandwidth", device="cpu", group="ceiling"),
    "cpu_copy": Variant("copy bandwidth", device="cpu", group="ceiling"),
    "cpu_saxpy": Variant("SAXPY bandwidth", device="cpu", group="ceiling"),
    "cpu_fp64": Variant("FP64 matrix product", device="cpu", group="ceiling"),
    "cpu_fp32": Variant("FP32 matrix product", device="cpu", group="ceiling"),
    "gpu_copy": Variant("copy bandwidth", group="ceiling"),
    "gpu_saxpy": Variant("SAXPY bandwidth", group="point"),
    "gpu_fp64": Variant("FP64 matrix product", group="ceiling"),
    "gpu_fp32": Variant("FP32 matrix product", group="ceiling"),
    "gpu_tf32": Variant("TF32 matrix product", group="ceiling"),
    "gpu_bf16": Variant("BF16 matrix product", group="ceiling"),
    "h2d_pageable": Variant("host → device, pageable memory", group="transfer"),
    "h2d_pinned": Variant("host → device, pinned memory", group="transfer"),
    "d2h_pageable": Variant("device → host, pageable memory", group="transfer"),
    "d2h_pinned": Variant("device → host, pinned memory", group="transfer"),
}
CASES = {
    "cpu-stream": Case({"n": 2**26}, variants=tuple(f"cpu_{k}" for k in STREAM)),
    "cpu-matmul": Case({"n": 2048}, variants=CPU_MM),
    "gpu-stream": Case({"n": 2**28}, variants=("gpu_copy", "gpu_saxpy")),
    "gpu-matmul": Case({"n": 8192}, variants=GPU_MM),
    "pcie": Case({"n": 2**28}, variants=PCIE),
    "quick-cpu": Case({"n": 2**16}, variants=tuple(f"cpu_{k}" for k in STREAM), default=False),
    "quick-cpu-matmul": Case({"n": 128}, variants=CPU_MM, default=False),
}


@functools.lru_cache(maxsize=1)
def stream_inputs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Exactly representable values: a*x + y is exact in float32, with or without an FMA."""
    i = np.arange(n, dtype=np.int64)
    return ((i % 1000) * 0.5 - 250).astype(np.float32), ((i % 777) * 0.25).astype(np.float32)


@functools.lru_cache(maxsize=1)
def matrices(n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.uniform(-1, 1, (n, n)), rng.uniform(-1, 1, (n, n))  # float64


def reference(p: dict):
    n = p["n"]
    if n <= 8192:  # a matrix case: 64 rows of the product, in float64
        a, b = matrices(n)
        return {"rows": a[:64] @ b}
    x, y = stream_inputs(n)
    return {"x": x, "want": A * x + y, "sum": float(np.sum(x, dtype=np.float64))}


def check(variant: str, result, ref: dict) -> dict:
    if "rows" in ref:
        got = np.asarray(result, dtype=np.float64)[:64]
        err = float(np.linalg.norm(got - ref["rows"]) / np.linalg.norm(ref["rows"]))
        return {"metric": "relative_frobenius_error", "value": err,
                "ok": err <= TOLERANCE[variant.split("_")[1]]}
    if variant.endswith("_read"):
        return {"metric": "abs_error", "value": abs(result - ref["sum"]),
                "ok": result == ref["sum"]}
    want = ref["want"] if variant.endswith("_saxpy") else ref["x"]
    result = np.asarray(result)
    want = want[:result.size] if variant.startswith("h2d") else want  # end to end: a prefix
    wrong = int(np.count_nonzero(result != want)) if result.shape == want.shape else want.size
    return {"metric": "mismatched_elements", "value": wrong, "ok": wrong == 0}


def setup_cpu(variant: str, n: int) -> Prepared:
    if variant in CPU_MM:
        a, b = matrices(n)
        dtype = np.float64 if variant == "cpu_fp64" else np.float32
        a, b = a.astype(dtype), b.astype(dtype)
        c = np.empty((n, n), dtype)
        return Prepared(run=lambda: np.matmul(a, b, out=c))
    x, y0 = stream_inputs(n)
    y, dst = y0.copy(), np.empty_like(x)
    if variant == "cpu_read":
        return Prepared(run=lambda: cpu_read(x))
    if variant == "cpu_copy":
        return Prepared(run=lambda: (cpu_copy(x, dst), dst)[1])
    return Prepared(run=lambda: (cpu_saxpy(A, x, y), y)[1])


def setup_gpu(variant: str, n: int) -> Prepared:
    import torch

    dev = torch.device("cuda")
    if variant in GPU_MM:
        precision = variant.split("_")[1]
        dtype = {"fp64": torch.float64, "bf16": torch.bfloat16}.get(precision, torch.float32)
        a, b = (torch.from_numpy(m).to(dtype) for m in matrices(n))
        d_a, d_b = a.to(dev), b.to(dev)
        d_c = torch.empty((n, n), dtype=dtype, device=dev)

        def tf32(fn):  # TF32 is a switch of PyTorch: on for the tf32 variant only
            def call():
                torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
                return fn()
            return call
        # end to end: copy A and B in, multiply, copy back the 64 rows that are checked
        return Prepared(run=tf32(lambda: torch.matmul(a.to(dev), b.to(dev))[:64].cpu().double()
                                 .numpy()),
                        kernel=tf32(lambda: torch.matmul(d_a, d_b, out=d_c)),
                        fetch=lambda: d_c[:64].cpu().double().numpy())
    x, y = stream_inputs(n)
    d_x, d_y = torch.from_numpy(x).to(dev), torch.from_numpy(y).to(dev)
    if variant in PCIE:
        pinned = variant.endswith("pinned")
        host = torch.from_numpy(x.copy())
        if pinned:
            host = host.pin_memory()
        d = torch.empty_like(d_x)
        if variant.startswith("h2d"):  # end to end: the copy, then 1 Mi elements back to check
            return Prepared(run=lambda: (d.copy_(host), d[:2**20].cpu().numpy())[1],
                            kernel=lambda: d.copy_(host), fetch=lambda: d.cpu().numpy())
        return Prepared(run=lambda: (host.copy_(d_x), host.numpy())[1],
                        kernel=lambda: host.copy_(d_x), fetch=lambda: host.numpy())
    if variant == "gpu_copy":
        d_c = torch.empty_like(d_x)
        return Prepared(run=lambda: torch.from_numpy(x).to(dev).clone().cpu().numpy(),
                        kernel=lambda: d_c.copy_(d_x), fetch=lambda: d_c.cpu().numpy())
    return Prepared(run=lambda: torch.from_numpy(y).to(dev).add_(torch.from_numpy(x).to(dev),
                                                                alpha=float(A)).cpu().numpy(),
                    kernel=lambda: d_y.add_(d_x, alpha=float(A)), fetch=lambda: d_y.cpu().numpy())


def setup(variant: str, p: dict) -> Prepared:
    return (setup_cpu if VARIANTS[variant].device == "cpu" else setup_gpu)(variant, p["n"])


BENCHMARK = Benchmark(
    name="machine", variants=VARIANTS, cases=CASES, setup=setup, reference=reference,
    check=check, counts=counts, probe_params={"n": 1024})

if __name__ == "__main__":
    sys.exit(run.main(BENCHMARK))
