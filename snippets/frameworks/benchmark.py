"""One training step of the same network in TensorFlow, PyTorch and JAX, in every execution mode
of its lesson (train_<framework>.py; data and starting weights from task.py), registered with the
benchmark runner: each timed call is STEPS steps (per step: the time / STEPS), the first one, with
tracing and compilation, timed apart. Frameworks that are not installed are left out.
Run:  python snippets/bench/run.py frameworks --output frameworks.json [--cases small,large]
"""

from __future__ import annotations

from bench import run  # first: its Ctrl-C handler covers the imports below

import importlib
import importlib.util
import math
import os
import shutil

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX shares the GPU
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import task  # noqa: E402  (beside this file)
from bench.adapters import FirstCall  # noqa: E402
from bench.registry import Benchmark, Case, Variant  # noqa: E402

STEPS = 20  # training steps per timed call
LIBRARY = {"tensorflow": "tensorflow", "pytorch": "torch", "jax": "jax"}


def steps(framework: str, mode: str, p: dict):
    """STEPS training steps of the lesson's Trainer (train_<framework>.py, in full float32) on
    batches already on the device, ended by a device synchronisation; returns the last loss."""
    lesson = importlib.import_module(f"train_{framework}")
    if framework == "tensorflow":
        lesson.tf.config.experimental.enable_tensor_float_32_execution(False)
    elif framework == "jax":
        lesson.jax.config.update("jax_default_matmul_precision", "highest")
    else:
        lesson.torch.backends.cuda.matmul.allow_tf32 = False
        lesson.torch.backends.cudnn.allow_tf32 = False
    x, y = task.make_data(n=max(4096, 4 * p["batch"]))
    trainer = lesson.Trainer(width=p["width"], mode=mode, lr=0.01)
    b, n = p["batch"], len(x) // p["batch"]
    batches = [trainer.put(x[i * b:(i + 1) * b], y[i * b:(i + 1) * b]) for i in range(n)]
    state = {"i": 0}

    def run():
        loss = None
        for _ in range(STEPS):
            loss = trainer.step(*batches[state["i"] % n])
            state["i"] += 1
        trainer.sync(loss)
        return float(loss)
    return run


DEVICE = "gpu" if shutil.which("nvidia-smi") else "cpu"  # each framework's default device
MODES = {"tensorflow": ("eager", "function", "xla"), "jax": ("eager", "jit"),
         "pytorch": ("eager", "compile", "compile_step", "reduce_overhead")}
VARIANTS = {f"{fw}_{mode}": Variant(f"{fw} {mode.replace('_', ' ')}", DEVICE,
                                    measure=FirstCall(steps, (fw, mode)))
            for fw in ("tensorflow", "pytorch", "jax") for mode in MODES[fw]}
INSTALLED = tuple(k for k in VARIANTS  # frameworks that are not installed are left out
                  if importlib.util.find_spec(LIBRARY[k.split("_")[0]]) is not None)
CASES = {name: Case({"size": name, "width": width, "batch": batch, "steps_per_call": STEPS},
                    variants=INSTALLED, default=name in ("small", "large"))
         for name, width, batch in (("smoke", 16, 64), ("small", 64, 128), ("medium", 512, 1024),
                                    ("large", 2048, 8192))}  # medium: for CPUs, large takes minutes


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
    return {"flops": STEPS * 3 * forward, "work": {}}  # backward costs about twice the forward


BENCHMARK = Benchmark(
    name="frameworks", variants=VARIANTS, cases=CASES, reference=reference,
    check=check, counts=counts, probe_params=CASES["smoke"].params)

if __name__ == "__main__":
    raise SystemExit(run.main(BENCHMARK))
