"""SAXPY, registered with the benchmark runner: every version of the page, next to device copies.

Run it with:  python snippets/bench/run.py saxpy --output saxpy.json
         (or:  python snippets/saxpy/benchmark.py --output saxpy.json)
(the CUDA C version needs `build/saxpy`, built from snippets/saxpy/saxpy.cu; it is built with
`nvcc -arch=native` when missing). Each GPU round measures, in the same process and at the same
N, the SAXPY kernels and the device copies (cudaMemcpy through Numba, CuPy and CUDA C, and two
CUDA C copy kernels): the fastest copy of a round is the ceiling every kernel of it is held to.
Three rounds (gpu-1, gpu-2, gpu-3) give the spread from one run to the next.
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
from saxpy_common import A, make_inputs

ROOT = Path(__file__).resolve().parents[2]
SOURCE = Path(__file__).with_name("saxpy.cu")
BINARY = Path(os.environ.get("SAXPY_CUDA_BINARY", ROOT / "build" / "saxpy"))
LARGE = 2**28

# --8<-- [start:register]
# The registry: one name per version, with the label the page shows and its step on the page.
VARIANTS = {
    "numba_one": Variant("Numba, one element per thread", step="1"),
    "numba_grid_stride": Variant("Numba, grid-stride", step="2"),
    "numba_unrolled": Variant("Numba, four per trip", step="3"),
    "numba_vector": Variant("Numba, 16-byte vector", step="4"),
    "numba_forall": Variant("Numba, `forall`, occupancy-chosen blocks"),
    "numba_copy": Variant("`cudaMemcpy` (Numba)", group="copy"),
    "cupy_expression": Variant("CuPy expression"),
    "cupy_elementwise": Variant("CuPy ElementwiseKernel"),
    "cupy_elementwise_256": Variant("CuPy ElementwiseKernel, 256-thread blocks"),
    "cupy_raw": Variant("CuPy RawKernel, `float4`"),
    "cupy_copy": Variant("`cudaMemcpy` (CuPy)", group="copy"),
    "torch_saxpy": Variant("PyTorch `y.add_(x, alpha=a)`"),
    "torch_copy": Variant("PyTorch `copy_`", group="copy"),
    "cuda_c": Variant("CUDA C (every kernel of saxpy.cu)"),  # its program reports the rows below
    "cuda_c_one": Variant("CUDA C, one element per thread", step="1", runs=False),
    "cuda_c_grid_stride": Variant("CUDA C, grid-stride", step="2", runs=False),
    "cuda_c_unrolled": Variant("CUDA C, four per trip", step="3", runs=False),
    "cuda_c_float4": Variant("CUDA C, `float4`", step="4", runs=False),
    "cuda_c_copy_memcpy": Variant("`cudaMemcpy` (CUDA C)", group="copy", runs=False),
    "cuda_c_copy_float": Variant("copy kernel, 4-byte accesses", group="copy", runs=False),
    "cuda_c_copy_float4": Variant("copy kernel, `float4`", group="copy", runs=False),
    "numpy": Variant("NumPy (one core)", device="cpu"),
    "numba_parallel": Variant("Numba parallel (all cores)", device="cpu"),
    "cpu_copy": Variant("Numba parallel copy", device="cpu", group="copy"),
    "cpu_read": Variant("Numba parallel read (sum)", device="cpu", group="copy"),
}
GPU = tuple(k for k, v in VARIANTS.items() if v.device == "gpu" and v.runs)
CPU = tuple(k for k, v in VARIANTS.items() if v.device == "cpu")
BAR = ("cuda_c", "numba_vector", "cupy_raw")  # rounds 2 and 3 (cuda_c brings three copies)
CASES = {
    "smoke": Case({"n": 1027}, variants=("numba_one", "numba_grid_stride", "numba_unrolled",
                                         "numba_vector", "numba_forall", "numba_copy", *CPU),
                  default=False),
    "cpu": Case({"n": 2**26}, variants=CPU),
    "gpu-1": Case({"n": LARGE}, variants=GPU),
    "gpu-2": Case({"n": LARGE}, variants=BAR, note="rounds 2 and 3: the fastest versions only"),
    "gpu-3": Case({"n": LARGE}, variants=BAR),
    **{f"small-2^{e}": Case({"n": 2**e}, variants=("numba_vector", "cuda_c"))
       for e in (10, 16, 22)},
}
# --8<-- [end:register]


def is_copy(variant: str) -> bool:
    return VARIANTS[variant].group == "copy"


@functools.lru_cache(maxsize=1)
def inputs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """x and y, in page-locked (pinned) host memory where a GPU is present: the end-to-end
    figures then show the kernel plus copies at the PCIe link's DMA rate."""
    x, y = make_inputs(n)
    from numba import config, cuda

    if config.ENABLE_CUDASIM or not cuda.is_available():
        return x, y
    px, py = cuda.pinned_array(n, np.float32), cuda.pinned_array(n, np.float32)
    px[:], py[:] = x, y
    return px, py


@functools.lru_cache(maxsize=1)
def result_buffer(n: int) -> np.ndarray:
    """Where end-to-end runs copy their result (pinned where a GPU is present)."""
    from numba import config, cuda

    if config.ENABLE_CUDASIM or not cuda.is_available():
        return np.empty(n, np.float32)
    return cuda.pinned_array(n, np.float32)


