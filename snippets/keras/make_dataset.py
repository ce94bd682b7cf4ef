"""Write a small, learnable cats-vs-dogs image set in the Kaggle layout, for testing the scripts.

"Cats" are striped across and "dogs" up and down, in random colours, stripe widths and image
shapes, with noise: a pattern that a small CNN learns in a few epochs, unlike real photos.

    python snippets/keras/make_dataset.py data --images 100        # data/cats, data/dogs
    python snippets/keras/make_dataset.py data --validation 0.2    # data/train/..., data/validation/...
    python snippets/keras/make_dataset.py kaggle --flat            # kaggle/train/cat.0.jpg, ... as in train.zip
"""

# --8<-- [start:imports]
import signal
import sys

from tool_habit import InputError, check_output_dir, interrupted, main_to_stdout, number

if __name__ == "__main__":  # tool_habit.py, beside this file, loads the standard library only:
    signal.signal(signal.SIGINT, interrupted)  # so Ctrl-C is one line from here on

import argparse
import io
from pathlib import Path

import numpy as np
from PIL import Image
# --8<-- [end:imports]

CLASSES = {"cats": "cat", "dogs": "dog"}  # folder -> the Kaggle file-name prefix
MAX_IMAGES = 100_000  # per class (Kaggle's set has 12,500): about 1.5 GB of JPEGs at --size 64


# --8<-- [start:draw]
def draw(kind: str, rng: np.random.Generator, size: int) -> np.ndarray:
    """One RGB image: horizontal stripes for a "cat", vertical ones for a "dog"."""
    width = int(size * rng.uniform(1.0, 1.5))  # Kaggle's photos vary in shape: so do these
    height = int(size * rng.uniform(1.0, 1.5))
    background, stripe = rng.uniform(0, 255, 3), rng.uniform(0, 255, 3)
    while np.abs(background - stripe).sum() < 250:  # keep the stripes visible
        stripe = rng.uniform(0, 255, 3)
    period = rng.uniform(0.12, 0.25) * size  # pixels from one stripe to the next
    y, x = np.mgrid[0:height, 0:width]
    across = y if kind == "cat" else x
    on = (across + rng.uniform(0, period)) % period < period / 2
    image = np.where(on[..., None], stripe, background)
    image += rng.normal(0, 10, image.shape)  # sensor noise
    return np.clip(image, 0, 255).astype(np.uint8)
# --8<-- [end:draw]


def write_dataset(out: Path, images: int, size: int = 64, validation: float = 0.0,
                  flat: bool = False, seed: int = 0) -> int:
    """Write `images` per class; return the number of files written."""
    rng = np.random.default_rng(seed)
    n_val = round(images * validation)
    written = 0
    for folder, prefix in CLASSES.items():
        for i in range(images):
            if flat:  # Kaggle's train.zip: train/cat.0.jpg ... train/dog.12499.jpg, no class folders
                path = out / "train" / f"{prefix}.{i}.jpg"
            elif validation:
                split = "validation" if i >= images - n_val else "train"
                path = out / split / folder / f"{prefix}.{i}.jpg"
            else:
                path = out / folder / f"{prefix}.{i}.jpg"
            path.parent.mkdir(parents=True, exist_ok=True)
            encoded = io.BytesIO()  # Pillow can miss a short write: write the bytes ourselves
            Image.fromarray(draw(prefix, rng, size)).save(encoded, "JPEG", quality=90)
            path.write_bytes(encoded.getvalue())  # a full disk or file-size limit raises here
            written += 1
    return written


def decodes(path: Path, size: int) -> bool:
    """Whether the file decodes whole (every pixel, not only the header) at `size` or more."""
    try:
        with Image.open(path) as image:
            image.load()
            return min(image.size) >= size
    except (OSError, SyntaxError, ValueError):
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    parser.add_argument("out", type=Path, help="folder to write (created if missing)")
    parser.add_argument("--images", type=number(int, 1, MAX_IMAGES), default=100,
                        help="images per class (default 100)")
    parser.add_argument("--size", type=number(int, 16, 1024), default=64,
                        help="shortest side in pixels (default 64)")
    parser.add_argument("--validation", type=number(float, 0.0, 1.0), default=0.0,
                        help="fraction written to validation/ (default 0: class folders only)")
    parser.add_argument("--flat", action="store_true",
                        help="Kaggle's train.zip layout: train/cat.N.jpg and train/dog.N.jpg")
    parser.add_argument("--seed", type=number(int, 0, 2**32 - 1), default=0,
                        help="random seed (default 0)")
    args = parser.parse_args(argv)
    n_val = round(args.images * args.validation)
    if args.validation and not 1 <= n_val <= args.images - 1:
        parser.error(f"--validation {args.validation} of {args.images} images per class leaves "
                     f"{n_val} for validation and {args.images - n_val} for training: "
                     "both need at least 1")
    if args.flat and args.validation:
        parser.error("--flat and --validation exclude each other (train.zip has no validation set)")
    try:
        check_output_dir(args.out)
    except InputError as exc:
        parser.error(str(exc))
    if args.out.exists() and any(args.out.iterdir()):
        parser.error(f"{args.out} exists and is not empty; choose a new folder")

    try:
        written = write_dataset(args.out, args.images, args.size, args.validation, args.flat,
                                args.seed)
        found = sum(decodes(p, args.size) for p in args.out.rglob("*.jpg"))
    except KeyboardInterrupt:
        print(f"interrupted: {args.out} is incomplete; delete it", file=sys.stderr)
        return 130
    except OSError as exc:  # a full disk, say
        print(f"error: writing {args.out} failed: {exc.strerror or exc}", file=sys.stderr)
        return 1
    if found != written:
        print(f"error: wrote {written} images but found {found} readable ones", file=sys.stderr)
        return 1
    print(f"OK: wrote {written} images ({args.images} cats, {args.images} dogs) under {args.out}/")
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)  # imports done: Ctrl-C raises KeyboardInterrupt, main() handles it
    sys.exit(main_to_stdout(main))
