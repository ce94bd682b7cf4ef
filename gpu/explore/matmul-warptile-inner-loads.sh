#!/usr/bin/env bash
# Second exploratory H200 call (run at commit 2d619c5, the only one with the -DWARPTILE_GUARDED_LOADS
# switch that builds the old loads): warptile with plain 16-byte loads for interior tiles against the
# same kernel built with -DWARPTILE_GUARDED_LOADS (every float4 through load4's guards), both
# orders at 4096^3, correctness at odd sizes, and the stall breakdown from Nsight Compute for the
# new warptile and cuBLAS FP32. Prediction written before the run: +1-3 % for warptile
# (45.9 -> 46.4-47.3 TFLOP/s), since the guards are ~5 % of its issued instructions and the
# kernel is latency-bound (80 % issue), not issue-bound.
set -uo pipefail
cd "$(dirname "$0")/../../.."
: "${OUT:?}"
b=$(mktemp -d)
nvcc -O3 -arch=sm_90a -Xptxas -v -DWITH_CUBLAS -o "$b/new" snippets/matmul/sgemm.cu -lcublas 2> "$OUT/inner-build.txt" &
nvcc -O3 -arch=sm_90a -DWITH_CUBLAS -DWARPTILE_GUARDED_LOADS -o "$b/old" snippets/matmul/sgemm.cu -lcublas 2> /dev/null &
wait
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv -lms 500 > "$OUT/inner-clocks.csv" &
smi=$!
wt=$(grep -o '{"wt_[^"]*"' snippets/matmul/sgemm.cu | tr -d '{"' | paste -sd,)
{
echo "## correctness, new build"
"$b/new" --kernel warptile,wt_128x256x16_64x64_1x2_8x8_256_1 --repeats 10 --budget 0.001 100x72x40 3001x4099x2053 4099x3001x2052 512x1024x96 256
for round in 1 2; do
    echo "## round $round: old build"; "$b/old" --kernel cublas_fp32,warptile 4096
    echo "## round $round: new build"; "$b/new" --kernel cublas_fp32,warptile 4096
done
echo "## new build, the FP32 tuning grid"
"$b/new" --kernel "cublas_fp32,$wt,warptile" 4096
} 2>&1 | tee "$OUT/inner-explore.txt"
m='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio|smsp__issue_active.avg.per_cycle_active|smsp__inst_executed.sum'
timeout 90 ncu --clock-control none --metrics "$m" -k regex:sgemm_warptile -c 1 "$b/new" --kernel warptile --repeats 10 --budget 0.001 4096 > "$OUT/inner-ncu.txt" 2>&1
timeout 90 ncu --clock-control none --metrics "$m" -k regex:sgemm_warptile -c 1 "$b/old" --kernel warptile --repeats 10 --budget 0.001 4096 >> "$OUT/inner-ncu.txt" 2>&1
timeout 90 ncu --clock-control none --metrics "$m" -k regex:gemm --launch-skip 1 -c 1 "$b/new" --kernel cublas_fp32 --repeats 10 --budget 0.001 4096 >> "$OUT/inner-ncu.txt" 2>&1
timeout 90 ncu --clock-control none --metrics "$m" -k regex:sgemm_async -c 1 "$b/new" --kernel as_128x256x32_64x64_1x4_8x4_256_s3 --repeats 10 --budget 0.001 4096 >> "$OUT/inner-ncu.txt" 2>&1
kill $smi
grep -E "^  [a-z_]*gemm|^  void|ratio|issue_active|inst_executed" "$OUT/inner-ncu.txt" | awk '$NF+0 > 0.02 || /gemm/' | cut -c1-150
