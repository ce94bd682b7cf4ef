"""The OpenCL vector add and SAXPY, registered with the benchmark runner.

Run it with:  python snippets/bench/run.py opencl --output opencl.json

One variant per kind of OpenCL device found here ("opencl_cpu", "opencl_gpu"). Each is timed in
its own loop (`Prepared.external`): the kernel alone with OpenCL profiling events
(`bench.timing.time_opencl`), and end to end (copies in, kernel, copy out) on the host clock
(`bench.timing.time_host`). Every result is checked against NumPy before it is timed.
"""

from __future__ import annotations

from bench import run, timing  # first: its Ctrl-C handler covers the imports below

import json
import math
import sys
import time

import numpy as np
import pyopencl as cl
from bench.runner import Benchmark, Case, Prepared, Variant

import cl_device  # the teaching files beside this one: plain imports from the script's folder
import vector_add_saxpy as ocl

SAMPLES = timing.MIN_REPEATS + 1  # samples per figure (an odd count: the median is one of them)
MIN_SAMPLE_S = 0.02  # calls shorter than this are batched into one sample
VARIANTS = {"opencl_cpu": Variant("OpenCL, CPU device", device="cpu"),
            "opencl_gpu": Variant("OpenCL, GPU device")}
KINDS = {key: v.device for key, v in VARIANTS.items()}


def kinds_here() -> tuple[str, ...]:
    """The variants this machine can run: one per kind of OpenCL device it has."""
    try:
        devices = [d for p in cl.get_platforms() for d in p.get_devices()]
    except cl.Error:
        devices = []
    found = {"gpu" if d.type & cl.device_type.GPU else "cpu" for d in devices}
    return tuple(v for v, kind in KINDS.items() if kind in found) or ("opencl_cpu",)


HERE = kinds_here()
# --8<-- [start:register]
CASES = {
    "vector_add": Case({"kernel": "vector_add", "n": 2**24}, variants=HERE),
    "saxpy": Case({"kernel": "saxpy", "n": 2**24}, variants=HERE),
    "smoke": Case({"kernel": "vector_add", "n": 5000}, variants=HERE, default=False),
}


def inputs(p: dict) -> tuple[np.ndarray, np.ndarray]:
    return (ocl.add_inputs if p["kernel"] == "vector_add" else ocl.saxpy_inputs)(p["n"])


def reference(p: dict) -> np.ndarray:
    x, y = inputs(p)
    return x + y if p["kernel"] == "vector_add" else ocl.saxpy_reference(2.0, x, y)


def wrong_elements(kernel: str, out: np.ndarray, ref: np.ndarray) -> int:
    if kernel == "vector_add":
        return int(np.count_nonzero(out != ref))
    return int(ocl.mismatches(out, ref).size)  # SAXPY: within one float32 ulp


def measure(kind: str, p: dict) -> str:
    """Check, then time one kernel on the first device of this kind; BENCH lines."""
    device = cl_device.pick_device(kind)
    ctx = cl.Context([device])
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    name = p["kernel"]
    source = ocl.VECTOR_ADD_SOURCE if name == "vector_add" else ocl.SAXPY_SOURCE
    t0 = time.perf_counter()
    kernel = cl.Kernel(cl_device.build(ctx, source), name)
    build_s = time.perf_counter() - t0
    a, b = inputs(p)
    n, mf = p["n"], cl.mem_flags
    d_a = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
    d_b = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=b)
    d_c = cl.Buffer(ctx, mf.READ_WRITE, a.nbytes)
    out_buf = d_c if name == "vector_add" else d_b  # SAXPY overwrites y
    grid = (-(-n // ocl.LOCAL_SIZE) * ocl.LOCAL_SIZE,)

    def launch():  # returns the kernel's event, which time_opencl reads
        if name == "vector_add":
            return kernel(queue, grid, (ocl.LOCAL_SIZE,), d_a, d_b, d_c, np.int64(n))
        return kernel(queue, grid, (ocl.LOCAL_SIZE,), np.int64(n), np.float32(2.0), d_a, d_b)

    host = np.empty_like(a)

    def end_to_end():
        cl.enqueue_copy(queue, d_a, a)
        cl.enqueue_copy(queue, d_b, b)
        launch()
        cl.enqueue_copy(queue, host, out_buf)  # blocking: waits for the kernel

    end_to_end()  # correctness first: one full run from fresh inputs
    bad = wrong_elements(name, host, reference(p))
    one = timing.time_opencl(queue, launch, repeats=1, warmup=1).median_s
    calls = max(1, min(10_000, math.ceil(MIN_SAMPLE_S / one))) if one > 0 else 1000
    # time_opencl per sample (repeats=1): the samples themselves go into the results file
    kernel_s = [timing.time_opencl(queue, launch, repeats=1, warmup=0, calls=calls).median_s
                for _ in range(SAMPLES)]
    end_s = [timing.time_host(end_to_end, repeats=1, warmup=0).median_s for _ in range(SAMPLES)]
    common = {
        "error": {"metric": "mismatched_elements", "value": bad, "ok": bad == 0},
        "bytes": 12 * n,  # two float32 arrays read, one written (copied in twice, out once)
        "flops": n if name == "vector_add" else 2 * n,
        "params": {"local_size": ocl.LOCAL_SIZE, "device_name": device.name.strip(),
                   "platform": device.platform.name.strip(), "opencl": device.version.strip(),
                   "driver": device.driver_version.strip()},
        "extra": {"build_s": round(build_s, 4)},
    }
    variant = next(v for v, k in KINDS.items() if k == kind)
    lines = [{"variant": variant, "phase": "kernel", "clock": "opencl-event",
              "samples_s": kernel_s, "calls_per_sample": calls, **common},
             {"variant": variant, "phase": "end_to_end", "clock": "host",
              "samples_s": end_s, "calls_per_sample": 1, **common}]
    return "\n".join("BENCH " + json.dumps(line) for line in lines)


def setup(variant: str, p: dict) -> Prepared:
    def run() -> str:
        try:
            return measure(KINDS[variant], p)
        except cl.Error as exc:  # the runner records one line and marks the variant failed
            raise RuntimeError(f"OpenCL: {str(exc).strip().splitlines()[0]}") from None
    return Prepared(external=run)


def check(variant: str, out: np.ndarray, ref: np.ndarray) -> dict:  # external variants check themselves
    bad = wrong_elements("vector_add", out, ref)
    return {"metric": "mismatched_elements", "value": bad, "ok": bad == 0}


BENCHMARK = Benchmark(
    name="opencl", variants=VARIANTS, cases=CASES, setup=setup, reference=reference,
    check=check, counts=lambda variant, p, ref: {})
# --8<-- [end:register]

if __name__ == "__main__":
    sys.exit(run.main(BENCHMARK))
