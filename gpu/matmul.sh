#!/usr/bin/env bash
# Matrix multiplication on the GPU (about 4 minutes on an H200), in three parts:
# 1. tuning runs: while nvcc builds the C runner around sgemm.cu (bench/runner.cu, with cuBLAS;
#    run.py then finds it built), the Numba warp tile at several tile sizes at 4096^3 (one process
#    each); then every instance of the templated CUDA C kernels at every size, with cuBLAS in the
#    same process (run.py, MATMUL_TUNE=1);
# 2. the rule: each templated CUDA C kernel publishes, at each size, its instance with the
#    smallest median time in the tuning run (benchmark.py `pick`); the Numba warp tile publishes
#    the tile with the highest share of cuBLAS FP32 at 4096^3 (below);
# 3. the confirming run, a separate process: every kernel (the picked instances) with cuBLAS FP32
#    and BF16 timed in the same processes, 1024^3 to 8192^3 and an odd shape. Beside them, Nsight
#    Compute on the naive and coalesced kernels, and the machine code of the Triton TMA kernel.
# Writes into $RESULTS_DIR (-> where it goes in the repository):
#   matmul-h200.json          confirming run          (-> docs/data/matmul-h200.json)
#   matmul-tune-h200.json     CUDA C tuning run       (-> docs/data/matmul-tune-h200.json)
#   matmul-numba-tiles.jsonl  Numba tuning run        (-> docs/data/matmul-numba-tiles-h200.jsonl)
#   matmul-build.txt          nvcc -Xptxas -v report  (-> docs/data/matmul-build-h200.txt)
#   matmul-ncu-h200.txt       ncu metrics             (-> docs/data/matmul-ncu-h200.txt)
#   matmul-triton-sass.txt    wgmma and TMA instructions of each compiled Triton candidate (log)
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
# While nvcc builds: the Numba tuning run, its warp tile at several tile sizes, at 4096^3.
timeout 70 python3 gpu/explore/matmul-numba-tiles.py 4096 > "$RESULTS_DIR/matmul-numba-tiles.jsonl"
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
    done > "$RESULTS_DIR/matmul-ncu-h200.txt"
fi
# --8<-- [end:ncu]

# --8<-- [start:bench]
export TRITON_CACHE_DIR="$build/triton-cache" TRITON_PRINT_AUTOTUNING=1
tuned="$RESULTS_DIR/matmul-tune-h200.json"
MATMUL_TUNE=1 timeout 120 python3 snippets/bench/run.py matmul --variants cuda_c \
    --compile-runs 0 --output "$tuned" || echo "the tuning run exited $?"
# Without a tuning file the confirming run publishes the kernels' default launchers.
[ -s "$tuned" ] && export MATMUL_TUNED="$tuned"
# The Numba rule: the tile with the highest share at 4096^3 among those that passed the check.
MATMUL_NUMBA_WARPTILE=$(python3 -c 'import json, sys
rows = [r for r in map(json.loads, open(sys.argv[1])) if r.get("rel_err", 1) < 1e-5]
print(",".join(map(str, max(rows, key=lambda r: r["share"])["tiles"])) if rows else "")
' "$RESULTS_DIR/matmul-numba-tiles.jsonl")
export MATMUL_NUMBA_WARPTILE
echo "Numba warp tile picked: ${MATMUL_NUMBA_WARPTILE:-the default of sgemm_numba_tiles.py}"
timeout 240 python3 snippets/bench/run.py matmul \
    --compile-runs 1 --output "$RESULTS_DIR/matmul-h200.json"
# --8<-- [end:bench]
for f in $(find "$TRITON_CACHE_DIR" -name 'matmul_tma_kernel.cubin'); do
    sass=$(cuobjdump -sass "$f")
    echo "$(basename "$(dirname "$f")"): $(grep -c HGMMA <<< "$sass") HGMMA ($(grep -o -m1 'HGMMA\.[0-9x]*' <<< "$sass")), $(grep -c UTMALDG <<< "$sass") UTMALDG"
done > "$RESULTS_DIR/matmul-triton-sass.txt"
