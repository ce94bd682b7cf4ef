#!/usr/bin/env bash
# train.py as a reader runs it, on the GPU machine (issue 29): 25,000 image files at 64x64
# (Kaggle's training-set size) written by make_dataset.py, then train.py under Keras on JAX,
# first at its default batch (32), then at 256, with nvidia-smi sampling the GPU every 250 ms.
# Writes into $RESULTS_DIR: train-dataset.txt (make_dataset's output and its wall time),
#   train-b32-log.txt / train-b32-history.json, train-b256-log.txt / train-b256-history.json
#   (train.py's history: seconds per epoch), train-smi.csv (the samples).
set -u
: "${RESULTS_DIR:?set RESULTS_DIR to an empty folder for the outputs}"
cd "$(dirname "$0")/.."
export KERAS_BACKEND=jax TF_CPP_MIN_LOG_LEVEL=2 PYTHONUNBUFFERED=1
work=$(mktemp -d)
trap 'kill "${smi:-0}" 2>/dev/null; rm -rf "$work"' EXIT
status=0
start=$(date +%s.%N)
timeout 150 python3 snippets/keras/make_dataset.py "$work/data" --images 12500 --size 64 \
    > "$RESULTS_DIR/train-dataset.txt" 2>&1 || status=1
echo "make_dataset: $(python3 -c "import sys; print(round(float(sys.argv[1]) - float(sys.argv[2]), 1))" "$(date +%s.%N)" "$start") s wall; $(find "$work/data" -type f | wc -l) files" \
    | tee -a "$RESULTS_DIR/train-dataset.txt"
nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,nounits \
    --loop-ms=250 > "$RESULTS_DIR/train-smi.csv" &
smi=$!
for batch in 32 256; do
    echo "# train.py --batch-size $batch starts at unix $(date +%s.%N)" >> "$RESULTS_DIR/train-smi.csv"
    start=$(date +%s.%N)
    timeout 200 python3 snippets/keras/train.py "$work/data" --output-dir "$work/run-$batch" \
        --epochs 4 --batch-size "$batch" 2>&1 | grep -v '^[WI]0000' \
        | tee "$RESULTS_DIR/train-b$batch-log.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    echo "train.py --batch-size $batch: $(python3 -c "import sys; print(round(float(sys.argv[1]) - float(sys.argv[2]), 1))" "$(date +%s.%N)" "$start") s wall" \
        | tee -a "$RESULTS_DIR/train-b$batch-log.txt"
    cp "$work/run-$batch/history.json" "$RESULTS_DIR/train-b$batch-history.json" 2>/dev/null || status=1
done
exit $status
