"""Train a small network for a few steps in native PyTorch: eager, or three torch.compile modes.

Run:  python snippets/frameworks/train_pytorch.py [--steps 200]
          [--mode eager|compile|compile_step|reduce_overhead]

Same model, data, initial weights and optimizer as train_tensorflow.py and train_jax.py;
task.py, beside it, holds them and the training loop.
Uses the first CUDA GPU when there is one, else the CPU. compile compiles the model only (the
optimizer step stays eager); compile_step also compiles the optimizer step; reduce_overhead
compiles the model with mode="reduce-overhead", which replays its graphs as CUDA graphs (one
launch for all their kernels) on a GPU, and the optimizer step without them.
"""

from __future__ import annotations

import sys

MODES = ("eager", "compile", "compile_step", "reduce_overhead")

# --8<-- [start:imports]
import torch

import task  # beside this file: the data, starting weights, loop and check of every version
# --8<-- [end:imports]


# --8<-- [start:model]
class Trainer:
    def __init__(self, width=64, lr=0.1, momentum=0.9, seed=0, mode="eager"):
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.model = torch.nn.Sequential(
            torch.nn.Linear(2, width), torch.nn.ReLU(),
            torch.nn.Linear(width, width), torch.nn.ReLU(),
            torch.nn.Linear(width, 1))
        with torch.no_grad():  # Linear stores weights as (out, in): transpose ours
            layers = [m for m in self.model if isinstance(m, torch.nn.Linear)]
            w = task.init_weights(width, seed)
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

    def put(self, x, y):  # NumPy arrays to the device
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


def main(argv: list[str] | None = None) -> int:
    parser = task.parser(__doc__, steps=200, batch=128, width=64, min_accuracy=0.85)
    parser.add_argument("--mode", choices=MODES, default="eager",
                        help="eager, or torch.compile of the model (compile), of model and "
                             "optimizer step (compile_step), and with CUDA graphs (reduce_overhead)")
    args = parser.parse_args(argv)
    trainer = Trainer(args.width, mode=args.mode)
    return task.train_and_check(trainer, args, f"PyTorch {torch.__version__} ({args.mode}, "
                                               f"{trainer.device.type})")


if __name__ == "__main__":
    sys.exit(main())
