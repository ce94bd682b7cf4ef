"""The OpenCL vector add and SAXPY, registered with the benchmark runner: one row per kind of
OpenCL device found here, each timed in its own loop by the OpenCL adapter (profiling events for
the kernel, the host clock end to end), every result checked against NumPy first.

Run it with:  python snippets/bench/run.py opencl --output opencl.json
"""
from bench import run  # first: its Ctrl-C handler covers the imports below

import numpy as np
import pyopencl as cl

import vector_add_saxpy as ocl  # the lesson beside this file
from bench.adapters import OpenCL
from bench.registry import Benchmark, Case, Variant

KERNELS = {  # name: (program, its arguments from (n, a, b, c), the buffer it writes)
    "vector_add": (ocl.VECTOR_ADD_SOURCE, lambda n, a, b, c: (a, b, c, np.int64(n)), 2),
    "saxpy": (ocl.SAXPY_SOURCE, lambda n, a, b, c: (np.int64(n), np.float32(2.0), a, b), 1),
}


def inputs(p: dict) -> tuple[np.ndarray, np.ndarray]:
    return (ocl.add_inputs if p["kernel"] == "vector_add" else ocl.saxpy_inputs)(p["n"])


def check(p: dict, out: np.ndarray) -> dict:
    a, b = inputs(p)
    bad = (int(np.count_nonzero(out != a + b)) if p["kernel"] == "vector_add"
           else int(ocl.mismatches(out, ocl.saxpy_reference(2.0, a, b)).size))  # within 1 ulp
    return {"metric": "mismatched_elements", "value": bad, "ok": bad == 0}


def row(kind: str) -> Variant:
    return Variant(f"OpenCL, {kind.upper()} device", kind,
                   measure=OpenCL(f"opencl_{kind}", kind, KERNELS, inputs, check))


VARIANTS = {"opencl_cpu": row("cpu"), "opencl_gpu": row("gpu")}
try:  # the rows this machine can run: one per kind of OpenCL device it has
    found = {"gpu" if d.type & cl.device_type.GPU else "cpu"
             for p in cl.get_platforms() for d in p.get_devices()}
except cl.Error:
    found = set()
HERE = tuple(f"opencl_{kind}" for kind in ("cpu", "gpu") if kind in found) or ("opencl_cpu",)
# --8<-- [start:register]
CASES = {
    "vector_add": Case({"kernel": "vector_add", "n": 2**24}, variants=HERE),
    "saxpy": Case({"kernel": "saxpy", "n": 2**24}, variants=HERE),
    "smoke": Case({"kernel": "vector_add", "n": 5000}, variants=HERE, default=False),
}
BENCHMARK = Benchmark(  # two float32 arrays read, one written
    name="opencl", variants=VARIANTS, cases=CASES, reference=lambda p: None, check=None,
    counts=lambda v, p, ref: {"bytes": 12 * p["n"], "flops": (1 if p["kernel"] == "vector_add"
                                                              else 2) * p["n"]})
# --8<-- [end:register]

if __name__ == "__main__":
    raise SystemExit(run.main(BENCHMARK))
