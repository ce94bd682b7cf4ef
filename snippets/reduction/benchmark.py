"""Reduction, registered with the benchmark runner: every sum of the page next to the read-only
kernels it is held to, CuPy's and PyTorch's sums, and the row-wise softmax next to a copy.

Run it with:  python snippets/bench/run.py reduction --output reduction.json
         (or:  python snippets/reduction/benchmark.py --output reduction.json)
(the CUDA C version needs `build/reduce`, built from snippets/reduction/reduce.cu; it is built
with `nvcc -arch=native` when missing). Each sum round measures, in the same process and at the
same N, the sums and the read-only kernels (CUDA C and Numba): the fastest read of a round is
the ceiling every sum of it is held to. The softmax case is held to the fastest copy of its own.
"""

from __future__ import annotations

from bench import run  # first: its Ctrl-C handler covers the imports below

import functools
import os
import sys
from pathlib import Path

import numpy as np

from bench import external
from bench.runner import Benchmark, Case, Prepared, Variant
from reduce_common import check_sum, error_bound, exact_sum, make_input

ROOT = Path(__file__).resolve().parents[2]
SOURCE = Path(__file__).with_name("reduce.cu")
BINARY = Path(os.environ.get("REDUCE_CUDA_BINARY", ROOT / "build" / "reduce"))
LARGE = 2**28
ROWS, COLS = 2**15, 4096  # softmax: 32768 rows of 4096 float32 (512 MiB)

# --8<-- [start:register]
VARIANTS = {
    "numba_atomic": Variant("Numba, `atomic.add` per element", step="1"),
    "numba_shared": Variant("Numba, shared-memory tree", step="2"),
    "numba_shuffle": Variant("Numba, warp shuffles", step="3"),
    "numba_vector": Variant("Numba, 16-byte loads, grid-stride", step="4"),
    "numba_one_pass": Variant("Numba, one pass, last block finishes", step="5"),
    "numba_read_vector": Variant("Numba, read only (16-byte loads, grid-stride)", group="read"),
    "cuda_c": Variant("CUDA C (every kernel of reduce.cu)"),  # its program reports the rows below
    "cuda_c_atomic": Variant("CUDA C, `atomicAdd` per element", step="1", runs=False),
    "cuda_c_shared": Variant("CUDA C, shared-memory tree", step="2", runs=False),
    "cuda_c_shuffle": Variant("CUDA C, warp shuffles", step="3", runs=False),
    "cuda_c_vector": Variant("CUDA C, `float4`, grid-stride", step="4", runs=False),
    "cuda_c_one_pass": Variant("CUDA C, one pass, last block finishes", step="5", runs=False),
    "cuda_c_read_vector": Variant("CUDA C, read only (`float4`, grid-stride)", group="read",
                                  runs=False),
    "cuda_c_read_float4": Variant("CUDA C, read only (one `float4` per thread)", group="read",
                                  runs=False),
    "cupy_sum": Variant("CuPy `cp.sum`", group="library"),
    "torch_sum": Variant("PyTorch `torch.sum`", group="library"),
    "numba_softmax": Variant("Numba softmax, one block per row, three passes", group="softmax"),
    "numba_softmax_held": Variant("Numba softmax, one block per row, row held in registers",
                                  group="softmax"),
    "torch_softmax": Variant("PyTorch `torch.softmax`", group="softmax"),
    "torch_copy": Variant("PyTorch `copy_` of the matrix", group="copy"),
}
SUMS = tuple(k for k, v in VARIANTS.items() if v.runs and v.group not in ("softmax", "copy"))
NUMBA = tuple(k for k in SUMS if k.startswith("numba_"))
SOFTMAX = ("numba_softmax", "numba_softmax_held", "torch_softmax", "torch_copy")
CASES = {
    "smoke": Case({"n": 1027}, variants=NUMBA, default=False),
    "gpu-1": Case({"n": LARGE}, variants=SUMS),
    "gpu-2": Case({"n": LARGE}, variants=("cuda_c", "numba_vector", "numba_one_pass",
                                          "numba_read_vector", "cupy_sum", "torch_sum"),
                  note="round 2: the fastest versions only"),
    "softmax": Case({"rows": ROWS, "cols": COLS}, variants=SOFTMAX),
}
# --8<-- [end:register]


@functools.lru_cache(maxsize=2)
def host_array(shape: tuple, kind: str) -> np.ndarray:
    """The inputs, in page-locked (pinned) host memory where a GPU is present."""
    if kind == "sum":
        x = make_input(shape[0])
    else:
        x = np.random.default_rng(1).uniform(-4, 4, shape).astype(np.float32)
    from numba import config, cuda

    if config.ENABLE_CUDASIM or not cuda.is_available():
        return x
    pinned = cuda.pinned_array(x.shape, np.float32)
    pinned[...] = x
    return pinned


