"""Training throughput of the cats-vs-dogs CNN (images/s) on the GPU and the host CPU, for the runner.

    KERAS_BACKEND=jax python snippets/bench/run.py keras --output build/keras-gpu.json

One call of a variant is one epoch of model.fit on in-memory uint8 images (drawn like
make_dataset.py's, 512 distinct ones repeated), batch 256, timed on the host clock after the
runner's warm-up epochs; the loss it returns waits for the device. Under JAX the CPU variants
train in the same process on jax.devices("cpu") (every host core); the GPU ones on the first GPU.
Cases: with and without the augmentation layers, and the pitfall the page explains (Keras's
default, which runs the augmented step op by op). The TensorFlow backend runs the CPU variants.
"""

from __future__ import annotations

from bench import run  # first: its Ctrl-C handler covers the imports below

import contextlib
import math
import os
import sys

import numpy as np

from bench.runner import Benchmark, Case, Prepared, Variant

BATCH = 256
GPU_IMAGES = 20_480  # 80 steps of 256: about the 25,000 images of Kaggle's training set
CPU_IMAGES = 1_024  # 4 steps: the CPU is ~300 times slower; the rate per image is what compares

# A variant is where the model trains and its precision (device-precision); the cases below say
# with or without augmentation. gpu2: data parallel over two GPUs (keras.distribution.DataParallel,
# as train.py does), the global batch split between them; run on request on a two-GPU machine.
VARIANTS = {
    "gpu-float32": Variant("GPU, float32"),
    "gpu-bfloat16": Variant("GPU, bfloat16"),
    "cpu-float32": Variant("CPU, float32", device="cpu"),
    "gpu2-float32": Variant("2 GPUs, float32"),
    # The climb (climb.py): one process measures every row; the first row's program reports all.
    "climb-default": Variant("Keras's default: op by op, float32 from the host, batch 256",
                             step="1", group="climb"),
    "climb-xla": Variant("+ XLA compiles the step", step="2", group="climb", runs=False),
    "climb-uint8": Variant("+ uint8 pixels", step="3", group="climb", runs=False),
    "climb-batch": Variant("+ batch 1,024", step="4", group="climb", runs=False),
    "climb-spe": Variant("+ steps_per_execution=8", step="5", group="climb", runs=False),
    "climb-resident": Variant("+ images resident on the GPU", step="6", group="climb",
                              runs=False),
    "climb-bf16": Variant("+ bfloat16 (mixed precision)", step="7", group="climb", runs=False),
    "climb-scan": Variant("+ one program per 32 steps (lax.scan)", step="8", group="climb",
                          runs=False),
    "climb-resample": Variant("+ augmentation in one resampling, not two", step="9",
                              group="climb", runs=False),
    "climb-pool": Variant("+ max pooling as reshape and max", step="10", group="climb",
                          runs=False),
    "climb-batch4096": Variant("+ batch 4,096", step="11", group="climb", runs=False),
    "plain-xla": Variant("step 2 without the augmentation layers", group="augmentation",
                         runs=False),
    "plain-batch4096": Variant("step 11 without augmentation", group="augmentation",
                               runs=False),
    "torch-compile": Variant("PyTorch, torch.compile, bfloat16, batch 1,024, resident",
                             group="anchor", runs=False),
    "cpu-keras-xla": Variant("CPU: Keras on XLA:CPU, uint8, batch 256", device="cpu",
                             group="cpu", runs=False),
    "cpu-torch": Variant("CPU: PyTorch eager, every core, batch 256", device="cpu",
                         group="cpu", runs=False),
}


def _case(augment: bool, images: int, variants: tuple, xla: bool = True, note: str = "",
          batch: int = BATCH, size: int = 64, default: bool = True) -> Case:
    return Case(params={"augment": augment, "xla_augmentation": xla, "batch_size": batch,
                        "images_per_epoch": images, "image_size": size}, variants=variants,
                note=note, default=default)


CASES = {
    "gpu-augmented": _case(True, GPU_IMAGES, ("gpu-float32", "gpu-bfloat16")),
    "gpu-plain": _case(False, GPU_IMAGES, ("gpu-float32", "gpu-bfloat16")),
    "cpu-augmented": _case(True, CPU_IMAGES, ("cpu-float32",),
                           note="CPU epochs of 1,024 images (the GPU's: 20,480); bfloat16 is "
                                "not measured on the CPU"),
    "cpu-plain": _case(False, CPU_IMAGES, ("cpu-float32",)),
    "gpu-augmented-keras-default": _case(
        True, 5_120, ("gpu-float32",), xla=False,
        note="Keras's own choice (no XLA for the augmented model, "
             "every step run op by op); 5,120 images per epoch, as it is ~70 times slower"),
    "gpu-augmented-1024": _case(True, 4 * GPU_IMAGES, ("gpu-float32", "gpu2-float32"), batch=1024,
                                default=False,
                                note="one GPU against two at the same global batch of 1,024"),
    "climb": Case(params={"rounds": 3, "per_round": 6, "round_s": 3.0, "warm_s": 1.0,
                          "retries": 2, "scale": 1.0, "trace": True, "build_s": 170},
                  variants=("climb-default",), default=False,
                  note="the climb: every row in one process; after at least 1 s of uncounted "
                       "warm-up epochs each, 3 interleaved rounds (GPU rows, then CPU rows), "
                       "each row at least 6 epochs and 3 s a round; a round that lost more "
                       "than 1.5 % of the host's CPU time to steal runs again (up to 2 times); "
                       "a sample is one epoch, its figure seconds per image"),
    "cpu-smoke": _case(True, 64, ("cpu-float32",), batch=32, size=32, default=False,
                       note="a quick check of the code path (tests), not a result"),
}


