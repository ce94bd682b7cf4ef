"""Train a small network for a few steps in native TensorFlow: eager, tf.function, or XLA.

Run:  python snippets/frameworks/train_tensorflow.py [--steps 200] [--mode eager|function|xla]

The same model, data, initial weights and optimizer as train_pytorch.py and train_jax.py: a
two-hidden-layer perceptron that learns which quadrant pairs a point is in (a task no linear
model can learn), trained with SGD with momentum. It checks that the loss fell and that the
accuracy on the whole data set is above a threshold.
"""

from __future__ import annotations

# --8<-- [start:imports]
import argparse
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # hide TensorFlow's start-up log lines

import numpy as np  # noqa: E402

try:
    import tensorflow as tf
except ModuleNotFoundError:  # --help still works; main() says what to install
    tf = None
# --8<-- [end:imports]

MODES = ("eager", "function", "xla")


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


# --8<-- [start:model]
class Trainer:
    def __init__(self, width: int, lr: float, momentum: float, seed: int, mode: str):
        self.params = [tf.Variable(p) for p in init_weights(width, seed)]
        self.velocity = [tf.Variable(tf.zeros_like(p)) for p in self.params]
        self.lr, self.momentum = lr, momentum
        if mode == "eager":
            self.step = self._step  # every operation runs as soon as Python reaches it
        else:  # trace once into a graph; with jit_compile=True, XLA compiles that graph
            self.step = tf.function(self._step, jit_compile=(mode == "xla"))

    def logits(self, x):
        w1, b1, w2, b2, w3, b3 = self.params
        h = tf.nn.relu(x @ w1 + b1)
        h = tf.nn.relu(h @ w2 + b2)
        return tf.squeeze(h @ w3 + b3, axis=-1)

    def loss(self, x, y):
        return tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=self.logits(x)))

    def _step(self, x, y):
        with tf.GradientTape() as tape:
            loss = self.loss(x, y)
        grads = tape.gradient(loss, self.params)
        for p, v, g in zip(self.params, self.velocity, grads):
            v.assign(self.momentum * v + g)  # SGD with momentum, as torch.optim.SGD does it
            p.assign_sub(self.lr * v)
        return loss
# --8<-- [end:model]

    def put(self, x: np.ndarray, y: np.ndarray):
        return tf.constant(x), tf.constant(y)

    def sync(self, value=None) -> None:
        if value is not None:
            value.numpy()  # waits for the device work that produced it

    def evaluate(self, x, y) -> tuple[float, float]:
        logits = self.logits(x)
        loss = float(self.loss(x, y))
        acc = float(tf.reduce_mean(tf.cast((logits > 0) == (y > 0.5), tf.float32)))
        return loss, acc


def device_name() -> str:
    return "gpu" if tf.config.list_physical_devices("GPU") else "cpu"


def build(width: int = 64, lr: float = 0.1, momentum: float = 0.9, seed: int = 0,
          mode: str = "function") -> Trainer:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    return Trainer(width, lr, momentum, seed, mode)


def train(trainer, x, y, steps: int, batch: int, log_every: int = 0):
    """Run `steps` steps over fixed batches already on the device; returns the losses logged."""
    n_batches = max(1, len(x) // batch)
    batches = [trainer.put(x[i * batch:(i + 1) * batch], y[i * batch:(i + 1) * batch])
               for i in range(n_batches)]
    logged = []
    for step in range(steps):
        loss = trainer.step(*batches[step % n_batches])
        if log_every and (step % log_every == 0 or step == steps - 1):
            logged.append((step, float(loss)))
    return logged


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
    parser.add_argument("--steps", type=positive_int, default=200, help="training steps (200)")
    parser.add_argument("--batch", type=positive_int, default=128, help="batch size (128)")
    parser.add_argument("--width", type=positive_int, default=64, help="hidden units (64)")
    parser.add_argument("--mode", choices=MODES, default="function",
                        help="eager, tf.function graph, or graph compiled by XLA")
    parser.add_argument("--min-accuracy", type=fraction, default=0.85,
                        help="fail if the final accuracy is below this (0.85)")
    args = parser.parse_args(argv)
    if tf is None:
        print("error: TensorFlow is not installed here: pip install tensorflow", file=sys.stderr)
        return 2

    x, y = make_data()
    trainer = build(args.width, mode=args.mode)
    xs, ys = trainer.put(x, y)
    loss0, acc0 = trainer.evaluate(xs, ys)
    for step, loss in train(trainer, x, y, args.steps, args.batch, log_every=max(1, args.steps // 4)):
        print(f"step {step:4d}  batch loss {loss:.4f}")
    loss1, acc1 = trainer.evaluate(xs, ys)
    print(f"TensorFlow {tf.__version__} ({args.mode}, {device_name()}): loss {loss0:.3f} -> "
          f"{loss1:.3f}, accuracy {acc0:.2f} -> {acc1:.2f}")
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
