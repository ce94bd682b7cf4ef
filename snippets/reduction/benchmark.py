"""Reduction's registry: the sums against their round's fastest read-only kernel, softmax and
RMSNorm against a copy. Run: python snippets/bench/run.py reduction (C rows: nvcc builds them)"""

from functools import partial
from pathlib import Path

import numpy as np

from bench.adapters import CTable, DeviceCopy, OnDevice, pinned, resolve
from bench.registry import (Benchmark, Case, UNCHECKED, Variant, lesson_check, per_case,
                            same_elements, within)
from reduce_common import error_bound, exact_sum, make_input

LARGE = 2**28
ROWS, COLS = 2**15, 4096  # softmax and RMSNorm: 32768 rows of 4096 float32 (512 MiB)
# --8<-- [start:register]
reported = partial(Variant, runs=False)  # a row that a CUDA C table's program reports
total = partial(OnDevice, "numba", "reduce_numba:total", out=(1,))  # a sum, into a 1-array
lesson = Path(__file__).with_name  # a CUDA C lesson beside this file
STEPS = (("atomic", "`atomic.add` per element", "`atomicAdd` per element"),  # Numba's, CUDA C's
         ("shared", "shared-memory tree", "shared-memory tree"),
         ("shuffle", "warp shuffles", "warp shuffles"),
         ("vector", "16-byte loads, grid-stride", "`float4`, grid-stride"),
         ("one_pass", "one pass, last block finishes", "one pass, last block finishes"))
SOFTMAX = {"numba_softmax": ("three_pass", "three passes"),  # key: (version, label)
           "numba_softmax_held": ("held", "row held in registers"),
           "numba_softmax_vector": ("vector", "held, 16-byte loads")}
VARIANTS = {
    **{f"numba_{k}": Variant(f"Numba, {label}", step=str(i), measure=total((k,)))
       for i, (k, label, _) in enumerate(STEPS, 1)},
    "numba_read_vector": Variant("Numba, read only (16-byte loads, grid-stride)", group="read",
                                 measure=total(("read_vector",))),
    "cuda_c": Variant("CUDA C (every kernel of reduce.cu)", measure=CTable(lesson("reduce.cu"))),
    **{f"cuda_c_{k}": reported(f"CUDA C, {label}", step=str(i))
       for i, (k, _, label) in enumerate(STEPS, 1)},
    "cuda_c_read_vector": reported("CUDA C, read only (`float4`, grid-stride)", group="read"),
    "cuda_c_read_float4": reported("CUDA C, read only (one `float4` per thread)", group="read"),
    "cupy_sum": Variant("CuPy `cp.sum`", group="library",
                        measure=OnDevice("cupy", lambda x, out: x.sum(out=out), out=())),
    "torch_sum": Variant("PyTorch `torch.sum`", group="library",
                         measure=OnDevice("torch", lambda x: x.sum(), out="return")),
    **{k: Variant(f"Numba softmax, {label}", group="softmax", measure=OnDevice(
        "numba", "softmax_numba:softmax", (v,), out="like")) for k, (v, label) in SOFTMAX.items()},
    "torch_softmax": Variant("PyTorch `torch.softmax`", group="softmax",
                             measure=OnDevice("torch", lambda x: x.softmax(dim=1), out="return")),
    "numba_rmsnorm": Variant("Numba RMSNorm, held, 16-byte loads and stores", group="rmsnorm",
                             measure=OnDevice("numba", "rmsnorm_numba:rmsnorm", out="like")),
    "torch_rmsnorm": Variant("PyTorch `rms_norm`", group="rmsnorm", measure=OnDevice(
        "torch", lambda x, w: resolve("torch.nn.functional:rms_norm")(
            x, (COLS,), w, resolve("rmsnorm_numba:EPS")), out="return")),
    # rows.cu's program times its kernels for the case's operation (p["op"]), and its copy.
    "cuda_c_rows": Variant("CUDA C (rows.cu)", group="rows", measure=CTable(  # not the sums'
        lesson("rows.cu"), kernels=lambda p: {k: k for k in VARIANTS if k.startswith(
            (f"cuda_c_{p['op']}_", "cuda_c_copy"))})),
    **{f"cuda_c_{op}_{t}": reported(f"CUDA C {name}, {t} threads a row, `float4`", group=op)
       for op, name in (("softmax", "softmax"), ("rmsnorm", "RMSNorm")) for t in (128, 256, 512)},
    "cuda_c_copy": reported("CUDA C `cudaMemcpy` of the matrix", group="copy"),
    "torch_copy": Variant("PyTorch `copy_` of the matrix", group="copy",
                          measure=DeviceCopy("torch")),
}
running = lambda *groups: tuple(k for k, v in VARIANTS.items() if v.runs and v.group in groups)
SUMS = running("", "read", "library")
CASES = {
    "smoke": Case({"n": 1027}, variants=SUMS[:6], default=False),  # the Numba rows
    "gpu-1": Case({"n": LARGE}, variants=SUMS),
    "gpu-2": Case({"n": LARGE}, note="round 2: the fastest versions only", variants=(
        "cuda_c", "numba_vector", "numba_one_pass", "numba_read_vector", "cupy_sum", "torch_sum")),
    **{op: Case({"n": ROWS, "cols": COLS, "op": op},
                variants=(*running(op, "copy"), "cuda_c_rows")) for op in ("softmax", "rmsnorm")},
}
# --8<-- [end:register]