def backend() -> str:
    return os.environ.get("KERAS_BACKEND", "tensorflow")


def device_scope(device: str):
    """Where the model lives and trains: the first GPU (the default), the host CPU, or data
    parallel over two devices ("gpu2"; "cpu2" with fake CPU devices, for tests)."""
    if device == "gpu":
        return contextlib.nullcontext()
    if device in ("gpu2", "cpu2"):
        import keras

        devices = keras.distribution.list_devices(device[:3])[:2]
        if len(devices) < 2 or backend() != "jax":
            raise RuntimeError(f"{device} needs two {device[:3].upper()}s and the JAX backend; "
                               f"{len(devices)} visible, backend {backend()}")
        return keras.distribution.DataParallel(devices=devices).scope()
    if backend() == "jax":
        import jax

        return jax.default_device(jax.devices("cpu")[0])
    import keras

    return keras.device("cpu:0")


def setup(variant: str, p: dict) -> Prepared:
    if variant.startswith("climb"):
        from climb_bench import ROWS, output

        rows = [r for r in ROWS if p.get("rows") is None or r in p["rows"]]
        return Prepared(external=lambda: output(
            rows, rounds=p["rounds"], per_round=p["per_round"], round_s=p["round_s"],
            warm_s=p["warm_s"], retries=p.get("retries", 2),
            scale=p["scale"], trace=p["trace"], build_s=p.get("build_s", float("inf")),
            say=lambda text: print(text, file=sys.stderr, flush=True)))
    import keras

    from model import allow_xla, build_model

    device, precision = variant.split("-")
    from climb_bench import make_images  # 512 distinct drawn images, repeated

    images, labels = make_images(p["images_per_epoch"], p["image_size"])
    with device_scope(device):  # a new scope each time: some can be entered only once
        keras.mixed_precision.set_global_policy("mixed_bfloat16" if precision == "bfloat16"
                                                else "float32")
        keras.utils.set_random_seed(0)
        model = build_model(p["image_size"], augment=p["augment"])
        keras.mixed_precision.set_global_policy("float32")
        if p["xla_augmentation"]:
            allow_xla(model)
        model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="binary_crossentropy",
                      metrics=["accuracy"])

    def epoch() -> dict:
        with device_scope(device):
            history = model.fit(images, labels, batch_size=p["batch_size"], epochs=1,
                                verbose=0)
        # The numbers are on the host: every step of the epoch has finished.
        devices = model.weights[0].value.devices() if backend() == "jax" else set()
        return {"loss": float(history.history["loss"][-1]), "jit_compile": model.jit_compile,
                "device": str(devices), "devices": len(devices) or 1}

    return Prepared(run=epoch)


def reference(p: dict) -> dict:
    if "rounds" in p:  # the climb checks its own rows
        return {}
    return {"jit_compile": p["xla_augmentation"] or not p["augment"]}


def check(variant: str, result: dict, ref: dict) -> dict:
    """The loss is a number (bf16 overflow or a broken step gives nan/inf), the model trained on
    the device the variant names, and XLA compiled the step exactly when the case says so."""
    loss = result["loss"]
    on_cpu = "cpu" in result["device"].lower()
    wanted = 2 if variant.split("-")[0].endswith("2") else 1
    right_place = (variant.startswith("cpu") == on_cpu and result["devices"] == wanted
                   or backend() != "jax")
    xla_as_meant = result["jit_compile"] == ref["jit_compile"] or backend() != "jax"
    return {"metric": "training loss of the first epoch (binary cross-entropy)",
            "value": round(loss, 4) if math.isfinite(loss) else str(loss),
            "ok": math.isfinite(loss) and right_place and xla_as_meant}


def counts(variant: str, p: dict, ref: dict) -> dict:
    if "rounds" in p:  # the climb: a call is one image
        return {"work": {"images": 1}}
    return {"work": {"images": p["images_per_epoch"]},
            "extra": {"backend": backend(), "precision": variant.split("-")[1],
                      "devices": 2 if variant.split("-")[0].endswith("2") else 1}}


BENCHMARK = Benchmark(name="keras", variants=VARIANTS, cases=CASES, setup=setup,
                      reference=reference, check=check, counts=counts)

if __name__ == "__main__":
    sys.exit(run.main(BENCHMARK))
