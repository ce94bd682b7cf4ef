#!/usr/bin/env bash
# Matrix multiplication on the GPU (about 5 minutes on an H200), in three parts:
# 1. tuning runs: while nvcc builds the C runner around sgemm.cu (bench/runner.cu, with cuBLAS;
#    run.py then finds it built), the Numba warp tile at several tile sizes (one process each)
#    and the persistent Triton kernel in every config of its size class, each at every size with
#    cuBLAS in the same process; then every instance of the templated CUDA C kernels at every
#    size, with cuBLAS in the same process (run.py, MATMUL_TUNE=1);
# 2. the rule, written down before the confirming run: at each size, each templated CUDA C kernel
#    publishes its instance with the smallest median time in the tuning run (`pick` in
#    snippets/matmul/launchers.py); the Numba warp tile and the Triton kernel publish the
#    candidate that passed its check with the highest share of cuBLAS (`best`, same file);
# 3. the confirming run, a separate process: every kernel (the picks) with cuBLAS FP32 and BF16
#    timed in the same processes, 1024^3 to 8192^3 and an odd shape. Beside them, Nsight
#    Compute on the naive and coalesced kernels, and the machine code of the Triton TMA kernel.
# Writes into $RESULTS_DIR (-> where it goes in the repository):
#   matmul-<card>.json           confirming run          (-> docs/data/matmul-<card>.json)
#   matmul-tune-<card>.json      CUDA C tuning run       (-> docs/data/matmul-tune-<card>.json)
#   matmul-numba-tiles.jsonl   Numba tuning run        (-> docs/data/matmul-numba-tiles-<card>.jsonl)
#   matmul-triton-configs.jsonl Triton tuning run      (-> docs/data/matmul-triton-configs-<card>.jsonl)
#   matmul-build.txt           nvcc -Xptxas -v report  (-> docs/data/matmul-build-<card>.txt)
#   matmul-ncu-<card>.txt        ncu metrics             (-> docs/data/matmul-ncu-<card>.txt)
#   matmul-triton-sass.txt     wgmma and TMA instructions of each compiled Triton config (log)
set -uo pipefail
cd "$(dirname "$0")/.."
: "${RESULTS_DIR:?set RESULTS_DIR to an empty folder for the outputs}"
export PYTHONUNBUFFERED=1
build=${MATMUL_BUILD_DIR:-$(mktemp -d)}
mkdir -p "$build" build

# --8<-- [start:build]
# The C runner around the lesson, as run.py builds it (bench/adapters.py), with ptxas's report.
nvcc -O3 -arch=sm_90a -DLESSON="\"$PWD/snippets/matmul/sgemm.cu\"" -o build/bench-sgemm \
    snippets/bench/runner.cu -DWITH_CUBLAS -lcublas -Xptxas -v 2> "$RESULTS_DIR/matmul-build.txt" &
# --8<-- [end:build]
nvcc_pid=$!
# While nvcc builds: the Numba and the Triton tuning runs (each stops starting candidates when
# its budget is spent, and logs a candidate that fails).
export TRITON_CACHE_DIR="$build/triton-cache"
timeout 75 python3 gpu/explore/matmul-numba-tiles.py --budget 45 \
    > "$RESULTS_DIR/matmul-numba-tiles.jsonl" || echo "the Numba tuning run exited $?"
timeout 75 python3 gpu/explore/matmul-triton-configs.py --budget 45 \
    > "$RESULTS_DIR/matmul-triton-configs.jsonl" || echo "the Triton tuning run exited $?"
wait $nvcc_pid || { cat "$RESULTS_DIR/matmul-build.txt"; exit 1; }

# --8<-- [start:ncu]
# Memory traffic of the naive and the coalesced kernel at 2048^3, from the hardware counters.
metrics=gpu__time_duration.sum,dram__bytes_read.sum,lts__t_bytes.sum,\
l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,\
l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed
if command -v ncu >/dev/null; then
    for k in naive coalesced; do
        timeout 60 ncu --clock-control none --metrics "$metrics" -k "regex:sgemm_$k" -c 1 \
            build/bench-sgemm --kernel "$k" --repeats 10 --budget 0.001 2048 2>&1 |
            grep -E "sgemm_$k|^ +[a-z0-9_]+__" || echo "ncu failed for $k (exit $?)"
    done > "$RESULTS_DIR/matmul-ncu-$CARD.txt"
fi
# --8<-- [end:ncu]

# --8<-- [start:bench]
tuned="$RESULTS_DIR/matmul-tune-$CARD.json"
MATMUL_TUNE=1 timeout 120 python3 snippets/bench/run.py matmul --variants cuda_c \
    --compile-runs 0 --output "$tuned" || echo "the tuning run exited $?"
# The confirming run applies the rule to these files (launchers.py); without one, the kernels'
# defaults run: sgemm.cu's launchers, sgemm_numba_tiles.py's tile, TMA_CONFIGS' first config.
[ -s "$tuned" ] && export MATMUL_TUNED="$tuned"
export MATMUL_NUMBA_TUNED="$RESULTS_DIR/matmul-numba-tiles.jsonl"
export MATMUL_TRITON_TUNED="$RESULTS_DIR/matmul-triton-configs.jsonl"
timeout 240 python3 snippets/bench/run.py matmul \
    --compile-runs 1 --output "$RESULTS_DIR/matmul-$CARD.json"
# --8<-- [end:bench]
for f in $(find "$TRITON_CACHE_DIR" -name 'matmul_tma_kernel.cubin'); do
    sass=$(cuobjdump -sass "$f")
    echo "$(basename "$(dirname "$f")"): $(grep -c HGMMA <<< "$sass") HGMMA ($(grep -o -m1 'HGMMA\.[0-9x]*' <<< "$sass")), $(grep -c UTMALDG <<< "$sass") UTMALDG"
done > "$RESULTS_DIR/matmul-triton-sass.txt"
