"""The same function run eagerly and compiled by XLA in TensorFlow, timed fairly, with the HLO.

Run:  python snippets/compilers/xla_tensorflow.py [--n 4194304] [--repeats 10] [--hlo FILE]

The function is a bias add followed by GELU (tanh form): ten element-wise operations. Eagerly,
TensorFlow runs them one by one, each reading and writing a whole array in memory. XLA fuses
them into one loop that reads x and b once and writes the result once. The first compiled call
includes compilation, so it is timed on its own; then both versions are timed warm. gelu_demo.py,
beside it, holds the inputs, the reference, the timer and the command line.
"""

from __future__ import annotations

import sys

# --8<-- [start:imports]
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # hide TensorFlow's start-up log lines
import tensorflow as tf

import gelu_demo  # beside this file: inputs, reference, timer and command line of every demo
# --8<-- [end:imports]


# --8<-- [start:function]
def bias_gelu(x, b):
    y = x + b
    return 0.5 * y * (1.0 + tf.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))


def compile_it():
    return tf.function(bias_gelu, jit_compile=True)  # XLA compiles it on the first call
# --8<-- [end:function]


# --8<-- [start:hlo]
def optimized_hlo(compiled, x, b) -> str:
    """XLA's HLO after its optimisation passes: the fused program it runs."""
    return compiled.experimental_get_compiler_ir(x, b)(stage="optimized_hlo")
# --8<-- [end:hlo]


def main(argv: list[str] | None = None) -> int:
    args = gelu_demo.command_line(__doc__, argv, "--hlo", "the optimized HLO")
    x, b = (tf.constant(a) for a in gelu_demo.make_inputs(args.n))
    device = "gpu" if tf.config.list_physical_devices("GPU") else "cpu"
    return gelu_demo.run_xla(f"TensorFlow {tf.__version__} on {device}", args, bias_gelu,
                             compile_it(), x, b, lambda result: result.numpy(), optimized_hlo)


if __name__ == "__main__":
    sys.exit(main())
