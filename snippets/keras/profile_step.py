"""Where does a Keras training step's time go? Step times with and without augmentation, and why.

Needs model.py beside it and the JAX backend (the default here). For each case it prints whether
Keras compiled the train step with XLA (model.jit_compile), the time per step at each batch size,
how many XLA compilations one warm epoch triggered (jax.log_compiles: one jitted step compiles
once; a step run op by op compiles or dispatches every op by itself), and the augmentation layers
alone. With --trace DIR it records a JAX profiler trace of a few steps of each case.

    KERAS_BACKEND=jax python snippets/keras/profile_step.py --batch-sizes 32 256
"""

import argparse
import glob
import gzip
import json
import logging
import os
import time

os.environ.setdefault("KERAS_BACKEND", "jax")  # this profile reads JAX's compile log and trace

import jax
import keras
import numpy as np

from model import allow_xla, build_model  # model.py, beside this file

CASES = {  # name -> (augmentation layers in the model, let XLA compile them)
    "no-augmentation": (False, False),
    "augmentation": (True, False),
    "augmentation-jit": (True, True),
}


class CountCompiles(logging.Handler):
    """Counts the 'Compiling ...' lines that jax.log_compiles() writes."""

    def __init__(self):
        super().__init__()
        self.names: list[str] = []

    def emit(self, record):
        message = record.getMessage()
        if message.startswith("Compiling "):
            self.names.append(message.split()[1])


def summarize_trace(folder: str, steps: int) -> str:
    """Per step: XLA programs launched, GPU kernels, and the share of the time the GPU was busy."""
    files = glob.glob(os.path.join(folder, "plugins", "profile", "*", "perfetto_trace.json.gz"))
    if not files:
        return f"no perfetto trace under {folder}"
    with gzip.open(files[0]) as f:
        events = json.load(f)["traceEvents"]
    processes = {e["pid"]: e["args"]["name"] for e in events
                 if e.get("ph") == "M" and e.get("name") == "process_name"}
    spans = [e for e in events if e.get("ph") == "X"]
    launches = sum(1 for e in spans if "ExecutePrepare" in e["name"])  # one per XLA program run
    kernels = sorted((e["ts"], e["ts"] + e.get("dur", 0)) for e in spans
                     if "/device:GPU" in processes.get(e["pid"], ""))
    start = min(e["ts"] for e in spans)
    wall = max(e["ts"] + e.get("dur", 0) for e in spans) - start
    busy, end = 0.0, float("-inf")
    for begin, finish in kernels:  # the union of kernel intervals
        if finish > end:
            busy += finish - max(begin, end)
            end = finish
    return (f"{launches / steps:.0f} XLA programs launched per step, {len(kernels) / steps:.0f} "
            f"GPU events per step, GPU busy {busy / wall:.0%} of {wall / 1e3:.0f} ms traced")


def step_time(model, images, labels, batch: int, steps: int, counter=None) -> float:
    """Seconds per training step, after a warm-up epoch of the same shape."""
    n = batch * steps
    with jax.log_compiles(counter is not None):  # the first epoch: what does XLA compile?
        model.fit(images[:n], labels[:n], batch_size=batch, epochs=1, verbose=0)
    t0 = time.perf_counter()
    history = model.fit(images[:n], labels[:n], batch_size=batch, epochs=1, verbose=0)
    float(history.history["loss"][-1])  # the loss is on the host: every step has finished
    return (time.perf_counter() - t0) / steps


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[8, 16])
    parser.add_argument("--steps", type=int, default=2, help="timed steps (default 2)")
    parser.add_argument("--cases", nargs="+", choices=list(CASES), default=list(CASES))
    parser.add_argument("--trace", metavar="DIR", help="write a jax.profiler trace here")
    args = parser.parse_args(argv)
    if keras.backend.backend() != "jax":
        parser.error("set KERAS_BACKEND=jax: this profile reads JAX's compile log and trace")

    t_start = time.time()

    def say(text: str) -> None:
        print(f"[{time.time() - t_start:6.1f} s, unix {time.time():.1f}] {text}", flush=True)

    say(f"keras {keras.__version__}, jax {jax.__version__}, devices {jax.devices()}")
    rng = np.random.default_rng(0)
    n = max(args.batch_sizes) * args.steps
    images = rng.uniform(0, 255, (n, 64, 64, 3)).astype("float32")
    labels = rng.integers(0, 2, n).astype("float32")
    counter = CountCompiles()
    logging.getLogger("jax").addHandler(counter)

    for name in args.cases:
        augment, jit_augment = CASES[name]
        model = build_model(64, augment=augment)
        if jit_augment:  # the fix: tell Keras that XLA may compile these layers (model.py)
            allow_xla(model)
        model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="binary_crossentropy",
                      metrics=["accuracy"])  # jit_compile="auto": Keras decides
        say(f"{name}: model.jit_compile = {model.jit_compile}; layers that refuse XLA: "
            f"{[l.name for l in model._flatten_layers() if not l.supports_jit] or 'none'}")
        for i, batch in enumerate(args.batch_sizes):
            counter.names.clear()
            seconds = step_time(model, images, labels, batch, args.steps, counter)
            say(f"{name}: batch {batch:>4}: {seconds * 1e3:8.2f} ms/step, "
                f"{batch / seconds:>10,.0f} images/s")
            if i == 0:
                kinds = sorted(set(counter.names))
                say(f"{name}: the first epoch compiled {len(counter.names)} XLA programs: "
                    f"{', '.join(kinds[:8])}{' ...' if len(kinds) > 8 else ''}")
        if args.trace:
            batch, folder = max(args.batch_sizes), os.path.join(args.trace, name)
            with jax.profiler.trace(folder, create_perfetto_trace=True):
                model.fit(images[:batch * 5], labels[:batch * 5], batch_size=batch, epochs=1,
                          verbose=0)
            say(f"{name}: trace of 5 steps at batch {batch}: {summarize_trace(folder, 5)}")

    aug = build_model(64).get_layer("augmentation")
    batch = images[:max(args.batch_sizes)]
    for label, layer in [("all three", aug)] + [(l.name, l) for l in aug.layers]:
        layer(batch, training=True).block_until_ready()  # first call: every op compiles
        t0 = time.perf_counter()
        for _ in range(10):
            out = layer(batch, training=True)
        out.block_until_ready()
        say(f"augmentation alone, eager, {label}, batch {len(batch)}: "
            f"{(time.perf_counter() - t0) / 10 * 1e3:.2f} ms per call")


if __name__ == "__main__":
    main()
