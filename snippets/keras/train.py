"""Train the article's cats-vs-dogs CNN with Keras 3 on every visible GPU (or the CPU), resumably.

    python snippets/keras/train.py DATA --output-dir runs/cnn --epochs 25

DATA holds cats/ and dogs/ (20 % of the images are held out for validation, with a fixed seed) or
train/{cats,dogs}/ and validation/{cats,dogs}/. Each epoch saves OUTPUT/last.keras (model and
optimizer state) and OUTPUT/history.json; running the same command again resumes after the last
finished epoch. The model with the best validation accuracy is OUTPUT/best.keras.
"""

# --8<-- [start:imports]
import os
import signal
import sys


def interrupted(signum, frame):
    """Ctrl-C, wherever it lands (even inside a slow import below): one line and exit code 130."""
    os.write(2, b"interrupted\n")
    os._exit(130)  # at once: an exception raised here could land in a C extension or be ignored


if __name__ == "__main__":
    signal.signal(signal.SIGINT, interrupted)

import argparse
import contextlib
import json
import time
import warnings
from pathlib import Path

from PIL import Image, UnidentifiedImageError
# --8<-- [end:imports]

BACKENDS = ("tensorflow", "jax", "torch")  # KERAS_BACKEND values this script supports
CLASS_NAMES = ["cats", "dogs"]  # label 0 and label 1: the model outputs P(dog)
IMAGE_SUFFIXES = (".bmp", ".gif", ".jpeg", ".jpg", ".png")  # what image_dataset_from_directory reads
READABLE_FORMATS = {"BMP", "GIF", "JPEG", "PNG"}  # what TensorFlow's image decoder reads
VALIDATION_SPLIT = 0.2
SEED = 1337


