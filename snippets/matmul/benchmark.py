"""Matrix multiplication's registry: each kernel held to cuBLAS in its precision, same process:
`cuda_c`, every row of sgemm.cu's table (cuBLAS FP32, TF32, BF16 among them) timed by
bench/runner.cu; the Numba kernels after cuBLAS FP32, Triton after BF16, through PyTorch.
MATMUL_TUNE=1 adds the table's tuning instances (a tuning run); MATMUL_TUNED=<its results file>
times for each templated CUDA C kernel the instance `pick` takes (a confirming run). Run it:
    python snippets/bench/run.py matmul --output matmul.json
"""
from bench import run  # first: its Ctrl-C handler covers the imports below

import importlib.util
import json
import math
import os
import sys
from pathlib import Path

import numpy as np

from bench.adapters import CTable, Lesson, OnDevice
from bench.registry import Benchmark, Case, Variant

import sgemm_numba as sg  # the teaching file beside this one (this script's own folder)

# --8<-- [start:register]
STEPS = {"naive": "1 naive", "coalesced": "2 coalesced", "smem": "3 shared-memory tiles",
         "blocktile_1d": "4 1-D register tile", "blocktile_2d": "5 2-D register tile",
         "vectorized": "6 vectorised, transposed", "warptile": "7 warp tiles, double buffer",
         "tensor_core": "8 tensor cores, mma.sync (BF16)",
         "wgmma": "9 tensor cores, wgmma + TMA (BF16)"}
TEMPLATES = {"warptile": "wt_", "tensor_core": "tc_", "wgmma": "wgmma_"}  # instance prefixes
CUBLAS = ("cublas_fp32", "cublas_tf32", "cublas_bf16")
PADDED = "cublas_bf16_padded_k"  # cuBLAS BF16 over the zero padding, as the BF16 kernels run
BIG, BIG_KERNELS = 8192, ("cublas_fp32", "cublas_bf16", "warptile", "tensor_core", "wgmma")
TUNE = os.environ.get("MATMUL_TUNE") == "1"


def kernels(p: dict) -> dict[str, str]:
    """The table rows run at a size, each with the name it is reported under."""
    names = [*CUBLAS, *STEPS] if p["m"] < BIG else list(BIG_KERNELS)
    if p["k"] % 8:  # the BF16 kernels compute over K rounded up to 8: cuBLAS at that K too
        names.insert(names.index("cublas_bf16") + 1, PADDED)
    if TUNE:
        return {n: n for n in [*names, "tune"]}
    tuned = os.environ.get("MATMUL_TUNED")
    picked = pick(json.loads(Path(tuned).read_text()), p) if tuned else {}
    return {picked.get(k, k): k for k in names}


SGEMM = CTable(Path(__file__).with_name("sgemm.cu"), repeats=10, kernels=kernels,  # sm_90a:
               flags=("-arch=sm_90a", "-DWITH_CUBLAS", "-lcublas"), skip_failed=TUNE)  # H100/H200
TUNING = SGEMM.names("tune") if TUNE else []  # the tuning instances, from the built runner
HAVE_TORCH_GPU = (all(importlib.util.find_spec(m) for m in ("torch", "triton"))
                  and not sg.SIMULATOR and os.environ.get("TRITON_INTERPRET") != "1")


def mm(fp32: bool, x, y, c):  # cuBLAS through PyTorch into c; FP32: no TF32, FP32 output
    import torch
    if fp32:
        torch.backends.cuda.matmul.allow_tf32 = False
    torch.mm(x, y, out=c)


def bf16(into, out_type: str = "float32") -> Lesson:
    """A BF16 product through PyTorch on matmul_triton.py's operands (padded BF16 copies made on
    the GPU, B transposed, as in sgemm.cu), into FP32 (cuBLAS: BF16, mm's own); end to end: the
    copies in (BF16 rounding on the GPU), the product and the copy back."""
    def put(a, b, c):
        import torch
        from matmul_triton import tma_operands

        return (*tma_operands(a, b), torch.empty(c.shape, dtype=getattr(torch, out_type),
                                                 device="cuda"))
    return Lesson(None, put, into, get=lambda c: c.float().cpu().numpy())


