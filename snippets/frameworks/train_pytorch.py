"""Train a small network for a few steps in native PyTorch: eager, or three torch.compile modes.

Run:  python snippets/frameworks/train_pytorch.py [--steps 200]
          [--mode eager|compile|compile_step|reduce_overhead]

Same model, data, initial weights and optimizer as train_tensorflow.py and train_jax.py.
Uses the first CUDA GPU when there is one, else the CPU. compile compiles the model only (the
optimizer step stays eager); compile_step also compiles the optimizer step; reduce_overhead
compiles the model with mode="reduce-overhead", which replays its graphs as CUDA graphs (one
launch for all their kernels) on a GPU, and the optimizer step without them.
"""

from __future__ import annotations

# --8<-- [start:imports]
import argparse
import sys

import numpy as np

try:
    import torch
except ModuleNotFoundError:  # --help still works; main() says what to install
    torch = None
# --8<-- [end:imports]

MODES = ("eager", "compile", "compile_step", "reduce_overhead")


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


def device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


# --8<-- [start:model]
class Trainer:
    def __init__(self, width: int, lr: float, momentum: float, seed: int, mode: str):
        self.device = device()
        self.model = torch.nn.Sequential(
            torch.nn.Linear(2, width), torch.nn.ReLU(),
            torch.nn.Linear(width, width), torch.nn.ReLU(),
            torch.nn.Linear(width, 1))
        with torch.no_grad():  # Linear stores weights as (out, in): transpose ours
            layers = [m for m in self.model if isinstance(m, torch.nn.Linear)]
            w = init_weights(width, seed)
            for layer, weight, bias in zip(layers, w[0::2], w[1::2]):
                layer.weight.copy_(torch.from_numpy(weight.T))
                layer.bias.copy_(torch.from_numpy(bias))
        self.model.to(self.device)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=lr, momentum=momentum)
        self.loss_fn = torch.nn.BCEWithLogitsLoss()
        self.graphs = mode == "reduce_overhead" and self.device.type == "cuda"
        # Eager runs each operation as Python reaches it. torch.compile captures the model with
        # TorchDynamo on its first call and generates fused kernels with TorchInductor (forward
        # and backward); the optimizer step is separate Python code, eager unless compiled too.
        if mode == "eager":
            self.forward, self.update = self.model, self.opt.step
        elif mode == "compile":
            self.forward, self.update = torch.compile(self.model), self.opt.step
        elif mode == "compile_step":
            self.forward, self.update = torch.compile(self.model), torch.compile(self.opt.step)
        else:  # reduce_overhead: the model's graphs replayed as CUDA graphs
            # The optimizer step is compiled without CUDA graphs: its momentum buffers would
            # otherwise live in graph-owned memory that the next replay overwrites (PyTorch
            # stops with "accessing tensor output of CUDAGraphs that has been overwritten").
            self.forward = torch.compile(self.model, mode="reduce-overhead")
            self.update = torch.compile(self.opt.step)

    def step(self, x, y):
        if self.graphs:  # a new iteration: CUDA-graph outputs of the last one may be reused
            torch.compiler.cudagraph_mark_step_begin()
        self.opt.zero_grad(set_to_none=True)
        loss = self.loss_fn(self.forward(x).squeeze(-1), y)
        loss.backward()
        self.update()
        return loss.detach().clone()
# --8<-- [end:model]

    def put(self, x: np.ndarray, y: np.ndarray):
        return torch.from_numpy(x).to(self.device), torch.from_numpy(y).to(self.device)

    def sync(self, value=None) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize()

    def evaluate(self, x, y) -> tuple[float, float]:
        with torch.no_grad():
            logits = self.model(x).squeeze(-1)
            loss = float(self.loss_fn(logits, y))
            acc = float(((logits > 0) == (y > 0.5)).float().mean())
        return loss, acc


def build(width: int = 64, lr: float = 0.1, momentum: float = 0.9, seed: int = 0,
          mode: str = "eager") -> Trainer:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    torch.manual_seed(seed)
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
    parser.add_argument("--mode", choices=MODES, default="eager",
                        help="eager, or torch.compile of the model (compile), of model and "
                             "optimizer step (compile_step), and with CUDA graphs (reduce_overhead)")
    parser.add_argument("--min-accuracy", type=fraction, default=0.85,
                        help="fail if the final accuracy is below this (0.85)")
    args = parser.parse_args(argv)
    if torch is None:
        print("error: PyTorch is not installed here: pip install torch", file=sys.stderr)
        return 2

    x, y = make_data()
    trainer = build(args.width, mode=args.mode)
    xs, ys = trainer.put(x, y)
    loss0, acc0 = trainer.evaluate(xs, ys)
    for step, loss in train(trainer, x, y, args.steps, args.batch, log_every=max(1, args.steps // 4)):
        print(f"step {step:4d}  batch loss {loss:.4f}")
    loss1, acc1 = trainer.evaluate(xs, ys)
    print(f"PyTorch {torch.__version__} ({args.mode}, {trainer.device.type}): loss {loss0:.3f} -> "
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
