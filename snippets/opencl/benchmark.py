"""The OpenCL vector add and SAXPY, registered with the benchmark runner: one row per kind of
OpenCL device found here, timed by the OpenCL adapter, every result checked against NumPy first.
Run it with:  python snippets/bench/run.py opencl --output opencl.json"""

import cl_device  # the lessons beside this file: the device handling and the kernels
import numpy as np
import vector_add_saxpy as ocl
from bench.adapters import OpenCL
from bench.registry import Benchmark, Case, Variant

KERNELS = {  # name: (program, its arguments from (n, a, b, c), the buffer it writes)
    "vector_add": (ocl.VECTOR_ADD_SOURCE, lambda n, a, b, c: (a, b, c, np.int64(n)), 2),
    "saxpy": (ocl.SAXPY_SOURCE, lambda n, a, b, c: (np.int64(n), np.float32(2.0), a, b), 1)}


def inputs(p: dict) -> tuple[np.ndarray, np.ndarray]:
    return (ocl.add_inputs if p["kernel"] == "vector_add" else ocl.saxpy_inputs)(p["n"])


def check(p: dict, out: np.ndarray) -> dict:  # the lesson's checks
    a, b = inputs(p)
    bad = (np.flatnonzero(out != a + b) if p["kernel"] == "vector_add"
           else ocl.mismatches(out, ocl.saxpy_reference(2.0, a, b))).size  # within 1 ulp
    return {"metric": "mismatched_elements", "value": bad, "ok": bad == 0}


VARIANTS = {f"opencl_{kind}": Variant(f"OpenCL, {kind.upper()} device", kind, measure=OpenCL(
    f"opencl_{kind}", kind, KERNELS, inputs, check)) for kind in ("cpu", "gpu")}
try:  # the rows this machine can run: one per kind of OpenCL device it has
    found = {cl_device.kind_of(device) for device in cl_device.find_devices()}
except (cl_device.OpenCLProblem, cl_device.cl.Error):
    found = set()
HERE = tuple(f"opencl_{kind}" for kind in ("cpu", "gpu") if kind in found) or ("opencl_cpu",)
CASES = {kernel: Case({"kernel": kernel, "n": 2**24}, variants=HERE) for kernel in KERNELS}
CASES["smoke"] = Case({"kernel": "vector_add", "n": 5000}, variants=HERE, default=False)
BENCHMARK = Benchmark(  # two float32 arrays read, one written; SAXPY's multiply-add is 2 flops
    "opencl", VARIANTS, CASES, reference=lambda p: None, check=None, counts=lambda v, p, ref: {
        "bytes": 12 * p["n"], "flops": {"vector_add": 1, "saxpy": 2}[p["kernel"]] * p["n"]})
