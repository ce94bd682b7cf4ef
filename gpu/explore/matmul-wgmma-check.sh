#!/usr/bin/env bash
# Check call (H200), 2026-12-02c: the wgmma kernel with a tile chosen per size (128x256, 128x128
# or 64x128) and its tuning instances, checked against the float64 product and timed against
# cuBLAS BF16 in the same process, 1024^3 to 8192^3 and the odd shape; the Numba tuning run
# (gpu/explore/matmul-numba-tiles.py, while nvcc builds); and gpu/matmul.sh's tuning -> pick ->
# confirming pipeline on the cuda_c variant at 1024^3. Writes into $OUT; prints its log.
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?set OUT to an empty folder}"
export PYTHONUNBUFFERED=1 NUMBA_ENABLE_CUDASIM=0
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl
harness=$(mktemp -d)
ln -s "$PWD/snippets/bench" "$harness/bench"
export PYTHONPATH=$harness:/tmp/site
b=$(mktemp -d)
start=$(date +%s)
nvcc -O3 -arch=sm_90a -Xptxas -v -DWITH_CUBLAS -o "$b/sgemm" snippets/matmul/sgemm.cu -lcublas \
    2> "$OUT/build.txt" &
nvcc_pid=$!
echo "## Numba tuning run at 4096^3 (while nvcc builds)"
timeout 45 python3 gpu/explore/matmul-numba-tiles.py 4096 | tee "$OUT/numba-tiles.jsonl"
wait $nvcc_pid || { tail -20 "$OUT/build.txt"; exit 1; }
echo "## nvcc and the Numba run done after $(( $(date +%s) - start )) s"
wg=$("$b/sgemm" --help | tr ' ' '\n' | grep '^wgmma_' | paste -sd,)
echo "## wgmma instances: $wg"
timeout 30 "$b/sgemm" --kernel "cublas_bf16,wgmma,$wg" --repeats 20 1024 2048 4096 3001x4099x2053
timeout 10 "$b/sgemm" --kernel cublas_bf16,wgmma,wgmma_128x256_s4_g8_f0_k1 --repeats 20 8192
echo "## tuning run, then confirming run, cuda_c at 1024^3"
export MATMUL_SGEMM="$b/sgemm"
MATMUL_TUNE=1 timeout 20 python3 snippets/bench/run.py matmul --variants cuda_c --cases 1024 \
    --compile-runs 0 --output "$OUT/tune-1024.json" > "$OUT/tune-1024.txt" 2>&1
tail -3 "$OUT/tune-1024.txt"
MATMUL_TUNED="$OUT/tune-1024.json" timeout 20 python3 snippets/bench/run.py matmul \
    --variants cuda_c --cases 1024 --compile-runs 0 --output "$OUT/confirm-1024.json" 2>&1 |
    grep -v '^BENCH' | head -40
echo "## done after $(( $(date +%s) - start )) s"
