"""Reduction's registry: the sums next to the read-only kernels each round is held to (the fastest
read of a round is its ceiling), CuPy's and PyTorch's sums, and the softmax next to a copy.
Run: python snippets/bench/run.py reduction   (the CUDA C rows build bench/runner.cu with nvcc)"""
from bench import run  # first: its Ctrl-C handler covers the imports below

from pathlib import Path

import numpy as np

from bench.adapters import CTable, OnDevice, pinned, resolve
from bench.registry import (Benchmark, Case, UNCHECKED, Variant, lesson_check, per_case,
                            same_elements, within)
from reduce_common import error_bound, exact_sum, make_input

LARGE = 2**28
ROWS, COLS = 2**15, 4096  # softmax: 32768 rows of 4096 float32 (512 MiB)


def numba(kind):  # a step of reduce_numba.py, by its name there; the sum lands in a 1-array
    return OnDevice("numba", "reduce_numba:total", (kind,), out=(1,))


def softmax(held):  # softmax_numba.py's kernel, into a new matrix like the input
    return OnDevice("numba", lambda x, y: resolve("softmax_numba:softmax")(x, y, held=held),
                    out="like")


# --8<-- [start:register]
VARIANTS = {
    "numba_atomic": Variant("Numba, `atomic.add` per element", step="1", measure=numba("atomic")),
    "numba_shared": Variant("Numba, shared-memory tree", step="2", measure=numba("shared")),
    "numba_shuffle": Variant("Numba, warp shuffles", step="3", measure=numba("shuffle")),
    "numba_vector": Variant("Numba, 16-byte loads, grid-stride", step="4",
                            measure=numba("vector")),
    "numba_one_pass": Variant("Numba, one pass, last block finishes", step="5",
                              measure=numba("one_pass")),
    "numba_read_vector": Variant("Numba, read only (16-byte loads, grid-stride)", group="read",
                                 measure=numba("read_vector")),
    # One program times every kernel of reduce.cu's table, and reports the rows after it.
    "cuda_c": Variant("CUDA C (every kernel of reduce.cu)",
                      measure=CTable(Path(__file__).with_name("reduce.cu"))),
    "cuda_c_atomic": Variant("CUDA C, `atomicAdd` per element", step="1", runs=False),
    "cuda_c_shared": Variant("CUDA C, shared-memory tree", step="2", runs=False),
    "cuda_c_shuffle": Variant("CUDA C, warp shuffles", step="3", runs=False),
    "cuda_c_vector": Variant("CUDA C, `float4`, grid-stride", step="4", runs=False),
    "cuda_c_one_pass": Variant("CUDA C, one pass, last block finishes", step="5", runs=False),
    "cuda_c_read_vector": Variant("CUDA C, read only (`float4`, grid-stride)", group="read",
                                  runs=False),
    "cuda_c_read_float4": Variant("CUDA C, read only (one `float4` per thread)", group="read",
                                  runs=False),
    "cupy_sum": Variant("CuPy `cp.sum`", group="library",
                        measure=OnDevice("cupy", lambda x, out: x.sum(out=out), out=())),
    "torch_sum": Variant("PyTorch `torch.sum`", group="library",
                         measure=OnDevice("torch", lambda x: x.sum(), out="return")),
    "numba_softmax": Variant("Numba softmax, one block per row, three passes", group="softmax",
                             measure=softmax(False)),
    "numba_softmax_held": Variant("Numba softmax, one block per row, row held in registers",
                                  group="softmax", measure=softmax(True)),
    "torch_softmax": Variant("PyTorch `torch.softmax`", group="softmax",
                             measure=OnDevice("torch", lambda x: x.softmax(dim=1), out="return")),
    "torch_copy": Variant("PyTorch `copy_` of the matrix", group="copy",
                          measure=OnDevice("torch", lambda x, out: out.copy_(x), out="like")),
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


@per_case
def host_input(p: dict) -> np.ndarray:
    """The input of a case, in pinned memory on a GPU machine."""
    if "n" in p:
        return pinned(make_input(p["n"]))
    rng = np.random.default_rng(1)
    return pinned(rng.uniform(-4, 4, (p["rows"], p["cols"])).astype(np.float32))


def reference(p: dict) -> dict:
    x = host_input(p)
    if "n" in p:
        return {"x": x, "exact": exact_sum(x),
                "abs_sum": float(np.sum(np.abs(x), dtype=np.float64))}
    return {"x": x}


def check(variant: str, result, ref: dict) -> dict:
    from reduce_numba import depth
    import softmax_numba

    group = VARIANTS[variant].group
    if group in ("read", "copy"):
        return UNCHECKED if group == "read" else same_elements(result, ref["x"])
    if group == "softmax":
        threads = softmax_numba.THREADS if variant.startswith("numba") else 1  # 1: any order
        return lesson_check("max_relative_error", softmax_numba.check, np.asarray(result),
                            ref["x"], threads)
    # CuPy's and PyTorch's summation order is not documented: they are held to the bound of
    # the shared-memory step (a tree of 256 per block, then one atomic add per block).
    n = ref["x"].size
    h = (depth("shared", n, threads=256) if group == "library"
         else depth(variant.removeprefix("numba_"), n))
    return within(np.asarray(result).reshape(-1)[0], ref["exact"], error_bound(h, ref["abs_sum"]))


def counts(variant: str, p: dict, ref) -> dict:
    if "n" in p:
        return {"bytes": 4 * p["n"], "flops": p["n"]}  # read each float once, one add each
    return {"bytes": 8 * p["rows"] * p["cols"], "flops": 0}  # read x once, write y once


BENCHMARK = Benchmark(
    name="reduction", variants=VARIANTS, cases=CASES, reference=reference, check=check,
    counts=counts, inputs=lambda p: (host_input(p),),
    compiled=("numba_one_pass",), probe_params={"n": 1024})
if __name__ == "__main__":
    raise SystemExit(run.main(BENCHMARK))
