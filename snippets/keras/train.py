"""Train the article's cats-vs-dogs CNN with Keras 3 on every visible GPU (or the CPU), resumably.

    python snippets/keras/train.py DATA --output-dir runs/cnn --epochs 25

DATA holds cats/ and dogs/ (20 % of the images are held out for validation, with a fixed seed) or
train/{cats,dogs}/ and validation/{cats,dogs}/. The images are decoded once, with Pillow, into
uint8 arrays in memory; TensorFlow is not needed unless it is the backend. Each epoch saves
OUTPUT/last.keras (model and optimizer state) and OUTPUT/history.json; running the same command
again resumes after the last finished epoch. The model with the best validation accuracy is
OUTPUT/best.keras. history.json records the epoch and SHA-256 of both models, and is written
after them: a resume finishes or drops a save that was interrupted, and refuses models that do
not match it. It records the settings and the data set (its files and sizes) too: a resume with
others is refused. One run at a time per output folder (OUTPUT/run.lock).
"""

# --8<-- [start:imports]
import os
import signal
import sys

from tool_habit import (InputError, check_output_dir, interrupted, keras_file_problem,
                        main_to_stdout, number, one_run_in)

if __name__ == "__main__":  # tool_habit.py, beside this file, loads the standard library only:
    signal.signal(signal.SIGINT, interrupted)  # so Ctrl-C is one line from here on

import argparse
import contextlib
import hashlib
import json
import math
import time
import warnings
from pathlib import Path

import numpy as np
from PIL import Image, UnidentifiedImageError
# --8<-- [end:imports]

BACKENDS = ("tensorflow", "jax", "torch")  # KERAS_BACKEND values this script supports
CLASS_NAMES = ["cats", "dogs"]  # label 0 and label 1: the model outputs P(dog)
IMAGE_SUFFIXES = (".bmp", ".gif", ".jpeg", ".jpg", ".png")  # the files read in a class folder
READABLE_FORMATS = {"BMP", "GIF", "JPEG", "PNG"}  # what those suffixes promise
VALIDATION_SPLIT = 0.2
SEED = 1337


# --8<-- [start:checks]
def find_folders(data_dir: Path) -> dict[str, Path]:
    """{"train": folder[, "validation": folder]}, each holding cats/ and dogs/."""
    if not data_dir.is_dir():
        raise InputError(f"data folder {data_dir} does not exist" if not data_dir.exists() else
                         f"{data_dir} is not a folder: give the folder that holds cats/ and dogs/")
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


def image_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)


def check_images(roots: dict[str, Path]) -> int:
    """Count the images; reject the data set, naming the files, if any cannot be decoded."""
    total, bad, modes = 0, [], {}
    for root in roots.values():
        for name in CLASS_NAMES:
            files = image_files(root / name)
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
                        bad.append(f"{path} ({kind} data under a {path.suffix} name)")
                except (UnidentifiedImageError, Image.DecompressionBombError, OSError,
                        SyntaxError, ValueError) as exc:  # a bomb: too many pixels to decode
                    bad.append(f"{path} ({type(exc).__name__})")
            total += len(files)
    if bad:
        more = f" and {len(bad) - 1} more" if len(bad) > 1 else ""
        raise InputError(f"{len(bad)} file(s) are not readable images: {bad[0]}{more}; "
                         "delete or replace them")
    if modes:  # read_images converts them: say so rather than silently
        found = ", ".join(f"{n} {mode}" for mode, n in sorted(modes.items()))
        print(f"note: images that are not 8-bit RGB ({found}) are converted as they are read: "
              "alpha dropped, grey repeated into RGB, 16-bit scaled to 8, CMYK and palettes to "
              "RGB", file=sys.stderr)
    if "validation" not in roots and total * VALIDATION_SPLIT < 1:
        raise InputError(f"only {total} images: too few to hold {VALIDATION_SPLIT:.0%} out")
    return total
# --8<-- [end:checks]


def data_fingerprint(roots: dict[str, Path]) -> str:
    """SHA-256 of every image's path (within its split) and size: another data set differs."""
    digest = hashlib.sha256()
    for split, root in sorted(roots.items()):
        for name in CLASS_NAMES:
            for path in image_files(root / name):
                digest.update(f"{split}/{path.relative_to(root)}\0{path.stat().st_size}\n".encode())
    return digest.hexdigest()


RESUMED_SETTINGS = {"batch_size": "--batch-size", "learning_rate": "--learning-rate",
                    "seed": "--seed", "mixed_precision": "--mixed-precision"}


