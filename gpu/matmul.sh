#!/usr/bin/env bash
# Matrix multiplication on the GPU (about 3 minutes on an H200; budget 4): build the CUDA C
# kernels with cuBLAS, keep the compiler's report of registers, spills and shared memory per
# kernel, profile the naive and coalesced kernels with Nsight Compute, then check and time
# every kernel (CUDA C, Numba, tensor cores, Triton) and cuBLAS FP32, TF32 and BF16 in one
# run of the benchmark runner. Writes into $RESULTS_DIR:
#   matmul-h200.json       results file          (-> docs/data/matmul-h200.json)
#   matmul-build.txt       nvcc -Xptxas -v report (-> docs/data/matmul-build-h200.txt)
#   matmul-resusage.txt    cuobjdump -res-usage   (-> docs/data/matmul-resusage-h200.txt)
#   matmul-ncu-h200.txt    ncu metrics            (-> docs/data/matmul-ncu-h200.txt)
set -uo pipefail
cd "$(dirname "$0")/.."
: "${RESULTS_DIR:?set RESULTS_DIR to an empty folder for the outputs}"
export PYTHONUNBUFFERED=1
build=${MATMUL_BUILD_DIR:-$(mktemp -d)}
mkdir -p "$build"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n1 | tr -d .)
arch=sm_${cc:-90}
[ "$arch" = sm_90 ] && arch=sm_90a  # wgmma and TMA need the architecture-specific target

# --8<-- [start:build]
nvcc -O3 -arch="$arch" -Xptxas -v -DWITH_CUBLAS -o "$build/sgemm" \
    snippets/matmul/sgemm.cu -lcublas 2> "$RESULTS_DIR/matmul-build.txt" || {
    cat "$RESULTS_DIR/matmul-build.txt"; exit 1; }
cuobjdump -res-usage "$build/sgemm" > "$RESULTS_DIR/matmul-resusage.txt"
# --8<-- [end:build]

# --8<-- [start:ncu]
# Memory traffic of the naive and the coalesced kernel at 2048^3, from the hardware counters.
metrics=gpu__time_duration.sum,dram__bytes_read.sum,lts__t_bytes.sum,\
l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,\
l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed
if command -v ncu >/dev/null; then
    for k in naive coalesced; do
        timeout 60 ncu --clock-control none --metrics "$metrics" -k "regex:sgemm_$k" -c 1 \
            "$build/sgemm" --kernel "$k" --repeats 10 --budget 0.001 2048 2>&1 |
            grep -E "sgemm_$k|^ +[a-z0-9_]+__" || echo "ncu failed for $k (exit $?)"
    done > "$RESULTS_DIR/matmul-ncu-h200.txt"
fi
# --8<-- [end:ncu]

# --8<-- [start:bench]
MATMUL_SGEMM="$build/sgemm" timeout 200 python3 snippets/bench/run.py matmul \
    --compile-runs 1 --output "$RESULTS_DIR/matmul-h200.json"
# --8<-- [end:bench]
