#!/usr/bin/env bash
# Training on the GPU machine (issue 29), Keras on JAX (no TensorFlow there); about 510 s on an
# H200 (budget: 600 s), outputs in $RESULTS_DIR:
# 1. climb: `run.py keras --cases climb` (climb.py, climb_torch.py; the harness's rounds): every row of
#    the climb (steps 1-11), the two rows without augmentation, the PyTorch anchor and the CPU rows
#    in one process, 3 rounds of at least 3 s each after 1 s of warm-up (a round that lost more
#    than 1.5 % of the host's CPU time to the hypervisor runs again), with a profiler trace of
#    each GPU row
#    -> keras-climb-<card>.json (docs/data/), climb-log.txt.
# 2. files: train.py as a reader runs it: 25,000 JPEG files at 64x64 from make_dataset.py, then
#    train.py --batch-size 1024 --mixed-precision for 6 epochs with validation and checkpoints ->
#    train-history.json (train.py's own history.json, seconds per epoch), train-dataset.txt,
#    train-log.txt, train-smi.csv.
# TRAIN_PARTS (default "climb files") picks the parts.
set -u
: "${RESULTS_DIR:?set RESULTS_DIR to an empty folder for the outputs}"
cd "$(dirname "$0")/.."
export KERAS_BACKEND=jax TF_CPP_MIN_LOG_LEVEL=2 PYTHONUNBUFFERED=1
export XLA_PYTHON_CLIENT_PREALLOCATE=false  # JAX and PyTorch share the GPU in the climb
parts=${TRAIN_PARTS:-climb files}
status=0
begin=$(date +%s.%N)
wall() { python3 -c "import sys, time; print(round(time.time() - float(sys.argv[1]), 1))" "$1"; }

if [[ " $parts " == *" climb "* ]]; then
    start=$(date +%s.%N)
    timeout 560 python3 snippets/bench/run.py keras --cases climb --compile-runs 0 \
        --output "$RESULTS_DIR/keras-climb-$CARD.json" 2>&1 | grep -v '^[WI]0000' \
        | tee "$RESULTS_DIR/climb-log.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    echo "climb: $(wall "$start") s wall" | tee -a "$RESULTS_DIR/climb-log.txt"
fi

if [[ " $parts " == *" files "* ]]; then
    # In memory where /dev/shm has 4 GiB free: 25,000 small files and two checkpoints an epoch.
    if df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 && $4 > 4194304 {ok = 1} END {exit !ok}'; then
        work=$(mktemp -d -p /dev/shm)
    else
        work=$(mktemp -d)
    fi
    trap 'kill "${smi:-0}" 2>/dev/null; rm -rf "$work"' EXIT
    start=$(date +%s.%N)
    timeout 60 python3 snippets/keras/make_dataset.py "$work/data" --images 12500 --size 64 \
        > "$RESULTS_DIR/train-dataset.txt" 2>&1 || status=1
    echo "make_dataset: $(wall "$start") s wall; $(find "$work/data" -type f | wc -l) files" \
        | tee -a "$RESULTS_DIR/train-dataset.txt"
    nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,nounits \
        --loop-ms=250 > "$RESULTS_DIR/train-smi.csv" &
    smi=$!
    echo "# train.py starts at unix $(date +%s.%N)" >> "$RESULTS_DIR/train-smi.csv"
    start=$(date +%s.%N)
    timeout 90 python3 snippets/keras/train.py "$work/data" --output-dir "$work/run" \
        --epochs 6 --batch-size 1024 --mixed-precision 2>&1 | grep --line-buffered -v '^[WI]0000' \
        | while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done \
        | tee "$RESULTS_DIR/train-log.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    echo "train.py: $(wall "$start") s wall" | tee -a "$RESULTS_DIR/train-log.txt"
    cp "$work/run/history.json" "$RESULTS_DIR/train-history.json" 2>/dev/null || status=1
fi
echo "gpu/train.sh ($parts): $(wall "$begin") s wall" | tee "$RESULTS_DIR/train-total.txt"
exit $status
