"""Train a small network for a few steps in native TensorFlow: eager, tf.function, or XLA.

Run:  python snippets/frameworks/train_tensorflow.py [--steps 200] [--mode eager|function|xla]

The same model, data, initial weights and optimizer as train_pytorch.py and train_jax.py: a
two-hidden-layer perceptron that learns which quadrant pairs a point is in (a task no linear
model can learn), trained with SGD with momentum. It checks that the loss fell and that the
accuracy on the whole data set is above a threshold. task.py, beside it, holds the data, the
starting weights, the training loop and that check, the same for every framework.
"""

from __future__ import annotations

import sys

# --8<-- [start:imports]
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # hide TensorFlow's start-up log lines

import tensorflow as tf

import task  # beside this file: the data, starting weights, loop and check of every version
# --8<-- [end:imports]

MODES = ("eager", "function", "xla")


# --8<-- [start:model]
class Trainer:
    def __init__(self, width=64, lr=0.1, momentum=0.9, seed=0, mode="function"):
        self.params = [tf.Variable(p) for p in task.init_weights(width, seed)]
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

    def put(self, x, y):  # NumPy arrays to the device
        return tf.constant(x), tf.constant(y)

    def sync(self, value=None) -> None:
        if value is not None:
            value.numpy()  # waits for the device work that produced it

    def evaluate(self, x, y) -> tuple[float, float]:
        logits = self.logits(x)
        loss = float(self.loss(x, y))
        acc = float(tf.reduce_mean(tf.cast((logits > 0) == (y > 0.5), tf.float32)))
        return loss, acc


def main(argv: list[str] | None = None) -> int:
    parser = task.parser(__doc__, steps=200, batch=128, width=64, min_accuracy=0.85)
    parser.add_argument("--mode", choices=MODES, default="function",
                        help="eager, tf.function graph, or graph compiled by XLA (function)")
    args = parser.parse_args(argv)
    device = "gpu" if tf.config.list_physical_devices("GPU") else "cpu"
    return task.train_and_check(Trainer(args.width, mode=args.mode), args,
                                f"TensorFlow {tf.__version__} ({args.mode}, {device})")


if __name__ == "__main__":
    sys.exit(main())
