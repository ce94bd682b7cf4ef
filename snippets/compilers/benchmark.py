"""Bias + GELU run op by op and compiled by XLA (TensorFlow and JAX), registered with the
benchmark runner.

Run it with:  python snippets/bench/run.py compilers --output xla.json [--variants jax_eager,jax_jit]

Variants come from the teaching files beside this one (xla_jax.py, xla_tensorflow.py, and their
inputs and reference from gelu_demo.py); frameworks
that are not installed are left out. Inputs are on the device before timing and every timed call
waits for its result (JAX: block_until_ready; TensorFlow: .numpy(), which also copies the result
to a NumPy array). setup() times the first call of each compiled variant on its own: tracing and
XLA compilation happen there (work.first_call_s).
"""

from __future__ import annotations

from bench import run  # first: its Ctrl-C handler covers the imports below

import importlib
import importlib.util
import os
import shutil
import sys
import time

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import gelu_demo  # noqa: E402  (beside this file)
import numpy as np  # noqa: E402
from bench.runner import Benchmark, Case, Prepared, Variant  # noqa: E402

GPU = "gpu" if shutil.which("nvidia-smi") else "cpu"  # JAX runs on the GPU where there is one
FRAMEWORKS = {"jax": ("xla_jax", "jax"), "tensorflow": ("xla_tensorflow", "tensorflow")}
VARIANTS = {
    "jax_eager": Variant("jax eager", device=GPU),
    "jax_jit": Variant("jax jit", device=GPU),
    "tensorflow_eager": Variant("tensorflow eager", device="cpu"),
    "tensorflow_xla": Variant("tensorflow xla", device="cpu"),
}
INSTALLED = tuple(k for k in VARIANTS  # frameworks that are not installed are left out
                  if importlib.util.find_spec(FRAMEWORKS[k.split("_")[0]][1]) is not None)
CASES = {"smoke": Case({"n": 4096}, variants=INSTALLED, default=False),
         "large": Case({"n": 1 << 22}, variants=INSTALLED)}
FIRST_CALL: dict[tuple[str, int], float] = {}


def setup(variant: str, p: dict) -> Prepared:
    framework, mode = variant.split("_", 1)
    mod = importlib.import_module(FRAMEWORKS[framework][0])
    xh, bh = gelu_demo.make_inputs(p["n"])
    fn = mod.bias_gelu if mode == "eager" else mod.compile_it()
    if framework == "jax":
        x, b = mod.jax.device_put(xh), mod.jax.device_put(bh)

        def run():
            return fn(x, b).block_until_ready()
    else:
        x, b = mod.tf.constant(xh), mod.tf.constant(bh)

        def run():
            return fn(x, b).numpy()
    t0 = time.perf_counter()
    run()  # the first call: tracing and, for jit/xla, compilation
    FIRST_CALL[variant, p["n"]] = time.perf_counter() - t0
    return Prepared(run=run)


def reference(p: dict) -> np.ndarray:
    return gelu_demo.reference(*gelu_demo.make_inputs(p["n"]))


def check(variant: str, out, ref: np.ndarray) -> dict:
    err = float(np.max(np.abs(np.asarray(out, dtype=np.float64) - ref)))
    return {"metric": "max_abs_error", "value": err, "ok": err <= 1e-5}


def counts(variant: str, p: dict, ref) -> dict:
    fused = variant.endswith(("_jit", "_xla"))
    # fused: read x and b, write y once; op by op: every one of the ten operations reads and
    # writes whole arrays (a lower bound: 2 reads + 1 write each)
    nbytes = 4 * p["n"] * (3 if fused else 3 * 10)
    return {"bytes": nbytes, "work": {"first_call_s": FIRST_CALL.get((variant, p["n"]))}}


BENCHMARK = Benchmark(
    name="compilers", variants=VARIANTS, cases=CASES, setup=setup, reference=reference,
    check=check, counts=counts, probe_params=CASES["smoke"].params)

if __name__ == "__main__":
    sys.exit(run.main(BENCHMARK))