def reference(p: dict) -> dict:
    x, y = inputs(p["n"])
    return {"x": x, "want": A * x + y, "sum": float(np.sum(x, dtype=np.float64))}


def check(variant: str, result, ref: dict) -> dict:
    if variant == "cpu_read":
        return {"metric": "abs_error", "value": abs(result - ref["sum"]),
                "ok": result == ref["sum"]}
    want = ref["x"] if is_copy(variant) else ref["want"]
    result = np.asarray(result)
    wrong = int(np.count_nonzero(result != want)) if result.shape == want.shape else want.size
    return {"metric": "mismatched_elements", "value": wrong, "ok": wrong == 0}


def counts(variant: str, p: dict, ref) -> dict:
    n = p["n"]
    if variant == "cpu_read":
        return {"bytes": 4 * n, "flops": n}
    if is_copy(variant):
        return {"bytes": 8 * n, "flops": 0}    # read 1, write 1 float32
    return {"bytes": 12 * n, "flops": 2 * n}   # read x and y, write y; a multiply and an add


def cuda_c_output(n: int, repeats: int = 20) -> str:
    """Run the CUDA C binary (building it first if needed); its stdout, BENCH lines included."""
    return external.cuda_program_output(SOURCE, BINARY, [str(n), str(repeats), "--bench"])


# The teaching files are imported where a variant needs them: a machine without CuPy or PyTorch
# still runs the other variants.
def setup_cpu(variant: str, n: int) -> Prepared:
    import saxpy_numba_cpu
    import saxpy_numpy

    x, y0 = inputs(n)
    y = y0.copy()  # updated in place by every call
    if variant == "numpy":
        return Prepared(run=lambda: (saxpy_numpy.saxpy(A, x, y), y)[1])
    if variant == "numba_parallel":
        return Prepared(run=lambda: (saxpy_numba_cpu.saxpy(A, x, y), y)[1])
    if variant == "cpu_copy":
        dst = np.empty_like(x)
        return Prepared(run=lambda: (saxpy_numba_cpu.copy(x, dst), dst)[1])
    return Prepared(run=lambda: saxpy_numba_cpu.read(x))


def on_device(variant: str, n: int, put, empty_like, copy, get, saxpy) -> Prepared:
    """A GPU library's SAXPY or device copy (variant ending in "_copy"), given its operations:
    put(host) -> device array, empty_like(d), copy(dst, src) on the device, get(d, out=None) ->
    host array (into `out` when given), saxpy(d_x, d_y) in place. `kernel` times the device
    work on arrays already there; `run`, end to end, copies the inputs in and the result out."""
    x, y = inputs(n)
    d_x, d_y = put(x), put(y)
    if variant.endswith("_copy"):
        d_c = empty_like(d_x)

        def run_copy():
            src = put(x)
            dst = empty_like(src)
            copy(dst, src)
            return get(dst, result_buffer(n))
        return Prepared(run=run_copy, kernel=lambda: copy(d_c, d_x), fetch=lambda: get(d_c))

    def run():
        dx, dy = put(x), put(y)
        saxpy(dx, dy)
        return get(dy, result_buffer(n))
    return Prepared(run=run, kernel=lambda: saxpy(d_x, d_y), fetch=lambda: get(d_y))


def setup_numba(variant: str, n: int) -> Prepared:
    import saxpy_numba_cuda
    from numba import cuda

    kind = variant.removeprefix("numba_")
    return on_device(variant, n, cuda.to_device, cuda.device_array_like,
                     lambda dst, src: dst.copy_to_device(src),
                     lambda d, out=None: d.copy_to_host(out),
                     lambda dx, dy: saxpy_numba_cuda.saxpy(kind, A, dx, dy))


def setup_cupy(variant: str, n: int) -> Prepared:
    import saxpy_cupy

    cp = saxpy_cupy.cp
    fn = None if variant == "cupy_copy" else saxpy_cupy.KERNELS[variant.removeprefix("cupy_")]
    return on_device(variant, n, cp.asarray, cp.empty_like,
                     lambda dst, src: dst.data.copy_from_device(src.data, src.nbytes),
                     lambda d, out=None: d.get(out=out),
                     lambda dx, dy: fn(A, dx, dy))


def setup_torch(variant: str, n: int) -> Prepared:
    import torch

    dev = torch.device("cuda")

    def get(d, out=None):
        return d.cpu().numpy() if out is None else torch.from_numpy(out).copy_(d).numpy()
    return on_device(variant, n, lambda a: torch.from_numpy(a).to(dev), torch.empty_like,
                     lambda dst, src: dst.copy_(src), get,
                     lambda dx, dy: dy.add_(dx, alpha=float(A)))  # y += a*x, one kernel


def setup(variant: str, p: dict) -> Prepared:
    n = p["n"]
    if VARIANTS[variant].device == "cpu":
        return setup_cpu(variant, n)
    if variant == "cuda_c":
        return Prepared(external=lambda: cuda_c_output(n))
    if variant.startswith("numba_"):
        return setup_numba(variant, n)
    if variant.startswith("cupy_"):
        return setup_cupy(variant, n)
    return setup_torch(variant, n)


BENCHMARK = Benchmark(
    name="saxpy", variants=VARIANTS, cases=CASES, setup=setup, reference=reference, check=check,
    counts=counts, compiled=("numba_vector", "numba_parallel"), probe_params={"n": 1024})

if __name__ == "__main__":
    sys.exit(run.main(BENCHMARK))
