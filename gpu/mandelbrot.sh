#!/usr/bin/env bash
# Mandelbrot on the GPU, in one go (at most 200 s: each step's timeout is what is left of 195 s):
# 1. the tuning run: the chunked float64 and float32 kernels at every chunk length k and block of
#    benchmark.py's SWEEP, on the large case (MANDELBROT_TUNE=1);
# 2. the rule: for each of the two, the candidate with the least median kernel time in the tuning
#    run (among those that passed their check: a failed one is not timed), passed on as
#    MANDELBROT_PICKED;
# 3. the SASS of every CUDA kernel (the picked ones included), then the confirming run: every
#    variant at every default case, the chunked kernels at their picks;
# 4. Nsight Compute (--clock-control none) on the plain float32 kernel, the tuned float64 one and
#    the two chunked ones, one launch each on the deep case: instructions per pipe, issue slots,
#    warp stall reasons, achieved occupancy.
# Outputs in $RESULTS_DIR:
#   mandelbrot-<card>.json       -> docs/data/mandelbrot-<card>.json        (confirming run)
#   mandelbrot-tune-<card>.json  -> docs/data/mandelbrot-tune-<card>.json   (tuning run)
#   mandelbrot-sass-<card>.txt   -> docs/data/mandelbrot-sass-<card>.txt
#   mandelbrot-ncu-<card>.txt    -> docs/data/mandelbrot-ncu-<card>.txt     (then tools/structure_logs.py)
#   mandelbrot-summary.txt, mandelbrot-runner.log, mandelbrot-tune.log, mandelbrot-sass.txt,
#   mandelbrot-host.txt        -> gpu/logs/<date>/mandelbrot-*.txt
# The image (docs/assets/images/mandelbrot.png) and the notebook are made by the commands of the
# page (tools/mandelbrot_image.py; jupyter execute), not here: both take longer than this budget.
# MANDELBROT_DRY_RUN=1 does the same steps on the CUDA simulator at tiny sizes (no SASS, no ncu).
source "$(dirname "$0")/lib/prelude.sh"  # set -u, cd to the root, RESULTS_DIR, step, status
export PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
RUN_ARGS=(--compile-runs 1)
TUNE_ARGS=(--cases large --compile-runs 0)
dry=${MANDELBROT_DRY_RUN:-0}
if [ "$dry" = 1 ]; then
    export NUMBA_ENABLE_CUDASIM=1
    RUN_ARGS=(--cases smoke --repeats 3 --compile-runs 0)
    TUNE_ARGS=(--cases smoke --repeats 2 --warmup 0 --compile-runs 0)
else
    unset NUMBA_ENABLE_CUDASIM
fi
left() { echo $(( 195 - SECONDS > 1 ? 195 - SECONDS : 1 )); }  # seconds left of the budget

step "host"  # the CPU the CPU figures ran on: model, vCPUs, and whether it is a virtual machine
{ nproc; grep -m1 "model name" /proc/cpuinfo; grep -c -w hypervisor /proc/cpuinfo;
  command -v systemd-detect-virt >/dev/null && systemd-detect-virt; } \
    > "$RESULTS_DIR/mandelbrot-host.txt" 2>&1
cat "$RESULTS_DIR/mandelbrot-host.txt"

step "tuning run: the chunked kernels at every k and block (progress in mandelbrot-tune.log)"
tuned="$RESULTS_DIR/mandelbrot-tune-$CARD.json"
MANDELBROT_TUNE=1 timeout 70 $PY snippets/bench/run.py mandelbrot "${TUNE_ARGS[@]}" \
    --output "$tuned" > "$RESULTS_DIR/mandelbrot-tune.log" 2>&1 || echo "the tuning run exited $?"
tail -n 30 "$RESULTS_DIR/mandelbrot-tune.log"
# --8<-- [start:rule]
# The rule: per chunked kernel, the candidate of least median kernel time (no tuning file: the
# lesson's defaults).
MANDELBROT_PICKED=$($PY -c 'import json, sys
best = {}
for m in json.load(open(sys.argv[1]))["measurements"]:
    kernel, _, candidate = m["variant"].partition("/")
    if candidate and m["phase"] == "kernel":
        best[kernel] = min(best.get(kernel, (float("inf"), "")), (m["median_s"], candidate))
print(",".join(f"{kernel}={candidate}" for kernel, (_, candidate) in best.items()))
' "$tuned" 2>/dev/null)
export MANDELBROT_PICKED
# --8<-- [end:rule]
echo "picked: ${MANDELBROT_PICKED:-none, the defaults of the lesson}"

if [ "$dry" != 1 ]; then
    step "SASS of the CUDA kernels"
    timeout "$(left)" $PY snippets/bench/run.py mandelbrot --sass "$RESULTS_DIR/mandelbrot-sass-$CARD.txt" \
        > "$RESULTS_DIR/mandelbrot-sass.txt" 2>&1 || { status=1; cat "$RESULTS_DIR/mandelbrot-sass.txt"; }
fi

step "confirming run (progress in mandelbrot-runner.log)"
timeout "$(left)" $PY snippets/bench/run.py mandelbrot "${RUN_ARGS[@]}" \
    --output "$RESULTS_DIR/mandelbrot-$CARD.json" > "$RESULTS_DIR/mandelbrot-summary.txt" \
    2> "$RESULTS_DIR/mandelbrot-runner.log" || { status=1; echo "runner exit status $?"; }
cat "$RESULTS_DIR/mandelbrot-summary.txt"

# --8<-- [start:ncu]
# One launch of each kernel, from the runner on the deep case; a section per variant.
metrics=gpu__time_duration.sum,launch__registers_per_thread,\
sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,\
smsp__issue_active.avg.per_cycle_active,sm__inst_executed_pipe_fma.sum,\
sm__inst_executed_pipe_fp64.sum,sm__inst_executed_pipe_alu.sum,\
sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,\
sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active
stalls=""
for reason in math_pipe_throttle wait not_selected selected short_scoreboard dispatch_stall \
    branch_resolving no_instruction; do
    stalls+=,smsp__average_warps_issue_stalled_${reason}_per_issue_active.ratio
done
metrics+=$stalls
# A metric this ncu does not know fails the whole launch: then the metrics of the earlier runs.
known=smsp__inst_executed.sum,smsp__issue_active.avg.per_cycle_active,\
sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active$stalls
profile() {  # $1: the variant, $2: the metrics
    timeout "$(left)" ncu --clock-control none --metrics "$2" -k regex:mandelbrot_kernel -c 1 \
        $PY snippets/bench/run.py mandelbrot --cases deep --variants "$1" --repeats 1 --warmup 0 \
        --compile-runs 0 --output build/mandelbrot-ncu-run.json 2>&1 | grep -E "^  [a-z_]|^ +[a-z0-9_]+__|ERR"
}
if [ "$dry" != 1 ] && command -v ncu >/dev/null; then
    for v in cuda_f32 cuda_f32_chunk cuda_f64_chunk cuda_f64_fast; do  # the most wanted first
        [ "$(left)" -gt 8 ] || { echo "no time left for ncu on $v"; continue; }
        echo "===== $v"
        out=$(profile "$v" "$metrics")
        grep -qE "^ +[a-z]+__" <<< "$out" || { echo "$out" | sed "s/^/# /"; out=$(profile "$v" "$known"); }
        echo "${out:-ncu failed for $v}"
    done > "$RESULTS_DIR/mandelbrot-ncu-$CARD.txt"
    cat "$RESULTS_DIR/mandelbrot-ncu-$CARD.txt"
fi
# --8<-- [end:ncu]
step "done in $SECONDS s"
exit $status
