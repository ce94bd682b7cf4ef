"""Bias + GELU run op by op and compiled by XLA (TensorFlow and JAX), registered with the
benchmark runner.  Run:  python snippets/bench/run.py compilers --output xla.json

Each row is a function of the lessons beside this file (xla_jax.py, xla_tensorflow.py; inputs and
reference from gelu_demo.py) on inputs already on the device; every timed call waits for its
result (JAX: block_until_ready; TensorFlow: .numpy(), which also copies it to NumPy). The first
call, where tracing and XLA compilation happen, is timed on its own (work.first_call_s).
Frameworks that are not installed are left out.
"""
from bench import run  # first: its Ctrl-C handler covers the imports below

import importlib
import importlib.util
import os
import shutil

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import gelu_demo  # noqa: E402  (beside this file)
import numpy as np  # noqa: E402
from bench.adapters import FirstCall  # noqa: E402
from bench.registry import Benchmark, Case, Variant  # noqa: E402


def bias_gelu(framework: str, mode: str, p: dict):
    """A call of the lesson's function (eager, or compiled by XLA) on inputs on the device."""
    lesson = importlib.import_module(f"xla_{framework}")
    fn = lesson.bias_gelu if mode == "eager" else lesson.compile_it()
    if framework == "jax":
        x, b = (lesson.jax.device_put(a) for a in gelu_demo.make_inputs(p["n"]))
        return lambda: fn(x, b).block_until_ready()
    x, b = (lesson.tf.constant(a) for a in gelu_demo.make_inputs(p["n"]))
    return lambda: fn(x, b).numpy()


GPU = "gpu" if shutil.which("nvidia-smi") else "cpu"  # JAX runs on the GPU where there is one
VARIANTS = {f"{framework}_{mode}": Variant(f"{framework} {mode}", device, measure=FirstCall(
    bias_gelu, (framework, mode))) for framework, device, modes in (
        ("jax", GPU, ("eager", "jit")), ("tensorflow", "cpu", ("eager", "xla"))) for mode in modes}
INSTALLED = tuple(k for k in VARIANTS  # frameworks that are not installed are left out
                  if importlib.util.find_spec(k.split("_")[0]) is not None)
CASES = {"smoke": Case({"n": 4096}, variants=INSTALLED, default=False),
         "large": Case({"n": 1 << 22}, variants=INSTALLED)}


def check(variant: str, out, ref: np.ndarray) -> dict:
    err = float(np.max(np.abs(np.asarray(out, dtype=np.float64) - ref)))
    return {"metric": "max_abs_error", "value": err, "ok": err <= 1e-5}


def counts(variant: str, p: dict, ref) -> dict:
    # fused: read x and b, write y once; op by op: every one of the ten operations reads and
    # writes whole arrays (a lower bound: 2 reads + 1 write each)
    return {"bytes": 4 * p["n"] * (3 if variant.endswith(("_jit", "_xla")) else 3 * 10), "work": {}}


BENCHMARK = Benchmark(
    name="compilers", variants=VARIANTS, cases=CASES, check=check, counts=counts,
    reference=lambda p: gelu_demo.reference(*gelu_demo.make_inputs(p["n"])),
    probe_params=CASES["smoke"].params)

if __name__ == "__main__":
    raise SystemExit(run.main(BENCHMARK))
