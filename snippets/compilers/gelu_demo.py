"""What the compiler demos here share, whatever the framework: the bias + GELU inputs and its
float64 reference, the fair timer, the HLO helpers, and the command line.

Not a program: xla_tensorflow.py, xla_jax.py and inductor_torch.py import it from beside them
(`import gelu_demo`).
"""

from __future__ import annotations

# --8<-- [start:imports]
import argparse
import re
import statistics
import sys
import time
import timeit
from pathlib import Path

import numpy as np
# --8<-- [end:imports]


# --8<-- [start:command-line]
def command_line(doc: str, argv, output: str, what: str, repeats: bool = True) -> argparse.Namespace:
    """--n, --repeats and an option naming a file to write."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--n", type=int, default=2**22, help="elements (2^22)")
    if repeats:
        parser.add_argument("--repeats", type=int, default=10, help="timed calls (10)")
    parser.add_argument(output, type=Path, default=None, help=f"write {what} here")
    return parser.parse_args(argv)
# --8<-- [end:command-line]


def make_inputs(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(n).astype(np.float32),
            rng.standard_normal(n).astype(np.float32))


def reference(x: np.ndarray, b: np.ndarray) -> np.ndarray:
    """bias + GELU (tanh form) in float64: what every version is checked against."""
    y = x.astype(np.float64) + b.astype(np.float64)
    return 0.5 * y * (1.0 + np.tanh(0.7978845608 * (y + 0.044715 * y ** 3)))


def max_error(results, n: int) -> float:
    """The largest distance from the float64 reference among the results (arrays of n values)."""
    ref = reference(*make_inputs(n))
    return max(float(np.max(np.abs(np.asarray(r, dtype=np.float64) - ref))) for r in results)


# --8<-- [start:timer]
def median_time(fn, repeats: int) -> float:
    """Median of `repeats` timed calls after one warm-up call; fn must wait for its result."""
    fn()
    return statistics.median(timeit.repeat(fn, number=1, repeat=repeats))  # stdlib timer


def time_both(compiled, eager, x, b, wait, repeats: int) -> tuple[float, float, float]:
    """(first compiled call, warm compiled call, warm eager call) in seconds; wait(result)
    returns only when the device has computed it (the framework runs asynchronously)."""
    t0 = time.perf_counter()
    wait(compiled(x, b))  # first call: tracing, compilation and one run
    first = time.perf_counter() - t0
    warm = median_time(lambda: wait(compiled(x, b)), repeats)
    return first, warm, median_time(lambda: wait(eager(x, b)), repeats)
# --8<-- [end:timer]


def count_fusions(hlo: str) -> int:
    """How many fusion instructions XLA made (each runs as one loop, or one GPU kernel)."""
    return len(re.findall(r"\bfusion\(", hlo))


def strip_metadata(hlo: str) -> str:
    """Drop source locations (long, and full of local paths) from HLO text: the metadata
    attributes and the FileNames/FunctionNames/FileLocations/StackFrames tables."""
    hlo = re.sub(r", metadata=\{[^{}]*\}", "", hlo)
    hlo = re.sub(r"\n(FileNames|FunctionNames|FileLocations|StackFrames)\n(.+\n)*", "\n", hlo)
    return re.sub(r"\n{3,}", "\n\n", hlo)


def run_xla(name: str, args, eager, compiled, x, b, wait, optimized_hlo) -> int:
    """Time the eager and the compiled version, check both, report, and write the HLO (--hlo)."""
    first, warm, slow = time_both(compiled, eager, x, b, wait, args.repeats)
    err = max_error([wait(compiled(x, b)), wait(eager(x, b))], args.n)
    hlo = optimized_hlo(compiled, x, b)
    fusions = count_fusions(hlo)
    print(f"{name}, n = {args.n:,}")
    print(f"eager, op by op:     {slow * 1e3:9.3f} ms per call")
    print(f"XLA, first call:     {first * 1e3:9.3f} ms (compiling, then one run)")
    print(f"XLA, warm:           {warm * 1e3:9.3f} ms per call ({slow / warm:.1f}x eager)")
    print(f"fusions in the optimized HLO: {fusions}")
    if args.hlo:
        args.hlo.write_text(strip_metadata(hlo))
        print(f"wrote {args.hlo}")
    if err > 1e-5 or fusions < 1:
        print(f"error: max abs error {err:.2e} or no fusion in the HLO", file=sys.stderr)
        return 1
    print("OK: eager and XLA results match the float64 reference")
    return 0

