"""Bias + GELU run op by op and compiled by XLA in each lesson (xla_<framework>.py; inputs and
reference from gelu_demo.py), registered with the benchmark runner; frameworks not installed are
left out.  Run:  python snippets/bench/run.py compilers --output xla.json"""

import importlib.util
import os
import shutil

import gelu_demo  # beside this file
import numpy as np
from bench.adapters import FirstCall
from bench.registry import Benchmark, Case, Variant

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")


def bias_gelu(framework: str, mode: str, p: dict):
    """The lesson's function (eager, or compiled by XLA) on inputs on the device; a call waits."""
    lesson = importlib.import_module(f"xla_{framework}")
    fn = lesson.bias_gelu if mode == "eager" else lesson.compile_it()
    put, wait = ((lesson.jax.device_put, lesson.jax.block_until_ready) if framework == "jax"
                 else (lesson.tf.constant, lambda result: result.numpy()))  # a copy to NumPy
    x, b = (put(a) for a in gelu_demo.make_inputs(p["n"]))
    return lambda: wait(fn(x, b))


GPU = "gpu" if shutil.which("nvidia-smi") else "cpu"  # JAX runs on the GPU where there is one
VARIANTS = {k: Variant(k.replace("_", " "), GPU if k.startswith("jax") else "cpu",
                       measure=FirstCall(bias_gelu, tuple(k.split("_"))))
            for k in ("jax_eager", "jax_jit", "tensorflow_eager", "tensorflow_xla")}
INSTALLED = tuple(k for k in VARIANTS if importlib.util.find_spec(k.split("_")[0]))
CASES = {"smoke": Case({"n": 4096}, variants=INSTALLED, default=False),
         "large": Case({"n": 1 << 22}, variants=INSTALLED)}


def check(variant: str, out, ref: np.ndarray) -> dict:
    err = float(np.max(np.abs(np.asarray(out, dtype=np.float64) - ref)))
    return {"metric": "max_abs_error", "value": err, "ok": err <= 1e-5}


BENCHMARK = Benchmark(
    "compilers", VARIANTS, CASES, check=check, probe_params=CASES["smoke"].params,
    reference=lambda p: gelu_demo.reference(*gelu_demo.make_inputs(p["n"])),
    # fused: x and b read, y written once; op by op, each of ten operations: 2 reads + 1 write
    counts=lambda variant, p, ref: {
        "bytes": 4 * p["n"] * (3 if variant.endswith(("_jit", "_xla")) else 3 * 10), "work": {}})
