"""bf16 mixed precision (autocast), DistributedDataParallel on CPU processes, and ONNX export in
PyTorch, each checked: the same network as train_pytorch.py.

Run:  python snippets/frameworks/parallel_pytorch.py [--steps 100] [--world 2] [--onnx model.onnx]

DDP runs `--world` processes on the CPU with the gloo backend (the same code runs one process per
GPU with nccl); each process trains on its slice of every batch, and DDP averages the gradients
during backward, so the result must match one process training on whole batches. The ONNX export
needs the onnx and onnxscript packages, and is checked with onnxruntime when that is installed.
The data and the starting weights come from task.py, beside this file.
"""

from __future__ import annotations

import sys

TOLERANCE = {"ddp": 1e-4, "bf16": 0.05, "onnx": 1e-4}  # largest loss or logit difference allowed

# --8<-- [start:imports]
import os
import socket
import tempfile
from pathlib import Path

import numpy as np

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F

import task  # beside this file: the data and starting weights of every version
# --8<-- [end:imports]


def build_model(width: int):
    model = torch.nn.Sequential(torch.nn.Linear(2, width), torch.nn.ReLU(),
                                torch.nn.Linear(width, width), torch.nn.ReLU(),
                                torch.nn.Linear(width, 1))
    with torch.no_grad():
        layers = [m for m in model if isinstance(m, torch.nn.Linear)]
        w = task.init_weights(width)
        for layer, weight, bias in zip(layers, w[0::2], w[1::2]):
            layer.weight.copy_(torch.from_numpy(weight.T))
            layer.bias.copy_(torch.from_numpy(bias))
    return model


# --8<-- [start:amp]
def train_step(model, opt, x, y, bf16: bool):
    # autocast runs the matrix products in bfloat16; parameters and gradients stay float32
    with torch.autocast(device_type=x.device.type, dtype=torch.bfloat16, enabled=bf16):
        logits = model(x).squeeze(-1)
    loss = F.binary_cross_entropy_with_logits(logits.float(), y)  # the loss in float32
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss.detach()
# --8<-- [end:amp]


def train(model, x, y, steps: int, batch: int, bf16: bool, rank: int = 0, world: int = 1):
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    n = len(x) // batch
    share = batch // world  # each process takes its slice of every global batch
    for i in range(steps):
        lo = (i % n) * batch + rank * share
        train_step(model, opt, x[lo:lo + share], y[lo:lo + share], bf16)
    with torch.no_grad():
        return float(F.binary_cross_entropy_with_logits(model(x).squeeze(-1), y))


# --8<-- [start:ddp]
def ddp_worker(rank: int, world: int, port: int, args, out: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)  # "nccl" on GPUs
    torch.manual_seed(0)
    model = torch.nn.parallel.DistributedDataParallel(build_model(args.width))
    x, y = (torch.from_numpy(a) for a in task.make_data())
    loss = train(model, x, y, args.steps, args.batch, False, rank, world)
    if rank == 0:
        Path(out).write_text(repr(loss))
    dist.destroy_process_group()
# --8<-- [end:ddp]


# --8<-- [start:onnx]
def export_onnx(model, path: Path) -> None:
    """Trace the model into an ONNX graph with a variable batch dimension."""
    example = (torch.zeros(8, 2),)
    batch = torch.export.Dim("batch", min=1, max=1 << 20)
    torch.onnx.export(model, example, str(path), input_names=["x"], output_names=["logit"],
                      dynamic_shapes={"input": {0: batch}}, dynamo=True)
# --8<-- [end:onnx]


def check_onnx(model, path: Path) -> str:
    import onnxruntime as ort  # optional: only for the check

    x = task.make_data(64)[0]
    got = ort.InferenceSession(str(path)).run(None, {"x": x})[0]
    with torch.no_grad():
        want = model(torch.from_numpy(x)).numpy()
    err = float(np.max(np.abs(got - want)))
    if err > TOLERANCE["onnx"]:
        raise ValueError(f"ONNX Runtime disagrees with PyTorch by {err:.2e}")
    return f"ONNX Runtime matches PyTorch (max difference {err:.1e})"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv: list[str] | None = None) -> int:
    parser = task.parser(__doc__, steps=100, batch=128, width=64)
    parser.add_argument("--world", type=int, default=2, help="DDP processes (2)")
    parser.add_argument("--onnx", type=Path, default=None, help="also export the model here")
    args = parser.parse_args(argv)
    if args.batch % args.world:
        parser.error(f"--batch {args.batch} must divide by --world {args.world}")

    torch.manual_seed(0)
    x, y = (torch.from_numpy(a) for a in task.make_data())
    fp32 = train(build_model(args.width), x, y, args.steps, args.batch, bf16=False)
    bf16 = train(build_model(args.width), x, y, args.steps, args.batch, bf16=True)
    print(f"PyTorch {torch.__version__}, one process: float32 loss {fp32:.4f}, "
          f"bf16 autocast loss {bf16:.4f}")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "loss.txt")
        mp.spawn(ddp_worker, args=(args.world, free_port(), args, out),
                 nprocs=args.world)
        ddp = float(Path(out).read_text())
    print(f"DDP, {args.world} processes (gloo): loss {ddp:.4f}")
    problems = []
    if abs(ddp - fp32) > TOLERANCE["ddp"]:
        problems.append(f"DDP {ddp:.5f} differs from one process {fp32:.5f}")
    if abs(bf16 - fp32) > TOLERANCE["bf16"]:
        problems.append(f"bf16 {bf16:.4f} is far from float32 {fp32:.4f}")
    if args.onnx:
        model = build_model(args.width).eval()
        export_onnx(model, args.onnx)  # needs the onnx and onnxscript packages
        print(f"wrote {args.onnx}")
        try:
            print(check_onnx(model, args.onnx))
        except ModuleNotFoundError:
            print("onnxruntime not installed: export not checked (pip install onnxruntime)")
    if problems:
        print("error: " + "; ".join(problems), file=sys.stderr)
        return 1
    print("OK: DDP matches one process, bf16 autocast stays close to float32")
    return 0


if __name__ == "__main__":
    sys.exit(main())
