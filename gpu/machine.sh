#!/usr/bin/env bash
# "Measure your machine" on a GPU machine: the ceilings of the roofline. Writes into $RESULTS_DIR:
#   machine-<card>.json   python snippets/bench/run.py machine (CPU and GPU bandwidths, host<->device
#                       copies, FP64/FP32/TF32/BF16 matrix products)
#   machine-run.txt     what the runner printed
set -u -o pipefail
cd "$(dirname "$0")/.."
: "${RESULTS_DIR:?set RESULTS_DIR to an empty folder for the results}"
mkdir -p "$RESULTS_DIR"
echo "== the benchmark runner: every ceiling ($(date +%T))"
timeout "${MACHINE_TIMEOUT:-150}" python3 snippets/bench/run.py machine --compile-runs 0 \
    --output "$RESULTS_DIR/machine-$CARD.json" > "$RESULTS_DIR/machine-run.txt" 2>&1
status=$?
tail -25 "$RESULTS_DIR/machine-run.txt"
exit $status
