"""The cats-vs-dogs CNN of the original article, written for Keras 3, on any backend.

Imported by train.py, climb.py and benchmark.py; run it to print the layer table:

    python snippets/keras/model.py --image-size 64
"""

# --8<-- [start:imports]
from __future__ import annotations

import argparse

import keras
from keras import layers
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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--image-size", type=int, default=64, help="side in pixels (default 64)")
    size = parser.parse_args(argv).image_size
    model = compile_model(build_model(size))
    model.summary()
    conv = model.get_layer(index=2)
    expected = (None, size - 2, size - 2, 32)  # 3x3 kernel, stride 1
    assert conv.output.shape == expected, f"convolution output {conv.output.shape}, not {expected}"
    print(f"OK: convolution output {expected[1:]}, {model.count_params():,} parameters")


if __name__ == "__main__":
    main()
