"""Training throughput of the cats-vs-dogs CNN in images per second: GPU vs CPU, 1 GPU vs several.

Builds the model with train.py's model.py and feeds it in-memory NumPy images drawn like
make_dataset.py's (no tf.data, so it runs where TensorFlow is not installed, e.g. KERAS_BACKEND=jax).
Per case: one first epoch (compilation included, reported apart), warm-up epochs, then the median
of --repeats timed epochs. Writes a results file (bench.results schema).

    python snippets/keras/bench_training.py --batch-sizes 32 256 --images 512 -o results.json
    JAX_PLATFORMS=cpu KERAS_BACKEND=jax python snippets/keras/bench_training.py ...   # the CPU run
    python snippets/keras/bench_training.py --merge gpu.json cpu.json -o all.json
"""

import argparse
import contextlib
import math
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # snippets/: the shared benchmark core
sys.path.insert(0, str(HERE))  # model.py and make_dataset.py
from bench import results, system, timing  # noqa: E402

def make_images(n: int, size: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """n images (uint8, size x size x 3) and 0/1 labels: 512 distinct ones, repeated."""
    from make_dataset import draw

    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, min(n, 512))
    images = np.stack([draw("dog" if y else "cat", rng, size)[:size, :size] for y in labels])
    reps = math.ceil(n / len(labels))
    return np.tile(images, (reps, 1, 1, 1))[:n], np.tile(labels, reps)[:n].astype("float32")


def accelerators(keras, kind: str) -> list[str]:
    """The devices of a kind ("gpu" or "cpu") this process can use, as "gpu:N" names."""
    backend = keras.backend.backend()
    if backend == "jax":
        import jax

        return [f"{kind}:{d.id}" for d in jax.devices() if d.platform == kind]
    if backend == "tensorflow":
        import tensorflow as tf

        return [f"{kind}:{i}" for i in range(len(tf.config.list_logical_devices(kind.upper())))]
    import torch

    return [f"{kind}:0"] if kind == "cpu" or torch.cuda.is_available() else []


# --8<-- [start:parallel]
def parallel_scope(keras, devices: list[str]):
    """Data parallelism over `devices` (a plain scope for one device)."""
    if len(devices) < 2:
        return contextlib.nullcontext()
    if keras.backend.backend() == "jax":
        return keras.distribution.DataParallel(devices=devices).scope()
    import tensorflow as tf

    return tf.distribute.MirroredStrategy([f"/{d}" for d in devices]).scope()
# --8<-- [end:parallel]


def measure(keras, images, labels, batch_size: int, devices: list[str], repeats: int,
            warmup: int) -> list[dict]:
    from model import build_model, compile_model

    kind = devices[0].split(":")[0]
    params = {"batch_size": batch_size, "image_size": images.shape[1],
              "images_per_epoch": len(images), "devices": len(devices),
              "backend": keras.backend.backend()}
    losses = []

    keras.utils.set_random_seed(0)
    with parallel_scope(keras, devices):
        model = compile_model(build_model(images.shape[1]))

        def epoch() -> None:
            history = model.fit(images, labels, batch_size=batch_size, epochs=1, verbose=0)
            losses.append(float(history.history["loss"][-1]))  # waits for the device

        first = timing.time_once(epoch)  # includes tracing and XLA compilation
        stats = timing.time_host(epoch, repeats=repeats, warmup=warmup)
        accuracy = model.evaluate(images, labels, batch_size=256, verbose=0, return_dict=True)
    error = {"metric": "1 - training accuracy after all epochs",
             "value": round(1 - float(accuracy["accuracy"]), 4)}
    variant = f"keras-{keras.backend.backend()}-{len(devices)}{kind}"
    common = dict(params=params, error=error,
                  losses={"first_epoch": losses[0], "last_epoch": losses[-1]})
    n = len(images)
    return [
        results.measurement("train_epoch", variant, kind, "compile_first",
                            {"median_s": first, "min_s": first, "max_s": first, "repeats": 1,
                             "clock": "host"}, **common),
        results.measurement("train_epoch", variant, kind, "end_to_end", stats,
                            work={"images": n, "images_per_s": round(n / stats.median_s, 1)},
                            **common),
    ]