def settings_problem(saved: dict, settings: dict, out: Path) -> str:
    """Why `out` cannot resume with these settings and data (one line), or "" if it can.
    A history written before a setting was recorded says nothing of it."""
    for key, option in RESUMED_SETTINGS.items():
        if key in saved and key in settings and saved[key] != settings[key]:
            return (f"{out} was trained with {option} {saved[key]}, not {settings[key]}: a resume "
                    f"keeps its settings; use {option} {saved[key]} or another --output-dir")
    if "data" in saved and "data" in settings and saved["data"] != settings["data"]:
        return (f"{out} was trained on another data set (its image files or their sizes differ): "
                "use the same data or another --output-dir")
    return ""


# --8<-- [start:data]
def read_images(files: list[Path], image_size: int) -> np.ndarray:
    """Decode each file once, with Pillow, into one (N, size, size, 3) uint8 array."""
    pixels = np.empty((len(files), image_size, image_size, 3), np.uint8)  # 12 KB an image at 64
    for i, path in enumerate(files):
        try:
            with Image.open(path) as image:
                image.load()  # every pixel: a file damaged past its header fails here
                if image.mode in ("I;16", "I;16B", "I;16L", "I"):  # 16-bit grey: top 8 bits
                    image = Image.fromarray((np.asarray(image, np.uint32) >> 8).astype(np.uint8))
                image = image.convert("RGB")  # alpha dropped, grey repeated, CMYK/palette to RGB
                pixels[i] = image.resize((image_size, image_size), Image.Resampling.BILINEAR)
        except (Image.DecompressionBombError, OSError, SyntaxError, ValueError) as exc:
            why = (str(exc).splitlines() or [type(exc).__name__])[0]
            raise InputError(f"{path} does not decode ({why}); delete or replace it") from None
    return pixels


def load_images(roots: dict[str, Path], image_size: int) -> dict[str, tuple]:
    """{"train": (x, y), "validation": (x, y)}: uint8 pixels and 0/1 labels (cats 0, dogs 1)."""
    def listed(root: Path):
        files, labels = [], []
        for label, name in enumerate(CLASS_NAMES):
            found = image_files(root / name)
            files, labels = files + found, labels + [label] * len(found)
        return files, np.array(labels, np.float32)[:, None]

    if "validation" in roots:
        splits = {split: listed(root) for split, root in roots.items()}
    else:  # the same fifth, picked with a fixed seed, on every run: a resume validates alike
        files, labels = listed(roots["train"])
        order = np.random.default_rng(SEED).permutation(len(files))
        held = int(len(files) * VALIDATION_SPLIT)
        splits = {split: ([files[i] for i in part], labels[part])
                  for split, part in (("train", order[held:]), ("validation", order[:held]))}
    return {split: (read_images(files, image_size), labels)
            for split, (files, labels) in splits.items()}


def batches(keras, x, y, batch_size: int, shuffle_seed: int | None = None, epoch: int = 0,
            drop_remainder: bool = False):
    """A keras.utils.PyDataset of (uint8 images, labels): it feeds fit on every backend."""
    class Batches(keras.utils.PyDataset):
        def __init__(self):
            super().__init__()
            self.epoch = epoch
            self.order = self.ordering()

        def ordering(self):  # a new order every epoch; the same one again after a resume
            if shuffle_seed is None:
                return np.arange(len(x))
            return np.random.default_rng([shuffle_seed, self.epoch]).permutation(len(x))

        def __len__(self):
            return len(x) // batch_size if drop_remainder else -(-len(x) // batch_size)

        def __getitem__(self, index):
            pick = self.order[index * batch_size:(index + 1) * batch_size]
            return x[pick], y[pick]  # uint8 to the device: a quarter of float32's bytes

        def on_epoch_end(self):
            self.epoch += 1
            self.order = self.ordering()

    return Batches()
# --8<-- [end:data]


MODELS = ("best.keras", "last.keras")


