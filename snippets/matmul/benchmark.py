"""Matrix multiplication's registry: each kernel against cuBLAS in its precision, in one process.
MATMUL_TUNE=1: every tuning instance (gpu/matmul.sh)."""
import importlib.util
import os
from pathlib import Path

import numpy as np

from bench.adapters import CTable, Lesson, OnDevice
from bench.registry import Benchmark, Case, Variant
import sgemm_numba as sg  # the teaching file beside this one (this script's own folder)
from launchers import (TEMPLATES, bf16_put, mm, numba_tiles, numba_warptile, pick, to_host,  # noqa
                       triton_config, triton_tma, triton_tma_graph, tuned_instances)

# --8<-- [start:register]
STEPS = {"naive": "1 naive", "coalesced": "2 coalesced", "smem": "3 shared-memory tiles",
         "blocktile_1d": "4 1-D register tile", "blocktile_2d": "5 2-D register tile",
         "vectorized": "6 vectorised, transposed", "warptile": "7 warp tiles, double buffer",
         "tensor_core": "8 tensor cores, mma.sync (BF16)",
         "wgmma": "9 tensor cores, wgmma + TMA (BF16)"}
CUBLAS, PADDED = ("cublas_fp32", "cublas_tf32", "cublas_bf16"), "cublas_bf16_padded_k"
BIG, BIG_KERNELS = 8192, ("cublas_fp32", "cublas_bf16", "warptile", "tensor_core", "wgmma")
TUNE = os.environ.get("MATMUL_TUNE") == "1"  # a tuning run: every instance of the table

def kernels(p: dict) -> dict[str, str]:  # the table rows run at a size: {row: name reported}
    names = [*CUBLAS, *STEPS] if p["m"] < BIG else list(BIG_KERNELS)
    names = ["cublas_bf16"] if p.get("cublas_only") else names
    if p["k"] % 8:  # the BF16 kernels compute over K rounded up to 8 (zeros): cuBLAS at that K
        names.insert(names.index("cublas_bf16") + 1, PADDED)
    if TUNE and not p.get("cublas_only"):  # every instance, each under its own name
        names.append("tune")
    picked = {} if TUNE else tuned_instances(p)  # {} without a tuning run's file
    return {picked.get(k, k): k for k in names}

SGEMM = CTable(Path(__file__).with_name("sgemm.cu"), repeats=10, kernels=kernels,  # sm_90a:
               flags=("-arch=sm_90a", "-DWITH_CUBLAS", "-lcublas"), skip_failed=TUNE)  # H100/H200
HAVE_TORCH_GPU = (all(importlib.util.find_spec(m) for m in ("torch", "triton"))
                  and not sg.SIMULATOR and os.environ.get("TRITON_INTERPRET") != "1")
VARIANTS = {
    "cuda_c": Variant("CUDA C (every kernel of sgemm.cu, and cuBLAS)", measure=SGEMM),
    **{f"cuda_c/{k}": Variant(f"CUDA C, {v}", step=v.split()[0], runs=False)
       for k, v in STEPS.items()},
    **{f"cuda_c/{k}": Variant(f"CUDA C tuning instance {k}", group="tuning", runs=False)
       for k in (SGEMM.names("tune") if TUNE else ())},  # the instances, from the built runner
    **{k: Variant(f"cuBLAS {k[7:].upper()}", group="ceiling", runs=False) for k in CUBLAS},
    PADDED: Variant("cuBLAS BF16, K rounded up to 8 (zeros)", group="ceiling", runs=False),
    "torch/cublas_fp32": Variant("cuBLAS FP32, through PyTorch", group="ceiling",
                                 measure=OnDevice("torch", mm, (True,))),
    **{f"numba/{k}": Variant(f"Numba, {STEPS[k]}", step=STEPS[k].split()[0], measure=OnDevice(
        "numba", numba_warptile) if k == "warptile" else OnDevice("numba", sg.matmul, (k,)))
       for k in sg.KERNELS},  # the warp tile in the tuning run's tiles for each size
    "torch/cublas_bf16": Variant("cuBLAS BF16, through PyTorch", group="ceiling", measure=Lesson(
        None, bf16_put("bfloat16"), lambda x, y, c: mm(False, x, y, c), get=to_host)),
    "triton": Variant("Triton (BF16), one tile a program", step="1", measure=Lesson(
        None, bf16_put(), "matmul_triton:matmul_into", get=to_host)),
    "triton_tma": Variant("Triton (BF16), persistent, TMA, tuned per size", step="2",
                          measure=Lesson(None, bf16_put(), triton_tma, get=to_host)),
    "triton_tma_graph": Variant("Triton (BF16), persistent, TMA, from a CUDA graph", step="3",
                                measure=Lesson(None, bf16_put(), triton_tma_graph, get=to_host)),
}
BF16 = ("torch/cublas_bf16", "triton", "triton_tma", "triton_tma_graph")  # the others: FP32
TORCH = ("torch/cublas_fp32", *BF16)  # need torch, triton and a GPU
RUN = tuple(k for k, v in VARIANTS.items() if v.runs and (HAVE_TORCH_GPU or k not in TORCH))
LAST = ("cuda_c", "numba/warptile", *(v for v in TORCH if v != "triton"))  # the 8192 rows
NOTE = "" if HAVE_TORCH_GPU else "triton and torch rows left out: they need torch, triton, a GPU"
SIZES = {"1024": (1024,) * 3, "2048": (2048,) * 3, "4096": (4096,) * 3,
         "odd": (3001, 4099, 2053),  # odd: no dimension a multiple of a tile or of 4
         "8192": (BIG,) * 3}  # at this size only the last kernel of each kind runs (and cuBLAS)