def number(kind, low, high):
    """An argparse type: a `kind` (int or float) from low to high; anything else is a one-line error."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {'a whole number' if kind is int else 'a number'}: {text!r}") from None
        if not low <= value <= high:  # false for nan too
            raise argparse.ArgumentTypeError(f"must be from {low} to {high}, got {text}")
        return value
    return parse


class InputError(Exception):
    """Bad input that the user can fix: reported as one line, exit status 2."""


# --8<-- [start:checks]
def find_folders(data_dir: Path) -> dict[str, Path]:
    """{"train": folder[, "validation": folder]}, each holding cats/ and dogs/."""
    if not data_dir.is_dir():
        raise InputError(f"data folder {data_dir} does not exist")
    if (data_dir / "train").is_dir() or (data_dir / "validation").is_dir():
        roots = {"train": data_dir / "train", "validation": data_dir / "validation"}
    else:
        roots = {"train": data_dir}
    for root in roots.values():
        if not root.is_dir():
            raise InputError(f"{root} is missing: give both train/ and validation/, or neither")
        if not any(root.iterdir()):
            raise InputError(f"data folder {root} is empty")
        for name in CLASS_NAMES:
            if (root / name).is_dir():
                continue
            if any(root.glob("cat.*.jpg")):
                raise InputError(f"{root} has Kaggle's flat layout (cat.N.jpg, dog.N.jpg): move "
                                 f"the files into {root}/cats/ and {root}/dogs/ first")
            raise InputError(f"class folder {root / name} is missing "
                             f"(expected {root}/cats/ and {root}/dogs/)")
    return roots


def check_images(roots: dict[str, Path]) -> int:
    """Count the images; reject the data set, naming the files, if any cannot be decoded."""
    total, bad, modes = 0, [], {}
    for root in roots.values():
        for name in CLASS_NAMES:
            files = sorted(p for p in (root / name).rglob("*")
                           if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)
            if not files:
                raise InputError(f"{root / name} holds no images ({' '.join(IMAGE_SUFFIXES)})")
            for path in files:
                try:
                    with Image.open(path) as image:
                        kind = image.format
                        if image.mode != "RGB":
                            modes[image.mode] = modes.get(image.mode, 0) + 1
                        image.verify()  # reads the whole file's structure, not the pixels
                    if kind not in READABLE_FORMATS:
                        bad.append(f"{path} ({kind}, which TensorFlow cannot decode)")
                except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
                    bad.append(f"{path} ({type(exc).__name__})")
            total += len(files)
    if bad:
        more = f" and {len(bad) - 1} more" if len(bad) > 1 else ""
        raise InputError(f"{len(bad)} file(s) are not readable images: {bad[0]}{more}; "
                         "delete or replace them")
    if modes:  # TensorFlow's decoder (channels=3) converts them: say so rather than silently
        found = ", ".join(f"{n} {mode}" for mode, n in sorted(modes.items()))
        print(f"note: images that are not 8-bit RGB ({found}) are converted as they are read: "
              "alpha dropped, grey repeated into RGB, 16-bit scaled to 8, CMYK and palettes to "
              "RGB", file=sys.stderr)
    if "validation" not in roots and total * VALIDATION_SPLIT < 1:
        raise InputError(f"only {total} images: too few to hold {VALIDATION_SPLIT:.0%} out")
    return total
# --8<-- [end:checks]


def first_damaged(roots: dict[str, Path]) -> Path | None:
    """The first image whose pixels do not decode (slow: only used after a decoding error)."""
    for root in roots.values():
        for name in CLASS_NAMES:
            for path in sorted((root / name).rglob("*")):
                if path.suffix.lower() in IMAGE_SUFFIXES:
                    try:
                        with Image.open(path) as image:
                            image.load()
                    except (OSError, SyntaxError, ValueError):
                        return path
    return None


def read_history(out: Path, image_size: int) -> list[dict]:
    """The epochs already finished in `out` (empty for a new run)."""
    history_file, last = out / "history.json", out / "last.keras"
    if not history_file.exists():
        return []
    try:
        saved = json.loads(history_file.read_text())
        epochs = saved["epochs"]
    except (OSError, ValueError, KeyError) as exc:
        raise InputError(f"{history_file} is unreadable ({exc}); remove it to start afresh")
    if saved.get("image_size") != image_size:
        raise InputError(f"{out} holds a model for {saved.get('image_size')}-pixel images, not "
                         f"{image_size}: use the same --image-size or another --output-dir")
    if epochs and not last.exists():
        raise InputError(f"{history_file} lists {len(epochs)} epochs but {last} is missing")
    return epochs


def write_json(path: Path, doc: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    os.replace(tmp, path)  # a crash never leaves half a file behind


# --8<-- [start:save]
def save_model(model, path: Path) -> None:
    """model.save to a temporary file, then rename: a stop during the save keeps the old file."""
    tmp = path.with_name(f".{path.stem}.tmp.keras")  # Keras wants the .keras suffix
    try:
        model.save(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
# --8<-- [end:save]


def load_saved(keras, path: Path):
    """keras.models.load_model, with a damaged or foreign file reported as one InputError."""
    try:
        with warnings.catch_warnings():  # allow_xla below answers Keras's jit_compile warning
            warnings.simplefilter("ignore", UserWarning)
            return keras.models.load_model(path)
    except Exception as exc:  # zip, h5 and config errors all land here
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise InputError(f"cannot load {path} ({first}); delete it (and history.json, to start "
                         "afresh)") from None


def check_output_dir(out: Path) -> None:
    """Before any work: the output folder is a folder we can create and write to."""
    if out.exists() and not out.is_dir():
        raise InputError(f"--output-dir {out} exists and is not a folder")
    parent = next(p for p in [out, *out.parents] if p.exists())
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(f"--output-dir {out}: cannot write in {parent}")


def check_backend() -> str:
    """The Keras backend asked for; Keras itself silently falls back to TensorFlow."""
    name = os.environ.get("KERAS_BACKEND", "tensorflow")
    if name not in BACKENDS:
        raise InputError(f"KERAS_BACKEND={name!r} is not one of {', '.join(BACKENDS)}")
    return name


def import_frameworks():
    """(keras, tensorflow), or an InputError naming what to install."""
    try:
        import keras
        import tensorflow as tf  # tf.data, which image_dataset_from_directory needs on every backend
    except ImportError as exc:
        raise InputError(f"{exc.name} is not installed: pip install keras tensorflow "
                         "(on a GPU: tensorflow[and-cuda]; for KERAS_BACKEND=jax also jax)") from None
    return keras, tf


# --8<-- [start:devices]
def use_every_gpu(keras, tf):
    """Data parallelism over every visible GPU. Returns (scope to build the model in, GPU count)."""
    backend = keras.backend.backend()
    if backend == "tensorflow":
        gpus = tf.config.list_physical_devices("GPU")
        if len(gpus) > 1:
            return tf.distribute.MirroredStrategy().scope(), len(gpus)
        return contextlib.nullcontext(), len(gpus)
    if backend == "jax":
        gpus = [d for d in keras.distribution.list_devices() if d.startswith("gpu")]
        if len(gpus) > 1:
            keras.distribution.set_distribution(keras.distribution.DataParallel(devices=gpus))
        return contextlib.nullcontext(), len(gpus)
    import torch  # the PyTorch backend trains on one device

    return contextlib.nullcontext(), min(torch.cuda.device_count(), 1)
# --8<-- [end:devices]


# --8<-- [start:data]
def load_data(keras, tf, roots: dict[str, Path], image_size: int, batch_size: int,
              drop_remainder: bool):
    """(train, validation) tf.data pipelines of (uint8-range float images, 0/1 labels)."""
    common = dict(labels="inferred", label_mode="binary", class_names=CLASS_NAMES,
                  image_size=(image_size, image_size), batch_size=None, seed=SEED)
    if "validation" in roots:
        train = keras.utils.image_dataset_from_directory(roots["train"], **common)
        val = keras.utils.image_dataset_from_directory(roots["validation"], shuffle=False,
                                                       **common)
    else:
        train, val = keras.utils.image_dataset_from_directory(
            roots["train"], validation_split=VALIDATION_SPLIT, subset="both", **common)
    autotune = tf.data.AUTOTUNE
    train = (train.cache()                      # decode and resize each file once
             .shuffle(2048, seed=SEED)          # a new order every epoch
             .batch(batch_size, drop_remainder=drop_remainder)
             .prefetch(autotune))               # prepare the next batch while this one trains
    val = val.cache().batch(batch_size, drop_remainder=drop_remainder).prefetch(autotune)
    return train, val
# --8<-- [end:data]


def train(args, roots: dict[str, Path], history: list[dict]) -> int:
    # Imported only now, after the checks: starting TensorFlow takes several seconds.
    keras, tf = import_frameworks()

    from model import allow_xla, build_model, compile_model  # model.py, beside this file

    keras.utils.set_random_seed(args.seed)
    if args.mixed_precision:  # bfloat16 arithmetic, float32 weights (GPUs since Ampere, TPUs)
        keras.mixed_precision.set_global_policy("mixed_bfloat16")
    out, done = args.output_dir, len(history)
    last, best, history_file = out / "last.keras", out / "best.keras", out / "history.json"
    scope, gpus = use_every_gpu(keras, tf)
    print(f"backend {keras.backend.backend()}, "
          f"{f'{gpus} GPU(s)' if gpus else 'no GPU: training on the CPU'}")
    train_ds, val_ds = load_data(keras, tf, roots, args.image_size, args.batch_size,
                                 drop_remainder=gpus > 1 and keras.backend.backend() == "jax")

    # --8<-- [start:resume]
    with scope:
        if done:  # resume: weights, optimizer state and its step count come back from last.keras
            model = allow_xla(load_saved(keras, last))
            print(f"resuming after epoch {done} from {last}")
        else:
            model = compile_model(build_model(args.image_size), args.learning_rate)
    best_so_far = max((e["val_accuracy"] for e in history), default=float("-inf"))
    started = {}

    def save_epoch(epoch: int, logs: dict) -> None:
        nonlocal best_so_far
        history.append({"epoch": epoch + 1, **{k: float(v) for k, v in logs.items()},
                        "seconds": round(time.perf_counter() - started["t"], 3)})
        if history[-1]["val_accuracy"] > best_so_far:  # the best model so far: keep it
            save_model(model, best)
            best_so_far = history[-1]["val_accuracy"]
            print(f"epoch {epoch + 1}: val_accuracy {best_so_far:.4f}, the best so far: {best}")
        save_model(model, last)
        write_json(history_file, {"image_size": args.image_size, "batch_size": args.batch_size,
                                  "learning_rate": args.learning_rate, "gpus": gpus,
                                  "mixed_precision": args.mixed_precision,
                                  "backend": keras.backend.backend(), "epochs": history})

    callbacks = [keras.callbacks.LambdaCallback(
        on_epoch_begin=lambda epoch, logs: started.update(t=time.perf_counter()),
        on_epoch_end=save_epoch)]
    try:
        model.fit(train_ds, validation_data=val_ds, epochs=args.epochs, initial_epoch=done,
                  callbacks=callbacks, shuffle=False,  # the pipeline shuffles (load_data)
                  verbose=1 if sys.stdout.isatty() else 2)  # a progress bar in a terminal
    except KeyboardInterrupt:
        print(f"\ninterrupted after epoch {len(history)}: run the same command to resume",
              file=sys.stderr)
        return 130
    except tf.errors.InvalidArgumentError:  # a file whose header is fine but data is damaged
        print(f"error: TensorFlow could not decode {first_damaged(roots) or 'an image'}; "
              f"delete or replace it", file=sys.stderr)
        return 1
    # --8<-- [end:resume]

    top = max(history, key=lambda e: e["val_accuracy"])
    print(f"best val_accuracy {top['val_accuracy']:.3f} at epoch {top['epoch']}: {best}")
    # Self-check: the saved file, reloaded, must score what was recorded when it was saved.
    reloaded = allow_xla(load_saved(keras, best))
    score = reloaded.evaluate(val_ds, verbose=0, return_dict=True)["accuracy"]
    if abs(score - top["val_accuracy"]) > 1e-6:
        print(f"error: {best} reloaded scores {score:.4f}, not {top['val_accuracy']:.4f}",
              file=sys.stderr)
        return 1
    print(f"OK: {best} reloads and scores val_accuracy {score:.3f}; history in {history_file}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Backend: set KERAS_BACKEND=tensorflow (default), jax or torch. Needs model.py "
               "beside this file, keras and tensorflow (pip install keras tensorflow).")
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    parser.add_argument("data_dir", type=Path, help="folder with cats/ and dogs/ (see above)")
    parser.add_argument("--output-dir", type=Path, default=Path("runs/cats-vs-dogs"),
                        help="where models and history go (default runs/cats-vs-dogs)")
    for option, kind, low, high, default, text in [
            ("--image-size", int, 8, 1024, 64, "side in pixels"),
            ("--batch-size", int, 1, 65536, 32, "images per step, over all GPUs together"),
            ("--epochs", int, 1, 100_000, 25, "total epochs"),
            ("--learning-rate", float, 0.0, 1.0, 1e-3, "Adam's learning rate"),  # 0 and 1: refused below
            ("--seed", int, 0, 2**32 - 1, SEED, "random seed")]:
        parser.add_argument(option, type=number(kind, low, high), default=default,
                            help=f"{text} (default {default:g})")
    parser.add_argument("--mixed-precision", action="store_true",
                        help="compute in bfloat16 (Keras mixed_bfloat16), weights stay float32")
    args = parser.parse_args(argv)
    if args.learning_rate in (0.0, 1.0):
        parser.error(f"--learning-rate must be strictly between 0 and 1, got {args.learning_rate}")

    try:
        check_backend()
        check_output_dir(args.output_dir)
        roots = find_folders(args.data_dir)
        n_images = check_images(roots)
        history = read_history(args.output_dir, args.image_size)
        if len(history) >= args.epochs:
            print(f"{args.output_dir} already holds {len(history)} trained epochs "
                  f"(asked for {args.epochs}): nothing to do")
            return 0
        print(f"{n_images} images checked in {args.data_dir}")
        args.output_dir.mkdir(parents=True, exist_ok=True)
        return train(args, roots, history)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: run the same command to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)  # imports done: Ctrl-C raises KeyboardInterrupt, main() handles it
    sys.exit(main())
