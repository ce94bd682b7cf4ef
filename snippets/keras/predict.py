"""Label images as cat or dog with a model saved by train.py (dog when P(dog) >= 0.5, as in the article).

    python snippets/keras/predict.py runs/cats-vs-dogs/best.keras photo.jpg photos/

Each folder given stands for the images in it. Images named like Kaggle's training files
(cat.N.jpg, dog.N.jpg) are also checked against the label in their name. Images that are not
8-bit RGB are converted explicitly, with a note on stderr: transparency is dropped (as training's
decoder drops it), grey is repeated into R, G and B, 16-bit values are scaled to 8 bits, CMYK and
palette images are converted to RGB.
"""

# --8<-- [start:imports]
import os
import signal
import sys

from tool_habit import InputError, interrupted, keras_file_problem, main_to_stdout, number

if __name__ == "__main__":  # tool_habit.py, beside this file, loads the standard library only:
    signal.signal(signal.SIGINT, interrupted)  # so Ctrl-C is one line from here on

import argparse
from pathlib import Path

import numpy as np
from PIL import Image, UnidentifiedImageError
# --8<-- [end:imports]

IMAGE_SUFFIXES = (".bmp", ".gif", ".jpeg", ".jpg", ".png")
BACKENDS = ("tensorflow", "jax", "torch")


def image_paths(args: list[Path]) -> list[Path]:
    """The files named, plus the images in each folder named; every one must open as an image."""
    paths = []
    for arg in args:
        if arg.is_dir():
            found = sorted(p for p in arg.rglob("*") if p.suffix.lower() in IMAGE_SUFFIXES)
            if not found:
                raise InputError(f"folder {arg} holds no images ({' '.join(IMAGE_SUFFIXES)})")
            paths += found
        elif arg.is_file():
            paths.append(arg)
        else:
            raise InputError(f"image {arg} does not exist" if not arg.exists() else
                             f"{arg} is neither an image file nor a folder")
    return paths


# --8<-- [start:rgb]
def load_rgb(path: Path) -> tuple[np.ndarray, str]:
    """(height x width x 3 uint8 pixels, what was converted or ""), decoding every pixel."""
    try:
        with Image.open(path) as image:
            image.load()  # a truncated file fails here, not later inside the framework
            mode = image.mode
            if mode in ("I;16", "I;16B", "I;16L", "I"):  # 16-bit grey: keep the top 8 bits
                image = Image.fromarray((np.asarray(image, np.uint32) >> 8).astype(np.uint8))
            note = {"RGB": "", "L": "grey repeated into RGB", "LA": "grey + alpha: alpha dropped",
                    "RGBA": "alpha dropped", "P": "palette converted to RGB",
                    "PA": "palette + alpha converted to RGB, alpha dropped",
                    "CMYK": "CMYK converted to RGB"}.get(mode, f"{mode} converted to RGB")
            if mode.startswith("I"):
                note = f"16-bit grey ({mode}) scaled to 8 bits"
            return np.asarray(image.convert("RGB")), note  # "P": RGBA first drops alpha
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, SyntaxError,
            ValueError) as exc:  # a decompression bomb: too many pixels to decode safely
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"{path} is not a readable image ({why})") from None
# --8<-- [end:rgb]


def check_model(model) -> tuple[int, int]:
    """(height, width) of the images the model takes; rejects other kinds of models."""
    shape_in, shape_out = tuple(model.input_shape), tuple(model.output_shape)
    if len(shape_in) != 4 or shape_in[3] != 3 or None in shape_in[1:3]:
        raise InputError(f"the model takes inputs of shape {shape_in}, not RGB images "
                         "(None, height, width, 3): is it a model written by train.py?")
    if shape_out != (None, 1):
        raise InputError(f"the model's output has shape {shape_out}, not one probability "
                         "(None, 1): is it a model written by train.py?")
    return shape_in[1], shape_in[2]


def label_in_name(path: Path) -> str | None:
    prefix = path.name.split(".")[0]
    return prefix if prefix in ("cat", "dog") else None


# --8<-- [start:predict]
def predict(model, images: list[np.ndarray], threshold: float = 0.5) -> list[tuple[str, float]]:
    """(label, P(dog)) per RGB image, resized as train.py resizes (Pillow, bilinear)."""
    height, width = model.input_shape[1:3]
    batch = np.stack([np.asarray(Image.fromarray(image).resize(
        (width, height), Image.Resampling.BILINEAR)) for image in images])  # uint8, as in training
    p_dog = model.predict(batch, batch_size=256, verbose=0)[:, 0]  # raw 0-255 pixels in
    return [("dog" if p >= threshold else "cat", float(p)) for p in p_dog]
# --8<-- [end:predict]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    parser.add_argument("model", type=Path, help="a .keras file written by train.py")
    parser.add_argument("images", type=Path, nargs="+", help="image files and/or folders")
    parser.add_argument("--threshold", type=number(float, 0.0, 1.0), default=0.5,
                        help="P(dog) at or above which an image is a dog (default 0.5)")
    args = parser.parse_args(argv)
    if args.threshold in (0.0, 1.0):  # every image a dog, or (nearly) none
        parser.error(f"--threshold must be strictly between 0 and 1, got {args.threshold}")
    try:
        backend = os.environ.get("KERAS_BACKEND", "tensorflow")
        if backend not in BACKENDS:  # Keras would raise "Unable to import backend" with a traceback
            raise InputError(f"KERAS_BACKEND={backend!r} is not one of {', '.join(BACKENDS)}")
        if not args.model.is_file():
            raise InputError(f"model file {args.model} does not exist" if not args.model.exists()
                             else f"{args.model} is not a file: name a .keras model file")
        if args.model.suffix != ".keras":
            raise InputError(f"{args.model} is not a .keras file (train.py writes best.keras)")
        paths = image_paths(args.images)
        images = []
        for path in paths:
            pixels, note = load_rgb(path)
            if note:
                print(f"note: {path}: {note}", file=sys.stderr)
            images.append(pixels)
        try:
            import keras  # imported after the checks: starting the backend takes seconds
        except ImportError as exc:
            raise InputError(f"{exc.name} is not installed: pip install keras tensorflow") from None
        if problem := keras_file_problem(args.model):
            raise InputError(f"cannot load {args.model}: {problem}")
        try:
            model = keras.models.load_model(args.model)
        except Exception as exc:  # a damaged or foreign file: say so in one line
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
            raise InputError(f"cannot load {args.model}: {first}") from None
        check_model(model)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    agree = named = 0
    for path, (label, p_dog) in zip(paths, predict(model, images, args.threshold)):
        print(f"{path}: {label} (P(dog) = {p_dog:.3f})")
        if label_in_name(path):
            named += 1
            agree += label == label_in_name(path)
    if named:
        print(f"{agree} of {named} labels agree with the file names")
    return 0


if __name__ == "__main__":
    sys.exit(main_to_stdout(main))
