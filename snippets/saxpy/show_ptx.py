"""Show the global-memory loads and stores the compiler emitted for each Numba SAXPY kernel:
PTX (NVIDIA's virtual instruction set) for Hopper and, on a machine with a GPU, the GPU's own
machine code (SASS).

Needs saxpy_numba_cuda.py and saxpy_common.py beside it, the CUDA toolkit's NVVM, and for SASS
a GPU and nvdisasm.  Run:  python show_ptx.py
"""
# --8<-- [start:imports]
import re
import sys

from numba import config, cuda, float32

import saxpy_numba_cuda as sx
# --8<-- [end:imports]

CC = (9, 0)  # the compute capability to compile the PTX for: Hopper (H100, H200)


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


if __name__ == "__main__":
    if sys.argv[1:]:
        print(f"{sys.argv[0]}: error: takes no arguments", file=sys.stderr)
        raise SystemExit(2)
    if config.ENABLE_CUDASIM:
        print("The CUDA simulator compiles nothing: run this without NUMBA_ENABLE_CUDASIM.")
        raise SystemExit(0)
    try:
        ptx = {name: ptx_of(kernel, CC) for name, kernel in sx.KERNELS.items()}
    except Exception as exc:  # no NVRTC/NVVM here (a CPU-only machine without the toolkit)
        raise SystemExit(f"cannot compile PTX here: {str(exc).splitlines()[0]}") from None
    for name, kernel in sx.KERNELS.items():
        print(f"{name:12s} PTX:  {' '.join(global_accesses(ptx[name]))}")
        if cuda.is_available():
            kernel.compile(SIGNATURE)
            sass = kernel.inspect_sass(SIGNATURE)
            print(f"{'':12s} SASS: {' '.join(global_accesses(sass, sass=True))}")
