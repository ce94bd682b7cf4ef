"""SAXPY's registry: rows held to their round's copies. Run: python snippets/bench/run.py saxpy"""
from pathlib import Path

from bench.adapters import CTable, DeviceCopy, OnDevice, OnHost
from bench.registry import Benchmark, Case, Variant, elementwise
from saxpy_common import A, make_inputs
numba = lambda kernel: OnDevice("numba", "saxpy_numba_cuda:saxpy", (kernel, A))  # by their names
cupy = lambda fn: OnDevice("cupy", f"saxpy_cupy:{fn}", (A,))  # in the lessons
cpu = lambda label, fn, *args, group="", **kw: Variant(  # a function of saxpy_numba_cpu.py
    label, "cpu", group=group, measure=OnHost(f"saxpy_numba_cpu:{fn}", args, **kw))
# --8<-- [start:register]
STEPS = {"one": "one element per thread", "grid_stride": "grid-stride", "unrolled": "four per trip"}
VARIANTS = {
    **{f"numba_{k}": Variant(f"Numba, {label}", step=str(i), measure=numba(k))
       for i, (k, label) in enumerate({**STEPS, "vector": "16-byte vector"}.items(), 1)},
    "numba_forall": Variant("Numba, `forall`, occupancy-chosen blocks", measure=numba("forall")),
    "numba_copy": Variant("`cudaMemcpy` (Numba)", group="copy", measure=DeviceCopy("numba")),
    "cupy_expression": Variant("CuPy expression", measure=cupy("expression")),
    "cupy_elementwise": Variant("CuPy ElementwiseKernel", measure=cupy("elementwise")),
    "cupy_elementwise_256": Variant("CuPy ElementwiseKernel, 256-thread blocks",
                                    measure=cupy("elementwise_256")),
    "cupy_raw": Variant("CuPy RawKernel, `float4`", measure=cupy("saxpy_raw")),
    "cupy_copy": Variant("`cudaMemcpy` (CuPy)", group="copy", measure=DeviceCopy("cupy")),
    "torch_saxpy": Variant("PyTorch `y.add_(x, alpha=a)`",
                           measure=OnDevice("torch", lambda x, y: y.add_(x, alpha=float(A)))),
    "torch_copy": Variant("PyTorch `copy_`", group="copy", measure=DeviceCopy("torch")),
    "cuda_c": Variant("CUDA C (every kernel of saxpy.cu)",
                      measure=CTable(Path(__file__).with_name("saxpy.cu"))),
    **{f"cuda_c_{k}": Variant(f"CUDA C, {label}", step=str(i), runs=False)  # saxpy.cu's rows
       for i, (k, label) in enumerate({**STEPS, "float4": "`float4`"}.items(), 1)},
    "cuda_c_copy_memcpy": Variant("`cudaMemcpy` (CUDA C)", group="copy", runs=False),
    "cuda_c_copy_float": Variant("copy kernel, 4-byte accesses", group="copy", runs=False),
    "cuda_c_copy_float4": Variant("copy kernel, `float4`", group="copy", runs=False),
    "numpy": Variant("NumPy (one core)", "cpu", measure=OnHost("saxpy_numpy:saxpy", (A,))),
    "numba_parallel": cpu("Numba parallel (all cores)", "saxpy", A),
    "cpu_copy": cpu("Numba parallel copy", "copy", group="copy", take=1, out="like"),
    "cpu_read": cpu("Numba parallel read (sum)", "read", group="copy", take=1),
}
GPU, CPU = (tuple(k for k, v in VARIANTS.items() if v.runs and v.device == d)
             for d in ("gpu", "cpu"))
BAR = ("cuda_c", "numba_vector", "cupy_raw")  # rounds 2, 3: the spread (cuda_c brings 3 copies)
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
kind = lambda v: "read" if v == "cpu_read" else VARIANTS[v].group or "saxpy"  # what a row computes
BENCHMARK = Benchmark("saxpy", VARIANTS, CASES, **elementwise(A, make_inputs, kind),
                      compiled=("numba_vector", "numba_parallel"), probe_params={"n": 1024})