def merge(paths: list[Path], out: Path) -> int:
    docs = [results.load_results(p) for p in paths]
    notes = [n for d in docs for n in d["notes"]]
    notes += [f"run {i + 1} of {len(docs)}: {d['system']['command']} ({d['system']['date']})"
              for i, d in enumerate(docs)]
    measurements = [m for d in docs for m in d["measurements"]]
    results.write_results(out, docs[0]["benchmark"], docs[0]["system"], measurements, notes)
    print(f"merged {len(measurements)} measurements into {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[32, 256])
    parser.add_argument("--images", type=int, default=2048, help="images per epoch (default 2048)")
    parser.add_argument("--image-size", type=int, default=64, help="side in pixels (default 64)")
    parser.add_argument("--repeats", type=int, default=timing.MIN_REPEATS,
                        help=f"timed epochs per case (default {timing.MIN_REPEATS})")
    parser.add_argument("--warmup", type=int, default=1,
                        help="untimed epochs after the first (default 1)")
    parser.add_argument("--device", choices=["gpu", "cpu"],
                        help="what to train on (default: the GPUs if any, else the CPU)")
    parser.add_argument("--scaling", action="store_true",
                        help="with 2 or more devices, also train on all of them (data parallel)")
    parser.add_argument("--merge", type=Path, nargs="+", metavar="JSON",
                        help="merge these results files into -o instead of measuring")
    parser.add_argument("-o", "--output", type=Path, required=True, help="results file to write")
    args = parser.parse_args(argv)
    if args.merge:
        missing = [str(p) for p in args.merge if not p.is_file()]
        if missing:
            parser.error(f"no such results file: {', '.join(missing)}")
        return merge(args.merge, args.output)
    if min(args.batch_sizes) < 1 or args.images < max(args.batch_sizes):
        parser.error("batch sizes must be at least 1 and at most --images")
    if args.repeats < 1 or args.warmup < 0 or not 8 <= args.image_size <= 512:
        parser.error("need --repeats >= 1, --warmup >= 0 and --image-size in [8, 512]")

    import keras

    kind = args.device or ("gpu" if accelerators(keras, "gpu") else "cpu")
    devices = accelerators(keras, kind)
    if not devices:
        print(f"error: no {kind} device visible to the {keras.backend.backend()} backend",
              file=sys.stderr)
        return 1
    images, labels = make_images(args.images, args.image_size)
    configs = [devices[:1]] + ([devices] if args.scaling and len(devices) > 1 else [])
    notes = [f"{len(devices)} {kind} device(s) visible: {', '.join(devices)}; backend "
             f"{keras.backend.backend()}; images fed from in-memory NumPy arrays"]
    if args.scaling and len(devices) < 2:
        notes.append(f"scaling not measured: only one {kind} device visible")
    rows, failed = [], 0
    about = system.describe_system(check_cuda=False)
    for group in configs:
        for batch_size in args.batch_sizes:
            if batch_size % len(group):
                notes.append(f"batch {batch_size} skipped on {len(group)} devices: not divisible")
                continue
            print(f"measuring {len(group)} {kind} device(s), batch {batch_size} ...",
                  file=sys.stderr, flush=True)  # progress: a case can take a minute
            found = measure(keras, images, labels, batch_size, group, args.repeats, args.warmup)
            rows += found
            m, loss = found[1], found[1]["losses"]
            # Correctness: the loss must be finite and lower after training than after epoch 1.
            ok = math.isfinite(loss["last_epoch"]) and loss["last_epoch"] < loss["first_epoch"]
            failed += not ok
            print(f"{m['variant']:<24} batch {batch_size:>4}: "
                  f"{m['work']['images_per_s']:>10,.0f} images/s  (first epoch "
                  f"{found[0]['median_s']:.2f} s, accuracy {1 - m['error']['value']:.3f})"
                  + ("" if ok else "  ERROR: the loss did not go down"), flush=True)
            # Written after every case, so a run stopped by a time limit keeps what it measured.
            results.write_results(args.output, "keras_training", about, rows, notes)
    print(f"wrote {args.output}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
