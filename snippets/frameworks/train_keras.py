"""Train the same small network with Keras 3 on any of its backends: TensorFlow, JAX, PyTorch.

Run:  python snippets/frameworks/train_keras.py [--backend tensorflow|jax|torch] [--epochs 6]

Keras picks its backend when it is first imported (from KERAS_BACKEND); this script sets it from
--backend before importing Keras. Same data, initial weights and optimizer as the native
versions (train_tensorflow.py, train_pytorch.py, train_jax.py), from task.py beside it.
"""

from __future__ import annotations

import os
import sys

# --8<-- [start:imports]
import importlib

import task  # beside this file: the data, starting weights and check of every version
# --8<-- [end:imports]


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
    model.set_weights(task.init_weights(width, seed))
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=lr, momentum=momentum),
                  loss=keras.losses.BinaryCrossentropy(from_logits=True),
                  metrics=[keras.metrics.BinaryAccuracy(threshold=0.0)])  # threshold on logits
    return model
# --8<-- [end:model]


BACKENDS = ("tensorflow", "jax", "torch")


def main(argv: list[str] | None = None) -> int:
    parser = task.parser(__doc__, epochs=6, batch=128, width=64, min_accuracy=0.85)
    parser.add_argument("--backend", choices=BACKENDS,
                        default=os.environ.get("KERAS_BACKEND", "tensorflow"),
                        help="Keras backend (default: $KERAS_BACKEND, else tensorflow)")
    args = parser.parse_args(argv)
    keras = import_keras(args.backend)
    x, y = task.make_data()
    model = build_model(keras, args.width)
    before = model.evaluate(x, y, batch_size=len(x), verbose=0)
    # --8<-- [start:fit]
    model.fit(x, y, batch_size=args.batch, epochs=args.epochs, shuffle=False, verbose=0)
    # --8<-- [end:fit]
    after = model.evaluate(x, y, batch_size=len(x), verbose=0)
    return task.check(f"Keras {keras.__version__} on {args.backend}", before, after,
                      args.min_accuracy)


if __name__ == "__main__":
    sys.exit(main())
