"""Your machine's roofline ceilings: CPU bandwidth (SAXPY's Numba lesson) and BLAS rates; GPU copy,
SAXPY, host<->device copies and cuBLAS rates through PyTorch. Every result is checked first.
Run: python snippets/bench/run.py machine   (quick: --cases quick-cpu,quick-cpu-matmul)"""
import sys
from pathlib import Path

import numpy as np

from bench.adapters import Cast, DeviceCopy, HostCopy, Lesson, OnDevice, OnHost, pinned
from bench.registry import Benchmark, Case, Variant, exact, per_case, stream, stream_counts
sys.path.append(str(Path(__file__).resolve().parents[1] / "saxpy"))  # SAXPY's CPU lesson
from saxpy_common import A, make_inputs  # noqa: E402
# Largest relative error (Frobenius norm, against float64) each precision may show.
TOLERANCE = {"fp64": 1e-12, "fp32": 1e-4, "tf32": 1e-2, "bf16": 2e-2}


# --8<-- [start:counts]
def counts(variant: str, p: dict, ref) -> dict:
    """Bytes moved and FLOPs done, and which part of the roofline the figure is: its group."""
    n, kind = p["n"], variant.split("_")[1]
    role = "ceiling+point" if variant == "cpu_saxpy" else VARIANTS[variant].group
    if kind in ("read", "copy", "saxpy"):  # bytes (FLOPs) each: read 4 (1), copy 8, SAXPY 12 (2)
        return {**stream_counts(kind, n), "role": role}
    if role == "transfer":
        return {"bytes": 4 * n, "flops": 0, "role": role}
    itemsize = {"fp64": 8, "bf16": 2}.get(kind, 4)  # n^3 multiply-adds over three matrices
    return {"bytes": 3 * n * n * itemsize, "flops": 2 * n**3, "role": role,
            "precision": kind.upper()}
# --8<-- [end:counts]


def gpu_matmul(precision: str) -> Cast:
    """torch.matmul in `precision` (TF32 on for that row only); the checked 64 rows come back."""
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
# The label the page's table shows (it adds the size) and the roofline group of each row.
VARIANTS = {
    "cpu_read": cpu("read (sum) bandwidth", "read", take=1),
    "cpu_copy": cpu("copy bandwidth", "copy", take=1, out="like"),
    "cpu_saxpy": cpu("SAXPY bandwidth", "saxpy", A),
    **{f"cpu_{p}": Variant(f"{p.upper()} matrix product", "cpu", group="ceiling",  # NumPy's BLAS
                           measure=Cast(dtype, OnHost(np.matmul, out="like")))
       for p, dtype in (("fp64", "float64"), ("fp32", "float32"))},
    "gpu_copy": Variant("copy bandwidth", group="ceiling", measure=DeviceCopy("torch")),
    "gpu_saxpy": Variant("SAXPY bandwidth", group="point", measure=OnDevice(
        "torch", lambda x, y: y.add_(x, alpha=float(A)))),
    **{f"gpu_{p}": Variant(f"{p.upper()} matrix product", group="ceiling", measure=gpu_matmul(p))
       for p in ("fp64", "fp32", "tf32", "bf16")},
    **{f"{d}_{m}": Variant(f"{label}, {m} memory", group="transfer",
                           measure=HostCopy("torch", d, m))
       for d, label in (("h2d", "host → device"), ("d2h", "device → host"))
       for m in ("pageable", "pinned")},
}
STREAM, CPU_MM = ("cpu_read", "cpu_copy", "cpu_saxpy"), ("cpu_fp64", "cpu_fp32")
CASES = {
    "cpu-stream": Case({"n": 2**26}, variants=STREAM),
    "cpu-matmul": Case({"n": 2048}, variants=CPU_MM),
    "gpu-stream": Case({"n": 2**28}, variants=("gpu_copy", "gpu_saxpy")),
    "gpu-matmul": Case({"n": 8192}, variants=("gpu_fp64", "gpu_fp32", "gpu_tf32", "gpu_bf16")),
    "pcie": Case({"n": 2**28}, variants=tuple(k for k in VARIANTS if k[:3] in ("h2d", "d2h"))),
    "quick-cpu": Case({"n": 2**16}, variants=STREAM, default=False),
    "quick-cpu-matmul": Case({"n": 128}, variants=CPU_MM, default=False),
}


@per_case
def inputs(p: dict) -> tuple:  # a matrix case (n <= 8192): a and b in float64, else x and y
    if p["n"] > 8192:
        return tuple(map(pinned, make_inputs(p["n"])))
    return tuple(np.random.default_rng(0).uniform(-1, 1, (2, p["n"], p["n"])))  # a, then b


def reference(p: dict) -> dict:  # a matrix case: 64 rows of the product, in float64
    a, b = inputs(p)
    return stream(A, a, b) if p["n"] > 8192 else {"rows": a[:64] @ b}


def check(variant: str, result, ref: dict) -> dict:
    kind = variant.split("_")[1]  # a precision, a stream kind or a transfer's host memory
    if "rows" in ref:
        got = np.asarray(result, dtype=np.float64)[:64]
        err = float(np.linalg.norm(got - ref["rows"]) / np.linalg.norm(ref["rows"]))
        return {"metric": "relative_frobenius_error", "value": err, "ok": err <= TOLERANCE[kind]}
    want = ref.get(kind, ref["copy"])  # a transfer's reference is its input, as a copy's
    return exact(result, want[:np.size(result)] if variant.startswith("h2d") else want)  # a prefix


# The CPU stream rows are Numba JIT functions whose first call compiles: probed on stream vectors.
BENCHMARK = Benchmark("machine", VARIANTS, CASES, reference, check, counts, inputs,
                      compiled=STREAM, probe_params={"n": 2**16})
