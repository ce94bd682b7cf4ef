"""Label images as cat or dog with a model saved by train.py (dog when P(dog) >= 0.5, as in the article).

    python snippets/keras/predict.py runs/cats-vs-dogs/best.keras photo.jpg photos/

Each folder given stands for the images in it. Images named like Kaggle's training files
(cat.N.jpg, dog.N.jpg) are also checked against the label in their name.
"""

import argparse
import sys
from pathlib import Path

import numpy as np
from PIL import Image, UnidentifiedImageError

IMAGE_SUFFIXES = (".bmp", ".gif", ".jpeg", ".jpg", ".png")


class InputError(Exception):
    """Bad input that the user can fix: reported as one line, exit status 2."""


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
            raise InputError(f"image {arg} does not exist")
    for path in paths:
        try:
            with Image.open(path) as image:
                image.verify()
        except (UnidentifiedImageError, OSError, SyntaxError, ValueError):
            raise InputError(f"{path} is not a readable image") from None
    return paths


def label_in_name(path: Path) -> str | None:
    prefix = path.name.split(".")[0]
    return prefix if prefix in ("cat", "dog") else None


# --8<-- [start:predict]
def predict(model, paths: list[Path], threshold: float = 0.5) -> list[tuple[str, float]]:
    """(label, P(dog)) per image, with the images resized as image_dataset_from_directory does."""
    import keras

    height, width = model.input_shape[1:3]
    batch = np.stack([
        keras.ops.convert_to_numpy(keras.ops.image.resize(  # bilinear, as in training
            keras.utils.img_to_array(keras.utils.load_img(path, color_mode="rgb")),
            (height, width), interpolation="bilinear"))
        for path in paths])
    p_dog = model.predict(batch, batch_size=256, verbose=0)[:, 0]  # raw 0-255 pixels in
    return [("dog" if p >= threshold else "cat", float(p)) for p in p_dog]
# --8<-- [end:predict]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    parser.add_argument("model", type=Path, help="a .keras file written by train.py")
    parser.add_argument("images", type=Path, nargs="+", help="image files and/or folders")
    parser.add_argument("--threshold", type=float, default=0.5,
                        help="P(dog) at or above which an image is a dog (default 0.5)")
    args = parser.parse_args(argv)
    if not 0 < args.threshold < 1:
        parser.error(f"--threshold must be in (0, 1), got {args.threshold}")
    try:
        if not args.model.is_file():
            raise InputError(f"model file {args.model} does not exist")
        if args.model.suffix != ".keras":
            raise InputError(f"{args.model} is not a .keras file (train.py writes best.keras)")
        paths = image_paths(args.images)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    import keras  # imported after the checks: starting the backend takes seconds

    try:
        model = keras.models.load_model(args.model)
    except Exception as exc:  # a damaged or foreign file: say so in one line
        print(f"error: cannot load {args.model}: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    agree = named = 0
    for path, (label, p_dog) in zip(paths, predict(model, paths, args.threshold)):
        print(f"{path}: {label} (P(dog) = {p_dog:.3f})")
        if label_in_name(path):
            named += 1
            agree += label == label_in_name(path)
    if named:
        print(f"{agree} of {named} labels agree with the file names")
    return 0


if __name__ == "__main__":
    sys.exit(main())
