"""The same function run op by op and compiled by XLA in JAX (jax.jit), timed fairly, with the HLO.

Run:  python snippets/compilers/xla_jax.py [--n 4194304] [--hlo FILE] [--out FILE]

The function is a bias add followed by GELU (tanh form), as in xla_tensorflow.py. Without
jit, JAX dispatches each operation on its own; jax.jit hands the whole function to XLA, which
fuses the element-wise chain into one kernel. The first jitted call includes compilation and
is timed on its own; JAX runs asynchronously, so every timed call waits for its result.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench import results, system, timing  # noqa: E402


# --8<-- [start:function]
def bias_gelu(x, b):
    y = x + b
    return 0.5 * y * (1.0 + jnp.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))


compiled = jax.jit(bias_gelu)  # XLA compiles it on the first call for these shapes
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
    dev = jax.devices()[0]
    device = "gpu" if dev.platform in ("gpu", "cuda", "rocm") else "cpu"
    x, b = jax.device_put(xh), jax.device_put(bh)

    # --8<-- [start:timing]
    first = timing.time_once(lambda: compiled(x, b).block_until_ready())  # compile + one run
    warm_jit = timing.time_host(lambda: compiled(x, b).block_until_ready(), repeats=args.repeats)
    warm_eager = timing.time_host(lambda: bias_gelu(x, b).block_until_ready(), repeats=args.repeats)
    # --8<-- [end:timing]
    ref = reference(xh, bh)
    err_jit = float(np.max(np.abs(np.asarray(compiled(x, b)) - ref)))
    err_eager = float(np.max(np.abs(np.asarray(bias_gelu(x, b)) - ref)))
    hlo = optimized_hlo(x, b)
    fusions = count_fusions(hlo)

    compile_s = max(first - warm_jit.median_s, 0.0)
    print(f"JAX {jax.__version__} on {dev.platform} ({dev.device_kind}), n = {args.n:,}")
    print(f"op by op:            {warm_eager.median_s * 1e3:9.3f} ms per call")
    print(f"jit, first call:     {first * 1e3:9.3f} ms (about {compile_s * 1e3:.0f} ms of it compiling)")
    print(f"jit, warm:           {warm_jit.median_s * 1e3:9.3f} ms per call "
          f"({warm_eager.median_s / warm_jit.median_s:.1f}x op by op)")
    print(f"fusions in the optimized HLO: {fusions}")
    if args.hlo:
        args.hlo.parent.mkdir(parents=True, exist_ok=True)
        args.hlo.write_text(strip_metadata(hlo))
        print(f"wrote {args.hlo}")
    if args.out:
        params = {"n": args.n, "function": "bias_gelu", "device_kind": dev.device_kind}
        nbytes = 3 * 4 * args.n  # fused: read x and b, write the result
        rows = [
            results.measurement("bias_gelu", "jax_eager", device, "kernel", warm_eager,
                                params=params, error={"metric": "max_abs_error", "value": err_eager}),
            results.measurement("bias_gelu", "jax_jit", device, "compile_first",
                                {"median_s": first, "min_s": first, "max_s": first, "repeats": 1,
                                 "clock": "host", "spread": 1.0}, params=params,
                                error={"metric": "max_abs_error", "value": err_jit}),
            results.measurement("bias_gelu", "jax_jit", device, "kernel", warm_jit, params=params,
                                bytes=nbytes, error={"metric": "max_abs_error", "value": err_jit},
                                work={"fusions": fusions}),
        ]
        notes = ["inputs on the device before timing; each timed call waits for its result "
                 "(block_until_ready), no copy back to the host",
                 "compile_first is the first call of the jitted function: tracing, XLA "
                 "compilation and one run"]
        results.write_results(args.out, "xla", system.describe_system(check_cuda=False), rows, notes)
        print(f"wrote {args.out}")
    if max(err_jit, err_eager) > 1e-5 or fusions < 1:
        print(f"error: max abs error {max(err_jit, err_eager):.2e} or no fusion in the HLO",
              file=sys.stderr)
        return 1
    print("OK: op-by-op and jit results match the float64 reference")
    return 0


if __name__ == "__main__":
    sys.exit(main())
