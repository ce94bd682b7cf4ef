"""Matrix multiplication, registered with the benchmark runner: every kernel against cuBLAS.

Variants: `cuda_c` runs the built CUDA C binary (snippets/matmul/sgemm.cu, built with cuBLAS),
which checks and times its own kernels and cuBLAS FP32, TF32 and BF16 on the same inputs and
prints one `BENCH {json}` line per measurement; `numba/<kernel>` for each Numba kernel;
`triton` and `triton_tma` for the Triton kernels (BF16 inputs); `torch/cublas_fp32` and
`torch/cublas_bf16`, cuBLAS through PyTorch, timed in the same process just before the Numba and
the Triton kernels they are compared with. MATMUL_TUNE=1 also runs the binary's tuning instances
at every size (a tuning run); MATMUL_TUNED=<its results file> makes a confirming run time, for
each templated CUDA C kernel and size, the instance that `pick` chooses from it. Run it with:

    nvcc -O3 -arch=sm_90a -DWITH_CUBLAS -o build/sgemm snippets/matmul/sgemm.cu -lcublas
    MATMUL_SGEMM=build/sgemm python snippets/bench/run.py matmul --output matmul.json
"""

from __future__ import annotations

from bench import run  # first: its Ctrl-C handler covers the imports below

import importlib.util
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

from bench.runner import Benchmark, Case, Prepared, Variant

import sgemm_numba as sg  # the teaching file beside this one (this script's own folder)

# --8<-- [start:register]
SIZES = {"1024": (1024, 1024, 1024), "2048": (2048, 2048, 2048), "4096": (4096, 4096, 4096),
         "odd": (3001, 4099, 2053),  # odd: no dimension a multiple of a tile or of 4
         "8192": (8192, 8192, 8192)}
BIG = 8192  # at this size only the last kernel of each kind runs (and cuBLAS)
# Triton takes torch tensors (also in its interpreter): without both, its variant is left out.
HAVE_TRITON = all(importlib.util.find_spec(name) for name in ("torch", "triton"))
# cuBLAS through PyTorch needs a GPU: not in the simulator or Triton's interpreter.
HAVE_TORCH_GPU = (HAVE_TRITON and not sg.SIMULATOR
                  and os.environ.get("TRITON_INTERPRET") != "1")
NOTE = "" if HAVE_TRITON else "triton left out: torch and triton are not both installed here"
CASES = {name: Case({"m": m, "n": n, "k": k}, note=NOTE) for name, (m, n, k) in SIZES.items()}
CASES["smoke"] = Case({"m": 40, "n": 36, "k": 20}, default=False, note=NOTE)  # the simulator
NUMBA = [f"numba/{name}" for name in sg.KERNELS]
STEPS = {"naive": ("1", "naive"), "coalesced": ("2", "coalesced"),
         "smem": ("3", "shared-memory tiles"), "blocktile_1d": ("4", "1-D register tile"),
         "blocktile_2d": ("5", "2-D register tile"),
         "vectorized": ("6", "vectorised, transposed"),
         "warptile": ("7", "warp tiles, double buffer"),
         "tensor_core": ("8", "tensor cores, mma.sync (BF16)"),
         "wgmma": ("9", "tensor cores, wgmma + TMA (BF16)")}
# The binary's tuning instances: the names the WT, TC and WG macros of kernels.cuh make.
_TABLE = (Path(__file__).with_name("kernels.cuh")).read_text().split("const Kernel KERNELS")[1]
_FORMS = {"WT": "wt_{}x{}x{}_{}x{}_{}x{}_{}x{}_{}_{}_g{}_k{}", "TC": "tc_{}x{}x{}_{}x{}_s{}_g{}",
          "WG": "wgmma_{}x{}_s{}_g{}_f{}_k{}"}
TUNING = [_FORMS[m].format(*re.findall(r"\d+", args))
          for m, args in re.findall(r"\b(WT|TC|WG)\(([\d, ]+)\)", _TABLE)]
VARIANTS = {
    "cuda_c": Variant("CUDA C (every kernel of sgemm.cu, and cuBLAS)"),
    **{f"cuda_c/{k}": Variant(f"CUDA C, {s} {name}", step=s, runs=False)
       for k, (s, name) in STEPS.items()},
    **{f"cuda_c/{k}": Variant(f"CUDA C tuning instance {k}", group="tuning", runs=False)
       for k in TUNING},
    "cublas_fp32": Variant("cuBLAS FP32", group="ceiling", runs=False),
    "cublas_tf32": Variant("cuBLAS TF32", group="ceiling", runs=False),
    "cublas_bf16": Variant("cuBLAS BF16", group="ceiling", runs=False),
    "torch/cublas_fp32": Variant("cuBLAS FP32, through PyTorch", group="ceiling"),
    **{v: Variant(f"Numba, {STEPS[v.split('/')[1]][0]} {STEPS[v.split('/')[1]][1]}",
                  step=STEPS[v.split("/")[1]][0]) for v in NUMBA},
    "torch/cublas_bf16": Variant("cuBLAS BF16, through PyTorch", group="ceiling"),
    "triton": Variant("Triton (BF16), one tile a program", step="1"),
    "triton_tma": Variant("Triton (BF16), persistent, TMA, autotuned", step="2"),
}
NEEDS = {"triton": HAVE_TRITON, "triton_tma": HAVE_TORCH_GPU,
         "torch/cublas_fp32": HAVE_TORCH_GPU, "torch/cublas_bf16": HAVE_TORCH_GPU}
