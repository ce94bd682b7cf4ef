#!/usr/bin/env bash
# SAXPY on a GPU machine. Writes into $RESULTS_DIR:
#   saxpy-<card>.json       python snippets/bench/run.py saxpy (CPU, three GPU rounds, small sizes)
#   saxpy-run.txt         what the runner printed
#   saxpy-lesson.txt      ./build/saxpy: the CUDA C lesson's own check of each kernel
#   saxpy-numba-ptx.txt   the global loads/stores of each Numba kernel, PTX and SASS
#   saxpy-bar.txt         the bar tests (each kernel >= the fastest copy of its round)
#   saxpy-ncu.txt, saxpy-cupy-source.cu   with SAXPY_NCU=1: Nsight Compute on CuPy's first two
#                         saxpy launches (the ElementwiseKernel) and saxpy.cu's one-element,
#                         float4 and copy kernels; the source CuPy generated
#                         (SAXPY_NCU=only: that step alone)
# SAXPY_CASES=a,b limits the runner to those cases (default: every default case).
source "$(dirname "$0")/lib/prelude.sh"  # set -u, cd to the root, RESULTS_DIR, step

if [ "${SAXPY_NCU:-0}" != only ]; then
step "compile the CUDA C lesson for Hopper, and run it (each kernel checked once)"
timeout 60 nvcc -O3 -arch=sm_90 -Xptxas -v -o build/saxpy snippets/saxpy/saxpy.cu 2>&1 \
    | tee "$RESULTS_DIR/saxpy-nvcc.txt" || status=1
timeout 60 ./build/saxpy 2>&1 | tee "$RESULTS_DIR/saxpy-lesson.txt" || status=1

step "global loads and stores of the Numba kernels (PTX, SASS)"
(cd snippets/saxpy && timeout 60 python3 show_ptx.py) 2>&1 \
    | tee "$RESULTS_DIR/saxpy-numba-ptx.txt" || status=1
fi

if [ "${SAXPY_NCU:-0}" != 0 ]; then
    step "Nsight Compute: CuPy's ElementwiseKernel, CUDA C one element, float4 and the copies"
    sections=(--section SpeedOfLight --section MemoryWorkloadAnalysis --section LaunchStats
              --section Occupancy)
    cache=$(mktemp -d)
    CUPY_CACHE_DIR=$cache CUPY_CACHE_SAVE_CUDA_SOURCE=1 timeout 90 ncu --clock-control none \
        "${sections[@]}" -k regex:'^saxpy' -c 2 \
        python3 snippets/saxpy/saxpy_cupy.py 67108864 \
        > "$RESULTS_DIR/saxpy-ncu.txt" 2>&1 || status=1
    src=$(grep -l "y = a \* x + y" "$cache"/*/*.cu "$cache"/*.cu 2>/dev/null | head -1)
    [ -n "$src" ] && cp "$src" "$RESULTS_DIR/saxpy-cupy-source.cu"
    timeout 120 nvcc -O3 -arch=sm_90 -DLESSON='"../saxpy/saxpy.cu"' -o build/bench-saxpy \
        snippets/bench/runner.cu || status=1
    for k in one float4 copy_float copy_float4; do  # the first call of each: its check
        timeout 60 ncu --clock-control none "${sections[@]}" -c 1 ./build/bench-saxpy \
            --repeats 10 --kernel "cuda_c_$k" 67108864 >> "$RESULTS_DIR/saxpy-ncu.txt" 2>&1 \
            || status=1
    done
    grep -E "^  [a-z_]+.*\(|Duration|DRAM Throughput|Memory Throughput|Block Size|Grid Size|Registers|Achieved Occupancy|==PROF==|error" \
        "$RESULTS_DIR/saxpy-ncu.txt" | head -80
    [ "$SAXPY_NCU" = only ] && exit $status
fi

step "the benchmark runner: every version, three GPU rounds"
cases=()
[ -n "${SAXPY_CASES:-}" ] && cases=(--cases "$SAXPY_CASES")
timeout "${SAXPY_TIMEOUT:-200}" python3 snippets/bench/run.py saxpy ${cases[@]+"${cases[@]}"} --compile-runs 1 \
    --output "$RESULTS_DIR/saxpy-$CARD.json" > "$RESULTS_DIR/saxpy-run.txt" 2>&1 || status=1
tail -45 "$RESULTS_DIR/saxpy-run.txt"

step "bar tests on the results file: each round's best kernels against its fastest copy"
SAXPY_RESULTS="$RESULTS_DIR/saxpy-$CARD.json" timeout 60 python3 -m pytest -q -s -o addopts="" \
    -p no:cacheprovider -m gpu tests/test_saxpy.py -k bar 2>&1 | tee "$RESULTS_DIR/saxpy-bar.txt" \
    || status=1
exit $status
