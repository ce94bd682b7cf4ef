#!/usr/bin/env bash
# FP8 (e4m3) against BF16 matrix products on a GPU machine (about a minute on an H200).
# Writes into $RESULTS_DIR:
#   fp8-<card>.json  results file   (-> docs/data/fp8-<card>.json)
#   fp8-run.txt      what the runner printed, and the lesson's own demo at 4096
set -u -o pipefail
cd "$(dirname "$0")/.."
: "${RESULTS_DIR:?set RESULTS_DIR to an empty folder for the results}"
status=0
echo "== the lesson's demo ($(date +%T))"
(cd snippets/fp8 && timeout 60 python3 fp8_matmul.py 4096) 2>&1 | tee "$RESULTS_DIR/fp8-demo.txt" \
    || status=1
echo "== the benchmark runner ($(date +%T))"
timeout "${FP8_TIMEOUT:-180}" python3 snippets/bench/run.py fp8 --compile-runs 0 \
    --output "$RESULTS_DIR/fp8-$CARD.json" > "$RESULTS_DIR/fp8-run.txt" 2>&1 || status=1
tail -25 "$RESULTS_DIR/fp8-run.txt"
exit $status
