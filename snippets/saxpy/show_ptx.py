"""Show the global-memory loads and stores the compiler emitted for each Numba SAXPY kernel:
PTX (NVIDIA's virtual instruction set) and, with --sass, the GPU's own machine code.

Needs saxpy_numba_cuda.py and saxpy_common.py beside it, the CUDA toolkit's NVVM, and for --sass a GPU and nvdisasm.
Run:  python show_ptx.py [--sass] [--cc 9.0]
"""

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
import re

from numba import config, cuda, float32

import saxpy_numba_cuda as sx
# --8<-- [end:imports]


# --8<-- [start:show]
SIGNATURE = (float32, float32[::1], float32[::1])  # (a, x, y): float32, contiguous 1-D arrays


def global_accesses(code: str, sass: bool = False) -> list[str]:
    """The distinct global load/store instructions in PTX (ld.global...) or SASS (LDG/STG...)."""
    pattern = r"\b(LDG[\w.]*|STG[\w.]*)" if sass else r"\b((?:ld|st)\.global[\w.]*)"
    return sorted(set(re.findall(pattern, code)))


def ptx_of(kernel, cc: tuple[int, int]) -> str:
    ptx, _ = cuda.compile_ptx(kernel.py_func, SIGNATURE, cc=cc)
    return ptx
# --8<-- [end:show]


def compute_capability(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"(\d)\.(\d)", text)
    if not m:
        raise argparse.ArgumentTypeError(f"expected MAJOR.MINOR such as 9.0, got {text!r}")
    return int(m[1]), int(m[2])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    parser.add_argument("--cc", type=compute_capability, default=(9, 0),
                        help="compute capability to compile the PTX for (default 9.0: Hopper)")
    parser.add_argument("--sass", action="store_true",
                        help="also show the machine code of the current GPU (needs a GPU)")
    parser.add_argument("--full", metavar="KERNEL", choices=list(sx.KERNELS),
                        help="print this kernel's whole PTX instead")
    args = parser.parse_args(argv)
    if config.ENABLE_CUDASIM:
        print("error: the CUDA simulator compiles nothing; unset NUMBA_ENABLE_CUDASIM",
              file=sys.stderr)
        return 1
    if args.full:
        print(ptx_of(sx.KERNELS[args.full], args.cc))
        return 0
    for name, kernel in sx.KERNELS.items():
        print(f"{name:12s} PTX:  {' '.join(global_accesses(ptx_of(kernel, args.cc)))}")
        if args.sass:
            kernel.compile(SIGNATURE)
            sass = kernel.inspect_sass(SIGNATURE)
            print(f"{'':12s} SASS: {' '.join(global_accesses(sass, sass=True))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