VARIANTS = {
    "cuda_c": Variant("CUDA C (every kernel of sgemm.cu, and cuBLAS)", measure=SGEMM),
    **{f"cuda_c/{k}": Variant(f"CUDA C, {v}", step=v.split()[0], runs=False)
       for k, v in STEPS.items()},
    **{f"cuda_c/{k}": Variant(f"CUDA C tuning instance {k}", group="tuning", runs=False)
       for k in TUNING},
    **{k: Variant(f"cuBLAS {k[7:].upper()}", group="ceiling", runs=False) for k in CUBLAS},
    PADDED: Variant("cuBLAS BF16, K rounded up to 8 (zeros)", group="ceiling", runs=False),
    "torch/cublas_fp32": Variant("cuBLAS FP32, through PyTorch", group="ceiling",
                                 measure=OnDevice("torch", mm, (True,))),
    **{f"numba/{k}": Variant(f"Numba, {STEPS[k]}", step=STEPS[k].split()[0],
                             measure=OnDevice("numba", sg.matmul, (k,))) for k in sg.KERNELS},
    "torch/cublas_bf16": Variant("cuBLAS BF16, through PyTorch", group="ceiling",
                                 measure=bf16(lambda x, y, c: mm(False, x, y, c), "bfloat16")),
    "triton": Variant("Triton (BF16), one tile a program", step="1",
                      measure=bf16("matmul_triton:matmul_into")),
    "triton_tma": Variant("Triton (BF16), persistent, TMA, autotuned", step="2",
                          measure=bf16("matmul_triton:matmul_tma_into")),
}
TORCH = ("torch/cublas_fp32", "torch/cublas_bf16", "triton", "triton_tma")  # need a GPU and both
RUN = tuple(k for k, v in VARIANTS.items() if v.runs and (HAVE_TORCH_GPU or k not in TORCH))
LAST = ("cuda_c", "torch/cublas_fp32", "numba/warptile", "torch/cublas_bf16", "triton_tma")
NOTE = "" if HAVE_TORCH_GPU else "triton and torch rows left out: they need torch, triton, a GPU"
SIZES = {"1024": (1024,) * 3, "2048": (2048,) * 3, "4096": (4096,) * 3,
         "odd": (3001, 4099, 2053),  # odd: no dimension a multiple of a tile or of 4
         "8192": (BIG,) * 3}  # at this size only the last kernel of each kind runs (and cuBLAS)
CASES = {name: Case({"m": m, "n": n, "k": k}, note=NOTE,
                    variants=tuple(v for v in RUN if m < BIG or v in LAST))
         for name, (m, n, k) in SIZES.items()}
CASES["smoke"] = Case({"m": 40, "n": 36, "k": 20}, default=False, note=NOTE)  # the simulator
# --8<-- [end:register]


# --8<-- [start:pick]
def pick(tuned: dict, p: dict) -> dict[str, str]:
    """The rule: for each templated kernel, at this size, the tuning instance with the smallest
    median time in the tuning run (`tuned`, its results file). {kernel: instance}."""
    best: dict[str, tuple[float, str]] = {}
    for m in tuned["measurements"]:
        name = m["variant"].removeprefix("cuda_c/")
        kernel = next((k for k, pre in TEMPLATES.items() if name.startswith(pre)), None)
        if kernel and m["phase"] == "kernel" and all(m["params"].get(d) == p[d] for d in "mnk"):
            best[kernel] = min(best.get(kernel, (math.inf, "")), (m["median_s"], name))
    return {kernel: name for kernel, (_, name) in best.items()}
# --8<-- [end:pick]


def inputs(p: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # A, B and C (written)
    rng = np.random.default_rng(p["m"] * 1_000_003 + p["n"] * 1009 + p["k"])
    a = rng.uniform(-1, 1, (p["m"], p["k"])).astype(np.float32)
    b = rng.uniform(-1, 1, (p["k"], p["n"])).astype(np.float32)
    return a, b, np.zeros((p["m"], p["n"]), np.float32)


def precision(variant: str) -> str:
    return "bf16" if variant.startswith("triton") or variant == "torch/cublas_bf16" else "fp32"


def reference(p: dict) -> dict:  # the float64 product of the same inputs, on the CPU
    a, b, _ = inputs(p)
    return {"c": a.astype(np.float64) @ b.astype(np.float64), "k": p["k"]}


def check(variant: str, c, ref: dict) -> dict:  # sgemm.cu's bounds (reference.cuh)
    bound = 4 * 2.0**-8 if precision(variant) == "bf16" else 8 * math.sqrt(ref["k"]) * 2.0**-24
    err = sg.relative_error(c, ref["c"]) if np.shape(c) == ref["c"].shape else math.inf
    err = err if math.isfinite(err) else 1e300  # results files hold finite numbers
    return {"metric": "relative_frobenius", "value": err, "ok": err <= bound}


def counts(variant: str, p: dict, ref) -> dict:
    m, n, k, item = p["m"], p["n"], p["k"], 2 if precision(variant) == "bf16" else 4
    extra = {"precision": precision(variant)}
    if variant == "triton_tma":  # the autotuner's choice for this size
        extra["config"] = str(getattr(sys.modules["matmul_triton"].matmul_tma_kernel,
                                      "best_config", None) or "")
    if variant.startswith("numba/") and not sg.SIMULATOR:  # compiled by the check run
        regs = sg.KERNELS[variant.removeprefix("numba/")].get_regs_per_thread()
        extra["registers"] = regs if isinstance(regs, int) else max(regs.values())
    if variant == "numba/warptile":  # the tiles this process compiled (a tuning run picks them)
        import sgemm_numba_tiles as t
        extra["tiles"] = [t.WBM, t.WBN, t.WBK, t.WM, t.WN, t.WMITER, t.WNITER, t.WTM, t.WTN,
                          t.BLOCKS_PER_SM]
    return {"flops": 2 * m * n * k, "bytes": item * (m * k + k * n) + 4 * m * n, "extra": extra}


BENCHMARK = Benchmark(
    name="matmul", variants=VARIANTS, cases=CASES, reference=reference, check=check,
    counts=counts, inputs=inputs, probe_params={"m": 64, "n": 64, "k": 64},
    compiled=("numba/warptile", *(("triton", "triton_tma") if HAVE_TORCH_GPU else ())))

if __name__ == "__main__":
    sys.exit(run.main(BENCHMARK))
