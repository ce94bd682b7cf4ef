#!/usr/bin/env bash
# Exploratory H200 call for the cp.async FP32 kernel (sgemm_async): correctness at odd sizes,
# compute-sanitizer, a timing sweep at 4096^3 in both orders (against cuBLAS FP32 and warptile),
# and Nsight Compute's scheduler and warp-state sections for warptile, one async variant and
# cuBLAS FP32. Prediction written before the run: the best as_ variant at 47-49 TFLOP/s, 92-96 %
# of cuBLAS FP32 (warptile: 45.9, 89.9 %), because it holds no registers for the next tile,
# issues no shared stores, and BK 32 halves the barriers.
set -uo pipefail
cd "$(dirname "$0")/../../.."
: "${OUT:?}"
build=$(mktemp -d)
nvcc -O3 -arch=sm_90a -Xptxas -v -DWITH_CUBLAS -o "$build/sgemm" snippets/matmul/sgemm.cu -lcublas \
    2> "$OUT/async-build.txt" || { tail -20 "$OUT/async-build.txt"; exit 1; }
variants=$(grep -o '{"as_[^"]*"' snippets/matmul/sgemm.cu | tr -d '{"' | paste -sd,)
log=$OUT/async-explore.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv -lms 500 \
    > "$OUT/async-clocks.csv" &
smi=$!
{
echo "## correctness (checked against float64)"
"$build/sgemm" --kernel "$variants,warptile" --repeats 10 --budget 0.001 100x72x40 3001x4099x2053 \
    257x260x36 4099x3001x2052 64
echo "## 4096, variants in table order"
"$build/sgemm" --kernel "cublas_fp32,warptile,$variants" 4096
echo "## 4096, reversed"
rev=$(echo "$variants" | tr , '\n' | tac | paste -sd,)
"$build/sgemm" --kernel "cublas_fp32,$rev,warptile" 4096
echo "## compute-sanitizer"
for tool in memcheck racecheck; do
    compute-sanitizer --tool $tool --print-limit 5 "$build/sgemm" \
        --kernel as_128x256x32_64x64_1x4_8x4_256_s3 --repeats 10 --budget 0.001 300x264x100 2>&1 | tail -3
done
} 2>&1 | tee "$log"
sections="--section LaunchStats --section Occupancy --section SchedulerStats --section WarpStateStats --section SpeedOfLight --section InstructionStats"
for k in warptile as_128x256x32_64x64_1x4_8x4_256_s3; do
    timeout 120 ncu --clock-control none $sections -k "regex:sgemm_(warptile|async)" -c 1 \
        "$build/sgemm" --kernel "$k" --repeats 10 --budget 0.001 4096 2>&1 | grep -v "^==PROF=="
done > "$OUT/async-ncu.txt"
timeout 120 ncu --clock-control none $sections -k regex:gemm --launch-skip 1 -c 1 \
    "$build/sgemm" --kernel cublas_fp32 --repeats 10 --budget 0.001 4096 2>&1 | grep -v "^==PROF==" >> "$OUT/async-ncu.txt"
kill $smi
grep -E "Used|Compiling entry" "$OUT/async-build.txt" | grep -A1 "sgemm_async\|sgemm_warptile" | grep Used | sort | uniq -c
grep -E "sgemm_|gemm|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Registers Per|Stall|Duration|SM Frequency" "$OUT/async-ncu.txt" | head -60
