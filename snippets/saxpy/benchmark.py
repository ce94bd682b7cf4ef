"""SAXPY's registry: every version of the page, each held to the device copies of its round
(gpu-1 to gpu-3 give the spread).  Run:  python snippets/bench/run.py saxpy --output saxpy.json
"""
from bench import run  # first: its Ctrl-C handler covers the imports below

import sys
from pathlib import Path

import numpy as np

from bench.adapters import CTable, OnDevice, OnHost, pinned
from bench.registry import Benchmark, Case, Variant, same_elements
from saxpy_common import A, make_inputs


def numba(kind):  # a kernel of saxpy_numba_cuda.py, by its name there
    return OnDevice("numba", "saxpy_numba_cuda:saxpy", (kind, A))


def cupy(name):  # a function of saxpy_cupy.py
    return OnDevice("cupy", f"saxpy_cupy:{name}", (A,))


def copy(lib, fn):  # a device copy of x into a new array: the ceiling's candidates
    return OnDevice(lib, fn, take=1, out="like")


# --8<-- [start:register]
VARIANTS = {
    "numba_one": Variant("Numba, one element per thread", step="1", measure=numba("one")),
    "numba_grid_stride": Variant("Numba, grid-stride", step="2", measure=numba("grid_stride")),
    "numba_unrolled": Variant("Numba, four per trip", step="3", measure=numba("unrolled")),
    "numba_vector": Variant("Numba, 16-byte vector", step="4", measure=numba("vector")),
    "numba_forall": Variant("Numba, `forall`, occupancy-chosen blocks", measure=numba("forall")),
    "numba_copy": Variant("`cudaMemcpy` (Numba)", group="copy",
                          measure=copy("numba", lambda x, out: out.copy_to_device(x))),
    "cupy_expression": Variant("CuPy expression", measure=cupy("expression")),
    "cupy_elementwise": Variant("CuPy ElementwiseKernel", measure=cupy("elementwise")),
    "cupy_elementwise_256": Variant("CuPy ElementwiseKernel, 256-thread blocks",
                                    measure=cupy("elementwise_256")),
    "cupy_raw": Variant("CuPy RawKernel, `float4`", measure=cupy("saxpy_raw")),
    "cupy_copy": Variant("`cudaMemcpy` (CuPy)", group="copy", measure=copy(
        "cupy", lambda x, out: out.data.copy_from_device(x.data, x.nbytes))),
    "torch_saxpy": Variant("PyTorch `y.add_(x, alpha=a)`",
                           measure=OnDevice("torch", lambda x, y: y.add_(x, alpha=float(A)))),
    "torch_copy": Variant("PyTorch `copy_`", group="copy",
                          measure=copy("torch", lambda x, out: out.copy_(x))),
    # One program times every kernel of saxpy.cu's table, and reports the rows after it.
    "cuda_c": Variant("CUDA C (every kernel of saxpy.cu)",
                      measure=CTable(Path(__file__).with_name("saxpy.cu"))),
    "cuda_c_one": Variant("CUDA C, one element per thread", step="1", runs=False),
    "cuda_c_grid_stride": Variant("CUDA C, grid-stride", step="2", runs=False),
    "cuda_c_unrolled": Variant("CUDA C, four per trip", step="3", runs=False),
    "cuda_c_float4": Variant("CUDA C, `float4`", step="4", runs=False),
    "cuda_c_copy_memcpy": Variant("`cudaMemcpy` (CUDA C)", group="copy", runs=False),
    "cuda_c_copy_float": Variant("copy kernel, 4-byte accesses", group="copy", runs=False),
    "cuda_c_copy_float4": Variant("copy kernel, `float4`", group="copy", runs=False),
    "numpy": Variant("NumPy (one core)", "cpu", measure=OnHost("saxpy_numpy:saxpy", (A,))),
    "numba_parallel": Variant("Numba parallel (all cores)", "cpu",
                              measure=OnHost("saxpy_numba_cpu:saxpy", (A,))),
    "cpu_copy": Variant("Numba parallel copy", "cpu", group="copy",
                        measure=OnHost("saxpy_numba_cpu:copy", take=1, out="like")),
    "cpu_read": Variant("Numba parallel read (sum)", "cpu", group="copy",
                        measure=OnHost("saxpy_numba_cpu:read", take=1)),
}
GPU = tuple(k for k, v in VARIANTS.items() if v.device == "gpu" and v.runs)
CPU = tuple(k for k, v in VARIANTS.items() if v.device == "cpu")
BAR = ("cuda_c", "numba_vector", "cupy_raw")  # rounds 2 and 3 (cuda_c brings three copies)
CASES = {
    "smoke": Case({"n": 1027}, variants=(*GPU[:6], *CPU), default=False),
    "cpu": Case({"n": 2**26}, variants=CPU),
    "gpu-1": Case({"n": 2**28}, variants=GPU),
    "gpu-2": Case({"n": 2**28}, variants=BAR, note="rounds 2 and 3: the fastest versions only"),
    "gpu-3": Case({"n": 2**28}, variants=BAR),
    **{f"small-2^{e}": Case({"n": 2**e}, variants=("numba_vector", "cuda_c"))
       for e in (10, 16, 22)},
}
# --8<-- [end:register]


PER_ELEMENT = {"saxpy": (12, 2), "copy": (8, 0), "read": (4, 1)}  # bytes, flops per float32


def kind(variant: str) -> str:  # what a row computes
    return "read" if variant == "cpu_read" else VARIANTS[variant].group or "saxpy"


def reference(p: dict) -> dict:  # what every row is checked against
    x, y = make_inputs(p["n"])
    return {"copy": x, "saxpy": A * x + y, "read": float(np.sum(x, dtype=np.float64))}


def check(variant: str, result, ref: dict) -> dict:
    if kind(variant) == "read":  # the sum of halves is exact
        return {"metric": "abs_error", "value": abs(result - ref["read"]),
                "ok": result == ref["read"]}
    return same_elements(result, ref[kind(variant)])


def counts(variant: str, p: dict, ref) -> dict:
    nbytes, flops = PER_ELEMENT[kind(variant)]
    return {"bytes": nbytes * p["n"], "flops": flops * p["n"]}


BENCHMARK = Benchmark(
    name="saxpy", variants=VARIANTS, cases=CASES, reference=reference, check=check, counts=counts,
    inputs=lambda p: tuple(pinned(a) for a in make_inputs(p["n"])),
    compiled=("numba_vector", "numba_parallel"), probe_params={"n": 1024})

if __name__ == "__main__":
    sys.exit(run.main(BENCHMARK))