def reference(p: dict) -> dict:
    if "n" in p:
        x = host_array((p["n"],), "sum")
        return {"x": x, "exact": exact_sum(x),
                "abs_sum": float(np.sum(np.abs(x), dtype=np.float64))}
    return {"x": host_array((p["rows"], p["cols"]), "softmax")}


def library_depth(n: int) -> float:
    """CuPy's and PyTorch's summation order is not documented: they are held to the bound of
    the shared-memory step (a tree of 256 per block, then one atomic add per block)."""
    return 8 + -(-n // 256)


def check(variant: str, result, ref: dict) -> dict:
    from reduce_numba import depth
    import softmax_numba

    group = VARIANTS[variant].group
    if group == "read":
        return {"metric": "none (reads only)", "value": 0, "ok": True}
    if group == "copy":
        wrong = int(np.count_nonzero(np.asarray(result) != ref["x"]))
        return {"metric": "mismatched_elements", "value": wrong, "ok": wrong == 0}
    if group == "softmax":
        try:
            threads = softmax_numba.THREADS if variant.startswith("numba") else 1  # 1: any order
            return {"metric": "max_relative_error", "value": softmax_numba.check(
                np.asarray(result), ref["x"], threads), "ok": True}
        except ValueError as exc:
            return {"metric": "max_relative_error", "value": float("nan"), "ok": False,
                    "why": str(exc)}
    n = ref["x"].size
    h = library_depth(n) if group == "library" else depth(variant.removeprefix("numba_"), n)
    error, bound = abs(float(result) - ref["exact"]), error_bound(h, ref["abs_sum"])
    return {"metric": "abs_error", "value": error, "ok": error <= bound,
            "bound": bound if np.isfinite(bound) else None}


def counts(variant: str, p: dict, ref) -> dict:
    if "n" in p:
        return {"bytes": 4 * p["n"], "flops": p["n"]}  # read each float once, one add each
    return {"bytes": 8 * p["rows"] * p["cols"], "flops": 0}  # read x once, write y once


def cuda_c_output(n: int, repeats: int = 20) -> str:
    """Run the CUDA C binary (building it first if needed); its stdout, BENCH lines included."""
    return external.cuda_program_output(SOURCE, BINARY, [str(n), str(repeats), "--bench"])


def on_device(x, put, work, get) -> Prepared:
    """`work(d_x)` launches on a device array and returns what `get` turns into the result:
    `kernel` times it on the array already there, `run` copies x in first."""
    d_x = put(x)
    last = {}

    def kernel():
        last["out"] = work(d_x)
    return Prepared(run=lambda: get(work(put(x))), kernel=kernel, fetch=lambda: get(last["out"]))


def setup_numba(variant: str, x) -> Prepared:
    from numba import cuda

    if variant.startswith("numba_softmax"):
        import softmax_numba

        outputs = {}  # one output per input shape, allocated once: Numba has no caching allocator

        def soft(d_x):
            if d_x.shape not in outputs:
                outputs[d_x.shape] = cuda.device_array(d_x.shape, np.float32)
            d_y = outputs[d_x.shape]
            softmax_numba.softmax(d_x, d_y, held=variant.endswith("_held"))
            return d_y
        return on_device(x, cuda.to_device, soft, lambda d: d.copy_to_host())
    import reduce_numba

    out = cuda.device_array(1, np.float32)

    def total(d_x):
        reduce_numba.total(variant.removeprefix("numba_"), d_x, out)
        return out
    return on_device(x, cuda.to_device, total, lambda d: float(d.copy_to_host()[0]))


def setup_cupy(x) -> Prepared:
    import cupy as cp

    out = cp.empty((), cp.float32)
    return on_device(x, cp.asarray, lambda d: cp.sum(d, out=out), lambda d: float(d.get()))


def setup_torch(variant: str, x) -> Prepared:
    import torch

    put = lambda a: torch.from_numpy(a).to("cuda")  # noqa: E731
    if variant == "torch_sum":
        return on_device(x, put, torch.sum, lambda d: float(d.item()))
    if variant == "torch_softmax":
        return on_device(x, put, lambda d: torch.softmax(d, dim=1), lambda d: d.cpu().numpy())
    dst = torch.empty(x.shape, dtype=torch.float32, device="cuda")
    return on_device(x, put, lambda d: dst.copy_(d), lambda d: d.cpu().numpy())


def setup(variant: str, p: dict) -> Prepared:
    if variant == "cuda_c":
        return Prepared(external=lambda: cuda_c_output(p["n"]))
    x = reference(p)["x"]
    if variant.startswith("numba_"):
        return setup_numba(variant, x)
    if variant == "cupy_sum":
        return setup_cupy(x)
    return setup_torch(variant, x)


BENCHMARK = Benchmark(
    name="reduction", variants=VARIANTS, cases=CASES, setup=setup, reference=reference,
    check=check, counts=counts, compiled=("numba_one_pass",), probe_params={"n": 1024})

if __name__ == "__main__":
    sys.exit(run.main(BENCHMARK))
