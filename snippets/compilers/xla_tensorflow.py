"""The same function run eagerly and compiled by XLA in TensorFlow, timed fairly, with the HLO.

Run:  python snippets/compilers/xla_tensorflow.py [--n 4194304] [--repeats 10] [--hlo FILE]

The function is a bias add followed by GELU (tanh form): ten element-wise operations. Eagerly,
TensorFlow runs them one by one, each reading and writing a whole array in memory. XLA fuses
them into one loop that reads x and b once and writes the result once. The first compiled call
includes compilation, so it is timed on its own; then both versions are timed warm.
"""

from __future__ import annotations

# --8<-- [start:imports]
import argparse
import os
import re
import statistics
import sys
import time
import timeit
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # hide TensorFlow's start-up log lines

import numpy as np  # noqa: E402

try:
    import tensorflow as tf
except ModuleNotFoundError:  # --help still works; main() says what to install
    tf = None
# --8<-- [end:imports]


# --8<-- [start:function]
def bias_gelu(x, b):
    y = x + b
    return 0.5 * y * (1.0 + tf.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))


def compile_it():
    return tf.function(bias_gelu, jit_compile=True)  # XLA compiles it on the first call
# --8<-- [end:function]


def reference(x: np.ndarray, b: np.ndarray) -> np.ndarray:
    y = x.astype(np.float64) + b.astype(np.float64)
    return 0.5 * y * (1.0 + np.tanh(0.7978845608 * (y + 0.044715 * y ** 3)))


def make_inputs(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(n).astype(np.float32),
            rng.standard_normal(n).astype(np.float32))


# --8<-- [start:hlo]
def optimized_hlo(compiled, x, b) -> str:
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


def median_time(fn, repeats: int) -> float:
    """Median of `repeats` timed calls after one warm-up call; fn must wait for its result."""
    fn()
    return statistics.median(timeit.repeat(fn, number=1, repeat=repeats))  # stdlib timer


def writable_file(text: str) -> Path:
    """An output path whose folder exists and is writable, checked before any work."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a folder, not a file")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise argparse.ArgumentTypeError(f"folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise argparse.ArgumentTypeError(f"folder {folder} is not writable")
    return path


def write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.partial")
    tmp.write_text(text)
    os.replace(tmp, path)  # a reader never sees half a file


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 1 <= value <= 1 << 30:
        raise argparse.ArgumentTypeError(f"must be between 1 and 2^30, got {value}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    parser.add_argument("--n", type=positive_int, default=2**22, help="elements (default 2^22)")
    parser.add_argument("--repeats", type=positive_int, default=10, help="timed calls (10)")
    parser.add_argument("--hlo", type=writable_file, default=None,
                        help="write the optimized HLO here")
    args = parser.parse_args(argv)
    if tf is None:
        print("error: TensorFlow is not installed here: pip install tensorflow", file=sys.stderr)
        return 2

    xh, bh = make_inputs(args.n)
    device = "gpu" if tf.config.list_physical_devices("GPU") else "cpu"
    x, b = tf.constant(xh), tf.constant(bh)
    compiled = compile_it()

    # --8<-- [start:timing]
    t0 = time.perf_counter()
    compiled(x, b).numpy()  # first call: tracing, XLA compilation and one run
    first = time.perf_counter() - t0
    warm_xla = median_time(lambda: compiled(x, b).numpy(), args.repeats)
    warm_eager = median_time(lambda: bias_gelu(x, b).numpy(), args.repeats)
    # --8<-- [end:timing]
    ref = reference(xh, bh)
    err = max(float(np.max(np.abs(compiled(x, b).numpy() - ref))),
              float(np.max(np.abs(bias_gelu(x, b).numpy() - ref))))
    hlo = optimized_hlo(compiled, x, b)
    fusions = count_fusions(hlo)

    print(f"TensorFlow {tf.__version__} on {device}, n = {args.n:,}")
    print(f"eager:               {warm_eager * 1e3:9.2f} ms per call")
    print(f"XLA, first call:     {first * 1e3:9.2f} ms (compiling, then one run)")
    print(f"XLA, warm:           {warm_xla * 1e3:9.2f} ms per call "
          f"({warm_eager / warm_xla:.1f}x eager)")
    print(f"fused computations in the optimized HLO: {fusions}")
    if args.hlo:
        write_atomically(args.hlo, strip_metadata(hlo))
        print(f"wrote {args.hlo}")
    if err > 1e-5 or fusions < 1:
        print(f"error: max abs error {err:.2e} or no fusion in the HLO", file=sys.stderr)
        return 1
    print("OK: eager and XLA results match the float64 reference")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
