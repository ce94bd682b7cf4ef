"""The same function run op by op and compiled by XLA in JAX (jax.jit), timed fairly, with the HLO.

Run:  python snippets/compilers/xla_jax.py [--n 4194304] [--repeats 10] [--hlo FILE]

The function is a bias add followed by GELU (tanh form), as in xla_tensorflow.py. Without
jit, JAX dispatches each operation on its own; jax.jit hands the whole function to XLA, which
fuses the element-wise chain into one kernel. The first jitted call includes compilation and
is timed on its own; JAX runs asynchronously, so every timed call waits for its result.
"""

from __future__ import annotations

import os
import signal
import sys


def interrupted(signum, frame):
    """Ctrl-C, wherever it lands (even inside a slow import below): one line and exit code 130."""
    os.write(2, b"interrupted\n")
    os._exit(130)  # at once: an exception raised here could land in a C extension or be ignored


if __name__ == "__main__":
    signal.signal(signal.SIGINT, interrupted)

# --8<-- [start:imports]
import argparse
import os
import re
import statistics
import sys
import time
import timeit
from pathlib import Path

import numpy as np

try:
    import jax
    import jax.numpy as jnp
except ModuleNotFoundError:  # --help still works; main() says what to install
    jax = jnp = None
# --8<-- [end:imports]


# --8<-- [start:function]
def bias_gelu(x, b):
    y = x + b
    return 0.5 * y * (1.0 + jnp.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))


def compile_it():
    return jax.jit(bias_gelu)  # XLA compiles it on the first call for these shapes
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
    return compiled.lower(x, b).compile().as_text()
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


# --8<-- [start:timer]
def median_time(fn, repeats: int) -> float:
    """Median of `repeats` timed calls after one warm-up call; fn must wait for its result."""
    fn()
    return statistics.median(timeit.repeat(fn, number=1, repeat=repeats))  # stdlib timer
# --8<-- [end:timer]


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
    if jax is None:
        print("error: JAX is not installed here: pip install jax", file=sys.stderr)
        return 2

    xh, bh = make_inputs(args.n)
    dev = jax.devices()[0]
    x, b = jax.device_put(xh), jax.device_put(bh)
    compiled = compile_it()

    # --8<-- [start:timing]
    t0 = time.perf_counter()
    compiled(x, b).block_until_ready()  # first call: tracing, compilation and one run
    first = time.perf_counter() - t0
    warm_jit = median_time(lambda: compiled(x, b).block_until_ready(), args.repeats)
    warm_eager = median_time(lambda: bias_gelu(x, b).block_until_ready(), args.repeats)
    # --8<-- [end:timing]
    ref = reference(xh, bh)
    err = max(float(np.max(np.abs(np.asarray(compiled(x, b)) - ref))),
              float(np.max(np.abs(np.asarray(bias_gelu(x, b)) - ref))))
    hlo = optimized_hlo(compiled, x, b)
    fusions = count_fusions(hlo)

    print(f"JAX {jax.__version__} on {dev.platform} ({dev.device_kind}), n = {args.n:,}")
    print(f"op by op:            {warm_eager * 1e3:9.3f} ms per call")
    print(f"jit, first call:     {first * 1e3:9.3f} ms (compiling, then one run)")
    print(f"jit, warm:           {warm_jit * 1e3:9.3f} ms per call "
          f"({warm_eager / warm_jit:.1f}x op by op)")
    print(f"fusions in the optimized HLO: {fusions}")
    if args.hlo:
        write_atomically(args.hlo, strip_metadata(hlo))
        print(f"wrote {args.hlo}")
    if err > 1e-5 or fusions < 1:
        print(f"error: max abs error {err:.2e} or no fusion in the HLO", file=sys.stderr)
        return 1
    print("OK: op-by-op and jit results match the float64 reference")
    return 0


if __name__ == "__main__":
    sys.exit(main())
