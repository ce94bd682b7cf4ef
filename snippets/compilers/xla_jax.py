"""The same function run op by op and compiled by XLA in JAX (jax.jit), timed fairly, with the HLO.

Run:  python snippets/compilers/xla_jax.py [--n 4194304] [--repeats 10] [--hlo FILE]

The function is a bias add followed by GELU (tanh form), as in xla_tensorflow.py. Without
jit, JAX dispatches each operation on its own; jax.jit hands the whole function to XLA, which
fuses the element-wise chain into one kernel. The first jitted call includes compilation and
is timed on its own; JAX runs asynchronously, so every timed call waits for its result.
gelu_demo.py, beside it, holds the inputs, the reference, the timer and the command line.
"""

from __future__ import annotations

import sys

# --8<-- [start:imports]
import jax
import jax.numpy as jnp

import gelu_demo  # beside this file: inputs, reference, timer and command line of every demo
# --8<-- [end:imports]


# --8<-- [start:function]
def bias_gelu(x, b):
    y = x + b
    return 0.5 * y * (1.0 + jnp.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))


def compile_it():
    return jax.jit(bias_gelu)  # XLA compiles it on the first call for these shapes
# --8<-- [end:function]


# --8<-- [start:hlo]
def optimized_hlo(compiled, x, b) -> str:
    """XLA's HLO after its optimisation passes: the fused program it runs."""
    return compiled.lower(x, b).compile().as_text()
# --8<-- [end:hlo]


def main(argv: list[str] | None = None) -> int:
    args = gelu_demo.command_line(__doc__, argv, "--hlo", "the optimized HLO")
    x, b = (jax.device_put(a) for a in gelu_demo.make_inputs(args.n))
    device = jax.devices()[0]
    return gelu_demo.run_xla(f"JAX {jax.__version__} on {device.platform} ({device.device_kind})",
                             args, bias_gelu, compile_it(), x, b, jax.block_until_ready,
                             optimized_hlo)


if __name__ == "__main__":
    sys.exit(main())
