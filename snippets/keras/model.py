"""The cats-vs-dogs CNN of the original article, written for Keras 3, on any backend.

Imported by train.py, profile_step.py and benchmark.py; run it to print the layer table:

    python snippets/keras/model.py --image-size 64
"""

# --8<-- [start:imports]
from __future__ import annotations

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

try:
    import keras
    from keras import layers
except (ImportError, ValueError) as exc:  # --help still works; main() says what is wrong
    keras = layers = None
    NO_KERAS = ("Keras is not installed: pip install keras tensorflow" if isinstance(exc, ImportError)
                else f"KERAS_BACKEND={os.environ.get('KERAS_BACKEND')!r} is not one of tensorflow, jax, torch")
# --8<-- [end:imports]


# --8<-- [start:augment]
def augmentation() -> keras.Sequential:
    """Random changes applied to each training batch; inactive at inference."""
    return keras.Sequential([
        layers.RandomFlip("horizontal"),  # a cat facing left is still a cat
        layers.RandomRotation(0.05),      # up to 18 degrees either way (0.05 of a turn)
        layers.RandomZoom(0.2),           # zoom in or out by up to 20 %
    ], name="augmentation")
# --8<-- [end:augment]


# --8<-- [start:model]
def build_model(image_size: int = 64, augment: bool = True) -> keras.Model:
    """Raw RGB pixels (0-255) in, probability that the image shows a dog out."""
    return keras.Sequential([
        keras.Input(shape=(image_size, image_size, 3)),
        *([augmentation()] if augment else []),
        layers.Rescaling(1.0 / 255),                    # pixels to [0, 1]
        layers.Conv2D(32, (3, 3), activation="relu"),   # 32 filters of 3x3, stride 1
        layers.MaxPooling2D(pool_size=(2, 2)),          # keep the strongest of each 2x2
        layers.Flatten(),                               # feature maps to one vector
        layers.Dense(128, activation="relu"),
        # P(dog); cats are class 0. float32 even under mixed_bfloat16, so the loss stays exact.
        layers.Dense(1, activation="sigmoid", dtype="float32"),
    ], name="cats_vs_dogs")


def compile_model(model: keras.Model, learning_rate: float = 1e-3) -> keras.Model:
    allow_xla(model)  # before compile: jit_compile="auto" then chooses XLA
    model.compile(optimizer=keras.optimizers.Adam(learning_rate),
                  loss="binary_crossentropy", metrics=["accuracy"])
    return model
# --8<-- [end:model]


# --8<-- [start:xla]
def allow_xla(model: keras.Model) -> keras.Model:
    """Under JAX, let XLA compile the augmentation layers into the training step.

    RandomRotation and RandomZoom set supports_jit = False, because TensorFlow's XLA cannot
    compile the image op they use there. One such layer turns XLA off for the whole model, and
    Keras then runs each training step op by op from Python. Under JAX the same layers are
    jax.numpy code, which XLA compiles like the rest. Call it after loading a saved model too.
    """
    if keras.backend.backend() != "jax" or "augmentation" not in [l.name for l in model.layers]:
        return model
    for layer in model.get_layer("augmentation").layers:
        layer.supports_jit = True
    if model.compiled:  # a loaded model was compiled with the value saved in it
        model.jit_compile = True
    return model
# --8<-- [end:xla]


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    parser.add_argument("--image-size", type=number(int, 8, 1024), default=64,
                        help="side in pixels (default 64)")
    args = parser.parse_args(argv)
    if keras is None:
        parser.exit(2, f"error: {NO_KERAS}\n")
    model = compile_model(build_model(args.image_size))
    model.summary()
    conv = model.get_layer(index=2)
    expected = (None, args.image_size - 2, args.image_size - 2, 32)  # 3x3 kernel, stride 1
    if conv.output.shape == expected:
        print(f"OK: convolution output {expected[1:]}, {model.count_params():,} parameters")
        return 0
    print(f"error: convolution output is {conv.output.shape}, expected {expected}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
