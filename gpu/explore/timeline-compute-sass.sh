#!/usr/bin/env bash
# The machine code (SASS, sm_90) of the timeline page's two compute kernels, whole, for the
# page's note on why Numba's pipeline is slower: overlap.cu's `compute` built by nvcc, and
# overlap_numba.py's `compute` as Numba compiles it (its PTX through ptxas). Needs nvcc and
# cuobjdump (a GPU machine has both; elsewhere the cuobjdump in Triton's wheel serves) and, for
# Numba's PTX, NVVM and NVRTC (libnvrtc.so.13 on LD_LIBRARY_PATH; no GPU needed).
#   bash gpu/explore/timeline-compute-sass.sh > docs/data/timeline-compute-sass-sm90.txt
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
objdump=$(command -v cuobjdump || python3 -c 'import triton, pathlib; print(pathlib.Path(triton.__file__).parent / "backends/nvidia/bin/cuobjdump")')
nvcc -O3 -arch=sm_90 -cubin -o "$work/c.cubin" snippets/timeline/overlap.cu
(cd snippets/timeline && NUMBA_ENABLE_CUDASIM=0 python3 -c '
import sys
from numba import cuda, float32, int64
import overlap_numba
ptx, _ = cuda.compile_ptx(overlap_numba.compute.py_func,
                          (int64, float32, float32, float32[::1], float32[::1]), cc=(9, 0))
open(sys.argv[1], "w").write(ptx)' "$work/numba.ptx")
ptxas -arch=sm_90 "$work/numba.ptx" -o "$work/numba.cubin"
strip() { sed -E 's|/\* 0x[0-9a-f]+ \*/||; s/[[:space:]]+$//' | grep -E '^\s+/\*[0-9a-f]{4}\*/'; }
echo "===== CUDA C: snippets/timeline/overlap.cu compute (nvcc -O3 -arch=sm_90)"
"$objdump" -sass -fun compute "$work/c.cubin" 2>/dev/null | strip || "$objdump" -sass "$work/c.cubin" | strip
echo "===== Numba: snippets/timeline/overlap_numba.py compute (numba.cuda.compile_ptx cc 9.0, ptxas -arch=sm_90)"
"$objdump" -sass "$work/numba.cubin" | strip