RUN = tuple(k for k, v in VARIANTS.items() if v.runs and NEEDS.get(k, True))
LAST = ("cuda_c", "torch/cublas_fp32", "numba/warptile", "torch/cublas_bf16", "triton_tma")
CASES = {name: Case(case.params, note=case.note, default=case.default,
                    variants=tuple(v for v in RUN if case.params["m"] < BIG or v in LAST))
         for name, case in CASES.items()}
BINARY_ENV = "MATMUL_SGEMM"  # path of the built sgemm binary (the cuda_c variant needs it)
BIG_KERNELS = "cublas_fp32,cublas_bf16,warptile,tensor_core,wgmma"
# The templated CUDA C kernels and the name prefix of their tuning instances.
TEMPLATES = {"warptile": "wt_", "tensor_core": "tc_", "wgmma": "wgmma_"}


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


def inputs(p: dict) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(p["m"] * 1_000_003 + p["n"] * 1009 + p["k"])
    a = rng.uniform(-1, 1, (p["m"], p["k"])).astype(np.float32)
    b = rng.uniform(-1, 1, (p["k"], p["n"])).astype(np.float32)
    return a, b


def run_binary(p: dict) -> str:
    """The CUDA C binary's output for one size: its kernels, then cuBLAS, as BENCH lines. A
    tuning run keeps only the instances that passed the check; a confirming run reports each
    picked instance under its kernel's name, with the instance in `extra`."""
    binary = os.environ.get(BINARY_ENV)
    if not binary or not os.access(binary, os.X_OK):
        raise RuntimeError(f"set {BINARY_ENV} to the built sgemm binary (got {binary!r})")
    size = f"{p['m']}x{p['n']}x{p['k']}"
    kernels = "all" if p["m"] < BIG else BIG_KERNELS
    tune, picked = os.environ.get("MATMUL_TUNE") == "1", {}
    if tune:
        kernels += ",tune"
    elif os.environ.get("MATMUL_TUNED"):
        picked = pick(json.loads(Path(os.environ["MATMUL_TUNED"]).read_text()), p)
        names = (["cublas_fp32", "cublas_tf32", "cublas_bf16", *STEPS] if p["m"] < BIG
                 else BIG_KERNELS.split(","))
        kernels = ",".join(picked.get(k, k) for k in names)
    proc = subprocess.run([binary, "--bench", "--kernel", kernels, "--repeats", "10", size],
                          capture_output=True, text=True, timeout=600)
    print(proc.stdout, end="", flush=True)  # the binary's own table, for the log
    if proc.returncode != 0 and not tune:
        raise RuntimeError(f"{binary} exited {proc.returncode}: {proc.stderr.strip()[-300:]}")
    instance = {f"cuda_c/{name}": f"cuda_c/{kernel}" for kernel, name in picked.items()}
    lines = []
    for line in proc.stdout.splitlines():
        if line.startswith("BENCH "):
            r = json.loads(line[6:])
            if tune and not r["error"]["ok"] and r["variant"].removeprefix("cuda_c/") in TUNING:
                continue  # a wrong tuning instance is no candidate (the log shows it)
            if r["variant"] in instance:
                r.setdefault("extra", {})["instance"] = r["variant"].removeprefix("cuda_c/")
                r["variant"] = instance[r["variant"]]
            line = "BENCH " + json.dumps(r)
        lines.append(line)
    return "\n".join(lines)


def setup(variant: str, p: dict) -> Prepared:
    if variant == "cuda_c":
        return Prepared(external=lambda: run_binary(p))
    a, b = inputs(p)
    if variant.startswith("triton") or variant.startswith("torch/"):
        return triton_setup(variant, a, b)
    from numba import cuda

    name = variant.split("/", 1)[1]
    d_a, d_b = cuda.to_device(a), cuda.to_device(b)
    d_c = cuda.device_array((p["m"], p["n"]), dtype=np.float32)

    def run():  # copies in, kernel, copy back
        out = cuda.device_array((p["m"], p["n"]), dtype=np.float32)
        sg.matmul(name, cuda.to_device(a), cuda.to_device(b), out)
        return out.copy_to_host()
    return Prepared(run=run, kernel=lambda: sg.matmul(name, d_a, d_b, d_c),
                    fetch=d_c.copy_to_host)


