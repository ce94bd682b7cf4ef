"""The cats-vs-dogs CNN's training, climb.py's or climb_torch.py's trainer: a call, an epoch."""

import math

import numpy as np

from bench.adapters import Training
from bench.registry import Benchmark, Case, Variant
from bench.timing import Rounds


def images(n: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """n images drawn like make_dataset.py's (512 distinct ones, repeated), uint8, and labels."""
    from make_dataset import draw

    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, min(n, 512))
    x = np.stack([draw("dog" if y else "cat", rng, size)[:size, :size] for y in labels])
    reps = math.ceil(n / len(labels))
    return np.tile(x, (reps, 1, 1, 1))[:n], np.tile(labels, reps)[:n, None].astype("float32")


climb = lambda step, images=32_768, device="gpu", **changes: Training(  # noqa: E731 - climb.py's
    "climb:trainer", (step,), images, device=device, settings=changes)
torch = lambda device, images, **settings: Training(  # noqa: E731 - climb_torch.py's trainer
    "climb_torch:trainer", (), images, "torch", device, settings)
anchor = lambda label, images, **settings: Variant(  # noqa: E731 - PyTorch on the GPU
    label, group="anchor", measure=torch("gpu", images, **settings))
# --8<-- [start:register]
VARIANTS = {  # Keras's model.fit at the case's settings; gpu2: data parallel over two GPUs
    f"{device}-{precision}": Variant(label, device=device[:3], measure=Training(
        "climb:trainer", ("uint8",), framework=None, device=device, report=True,
        settings={"bf16": precision == "bfloat16"})) for device, precision, label in (
            ("gpu", "float32", "GPU, float32"), ("gpu", "bfloat16", "GPU, bfloat16"),
            ("cpu", "float32", "CPU, float32"), ("gpu2", "float32", "2 GPUs, float32"))}
VARIANTS.update({  # the climb (climb.py): each step keeps the changes above it
    f"climb-{step}": Variant(label, step=str(i), group="climb", measure=climb(step, n))
    for i, (step, n, label) in enumerate((
        ("default", 1_024, "Keras's default: op by op, float32 from the host, batch 256"),
        ("xla", 32_768, "+ XLA compiles the step"),
        ("uint8", 32_768, "+ uint8 pixels"),
        ("batch", 32_768, "+ batch 1,024"),
        ("spe", 32_768, "+ steps_per_execution=8"),
        ("resident", 32_768, "+ images resident on the GPU"),
        ("bf16", 32_768, "+ bfloat16 (mixed precision)"),
        ("scan", 32_768, "+ one program per 32 steps (lax.scan)"),
        ("resample", 32_768, "+ augmentation in one resampling, not two"),
        ("pool", 32_768, "+ max pooling as reshape and max"),
        ("batch4096", 65_536, "+ batch 4,096")), 1)})
VARIANTS.update({
    "plain-xla": Variant("step 2 without the augmentation layers", group="augmentation",
                         measure=climb("xla", augment=False)),
    "plain-batch4096": Variant("step 11 without augmentation", group="augmentation",
                               measure=climb("batch4096", 65_536, augment=False)),
    "torch-compile": anchor("PyTorch, torch.compile, bfloat16, batch 1,024, resident", 32_768,
                            batch=1_024, compile=True, bf16=True),
    "torch-batch4096": anchor("PyTorch as step 11: batch 4,096, pooling as reshape and max",
                              65_536, batch=4_096, reshape_pool=True),
    "torch-graphs": anchor("+ CUDA graphs (torch.compile's reduce-overhead)", 65_536,
                           batch=4_096, reshape_pool=True, graphs=True),
    "cpu-keras-xla": Variant("CPU: Keras on XLA:CPU, uint8, batch 256", device="cpu", group="cpu",
                             measure=climb("spe", 256, device="cpu", batch=256)),
    "cpu-torch": Variant("CPU: PyTorch eager, every core, batch 256", device="cpu", group="cpu",
                         measure=torch("cpu", 256, batch=256, compile=False, bf16=False))})
# --8<-- [end:register]


def fits(augment, images, variants, batch=256, size=64, xla=True, **case) -> Case:
    return Case(params={"images": images, "image_size": size, "settings": {
        "augment": augment, "xla": xla, "batch": batch}}, variants=variants, **case)


GPU = 20_480  # 80 steps of 256: about the 25,000 images of Kaggle's training set
CASES = {
    "gpu-augmented": fits(True, GPU, ("gpu-float32", "gpu-bfloat16")),
    "gpu-plain": fits(False, GPU, ("gpu-float32", "gpu-bfloat16")),
    "cpu-augmented": fits(True, 1_024, ("cpu-float32",), note="CPU epochs of 1,024 images (the "
                          "GPU's: 20,480); bfloat16 is not measured on the CPU"),
    "cpu-plain": fits(False, 1_024, ("cpu-float32",)),
    "gpu-augmented-keras-default": fits(True, 5_120, ("gpu-float32",), xla=False, note=(
        "Keras's own choice (no XLA for the augmented model, every step run op by op); 5,120 "
        "images per epoch, as it is ~70 times slower")),
    "gpu-augmented-1024": fits(True, 4 * GPU, ("gpu-float32", "gpu2-float32"), batch=1024,
                               default=False,
                               note="one GPU against two at the same global batch of 1,024"),
    "cpu-smoke": fits(True, 64, ("cpu-float32",), batch=32, size=32, default=False,
                      note="a quick check of the code path (tests), not a result"),
    "climb": Case(params={"images": 65_536, "image_size": 64}, default=False,
                  variants=tuple(k for k, v in VARIANTS.items() if v.group),
                  rounds=Rounds(rounds=3, per_round=6, round_s=3.0, warm_s=1.0, build_s=170),
                  note="the climb: every row in one process; a call is one epoch"),
    "climb-smoke": Case(params={"images": 64, "image_size": 16, "settings": {"batch": 8},
                                "trace": False},
                        variants=("climb-batch4096", "cpu-keras-xla"), default=False,
                        rounds=Rounds(rounds=2, per_round=5, round_s=0.0, warm_s=0.0),
                        note="a quick check of the climb's code path (tests), not a result"),
}


def reference(p: dict) -> dict:
    """Whether XLA compiles a model.fit row's step: where allowed or nothing forbids it."""
    s = p.get("settings", {})
    return {"jit_compile": s.get("xla", True) or not s.get("augment", True)}


def check(variant: str, result, ref: dict) -> dict:
    """A finite loss; a model.fit row also ran where it says, XLA compiling as the case says."""
    loss = result["loss"] if isinstance(result, dict) else result
    ok = math.isfinite(loss)
    if isinstance(result, dict) and result["backend"] == "jax":  # the places JAX reports
        wanted = 2 if variant.split("-")[0].endswith("2") else 1
        ok = ok and result["devices"] == wanted and result["jit_compile"] == ref["jit_compile"]
        ok = ok and variant.startswith("cpu") == ("cpu" in result["device"].lower())
    return {"metric": "training loss of the epoch checked (binary cross-entropy)",
            "value": round(loss, 5) if math.isfinite(loss) else str(loss), "ok": ok}


def counts(variant: str, p: dict, ref: dict) -> dict:  # a call is one image
    from climb import train_flop_per_image

    return {"work": {"images": 1}, "flops": train_flop_per_image(p["image_size"])}


BENCHMARK = Benchmark("keras", VARIANTS, CASES, reference, check, counts,
                      lambda p: images(p["images"], p["image_size"]))
