"""Data-parallel, fully sharded (FSDP-style) and bf16 mixed-precision training in JAX, checked
against one device: the same network as train_jax.py, on every device JAX has.

Run:  python snippets/frameworks/parallel_jax.py [--steps 200] [--devices 8]

Without an accelerator the script asks XLA for 2 CPU devices, so that the sharding runs (and is
tested) on any machine. Data parallel (what PyTorch calls DDP): every device holds all the
parameters and a slice of each batch; XLA adds the gradient all-reduce. Fully sharded (FSDP): each
device holds a slice of every parameter too; XLA gathers a layer's weights when it is used and
reduce-scatters its gradient. Mixed precision: the matrix products run in bfloat16 while the
parameters, the loss and the update stay in float32. The data and the starting weights come from
task.py, beside this file.
"""

from __future__ import annotations

import sys

# --8<-- [start:imports]
import os

if "XLA_FLAGS" not in os.environ:  # on a CPU-only machine: 2 devices, so that sharding runs
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"

import numpy as np  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

import task  # beside this file: the data and starting weights of every version
# --8<-- [end:imports]


# --8<-- [start:precision]
def loss_fn(params, x, y, compute_dtype):
    """Mixed precision: cast the float32 parameters and inputs to compute_dtype (bfloat16) for
    the matrix products; the logits and the loss go back to float32."""
    w1, b1, w2, b2, w3, b3 = [p.astype(compute_dtype) for p in params]
    h = jax.nn.relu(x.astype(compute_dtype) @ w1 + b1)
    h = jax.nn.relu(h @ w2 + b2)
    z = (h @ w3 + b3)[:, 0].astype(jnp.float32)
    return jnp.mean(jnp.maximum(z, 0) - z * y + jnp.log1p(jnp.exp(-jnp.abs(z))))


def sgd_step(params, velocity, x, y, compute_dtype, lr=0.1, momentum=0.9):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y, compute_dtype)  # float32 grads
    velocity = [momentum * v + g for v, g in zip(velocity, grads)]
    return [p - lr * v for p, v in zip(params, velocity)], velocity, loss
# --8<-- [end:precision]


# --8<-- [start:sharding]
def param_spec(shape: tuple[int, ...], strategy: str, n: int) -> P:
    """Where a parameter lives: everywhere (data parallel), or split along its first axis that
    the device count divides (fully sharded)."""
    if strategy == "fsdp":
        for axis, size in enumerate(shape):
            if size % n == 0:
                return P(*([None] * axis + ["data"]))
    return P()  # replicated: every device has all of it


def make_trainer(devices, strategy: str, shapes, compute_dtype):
    mesh = Mesh(np.array(devices), ("data",))
    params_sh = [NamedSharding(mesh, param_spec(s, strategy, len(devices))) for s in shapes]
    batch_sh = NamedSharding(mesh, P("data"))  # each device gets a slice of every batch
    step = jax.jit(lambda p, v, x, y: sgd_step(p, v, x, y, compute_dtype),
                   out_shardings=(params_sh, params_sh, NamedSharding(mesh, P())))
    return step, params_sh, batch_sh
# --8<-- [end:sharding]


def train(devices, strategy: str, compute_dtype, steps: int, batch: int, width: int):
    x, y = task.make_data()
    weights = task.init_weights(width)
    step, params_sh, batch_sh = make_trainer(devices, strategy, [w.shape for w in weights],
                                             compute_dtype)
    params = [jax.device_put(w, s) for w, s in zip(weights, params_sh)]
    velocity = [jax.device_put(np.zeros_like(w), s) for w, s in zip(weights, params_sh)]
    batches = [(jax.device_put(x[i:i + batch], batch_sh), jax.device_put(y[i:i + batch], batch_sh))
               for i in range(0, len(x) - batch + 1, batch)]
    for i in range(steps):
        params, velocity, loss = step(params, velocity, *batches[i % len(batches)])
        loss.block_until_ready()  # one step at a time: CPU "devices" share a small thread pool
    jax.block_until_ready(params)
    on_first = sum(shard.data.nbytes for p in params for shard in p.addressable_shards
                   if shard.device == devices[0])
    gathered = [np.asarray(p) for p in params]  # copies the shards back: no collective needed
    final = float(loss_fn(gathered, x, y, np.float32))
    return final, on_first


def main(argv: list[str] | None = None) -> int:
    parser = task.parser(__doc__, steps=200, batch=128, width=64)
    parser.add_argument("--devices", type=int, default=None,
                        help="devices to use (default: all JAX has)")
    args = parser.parse_args(argv)
    devices = jax.devices()[:args.devices] if args.devices else jax.devices()
    n = len(devices)
    if args.devices and args.devices > n:
        parser.error(f"--devices {args.devices}: JAX has only {n} devices here")
    if args.batch % n or args.width % n:
        parser.error(f"--batch ({args.batch}) and --width ({args.width}) must be multiples of "
                     f"the {n} devices")

    print(f"JAX {jax.__version__}: {n} {devices[0].platform} devices")
    runs = {}
    for strategy, devs in (("one device", devices[:1]), ("data parallel", devices),
                           ("fully sharded", devices)):
        key = "fsdp" if strategy == "fully sharded" else "replicated"
        for dtype in (jnp.float32, jnp.bfloat16):
            loss, nbytes = train(devs, key, dtype, args.steps, args.batch, args.width)
            runs[strategy, dtype.dtype.name] = loss
            print(f"{strategy:<14} {dtype.dtype.name:<9} final loss {loss:.4f}   "
                  f"parameter bytes on device 0: {nbytes:,}")
    ref = runs["one device", "float32"]
    problems = [f"{s} {d}: {v:.5f} vs {ref:.5f}" for (s, d), v in runs.items()
                if abs(v - ref) > (1e-4 if d == "float32" else 0.05)]
    if problems or not ref < 0.2:
        print("error: the runs disagree with one device in float32: " + "; ".join(problems)
              if problems else f"error: training did not converge (loss {ref:.3f})",
              file=sys.stderr)
        return 1
    print("OK: data parallel and fully sharded match one device (float32 to 1e-4, "
          "bfloat16 to 0.05)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
