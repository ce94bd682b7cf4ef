#!/usr/bin/env bash
# Reductions on a GPU machine: the CUDA C build reports, the lessons' own checks, the benchmark
# runner (two rounds of every sum against the read-only kernels; softmax and RMSNorm against a
# copy), then Nsight Compute on the row kernels and, with REDUCE_NCU=1, on five sum kernels.
# Within 180 s in all. Writes into $RESULTS_DIR:
#   reduction-<card>.json    results file           (-> docs/data/reduction-<card>.json)
#   reduction-run.txt      what the runner printed
#   reduction-build.txt    nvcc -Xptxas -v: registers, shared memory, spills per kernel
#   reduction-lesson.txt   reduce.cu's and rows.cu's own checks
#   reduction-tools.txt    the versions of nvcc, ncu, numba-cuda and PyTorch found
#   reduction-rows-ncu-<card>.txt   ncu on softmax_rows<256> and rmsnorm_rows<256>, 8192 rows: DRAM
#                          bytes read and written, throughput, duration, occupancy
#                          (-> docs/data/reduction-rows-ncu-<card>.txt)
#   reduction-rows-ncu-<card>.json  the same, structured by tools/structure_logs.ncu_profiles
#                          (-> docs/data/reduction-rows-ncu-<card>.json)
#   reduction-ncu.txt      with REDUCE_NCU=1: ncu's throughput sections on the sums
# REDUCE_CASES=a,b limits the runner to those cases (default: every default case). The runner
# gets what is left of REDUCE_BUDGET (175 s) after the steps before it, less 22 s for the ncu step.
source "$(dirname "$0")/lib/prelude.sh"  # set -u, cd to the root, RESULTS_DIR, step
left() { local s=$(( ${REDUCE_BUDGET:-175} - SECONDS - $1 )); echo $(( s > 5 ? s : 5 )); }

step "what this machine has (decided at run time; logged into reduction-tools.txt)"
{ nvcc --version | tail -1; command -v ncu >/dev/null && ncu --version | tail -1 || echo "ncu: not found"
  for package in numba-cuda torch cupy-cuda13x; do  # rms_norm: torch 2.4 and later
      timeout 10 python3 -c "import importlib.metadata as m, sys; print(sys.argv[1], m.version(sys.argv[1]))" \
          "$package" 2>/dev/null || echo "$package: not installed"
  done
} | tee "$RESULTS_DIR/reduction-tools.txt"

step "compile the CUDA C lessons for Hopper"
: > "$RESULTS_DIR/reduction-build.txt"
for lesson in reduce rows; do
    timeout 30 nvcc -O3 -arch=sm_90 -Xptxas -v -o "build/$lesson" "snippets/reduction/$lesson.cu" \
        >> "$RESULTS_DIR/reduction-build.txt" 2>&1 || { status=1; tail -5 "$RESULTS_DIR/reduction-build.txt"; }
done
grep -A3 -E "Compiling entry function '_Z1[0-9](softmax|rmsnorm)_rows" "$RESULTS_DIR/reduction-build.txt" \
    | grep -E "entry|registers|spill"
step "the CUDA C lessons' own check of each kernel"
for lesson in reduce rows; do
    timeout 15 "./build/$lesson" 2>&1 | tee -a "$RESULTS_DIR/reduction-lesson.txt" || status=1
done

step "the benchmark runner: every sum, two rounds; softmax and RMSNorm"
cases=()
[ -n "${REDUCE_CASES:-}" ] && cases=(--cases "$REDUCE_CASES")
timeout "$(left 22)" python3 snippets/bench/run.py reduction ${cases[@]+"${cases[@]}"} \
    --compile-runs 1 --output "$RESULTS_DIR/reduction-$CARD.json" > "$RESULTS_DIR/reduction-run.txt" 2>&1 \
    || status=1
tail -40 "$RESULTS_DIR/reduction-run.txt"

# Optional: a failing profile is logged and the results above stand.
step "Nsight Compute: one launch each of softmax_rows<256> and rmsnorm_rows<256> (8192 rows)"
timeout 15 nvcc -O3 -arch=sm_90 -DLESSON='"../reduction/rows.cu"' -o build/bench-rows-sm90 \
    snippets/bench/runner.cu || echo "the runner for ncu did not build"
ncu_metrics=dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,\
dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
for kernel in softmax rmsnorm; do
    command -v ncu >/dev/null || { echo "ncu: not found, no profile"; break; }
    timeout "$(( $(left 0) < 10 ? $(left 0) : 10 ))" ncu --clock-control none --metrics "$ncu_metrics" -k "regex:${kernel}_rows" -c 1 \
        ./build/bench-rows-sm90 --kernel "cuda_c_${kernel}_256" --repeats 10 --budget 0.05 8192 2>&1 |
        grep -E "${kernel}_rows|^ +[a-z0-9_]+__|==ERROR" || echo "ncu failed for $kernel (exit $?)"
done > "$RESULTS_DIR/reduction-rows-ncu-$CARD.txt"
cat "$RESULTS_DIR/reduction-rows-ncu-$CARD.txt"
timeout 10 python3 - "$RESULTS_DIR" "reduction-rows-ncu-$CARD.txt" <<'PY' || echo "no ncu figures to structure"
import json, sys
from pathlib import Path
sys.path.insert(0, "tools")
from structure_logs import ncu_profiles  # the one parser of ncu --metrics reports
raw = Path(sys.argv[1]) / sys.argv[2]
rows = [{"kernel": k, "metrics": m} for k, m in ncu_profiles(raw.read_text())]
if rows:
    raw.with_suffix(".json").write_text(json.dumps({"raw": raw.name, "rows": rows}, indent=1) + "\n")
PY

if [ "${REDUCE_NCU:-0}" = 1 ]; then
    step "Nsight Compute: one launch of each of five sum kernels (2^25 floats)"
    timeout 60 nvcc -O3 -arch=sm_90 -DLESSON='"../reduction/reduce.cu"' -o build/bench-reduce \
        snippets/bench/runner.cu || status=1
    for kernel in sum_shared sum_shuffle sum_vector sum_one_pass read_one_float4; do
        timeout 60 ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis \
            --section LaunchStats --section Occupancy -k "regex:^$kernel" -c 1 \
            ./build/bench-reduce --repeats 10 33554432 >> "$RESULTS_DIR/reduction-ncu.txt" 2>&1 || status=1
    done
    grep -E "^  [a-z_0-9]+\(|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|error" \
        "$RESULTS_DIR/reduction-ncu.txt" | head -40
fi
exit $status
