"""What every training script here shares, whatever the framework: the data, the starting weights,
the command-line options, the training loop and the check that training worked.

Not a program: train_tensorflow.py, train_pytorch.py, train_jax.py, train_keras.py,
parallel_jax.py and parallel_pytorch.py import it from beside them (`import task`).
"""

from __future__ import annotations

# --8<-- [start:imports]
import argparse
import sys

import numpy as np
# --8<-- [end:imports]


# --8<-- [start:command-line]
OPTIONS = {  # the options the scripts share: name -> (type, help); each script gives defaults
    "steps": (int, "training steps"),
    "epochs": (int, "passes over the 4096 points, 4096 / batch steps each"),
    "batch": (int, "batch size, at most the 4096 points"),
    "width": (int, "hidden units"),
    "min_accuracy": (float, "fail if the final accuracy is below this"),
}


def parser(doc: str, **defaults) -> argparse.ArgumentParser:
    """A parser with the named OPTIONS: parser(__doc__, steps=200, ...)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    for name, default in defaults.items():
        kind, text = OPTIONS[name]
        parser.add_argument("--" + name.replace("_", "-"), type=kind, default=default,
                            help=f"{text} ({default})")
    return parser
# --8<-- [end:command-line]


# --8<-- [start:data]
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
# --8<-- [end:data]


def start_loss(width: int, x: np.ndarray, y: np.ndarray) -> float:
    """The loss of the starting weights on (x, y), in float64 NumPy: where every framework's
    training starts (the benchmark holds each to it)."""
    w1, b1, w2, b2, w3, b3 = (w.astype(np.float64) for w in init_weights(width))
    h = np.maximum(np.maximum(x @ w1 + b1, 0) @ w2 + b2, 0)
    z = (h @ w3 + b3)[:, 0]
    return float(np.mean(np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z)))))


# --8<-- [start:loop]
def train(trainer, x, y, steps: int, batch: int, log_every: int = 0) -> list[tuple[int, float]]:
    """Run `steps` steps of trainer.step over fixed batches already on the device (trainer.put);
    returns the (step, batch loss) pairs logged every `log_every` steps."""
    n_batches = max(1, len(x) // batch)
    batches = [trainer.put(x[i * batch:(i + 1) * batch], y[i * batch:(i + 1) * batch])
               for i in range(n_batches)]
    logged = []
    for step in range(steps):
        loss = trainer.step(*batches[step % n_batches])
        if log_every and (step % log_every == 0 or step == steps - 1):
            logged.append((step, float(loss)))
    return logged


def train_and_check(trainer, args, name: str) -> int:
    """Train for --steps steps, printing the batch loss four times, then check the result."""
    x, y = make_data()
    xs, ys = trainer.put(x, y)
    loss0, acc0 = trainer.evaluate(xs, ys)
    for step, loss in train(trainer, x, y, args.steps, args.batch, max(1, args.steps // 4)):
        print(f"step {step:4d}  batch loss {loss:.4f}")
    return check(name, (loss0, acc0), trainer.evaluate(xs, ys), args.min_accuracy)


def check(name: str, before: tuple[float, float], after: tuple[float, float],
          min_accuracy: float) -> int:
    """Exit code 0 if the loss fell and the accuracy passed min_accuracy, else 1."""
    print(f"{name}: loss {before[0]:.3f} -> {after[0]:.3f}, "
          f"accuracy {before[1]:.2f} -> {after[1]:.2f}")
    if not (after[0] < before[0] and after[1] >= min_accuracy):
        print(f"error: training did not converge (accuracy {after[1]:.3f} < {min_accuracy})",
              file=sys.stderr)
        return 1
    print("OK: the loss fell and the accuracy passed the threshold")
    return 0
# --8<-- [end:loop]

