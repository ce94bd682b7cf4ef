#!/usr/bin/env bash
# Reductions on a GPU machine: the CUDA C build report, the benchmark runner (two rounds of every
# sum against the read-only kernels, the softmax against a copy) and, with REDUCE_NCU=1, Nsight
# Compute on five CUDA C kernels. Writes into $RESULTS_DIR:
#   reduction-h200.json    results file           (-> docs/data/reduction-h200.json)
#   reduction-run.txt      what the runner printed
#   reduction-build.txt    nvcc -Xptxas -v: registers, shared memory, spills per kernel
#   reduction-ncu.txt      with REDUCE_NCU=1: ncu's throughput sections (--clock-control none)
# REDUCE_CASES=a,b limits the runner to those cases (default: every default case).
source "$(dirname "$0")/lib/prelude.sh"  # set -u, cd to the root, RESULTS_DIR, step

step "compile the CUDA C version for Hopper"
timeout 120 nvcc -O3 -arch=sm_90 -Xptxas -v -o build/reduce snippets/reduction/reduce.cu \
    > "$RESULTS_DIR/reduction-build.txt" 2>&1 || { status=1; cat "$RESULTS_DIR/reduction-build.txt"; }
step "the CUDA C lesson's own check of each kernel"
timeout 60 ./build/reduce 2>&1 | tee "$RESULTS_DIR/reduction-lesson.txt" || status=1

if [ "${REDUCE_NCU:-0}" = 1 ]; then
    step "Nsight Compute: one launch of each of five kernels (2^25 floats)"
    timeout 120 nvcc -O3 -arch=sm_90 -DLESSON='"../reduction/reduce.cu"' -o build/bench-reduce \
        snippets/bench/runner.cu || status=1
    for kernel in sum_shared sum_shuffle sum_vector sum_one_pass read_one_float4; do
        timeout 60 ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis \
            --section LaunchStats --section Occupancy -k "regex:^$kernel" -c 1 \
            ./build/bench-reduce --repeats 10 33554432 >> "$RESULTS_DIR/reduction-ncu.txt" 2>&1 || status=1
    done
    grep -E "^  [a-z_0-9]+\(|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|error" \
        "$RESULTS_DIR/reduction-ncu.txt" | head -40
fi

step "the benchmark runner: every sum, two rounds; the softmax"
cases=()
[ -n "${REDUCE_CASES:-}" ] && cases=(--cases "$REDUCE_CASES")
timeout "${REDUCE_TIMEOUT:-240}" python3 snippets/bench/run.py reduction ${cases[@]+"${cases[@]}"} \
    --compile-runs 1 --output "$RESULTS_DIR/reduction-h200.json" > "$RESULTS_DIR/reduction-run.txt" 2>&1 \
    || status=1
tail -40 "$RESULTS_DIR/reduction-run.txt"
exit $status
