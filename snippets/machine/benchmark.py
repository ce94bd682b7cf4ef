"""Measure your machine, registered with the benchmark runner: the ceilings of a roofline.

CPU: read, copy and SAXPY bandwidth on all cores (Numba parallel loops) and FP32 and FP64
matrix-product rates (NumPy's BLAS). GPU (through PyTorch): device copy and SAXPY bandwidth,
host<->device copies with pageable and pinned memory, and FP64, FP32, TF32 and BF16
matrix-product rates (cuBLAS). Every result is checked before it is timed.

Run: python snippets/bench/run.py machine   (quick, small sizes: --cases quick-cpu,quick-cpu-matmul)
The CPU's streaming kernels are SAXPY's lesson (snippets/saxpy/saxpy_numba_cpu.py).
"""

from __future__ import annotations

from bench import run  # first: its Ctrl-C handler covers the imports below

import functools
import sys
from pathlib import Path

import numpy as np

from bench.adapters import Cast, DeviceCopy, HostCopy, Lesson, OnDevice, OnHost, pinned
from bench.registry import Benchmark, Case, Variant, exact, stream

sys.path.append(str(Path(__file__).resolve().parents[1] / "saxpy"))  # SAXPY's CPU lesson
from saxpy_common import A, make_inputs  # noqa: E402

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


def gpu_matmul(precision: str) -> Cast:
    """torch.matmul in `precision` (TF32: PyTorch's switch, on for that row only); end to end
    from the host matrices, back: the 64 rows that are checked."""
    def put(a, b):
        import torch

        dtype = {"fp64": torch.float64, "bf16": torch.bfloat16}.get(precision, torch.float32)
        a, b = (torch.from_numpy(m).to("cuda").to(dtype) for m in (a, b))
        return a, b, torch.empty_like(a)

    def launch(a, b, c):
        import torch

        torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
        return torch.matmul(a, b, out=c)
    return Cast("float64" if precision == "fp64" else "float32",
                Lesson(None, put, launch, get=lambda c: c[:64].cpu().double().numpy()))


cpu = lambda label, fn, *args, **kw: Variant(  # noqa: E731 - SAXPY's CPU lesson, by name
    label, "cpu", group="ceiling", measure=OnHost(f"saxpy_numba_cpu:{fn}", args, **kw))
cpu_mm = lambda label, dtype: Variant(label, "cpu", group="ceiling",  # noqa: E731 - NumPy's BLAS
                                      measure=Cast(dtype, OnHost(np.matmul, out="like")))
mm = lambda label, p: Variant(label, group="ceiling", measure=gpu_matmul(p))  # noqa: E731
# The registry: the label the page's table shows (the size is added there), and the roofline
# group: a ceiling (memory or compute roof), a point, or a host<->device transfer.
VARIANTS = {
    "cpu_read": cpu("read (sum) bandwidth", "read", take=1),
    "cpu_copy": cpu("copy bandwidth", "copy", take=1, out="like"),
    "cpu_saxpy": cpu("SAXPY bandwidth", "saxpy", A),
    "cpu_fp64": cpu_mm("FP64 matrix product", "float64"),
    "cpu_fp32": cpu_mm("FP32 matrix product", "float32"),
    "gpu_copy": Variant("copy bandwidth", group="ceiling", measure=DeviceCopy("torch")),
    "gpu_saxpy": Variant("SAXPY bandwidth", group="point", measure=OnDevice(
        "torch", lambda x, y: y.add_(x, alpha=float(A)))),
    "gpu_fp64": mm("FP64 matrix product", "fp64"),
    "gpu_fp32": mm("FP32 matrix product", "fp32"),
    "gpu_tf32": mm("TF32 matrix product", "tf32"),
    "gpu_bf16": mm("BF16 matrix product", "bf16"),
    **{f"{d}_{m}": Variant(f"{label}, {m} memory", group="transfer",
                           measure=HostCopy("torch", d, m))
       for d, label in (("h2d", "host → device"), ("d2h", "device → host"))
       for m in ("pageable", "pinned")},
}
STREAM = tuple(f"cpu_{k}" for k in ("read", "copy", "saxpy"))
CPU_MM = ("cpu_fp64", "cpu_fp32")
CASES = {
    "cpu-stream": Case({"n": 2**26}, variants=STREAM),
    "cpu-matmul": Case({"n": 2048}, variants=CPU_MM),
    "gpu-stream": Case({"n": 2**28}, variants=("gpu_copy", "gpu_saxpy")),
    "gpu-matmul": Case({"n": 8192}, variants=("gpu_fp64", "gpu_fp32", "gpu_tf32", "gpu_bf16")),
    "pcie": Case({"n": 2**28}, variants=("h2d_pageable", "h2d_pinned", "d2h_pageable",
                                         "d2h_pinned")),
    "quick-cpu": Case({"n": 2**16}, variants=STREAM, default=False),
    "quick-cpu-matmul": Case({"n": 128}, variants=CPU_MM, default=False),
}


@functools.lru_cache(maxsize=1)
def matrices(n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.uniform(-1, 1, (n, n)), rng.uniform(-1, 1, (n, n))  # float64


def reference(p: dict):  # a matrix case (n <= 8192): 64 rows of the product, in float64
    if p["n"] <= 8192:
        a, b = matrices(p["n"])
        return {"rows": a[:64] @ b}
    return stream(A, *make_inputs(p["n"]))


def check(variant: str, result, ref: dict) -> dict:
    if "rows" in ref:
        got = np.asarray(result, dtype=np.float64)[:64]
        err = float(np.linalg.norm(got - ref["rows"]) / np.linalg.norm(ref["rows"]))
        return {"metric": "relative_frobenius_error", "value": err,
                "ok": err <= TOLERANCE[variant.split("_")[1]]}
    want = ref[variant.split("_")[1]] if variant.endswith(("_saxpy", "_read")) else ref["copy"]
    result = np.asarray(result) if variant != "cpu_read" else result
    return exact(result, want[:result.size] if variant.startswith("h2d") else want)  # a prefix


def inputs(p: dict) -> tuple:
    return matrices(p["n"]) if p["n"] <= 8192 else tuple(map(pinned, make_inputs(p["n"])))


BENCHMARK = Benchmark("machine", VARIANTS, CASES, reference, check, counts, inputs,
                      probe_params={"n": 1024})
if __name__ == "__main__":
    raise SystemExit(run.main(BENCHMARK))
