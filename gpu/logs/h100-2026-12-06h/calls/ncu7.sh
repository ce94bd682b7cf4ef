#!/usr/bin/env bash
# Session 2026-12-06 (sixth), call 3: gpu/saxpy.sh's Nsight Compute step alone (SAXPY_NCU=1's
# lines, copied), for the saxpy page's profile table on the card of its new results file.
set -u; cd "$(dirname "$0")/.."
source .gpu-batch/env.sh
RESULTS_DIR=$OUT; mkdir -p build
nvidia-smi -L
sections=(--section SpeedOfLight --section MemoryWorkloadAnalysis --section LaunchStats
          --section Occupancy)
cache=$(mktemp -d)
CUPY_CACHE_DIR=$cache CUPY_CACHE_SAVE_CUDA_SOURCE=1 timeout 90 ncu --clock-control none \
    "${sections[@]}" -k regex:'^saxpy' -c 2 \
    python3 snippets/saxpy/saxpy_cupy.py 67108864 \
    > "$RESULTS_DIR/saxpy-ncu.txt" 2>&1 || echo "ncu cupy exit $?"
src=$(grep -l "y = a \* x + y" "$cache"/*/*.cu "$cache"/*.cu 2>/dev/null | head -1)
[ -n "$src" ] && cp "$src" "$RESULTS_DIR/saxpy-cupy-source.cu"
timeout 120 nvcc -O3 -arch=sm_90 -DLESSON='"../saxpy/saxpy.cu"' -o build/bench-saxpy \
    snippets/bench/runner.cu || echo "nvcc exit $?"
for k in one float4 copy_float copy_float4; do
    timeout 60 ncu --clock-control none "${sections[@]}" -c 1 ./build/bench-saxpy \
        --repeats 10 --kernel "cuda_c_$k" 67108864 >> "$RESULTS_DIR/saxpy-ncu.txt" 2>&1 \
        || echo "ncu $k exit $?"
done
grep -c "Duration" "$RESULTS_DIR/saxpy-ncu.txt"
