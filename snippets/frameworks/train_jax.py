"""Train a small network for a few steps in JAX: grad for the gradient, jit to compile, vmap
to batch a per-example function.

Run:  python snippets/frameworks/train_jax.py [--steps 200] [--mode eager|jit]

Same model, data, initial weights and optimizer as train_tensorflow.py and train_pytorch.py;
task.py, beside it, holds them and the training loop.
JAX puts arrays on its default device: the GPU when jax[cuda] is installed, else the CPU.
"""

from __future__ import annotations

import sys

MODES = ("eager", "jit")

# --8<-- [start:imports]
import jax
import jax.numpy as jnp

import task  # beside this file: the data, starting weights, loop and check of every version
# --8<-- [end:imports]


# --8<-- [start:model]
def logit_one(params, x):
    """The network for ONE point x of shape (2,); vmap turns it into a batched function."""
    w1, b1, w2, b2, w3, b3 = params
    h = jax.nn.relu(x @ w1 + b1)
    h = jax.nn.relu(h @ w2 + b2)
    return (h @ w3 + b3)[0]


def logits(params, x):
    return jax.vmap(logit_one, in_axes=(None, 0))(params, x)  # same params, a batch of points


def loss_fn(params, x, y):
    z = logits(params, x)
    # mean binary cross-entropy on logits, written in a numerically stable form
    return jnp.mean(jnp.maximum(z, 0) - z * y + jnp.log1p(jnp.exp(-jnp.abs(z))))


def sgd_step(params, velocity, x, y, lr, momentum):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)  # gradient w.r.t. params
    velocity = [momentum * v + g for v, g in zip(velocity, grads)]
    params = [p - lr * v for p, v in zip(params, velocity)]
    return params, velocity, loss  # pure function: new state out, nothing mutated


def make_step(mode: str):
    """jit: traced once per input shape and compiled by XLA; eager: op by op."""
    return jax.jit(sgd_step) if mode == "jit" else sgd_step
# --8<-- [end:model]


class Trainer:
    def __init__(self, width=64, lr=0.1, momentum=0.9, seed=0, mode="jit"):
        self.params = [jnp.asarray(p) for p in task.init_weights(width, seed)]
        self.velocity = [jnp.zeros_like(p) for p in self.params]
        self.lr, self.momentum = jnp.float32(lr), jnp.float32(momentum)
        self._step = make_step(mode)

    def step(self, x, y):
        self.params, self.velocity, loss = self._step(self.params, self.velocity, x, y,
                                                      self.lr, self.momentum)
        return loss

    def put(self, x, y):  # NumPy arrays to the device
        return jax.device_put(x), jax.device_put(y)

    def sync(self, value=None) -> None:
        jax.block_until_ready(self.params)  # JAX dispatches asynchronously

    def evaluate(self, x, y) -> tuple[float, float]:
        z = logits(self.params, x)
        return float(loss_fn(self.params, x, y)), float(jnp.mean((z > 0) == (y > 0.5)))


def main(argv: list[str] | None = None) -> int:
    parser = task.parser(__doc__, steps=200, batch=128, width=64, min_accuracy=0.85)
    parser.add_argument("--mode", choices=MODES, default="jit", help="eager, or jax.jit (jit)")
    args = parser.parse_args(argv)
    name = f"JAX {jax.__version__} ({args.mode}, {jax.devices()[0].platform})"
    return task.train_and_check(Trainer(args.width, mode=args.mode), args, name)


if __name__ == "__main__":
    sys.exit(main())
