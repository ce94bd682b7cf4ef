#!/usr/bin/env bash
# Tuning call (H200), the first of two: every CUDA C tuning instance at every size (MATMUL_TUNE=1),
# cuBLAS FP32 and BF16 in the same processes, the Numba warp tile and both Triton kernels with
# cuBLAS through PyTorch beside them; the Numba warp tile at other tile sizes; Nsight Compute's
# stall breakdown for the Numba warp tile and the same tiles in CUDA C; the PTX and SASS of the
# autotuned Triton TMA kernel (wgmma? TMA?). The published instance of each kernel is chosen from
# this run by the rule on docs/kernels/matmul-tensor-cores.md and confirmed by gpu/matmul.sh.
# Writes $OUT/tune.tar.gz (and $OUT/log.txt through the caller's tee).
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?set OUT to an empty folder}"
export PYTHONUNBUFFERED=1
r=$(mktemp -d)
b=$(mktemp -d)
nvcc -O3 -arch=sm_90a -Xptxas -v -DWITH_CUBLAS -o "$b/sgemm" snippets/matmul/sgemm.cu -lcublas \
    2> "$r/matmul-build.txt" &
build=$!
echo "## Numba warp tile at other tiles (4096^3), while nvcc builds"
timeout 90 python3 gpu/explore/matmul-numba-tiles.py 4096 | tee "$r/numba-tiles.jsonl"
wait $build || { tail -20 "$r/matmul-build.txt"; exit 1; }
echo "## the runner: every size, tuning instances"
MATMUL_TUNE=1 MATMUL_SGEMM="$b/sgemm" TRITON_PRINT_AUTOTUNING=1 TRITON_CACHE_DIR="$r/triton-cache" \
    timeout 210 python3 snippets/bench/run.py matmul --compile-runs 0 \
    --variants cuda_c,torch/cublas_fp32,numba/warptile,torch/cublas_bf16,triton,triton_tma \
    --output "$r/matmul-tune-h200.json" 2>&1 | tee "$r/matmul-tune-log.txt"
echo "## Triton TMA kernel: PTX and SASS"
for f in $(find "$r/triton-cache" -name 'matmul_tma_kernel.ptx'); do
    echo "$f: wgmma $(grep -c 'wgmma.mma_async' "$f"), cp.async.bulk.tensor $(grep -c 'cp.async.bulk.tensor' "$f")"
done | tee "$r/triton-tma-ptx.txt"
for f in $(find "$r/triton-cache" -name 'matmul_tma_kernel.cubin'); do
    cuobjdump -sass "$f" > "$f.sass" 2>&1
    echo "$f: HGMMA $(grep -c HGMMA "$f.sass"), UTMALDG $(grep -c UTMALDG "$f.sass")"
done | tee -a "$r/triton-tma-ptx.txt"
mkdir -p "$r/triton-tma"
for f in $(find "$r/triton-cache" -name 'matmul_tma_kernel.ptx' | head -2); do
    cp "$f" "$r/triton-tma/$(basename "$(dirname "$f")").ptx"
done
for f in $(find "$r/triton-cache" -name 'matmul_tma_kernel.cubin.sass' | head -2); do
    cp "$f" "$r/triton-tma/$(basename "$(dirname "$f")").sass"
done
echo "## Nsight Compute: Numba warp tile and the same tiles in CUDA C, 4096^3"
m='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio|smsp__issue_active.avg.per_cycle_active|smsp__inst_executed.sum|launch__registers_per_thread|sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active|l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum'
timeout 60 ncu --clock-control none --metrics "$m" -k regex:warptile -c 1 \
    python3 snippets/matmul/sgemm_numba.py --kernel warptile 4096 > "$r/matmul-ncu-numba.txt" 2>&1
timeout 40 ncu --clock-control none --metrics "$m" -k regex:sgemm_warptile -c 1 "$b/sgemm" \
    --kernel wt_128x128x8_64x32_2x2_4x4_256_2_g1_k1 --repeats 10 --budget 0.001 4096 \
    >> "$r/matmul-ncu-numba.txt" 2>&1
grep -E "warptile|ratio|issue_active|inst_executed|registers|pct_of|local" "$r/matmul-ncu-numba.txt" | cut -c1-150
tar -C "$r" -czf "$OUT/tune.tar.gz" --exclude triton-cache .
ls -la "$r"
