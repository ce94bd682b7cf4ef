"""The bias + GELU function of xla_jax.py compiled by torch.compile, with the kernel TorchInductor
generated for it: one fused Triton kernel on a GPU (C++ on a CPU), next to XLA's fused HLO.

Run:  python snippets/compilers/inductor_torch.py [--n 4194304] [--kernels FILE]

torch.compile captures the function with TorchDynamo and hands the graph to TorchInductor, which
fuses the element-wise chain and writes the code. The script checks the compiled result against
a float64 NumPy reference, counts the generated kernels and, with --kernels, writes their source.
gelu_demo.py, beside it, holds the inputs, the reference and the command line.
"""

from __future__ import annotations

import sys

# --8<-- [start:imports]
import re

import torch
from torch._inductor.utils import run_and_get_code  # returns the code Inductor wrote

import gelu_demo  # beside this file: inputs, reference, timer and command line of every demo
# --8<-- [end:imports]


# --8<-- [start:function]
def bias_gelu(x, b):
    y = x + b
    return 0.5 * y * (1.0 + torch.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))
# --8<-- [end:function]


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


def main(argv: list[str] | None = None) -> int:
    args = gelu_demo.command_line(__doc__, argv, "--kernels", "the generated kernel source",
                                  repeats=False)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    x, b = (torch.from_numpy(a).to(device) for a in gelu_demo.make_inputs(args.n))
    result, code = generated_kernels(x, b)
    err = gelu_demo.max_error([result.cpu().numpy()], args.n)
    kernels = kernel_sources(code)
    print(f"PyTorch {torch.__version__} on {device}, n = {args.n:,}")
    print(f"kernels TorchInductor generated: {len(kernels)}; max abs error {err:.2e}")
    if args.kernels:
        args.kernels.write_text("\n\n".join(kernels) + "\n")
        print(f"wrote {args.kernels}")
    if err > 1e-5 or not kernels:
        print(f"error: no generated kernel found, or the result is off (error {err:.2e})",
              file=sys.stderr)
        return 1
    print("OK: the compiled result matches the float64 reference")
    return 0


if __name__ == "__main__":
    sys.exit(main())
