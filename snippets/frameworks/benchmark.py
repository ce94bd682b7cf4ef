"""Every execution mode of each framework's training lesson (train_<framework>.py, on task.py's
data and starting weights), registered with the benchmark runner: a timed call is STEPS steps.
Run:  python snippets/bench/run.py frameworks --output frameworks.json [--cases small,large]"""

import importlib.util
import itertools
import os
import shutil

import numpy as np
import task  # beside this file
from bench.adapters import FirstCall
from bench.registry import Benchmark, Case, Variant

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX shares the GPU
STEPS = 20  # training steps per timed call


def data(p: dict):
    return task.make_data(n=max(4096, 4 * p["batch"]))  # 4 batches at least


def steps(framework: str, mode: str, p: dict):
    """STEPS steps of the lesson's Trainer in full float32 on batches on the device, synced."""
    lesson = importlib.import_module(f"train_{framework}")
    if framework == "tensorflow":
        lesson.tf.config.experimental.enable_tensor_float_32_execution(False)
    elif framework == "jax":
        lesson.jax.config.update("jax_default_matmul_precision", "highest")
    else:
        lesson.torch.set_float32_matmul_precision("highest")  # no TF32 (no cuDNN: no convolution)
    x, y = data(p)
    trainer, b = lesson.Trainer(width=p["width"], mode=mode, lr=0.01), p["batch"]
    batches = itertools.cycle([trainer.put(x[i * b:(i + 1) * b], y[i * b:(i + 1) * b])
                               for i in range(len(x) // b)])

    def run():
        for _ in range(STEPS):
            loss = trainer.step(*next(batches))
        trainer.sync(loss)
        return float(loss)
    return run


DEVICE = "gpu" if shutil.which("nvidia-smi") else "cpu"  # each framework's default device
FRAMEWORKS = {"tensorflow": ("tensorflow", "eager function xla"),  # name: (library, modes)
              "pytorch": ("torch", "eager compile compile_step reduce_overhead"),
              "jax": ("jax", "eager jit")}  # a library that is not installed: no rows
VARIANTS = {f"{fw}_{mode}": Variant(f"{fw} {mode.replace('_', ' ')}", DEVICE, measure=FirstCall(
    steps, (fw, mode))) for fw, (_, modes) in FRAMEWORKS.items() for mode in modes.split()}
INSTALLED = tuple(k for k in VARIANTS if importlib.util.find_spec(FRAMEWORKS[k.split("_")[0]][0]))
CASES = {name: Case({"size": name, "width": width, "batch": batch, "steps_per_call": STEPS},
                    variants=INSTALLED, default=name in ("small", "large"))
         for name, width, batch in (("smoke", 16, 64), ("small", 64, 128), ("medium", 512, 1024),
                                    ("large", 2048, 8192))}  # medium: for CPUs, large takes minutes


def check(variant: str, loss: float, start: float) -> dict:
    """Training must not blow up: the batch loss stays finite and below 1.05 x the start."""
    return {"metric": "batch_loss_over_start_loss", "value": round(loss / start, 4),
            "ok": bool(np.isfinite(loss)) and loss / start < 1.05}


BENCHMARK = Benchmark(
    "frameworks", VARIANTS, CASES, check=check, probe_params=CASES["smoke"].params,
    reference=lambda p: task.start_loss(p["width"], *data(p)),
    counts=lambda variant, p, start: {  # forward: 3 matrix products, 2b(2w + w^2 + w); backward 2x
        "flops": STEPS * 3 * 2 * p["batch"] * p["width"] * (p["width"] + 3), "work": {}})
