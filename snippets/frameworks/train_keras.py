"""Train the same small network with Keras 3 on any of its backends: TensorFlow, JAX, PyTorch.

Run:  python snippets/frameworks/train_keras.py [--backend tensorflow|jax|torch] [--epochs 6]

Keras picks its backend when it is first imported (from KERAS_BACKEND); this script sets it from
--backend before importing Keras. Same data, initial weights and optimizer as the native
versions (train_tensorflow.py, train_pytorch.py, train_jax.py).
"""

from __future__ import annotations

# --8<-- [start:imports]
import argparse
import importlib
import os
import sys

import numpy as np
# --8<-- [end:imports]

BACKENDS = ("tensorflow", "jax", "torch")


def make_data(n: int = 4096, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Points in [-1, 1]^2, labelled 1 where x0 and x1 have the same sign."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, size=(n, 2)).astype(np.float32)
    y = (x[:, 0] * x[:, 1] > 0).astype(np.float32)
    return x, y


def init_weights(width: int, seed: int = 0) -> list[np.ndarray]:
    """Glorot-uniform weights and zero biases, from NumPy so every framework starts alike."""
    rng = np.random.default_rng(seed + 1)
    params = []
    for fan_in, fan_out in [(2, width), (width, width), (width, 1)]:
        limit = np.sqrt(6.0 / (fan_in + fan_out))
        params += [rng.uniform(-limit, limit, (fan_in, fan_out)).astype(np.float32),
                   np.zeros(fan_out, np.float32)]
    return params


def import_keras(backend: str):
    """Import Keras on the requested backend; fail clearly if it is already on another one."""
    if "keras" not in sys.modules:
        os.environ["KERAS_BACKEND"] = backend
        if backend == "tensorflow":
            os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    keras = importlib.import_module("keras")
    if keras.backend.backend() != backend:
        raise RuntimeError(f"Keras is already running on {keras.backend.backend()!r} in this "
                           f"process; start a new process for {backend!r}")
    return keras


# --8<-- [start:model]
def build_model(keras, width: int = 64, lr: float = 0.1, momentum: float = 0.9, seed: int = 0):
    model = keras.Sequential([
        keras.Input(shape=(2,)),
        keras.layers.Dense(width, activation="relu"),
        keras.layers.Dense(width, activation="relu"),
        keras.layers.Dense(1),  # one logit
    ])
    model.set_weights(init_weights(width, seed))
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=lr, momentum=momentum),
                  loss=keras.losses.BinaryCrossentropy(from_logits=True),
                  metrics=[keras.metrics.BinaryAccuracy(threshold=0.0)])  # threshold on logits
    return model
# --8<-- [end:model]


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {text}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    parser.add_argument("--backend", choices=BACKENDS,
                        default=os.environ.get("KERAS_BACKEND", "tensorflow")
                        if os.environ.get("KERAS_BACKEND") in BACKENDS else "tensorflow",
                        help="Keras backend (default: $KERAS_BACKEND, else tensorflow)")
    parser.add_argument("--epochs", type=positive_int, default=6,
                        help="passes over the 4096 points, 32 steps each (6)")
    parser.add_argument("--batch", type=positive_int, default=128, help="batch size (128)")
    parser.add_argument("--width", type=positive_int, default=64, help="hidden units (64)")
    parser.add_argument("--min-accuracy", type=fraction, default=0.85,
                        help="fail if the final accuracy is below this (0.85)")
    args = parser.parse_args(argv)

    try:
        keras = import_keras(args.backend)
    except (ImportError, RuntimeError) as exc:
        package = {"torch": "torch", "jax": "jax", "tensorflow": "tensorflow"}[args.backend]
        print(f"error: cannot use Keras on {args.backend}: {exc} (pip install keras {package})",
              file=sys.stderr)
        return 2
    x, y = make_data()
    model = build_model(keras, args.width)
    loss0, acc0 = model.evaluate(x, y, batch_size=len(x), verbose=0)
    # --8<-- [start:fit]
    model.fit(x, y, batch_size=args.batch, epochs=args.epochs, shuffle=False, verbose=0)
    # --8<-- [end:fit]
    loss1, acc1 = model.evaluate(x, y, batch_size=len(x), verbose=0)
    print(f"Keras {keras.__version__} on {args.backend}: loss {loss0:.3f} -> {loss1:.3f}, "
          f"accuracy {acc0:.2f} -> {acc1:.2f}")
    if not (loss1 < loss0 and acc1 >= args.min_accuracy):
        print(f"error: training did not converge (accuracy {acc1:.3f} < {args.min_accuracy})",
              file=sys.stderr)
        return 1
    print("OK: the loss fell and the accuracy passed the threshold")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
