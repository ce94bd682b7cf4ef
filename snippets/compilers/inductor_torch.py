"""The bias + GELU function of xla_jax.py compiled by torch.compile, with the kernel TorchInductor
generated for it: one fused Triton kernel on a GPU (C++ on a CPU), next to XLA's fused HLO.

Run:  python snippets/compilers/inductor_torch.py [--n 4194304] [--kernels FILE]

torch.compile captures the function with TorchDynamo and hands the graph to TorchInductor, which
fuses the element-wise chain and writes the code. The script checks the compiled result against
a float64 NumPy reference, counts the generated kernels and, with --kernels, writes their source.
"""

from __future__ import annotations

# --8<-- [start:imports]
import argparse
import os
import re
import sys
from pathlib import Path

import numpy as np

try:
    import torch
    from torch._inductor.utils import run_and_get_code  # returns the code Inductor wrote
except ModuleNotFoundError:  # --help still works; main() says what to install
    torch = None
# --8<-- [end:imports]


# --8<-- [start:function]
def bias_gelu(x, b):
    y = x + b
    return 0.5 * y * (1.0 + torch.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))
# --8<-- [end:function]


def reference(x: np.ndarray, b: np.ndarray) -> np.ndarray:
    y = x.astype(np.float64) + b.astype(np.float64)
    return 0.5 * y * (1.0 + np.tanh(0.7978845608 * (y + 0.044715 * y ** 3)))


# --8<-- [start:kernels]
def generated_kernels(x, b) -> tuple[object, str]:
    """Compile, run once, and return (result, the source code TorchInductor generated)."""
    compiled = torch.compile(bias_gelu)
    result, sources = run_and_get_code(compiled, x, b)
    return result, "\n".join(sources)


def kernel_sources(code: str) -> list[str]:
    """The generated kernels alone: Triton functions (GPU) or C++ functions (CPU), which the
    generated module holds as strings passed to async_compile."""
    quotes = "'" * 3
    triton = re.findall(rf"async_compile\.triton\('\w+', {quotes}(.*?){quotes}, device_str",
                        code, re.S)
    cpp = re.findall(rf"async_compile\.cpp(?:_pybinding)?\(.*?{quotes}(.*?){quotes}", code, re.S)
    return [k.strip() for k in (triton or cpp)]
# --8<-- [end:kernels]


def writable_file(text: str) -> Path:
    path = Path(text)
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir() or not folder.is_dir() or not os.access(folder, os.W_OK):
        raise argparse.ArgumentTypeError(f"{text}: not a file in an existing, writable folder")
    return path


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
    parser.add_argument("--kernels", type=writable_file, default=None,
                        help="write the generated kernel source here")
    args = parser.parse_args(argv)
    if torch is None:
        print("error: PyTorch is not installed here: pip install torch", file=sys.stderr)
        return 2

    device = "cuda" if torch.cuda.is_available() else "cpu"
    rng = np.random.default_rng(0)
    xh, bh = (rng.standard_normal(args.n).astype(np.float32) for _ in range(2))
    x, b = torch.from_numpy(xh).to(device), torch.from_numpy(bh).to(device)
    result, code = generated_kernels(x, b)
    err = float(np.max(np.abs(result.cpu().numpy() - reference(xh, bh))))
    kernels = kernel_sources(code)
    print(f"PyTorch {torch.__version__} on {device}, n = {args.n:,}")
    print(f"kernels TorchInductor generated: {len(kernels)}; max abs error {err:.2e}")
    if args.kernels:
        tmp = args.kernels.with_name(f".{args.kernels.name}.partial")
        tmp.write_text("\n\n".join(kernels) + "\n")
        os.replace(tmp, args.kernels)
        print(f"wrote {args.kernels}")
    if err > 1e-5 or not kernels:
        print(f"error: no generated kernel found, or the result is off (error {err:.2e})",
              file=sys.stderr)
        return 1
    print("OK: the compiled result matches the float64 reference")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