@per_case
def host_input(p: dict) -> tuple:
    if "cols" not in p:  # the inputs of a case, pinned on a GPU machine: x (and RMSNorm's weights)
        return (pinned(make_input(p["n"])),)
    rng = np.random.default_rng(1)
    x, w = rng.uniform(-4, 4, (p["n"], p["cols"])), rng.uniform(0.5, 1.5, p["cols"])
    return (pinned(x.astype(np.float32)), *[w.astype(np.float32)] * (p["op"] == "rmsnorm"))


def reference(p: dict) -> dict:
    x, *w = host_input(p)  # w: [] or [RMSNorm's weights]
    return {"x": x, "w": w} if "cols" in p else {
        "x": x, "exact": exact_sum(x), "abs_sum": float(np.sum(np.abs(x), dtype=np.float64))}


def check(variant: str, result, ref: dict) -> dict:
    group, threads = VARIANTS[variant].group, 256 if variant.startswith("numba") else 1  # 1: any
    if group in ("read", "copy"):
        return UNCHECKED if group == "read" else same_elements(result, ref["x"])
    if group in ("softmax", "rmsnorm"):  # the lesson's own check, at the row's threads a block
        return lesson_check("max_relative_error", resolve(f"{group}_numba:check"),
                            np.asarray(result), ref["x"], *ref["w"], threads)
    # CuPy's and PyTorch's summation order is not documented: they are held to the bound of
    # the shared-memory step (a tree of 256 per block, then one atomic add per block).
    step = "shared" if group == "library" else variant[6:]  # "numba_" and the step
    bound = error_bound(resolve("reduce_numba:depth")(step, ref["x"].size), ref["abs_sum"])
    return within(np.asarray(result).reshape(-1)[0], ref["exact"], bound)


def counts(variant: str, p: dict, ref) -> dict:  # bytes: read each float once (and write it once)
    if "cols" not in p:
        return {"bytes": 4 * p["n"], "flops": p["n"]}  # one add per element
    weights = 4 * p["cols"] * (VARIANTS[variant].group == "rmsnorm")  # RMSNorm's, read once
    return {"bytes": 8 * p["n"] * p["cols"] + weights, "flops": 0}


BENCHMARK = Benchmark("reduction", VARIANTS, CASES, reference, check, counts, host_input,
                      compiled=("numba_one_pass",), probe_params={"n": 1024})
