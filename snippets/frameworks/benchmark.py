"""One training step of the same network in TensorFlow, PyTorch and JAX, in every execution mode,
registered with the benchmark runner.

Run it with:  python snippets/bench/run.py frameworks --output frameworks.json [--cases small,large]

Each variant is a framework and a mode of its teaching file (train_<framework>.py, beside this
file, with the data and starting weights of task.py). setup() builds the trainer, puts the
batches on the device and runs the first call of STEPS steps on its own, timed: tracing and
compilation happen there (work.first_call_s). The runner then times further calls of STEPS steps,
each ended by a device synchronisation; the per-step time is the per-call time / STEPS. All
frameworks run in full float32 (TensorFloat-32 off), so they do the same arithmetic. Frameworks
that are not installed are left out.
"""

from __future__ import annotations

from bench import run  # first: its Ctrl-C handler covers the imports below

import importlib
import importlib.util
import math
import os
import shutil
import sys
import time

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX shares the GPU
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import task  # noqa: E402  (beside this file)
from bench.runner import Benchmark, Case, Prepared, Variant  # noqa: E402

STEPS = 20  # training steps per timed call
MODULES = {"tensorflow": ("train_tensorflow", "tensorflow"), "pytorch": ("train_pytorch", "torch"),
           "jax": ("train_jax", "jax")}
DEVICE = "gpu" if shutil.which("nvidia-smi") else "cpu"  # each framework's default device
VARIANTS = {  # framework_mode: the --mode of its train_<framework>.py
    "tensorflow_eager": Variant("tensorflow eager", device=DEVICE),
    "tensorflow_function": Variant("tensorflow function", device=DEVICE),
    "tensorflow_xla": Variant("tensorflow xla", device=DEVICE),
    "pytorch_eager": Variant("pytorch eager", device=DEVICE),
    "pytorch_compile": Variant("pytorch compile", device=DEVICE),
    "pytorch_compile_step": Variant("pytorch compile step", device=DEVICE),
    "pytorch_reduce_overhead": Variant("pytorch reduce overhead", device=DEVICE),
    "jax_eager": Variant("jax eager", device=DEVICE),
    "jax_jit": Variant("jax jit", device=DEVICE),
}
INSTALLED = tuple(k for k in VARIANTS  # frameworks that are not installed are left out
                  if importlib.util.find_spec(MODULES[k.split("_")[0]][1]) is not None)
CASES = {
    "smoke": Case({"size": "smoke", "width": 16, "batch": 64, "steps_per_call": STEPS},
                  variants=INSTALLED, default=False),
    "small": Case({"size": "small", "width": 64, "batch": 128, "steps_per_call": STEPS},
                  variants=INSTALLED),
    "medium": Case({"size": "medium", "width": 512, "batch": 1024, "steps_per_call": STEPS},
                   variants=INSTALLED, default=False),  # for CPUs: "large" takes minutes there
    "large": Case({"size": "large", "width": 2048, "batch": 8192, "steps_per_call": STEPS},
                  variants=INSTALLED),
}
FIRST_CALL: dict[tuple[str, str], float] = {}  # (variant, size) -> seconds, set by setup


def load(framework: str):
    mod = importlib.import_module(MODULES[framework][0])
    if framework == "tensorflow":
        mod.tf.config.experimental.enable_tensor_float_32_execution(False)
    elif framework == "jax":
        mod.jax.config.update("jax_default_matmul_precision", "highest")
    else:
        mod.torch.backends.cuda.matmul.allow_tf32 = False
        mod.torch.backends.cudnn.allow_tf32 = False
    return mod


def setup(variant: str, p: dict) -> Prepared:
    framework, mode = variant.split("_", 1)
    mod = load(framework)
    x, y = task.make_data(n=max(4096, 4 * p["batch"]))
    trainer = mod.Trainer(width=p["width"], mode=mode, lr=0.01)
    n = len(x) // p["batch"]
    batches = [trainer.put(x[i * p["batch"]:(i + 1) * p["batch"]],
                           y[i * p["batch"]:(i + 1) * p["batch"]]) for i in range(n)]
    state = {"i": 0}

    def run():
        loss = None
        for _ in range(STEPS):
            loss = trainer.step(*batches[state["i"] % n])
            state["i"] += 1
        trainer.sync(loss)
        return float(loss)

    t0 = time.perf_counter()
    run()  # tracing and compilation happen in this first call
    FIRST_CALL[variant, p["size"]] = time.perf_counter() - t0
    return Prepared(run=run)


def reference(p: dict) -> float:
    """The loss of the starting weights on the data, in float64 NumPy (every variant starts
    from these weights, task.py's)."""
    x, y = task.make_data(n=max(4096, 4 * p["batch"]))
    w1, b1, w2, b2, w3, b3 = (w.astype(np.float64) for w in task.init_weights(p["width"]))
    h = np.maximum(x @ w1 + b1, 0)
    h = np.maximum(h @ w2 + b2, 0)
    z = (h @ w3 + b3)[:, 0]
    return float(np.mean(np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z)))))


def check(variant: str, loss: float, start: float) -> dict:
    """Training must not blow up: the batch loss stays finite and below 1.05 x the start."""
    ratio = loss / start
    return {"metric": "batch_loss_over_start_loss", "value": round(ratio, 4),
            "ok": math.isfinite(loss) and ratio < 1.05}


def counts(variant: str, p: dict, start: float) -> dict:
    w, b = p["width"], p["batch"]
    forward = 2 * b * (2 * w + w * w + w)  # three matrix products
    return {"flops": STEPS * 3 * forward,  # backward costs about twice the forward
            "work": {"first_call_s": FIRST_CALL.get((variant, p["size"]))}}


BENCHMARK = Benchmark(
    name="frameworks", variants=VARIANTS, cases=CASES, setup=setup, reference=reference,
    check=check, counts=counts, probe_params=CASES["smoke"].params)

if __name__ == "__main__":
    sys.exit(run.main(BENCHMARK))