def staged(path: Path) -> Path:
    """Where a model waits until history.json commits it: last.keras -> last.next.keras."""
    return path.with_name(f"{path.stem}.next.keras")


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def read_history(out: Path, image_size: int, settings: dict | None = None) -> list[dict]:
    """(epochs already finished in `out`, its models' records), after settle_saves; an
    InputError if `settings` (the run's, with its data fingerprint) differ from the history's."""
    history_file, last = out / "history.json", out / "last.keras"
    if not history_file.exists():
        settle_saves(out, {})
        return [], {}
    try:
        saved = json.loads(history_file.read_text())
    except (OSError, ValueError, RecursionError) as exc:  # RecursionError: nested too deep
        why = "nested too deep" if isinstance(exc, RecursionError) else exc
        raise InputError(f"{history_file} is unreadable ({why}); remove it to start afresh")
    wrong = shape_problem(saved)
    if wrong:
        raise InputError(f"{history_file} is not a history written by train.py ({wrong}); "
                         "remove it to start afresh")
    epochs = saved["epochs"]
    if saved.get("image_size") != image_size:
        raise InputError(f"{out} holds a model for {saved.get('image_size')}-pixel images, not "
                         f"{image_size}: use the same --image-size or another --output-dir")
    if epochs and (problem := settings_problem(saved, settings or {}, out)):
        raise InputError(problem)
    settle_saves(out, saved.get("models", {}))
    if epochs and not last.exists():
        raise InputError(f"{history_file} lists {len(epochs)} epochs but {last} is missing")
    return epochs, saved.get("models", {})


def shape_problem(saved) -> str:
    """What is wrong with a history.json's structure, or "" if nothing."""
    if not isinstance(saved, dict):
        return f"a {type(saved).__name__}, not an object"
    epochs = saved.get("epochs")
    if not isinstance(epochs, list):
        return '"epochs" is not a list'
    for i, epoch in enumerate(epochs, 1):
        if not isinstance(epoch, dict) or epoch.get("epoch") != i:
            return f'entry {i} of "epochs" is not {{"epoch": {i}, ...}}'
        accuracy = epoch.get("val_accuracy")
        if not isinstance(accuracy, (int, float)) or isinstance(accuracy, bool):
            return f'epoch {i} has no numeric "val_accuracy"'
        if not math.isfinite(accuracy):  # json reads NaN and Infinity: damage, not a score
            return f'epoch {i} has "val_accuracy" {accuracy}'
    models = saved.get("models", {})
    if not isinstance(models, dict):
        return '"models" is not an object'
    for name, record in models.items():
        if (name not in MODELS or not isinstance(record, dict)
                or not isinstance(record.get("sha256"), str)
                or record.get("epoch") not in range(1, len(epochs) + 1)):
            return f'"models" entry {name!r} is not {{"epoch": 1-{len(epochs)}, "sha256": ...}}'
    return ""


# --8<-- [start:save]
def save_model(model, path: Path) -> None:
    """model.save to a temporary file, then rename: a stop during the save keeps the old file."""
    tmp = path.with_name(f".{path.stem}.tmp.keras")  # Keras wants the .keras suffix
    try:
        model.save(tmp)
        os.replace(tmp, path)
    except OSError as exc:  # Keras names no file: name the one being written
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None
    finally:
        tmp.unlink(missing_ok=True)


def commit_epoch(model, out: Path, doc: dict, improved: bool) -> dict:
    """Save one epoch so that history.json, last.keras and best.keras always agree.

    1. last.next.keras (and best.next.keras if the epoch is the best), each written atomically;
    2. history.json, with the epoch and SHA-256 of each model: the commit;
    3. the .next files renamed over last.keras and best.keras.
    A stop before 2 leaves the previous epoch's files; settle_saves finishes a stop after 2.
    Returns the history as written.
    """
    last, best = out / "last.keras", out / "best.keras"
    models = dict(doc.get("models", {}))
    for path in [last] + [best] * improved:
        save_model(model, staged(path))
        models[path.name] = {"epoch": doc["epochs"][-1]["epoch"], "sha256": sha256(staged(path))}
    write_json(out / "history.json", {**doc, "models": models})
    for path in [best] * improved + [last]:
        os.replace(staged(path), path)
    return {**doc, "models": models}


@contextlib.contextmanager
def ctrl_c_deferred():
    """Hold a Ctrl-C that arrives inside the block until the block ends, then raise it."""
    pressed = []
    try:
        previous = signal.signal(signal.SIGINT, lambda signum, frame: pressed.append(signum))
    except ValueError:  # not the main thread: nothing to defer
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if pressed:
        raise KeyboardInterrupt


