"""The same function run eagerly and compiled by XLA in TensorFlow, timed fairly, with the HLO.

Run:  python snippets/compilers/xla_tensorflow.py [--n 4194304] [--hlo FILE] [--out FILE]

The function is a bias add followed by GELU (tanh form): eight element-wise operations. Eagerly,
TensorFlow runs them one by one, each reading and writing a whole array in memory. XLA fuses
them into one loop that reads x and b once and writes the result once. The first compiled call
includes compilation, so it is timed on its own; then both versions are timed warm.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench import results, system, timing  # noqa: E402


# --8<-- [start:function]
def bias_gelu(x, b):
    y = x + b
    return 0.5 * y * (1.0 + tf.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))


compiled = tf.function(bias_gelu, jit_compile=True)  # XLA compiles it on the first call
# --8<-- [end:function]


def reference(x: np.ndarray, b: np.ndarray) -> np.ndarray:
    y = x.astype(np.float64) + b.astype(np.float64)
    return 0.5 * y * (1.0 + np.tanh(0.7978845608 * (y + 0.044715 * y ** 3)))


def make_inputs(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(n).astype(np.float32),
            rng.standard_normal(n).astype(np.float32))


# --8<-- [start:hlo]
def optimized_hlo(x, b) -> str:
    """XLA's HLO after its optimisation passes: the fused program it runs."""
    return compiled.experimental_get_compiler_ir(x, b)(stage="optimized_hlo")
# --8<-- [end:hlo]


def count_fusions(hlo: str) -> int:
    """How many fusion instructions XLA made (each runs as one loop, or one GPU kernel)."""
    return len(re.findall(r"\bfusion\(", hlo))


def strip_metadata(hlo: str) -> str:
    """Drop source locations (long, and full of local paths) from HLO text: the metadata
    attributes and the FileNames/FunctionNames/FileLocations/StackFrames tables."""
    hlo = re.sub(r", metadata=\{[^{}]*\}", "", hlo)
    hlo = re.sub(r"\n(FileNames|FunctionNames|FileLocations|StackFrames)\n(.+\n)*", "\n", hlo)
    return re.sub(r"\n{3,}", "\n\n", hlo)


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    parser.add_argument("--n", type=positive_int, default=2**22, help="elements (default 2^22)")
    parser.add_argument("--repeats", type=positive_int, default=timing.MIN_REPEATS)
    parser.add_argument("--hlo", type=Path, default=None, help="write the optimized HLO here")
    parser.add_argument("--out", type=Path, default=None, help="write a results JSON file here")
    args = parser.parse_args(argv)

    xh, bh = make_inputs(args.n)
    device = "gpu" if tf.config.list_physical_devices("GPU") else "cpu"
    x, b = tf.constant(xh), tf.constant(bh)

    # --8<-- [start:timing]
    first = timing.time_once(lambda: compiled(x, b).numpy())  # compile + one run
    warm_xla = timing.time_host(lambda: compiled(x, b).numpy(), repeats=args.repeats)
    warm_eager = timing.time_host(lambda: bias_gelu(x, b).numpy(), repeats=args.repeats)
    # --8<-- [end:timing]
    ref = reference(xh, bh)
    err_xla = float(np.max(np.abs(compiled(x, b).numpy() - ref)))
    err_eager = float(np.max(np.abs(bias_gelu(x, b).numpy() - ref)))
    hlo = optimized_hlo(x, b)
    fusions = count_fusions(hlo)

    compile_s = max(first - warm_xla.median_s, 0.0)
    print(f"TensorFlow {tf.__version__} on {device}, n = {args.n:,}")
    print(f"eager:               {warm_eager.median_s * 1e3:9.2f} ms per call")
    print(f"XLA, first call:     {first * 1e3:9.2f} ms (about {compile_s * 1e3:.0f} ms of it compiling)")
    print(f"XLA, warm:           {warm_xla.median_s * 1e3:9.2f} ms per call "
          f"({warm_eager.median_s / warm_xla.median_s:.1f}x eager)")
    print(f"fused computations in the optimized HLO: {fusions}")
    if args.hlo:
        args.hlo.parent.mkdir(parents=True, exist_ok=True)
        args.hlo.write_text(strip_metadata(hlo))
        print(f"wrote {args.hlo}")
    if args.out:
        params = {"n": args.n, "function": "bias_gelu"}
        nbytes = 3 * 4 * args.n  # fused: read x and b, write the result
        rows = [
            results.measurement("bias_gelu", "tensorflow_eager", device, "end_to_end", warm_eager,
                                params=params, error={"metric": "max_abs_error", "value": err_eager}),
            results.measurement("bias_gelu", "tensorflow_xla", device, "compile_first",
                                {"median_s": first, "min_s": first, "max_s": first, "repeats": 1,
                                 "clock": "host", "spread": 1.0}, params=params,
                                error={"metric": "max_abs_error", "value": err_xla}),
            results.measurement("bias_gelu", "tensorflow_xla", device, "end_to_end", warm_xla,
                                params=params, bytes=nbytes,
                                error={"metric": "max_abs_error", "value": err_xla},
                                work={"fusions": fusions}),
        ]
        notes = ["end_to_end includes copying the result back to a NumPy array (.numpy())",
                 "compile_first is the first call of the compiled function: tracing, XLA "
                 "compilation and one run"]
        results.write_results(args.out, "xla", system.describe_system(check_cuda=False), rows, notes)
        print(f"wrote {args.out}")
    if max(err_xla, err_eager) > 1e-5 or fusions < 1:
        print(f"error: max abs error {max(err_xla, err_eager):.2e} or no fusion in the HLO",
              file=sys.stderr)
        return 1
    print("OK: eager and XLA results match the float64 reference")
    return 0


if __name__ == "__main__":
    sys.exit(main())
