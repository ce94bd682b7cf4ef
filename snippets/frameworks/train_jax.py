"""Train a small network for a few steps in JAX: grad for the gradient, jit to compile, vmap
to batch a per-example function.

Run:  python snippets/frameworks/train_jax.py [--steps 200] [--mode eager|jit]

Same model, data, initial weights and optimizer as train_tensorflow.py and train_pytorch.py.
JAX puts arrays on its default device: the GPU when jax[cuda] is installed, else the CPU.
"""

from __future__ import annotations

# --8<-- [start:imports]
import argparse
import sys

import numpy as np

try:
    import jax
    import jax.numpy as jnp
except ModuleNotFoundError:  # --help still works; main() says what to install
    jax = jnp = None
# --8<-- [end:imports]

MODES = ("eager", "jit")


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
    def __init__(self, width: int, lr: float, momentum: float, seed: int, mode: str):
        self.params = [jnp.asarray(p) for p in init_weights(width, seed)]
        self.velocity = [jnp.zeros_like(p) for p in self.params]
        self.lr, self.momentum = jnp.float32(lr), jnp.float32(momentum)
        self._step = make_step(mode)

    def step(self, x, y):
        self.params, self.velocity, loss = self._step(self.params, self.velocity, x, y,
                                                      self.lr, self.momentum)
        return loss

    def put(self, x: np.ndarray, y: np.ndarray):
        return jax.device_put(x), jax.device_put(y)

    def sync(self, value=None) -> None:
        jax.block_until_ready(self.params)  # JAX dispatches asynchronously

    def evaluate(self, x, y) -> tuple[float, float]:
        z = logits(self.params, x)
        return float(loss_fn(self.params, x, y)), float(jnp.mean((z > 0) == (y > 0.5)))


def build(width: int = 64, lr: float = 0.1, momentum: float = 0.9, seed: int = 0,
          mode: str = "jit") -> Trainer:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    return Trainer(width, lr, momentum, seed, mode)


def train(trainer, x, y, steps: int, batch: int, log_every: int = 0):
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
    parser.add_argument("--mode", choices=MODES, default="jit", help="eager or jax.jit")
    parser.add_argument("--min-accuracy", type=fraction, default=0.85,
                        help="fail if the final accuracy is below this (0.85)")
    args = parser.parse_args(argv)
    if jax is None:
        print("error: JAX is not installed here: pip install jax", file=sys.stderr)
        return 2

    x, y = make_data()
    trainer = build(args.width, mode=args.mode)
    xs, ys = trainer.put(x, y)
    loss0, acc0 = trainer.evaluate(xs, ys)
    for step, loss in train(trainer, x, y, args.steps, args.batch, log_every=max(1, args.steps // 4)):
        print(f"step {step:4d}  batch loss {loss:.4f}")
    loss1, acc1 = trainer.evaluate(xs, ys)
    platform = jax.devices()[0].platform
    print(f"JAX {jax.__version__} ({args.mode}, {platform}): loss {loss0:.3f} -> {loss1:.3f}, "
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