def settle_saves(out: Path, models: dict) -> None:
    """On resume: finish a committed save, drop an uncommitted one, refuse models that differ."""
    for name in MODELS:
        path, record = out / name, models.get(name)
        if staged(path).exists():
            if record and sha256(staged(path)) == record["sha256"]:
                os.replace(staged(path), path)  # history.json lists it: finish step 3
            else:
                staged(path).unlink()  # saved, never committed: that epoch did not finish
        if record and (not path.exists() or sha256(path) != record["sha256"]):
            raise InputError(f"{path} is not the epoch-{record['epoch']} model that "
                             f"{out / 'history.json'} records; delete {out} to start afresh")
# --8<-- [end:save]


def write_json(path: Path, doc: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n")
        os.replace(tmp, path)  # a crash never leaves half a file behind
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None
    finally:
        tmp.unlink(missing_ok=True)


def load_saved(keras, path: Path):
    """keras.models.load_model, with a damaged or foreign file reported as one InputError."""
    if problem := keras_file_problem(path):
        raise InputError(f"cannot load {path}: {problem}; delete it (and history.json, to start "
                         "afresh)")
    try:
        with warnings.catch_warnings():  # allow_xla below answers Keras's jit_compile warning
            warnings.simplefilter("ignore", UserWarning)
            return keras.models.load_model(path)
    except Exception as exc:  # zip, h5 and config errors all land here
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise InputError(f"cannot load {path} ({first}); delete it (and history.json, to start "
                         "afresh)") from None


def check_backend() -> str:
    """The Keras backend asked for; Keras itself answers an unknown one with a traceback."""
    name = os.environ.get("KERAS_BACKEND", "tensorflow")
    if name not in BACKENDS:
        raise InputError(f"KERAS_BACKEND={name!r} is not one of {', '.join(BACKENDS)}")
    return name


def import_keras():
    """keras, with its backend loaded, or an InputError naming what to install."""
    backend = os.environ.get("KERAS_BACKEND", "tensorflow")
    package = {"tensorflow": "tensorflow", "jax": "jax", "torch": "torch"}[backend]
    try:
        import keras
    except ImportError as exc:  # keras imports the backend's package itself
        raise InputError(f"{exc.name} is not installed: pip install keras {package} "
                         "(on a GPU: tensorflow[and-cuda], jax[cuda12] or torch)") from None
    return keras


# --8<-- [start:devices]
def use_every_gpu(keras):
    """Data parallelism over every visible GPU. Returns (scope to build the model in, GPU count)."""
    backend = keras.backend.backend()
    if backend == "tensorflow":
        import tensorflow as tf  # the backend itself: already loaded by keras

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


def train(args, images: dict[str, tuple], history: list[dict]) -> int:
    # Imported only now, after the checks: starting a backend takes seconds.
    keras = import_keras()

    from model import allow_xla, build_model, compile_model  # model.py, beside this file

    keras.utils.set_random_seed(args.seed)
    if args.mixed_precision:  # bfloat16 arithmetic, float32 weights (GPUs since Ampere, TPUs)
        keras.mixed_precision.set_global_policy("mixed_bfloat16")
    out, done = args.output_dir, len(history)
    last, best, history_file = out / "last.keras", out / "best.keras", out / "history.json"
    scope, gpus = use_every_gpu(keras)
    print(f"backend {keras.backend.backend()}, "
          f"{f'{gpus} GPU(s)' if gpus else 'no GPU: training on the CPU'}")
    drop = gpus > 1 and keras.backend.backend() == "jax"  # DataParallel wants whole batches
    train_data = batches(keras, *images["train"], args.batch_size, shuffle_seed=args.seed,
                         epoch=done, drop_remainder=drop)
    val_data = batches(keras, *images["validation"], args.batch_size, drop_remainder=drop)

    # --8<-- [start:resume]
    with scope:
        if done:  # resume: weights, optimizer state and its step count come back from last.keras
            model = allow_xla(load_saved(keras, last))
            print(f"resuming after epoch {done} from {last}")
        else:
            model = compile_model(build_model(args.image_size), args.learning_rate)
    best_so_far = max((e["val_accuracy"] for e in history), default=float("-inf"))
    doc = {"image_size": args.image_size, "batch_size": args.batch_size,
           "learning_rate": args.learning_rate, "seed": args.seed, "gpus": gpus,
           "mixed_precision": args.mixed_precision, "backend": keras.backend.backend(),
           "images": {split: len(y) for split, (_, y) in images.items()}, "data": args.data,
           "epochs": history, "models": args.saved_models}
    started = {}

    def save_epoch(epoch: int, logs: dict) -> None:
        nonlocal best_so_far, doc
        record = {"epoch": epoch + 1, **{k: float(v) for k, v in logs.items()},
                  "seconds": round(time.perf_counter() - started["t"], 3)}
        if not all(map(math.isfinite, record.values())):  # diverged: nothing of it is saved
            raise InputError(f"epoch {epoch + 1} ended with {logs}: the training diverged; "
                             "try a lower --learning-rate (epochs before it are saved)")
        improved = record["val_accuracy"] > best_so_far  # the best model so far: keep it
        new = {**doc, "epochs": [*doc["epochs"], record]}
        with ctrl_c_deferred():  # a Ctrl-C now waits until the three files agree
            doc = commit_epoch(model, out, new, improved)
        if improved:
            best_so_far = record["val_accuracy"]
            print(f"epoch {epoch + 1}: val_accuracy {best_so_far:.4f}, the best so far: {best}")

    callbacks = [keras.callbacks.LambdaCallback(
        on_epoch_begin=lambda epoch, logs: started.update(t=time.perf_counter()),
        on_epoch_end=save_epoch)]
    try:
        model.fit(train_data, validation_data=val_data, epochs=args.epochs, initial_epoch=done,
                  callbacks=callbacks,
                  verbose=1 if sys.stdout.isatty() else 2)  # a progress bar in a terminal
    except KeyboardInterrupt:
        saved = len(doc["epochs"])
        if saved >= args.epochs:  # it came as the last epoch was saved: the training is done
            print(f"\ninterrupted (Ctrl-C) after the last epoch, {saved}, was written whole to "
                  f"{out} (the reload self-check did not run)", file=sys.stderr)
        else:
            print(f"\ninterrupted after epoch {saved} (the last one saved): run the same "
                  "command to resume", file=sys.stderr)
        return 130
    # --8<-- [end:resume]

    history = doc["epochs"]
    top = max(history, key=lambda e: e["val_accuracy"])
    print(f"best val_accuracy {top['val_accuracy']:.3f} at epoch {top['epoch']}: {best}")
    # Self-check: the saved file, reloaded, must score what was recorded when it was saved.
    reloaded = allow_xla(load_saved(keras, best))
    score = reloaded.evaluate(val_data, verbose=0, return_dict=True)["accuracy"]
    if not abs(score - top["val_accuracy"]) <= 1e-6:  # NaN fails too
        print(f"error: {best} reloaded scores {score:.4f}, not {top['val_accuracy']:.4f}",
              file=sys.stderr)
        return 1
    print(f"OK: {best} reloads and scores val_accuracy {score:.3f}; history in {history_file}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Backend: set KERAS_BACKEND=tensorflow (default), jax or torch. Needs model.py "
               "beside this file, keras, pillow and the backend's package.")
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
    if args.learning_rate < 2.0**-126:  # the optimizer keeps it in float32: it would be 0 there
        parser.error(f"--learning-rate {args.learning_rate:g} is below float32's smallest normal "
                     "number (1.2e-38), in which the optimizer keeps it")

    try:
        check_backend()
        check_output_dir(args.output_dir, "--output-dir")
        roots = find_folders(args.data_dir)
        n_images = check_images(roots)
        args.data = data_fingerprint(roots)
        args.output_dir.mkdir(parents=True, exist_ok=True)
        with one_run_in(args.output_dir):  # a second run here is refused, naming this one
            return resume_or_train(args, roots, n_images)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a full disk, a file-size limit, a folder made read-only meanwhile
        where = exc.filename or args.output_dir
        print(f"error: cannot write {where}: {exc.strerror or exc}; the files saved before "
              "are intact", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted: run the same command to resume", file=sys.stderr)
        return 130


def resume_or_train(args, roots: dict[str, Path], n_images: int) -> int:
    """Inside the folder's lock: settle and check what the folder holds, then train on."""
    settings = {key: getattr(args, key) for key in [*RESUMED_SETTINGS, "data"]}
    history, args.saved_models = read_history(args.output_dir, args.image_size, settings)
    if len(history) >= args.epochs:
        print(f"{args.output_dir} already holds {len(history)} trained epochs "
              f"(asked for {args.epochs}): nothing to do")
        return 0
    images = load_images(roots, args.image_size)  # decoded once, before the backend starts
    print(f"{n_images} images checked and decoded from {args.data_dir}")
    return train(args, images, history)


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)  # imports done: Ctrl-C raises KeyboardInterrupt, main() handles it
    sys.exit(main_to_stdout(main, progress=True))  # stdout carries progress; the files are the output