CASES = {name: Case({"m": m, "n": n, "k": k}, note=NOTE, variants=tuple(
    v for v in RUN if m < BIG or v in LAST)) for name, (m, n, k) in SIZES.items()}
# The odd shape with one column more: C's rows (4,100 floats) are a multiple of 16 bytes, which
# the odd shape's (4,099) are not. cuBLAS BF16 alone, to see whether that alignment slows it.
CASES["odd-aligned-c"] = Case({"m": 3001, "n": 4100, "k": 2053, "cublas_only": 1},
                              variants=("cuda_c",), note="cuBLAS BF16 alone")
CASES["smoke"] = Case({"m": 40, "n": 36, "k": 20}, default=False, note=NOTE)  # the simulator
# --8<-- [end:register]

def inputs(p: dict) -> tuple[np.ndarray, ...]:  # A and B (the lesson's), C (written)
    m, n, k = p["m"], p["n"], p["k"]
    a, b = sg.make_inputs(m, n, k, seed=m * 1_000_003 + n * 1009 + k)
    return a, b, np.zeros((m, n), np.float32)

def reference(p: dict) -> dict:  # the float64 product of the same inputs, on the CPU
    a, b, _ = inputs(p)
    return {"c": a.astype(np.float64) @ b.astype(np.float64), "k": p["k"]}

def check(variant: str, c, ref: dict) -> dict:  # sgemm.cu's bounds; files hold finite errors
    bound = 4 * 2.0**-8 if variant in BF16 else sg.tolerance(ref["k"])
    err = min(sg.relative_error(c, ref["c"]) if np.shape(c) == ref["c"].shape else 1e300, 1e300)
    return {"metric": "relative_frobenius", "value": err, "ok": err <= bound}

def counts(variant: str, p: dict, ref) -> dict:
    m, n, k, bf16 = p["m"], p["n"], p["k"], variant in BF16
    extra = {"precision": "bf16" if bf16 else "fp32"}
    if variant.startswith("triton_tma"):  # its config at this size: the tuning run's, or default
        extra["config"] = triton_config(m, n, k)
    if variant.startswith("numba/") and not sg.SIMULATOR:  # compiled by the check run
        regs = sg.KERNELS[variant.removeprefix("numba/")].get_regs_per_thread()
        extra["registers"] = regs if isinstance(regs, int) else max(regs.values())
    if variant == "numba/warptile":  # the tiles its last call compiled (launchers.numba_warptile)
        extra["tiles"] = numba_tiles()
    return {"flops": 2 * m * n * k, "bytes": (2 if bf16 else 4) * (m * k + k * n) + 4 * m * n,
            "extra": extra}

BENCHMARK = Benchmark("matmul", VARIANTS, CASES, reference, check, counts, inputs,
                      probe_params={"m": 64, "n": 64, "k": 64}, compiled=(
                          "numba/warptile", *(("triton", "triton_tma") if HAVE_TORCH_GPU else ())))