def triton_setup(variant: str, a: np.ndarray, b: np.ndarray) -> Prepared:
    import matmul_triton as mt

    import torch

    if variant == "torch/cublas_fp32":  # cuBLAS FP32 (no TF32), FP32 output
        torch.backends.cuda.matmul.allow_tf32 = False
        x, y = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        out = torch.empty((a.shape[0], b.shape[1]), dtype=torch.float32, device="cuda")
        return Prepared(run=lambda: torch.mm(torch.from_numpy(a).cuda(),
                                             torch.from_numpy(b).cuda()).cpu().numpy(),
                        kernel=lambda: torch.mm(x, y, out=out), fetch=lambda: out.cpu().numpy())
    if mt.INTERPRET:  # the CPU, in Triton's interpreter: FP32 CPU tensors
        x, y = torch.from_numpy(a), torch.from_numpy(b)
        c = torch.empty((a.shape[0], b.shape[1]), dtype=torch.float32)
        return Prepared(run=lambda: (mt.matmul_into(x, y, c), c.numpy().copy())[1],
                        kernel=lambda: mt.matmul_into(x, y, c), fetch=lambda: c.numpy().copy())
    # B is stored transposed (N x K, a Linear layer's weight), as for the CUDA C tensor-core
    # kernels and cuBLAS BF16; the kernel gets the K x N view of it through its strides. Rows
    # are padded to a multiple of 8 elements (16 bytes, as TMA needs), as in the CUDA C runner.
    def operands():
        return mt.padded_bf16(torch.from_numpy(a).cuda()), mt.padded_bf16(
            torch.from_numpy(b.T.copy()).cuda()).T
    into = {"triton": mt.matmul_into, "triton_tma": mt.matmul_tma_into}.get(variant)
    if variant == "torch/cublas_bf16":  # cuBLAS BF16 (BF16 output: PyTorch's mm keeps the type)
        def into(x, y, c):
            torch.mm(x, y, out=c)
    out_type = torch.bfloat16 if variant == "torch/cublas_bf16" else torch.float32
    d_a, d_b = operands()
    d_c = torch.empty((a.shape[0], b.shape[1]), dtype=out_type, device="cuda")

    def run():  # copies in (BF16 rounding on the GPU), kernel, copy back
        x, y = operands()
        out = torch.empty((a.shape[0], b.shape[1]), dtype=out_type, device="cuda")
        into(x, y, out)
        return out.float().cpu().numpy()
    return Prepared(run=run, kernel=lambda: into(d_a, d_b, d_c),
                    fetch=lambda: d_c.float().cpu().numpy())


def precision(variant: str) -> str:
    """Triton takes BF16 inputs on a GPU; its interpreter (NumPy) takes FP32."""
    interpret = os.environ.get("TRITON_INTERPRET") == "1"
    bf16 = variant.startswith("triton") or variant == "torch/cublas_bf16"
    return "bf16" if bf16 and not interpret else "fp32"


def tolerance(variant: str, k: int) -> float:
    """The bounds the CUDA C binary uses: FP32 8 * sqrt(K) * 2^-24; BF16 inputs 4 * 2^-8."""
    return 4 * 2.0**-8 if precision(variant) == "bf16" else 8 * math.sqrt(k) * 2.0**-24


def reference(p: dict) -> dict:
    """The float64 product of the same float32 inputs (on the CPU, all cores)."""
    a, b = inputs(p)
    return {"c": a.astype(np.float64) @ b.astype(np.float64), "k": p["k"]}


def check(variant: str, c, ref: dict) -> dict:
    err = sg.relative_error(c, ref["c"]) if np.shape(c) == ref["c"].shape else math.inf
    err = err if math.isfinite(err) else 1e300  # results files hold finite numbers
    return {"metric": "relative_frobenius", "value": err, "ok": err <= tolerance(variant, ref["k"])}


def counts(variant: str, p: dict, ref) -> dict:
    item = 2 if precision(variant) == "bf16" else 4
    found = {"flops": 2 * p["m"] * p["n"] * p["k"],
             "bytes": item * (p["m"] * p["k"] + p["k"] * p["n"]) + 4 * p["m"] * p["n"],
             "extra": {"precision": precision(variant)}}
    if variant == "triton_tma":  # the autotuner's choice for this size
        import matmul_triton as mt
        best = getattr(mt.matmul_tma_kernel, "best_config", None)
        found["extra"]["config"] = str(best) if best else ""
    if variant.startswith("numba/") and not sg.SIMULATOR:  # compiled by the check run
        regs = sg.KERNELS[variant.split("/", 1)[1]].get_regs_per_thread()
        found["extra"]["registers"] = regs if isinstance(regs, int) else max(regs.values())
    if variant == "numba/warptile":  # the tiles this process compiled (a tuning run picks them)
        import sgemm_numba_tiles as t
        found["extra"]["tiles"] = [t.WBM, t.WBN, t.WBK, t.WM, t.WN, t.WMITER, t.WNITER, t.WTM,
                                   t.WTN, t.BLOCKS_PER_SM]
    return found


BENCHMARK = Benchmark(
    name="matmul", variants=VARIANTS, cases=CASES, setup=setup, reference=reference,
    check=check, counts=counts,
    compiled=("numba/warptile", *(["triton"] if HAVE_TRITON else []),
              *(["triton_tma"] if HAVE_TORCH_GPU else [])),
    probe_params={"m": 64, "n": 64, "k": 64})
# --8<-- [end:register]

if __name__ == "__main__":
    sys.exit(run.main(BENCHMARK))
