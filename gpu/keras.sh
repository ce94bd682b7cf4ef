#!/usr/bin/env bash
# Cats vs dogs CNN on the GPU machine: the runner for every case of snippets/keras/benchmark.py
# (one H200 and the host CPU, in one process), with nvidia-smi sampling the GPU's utilisation and
# memory every 250 ms for the whole run. Keras 3 on JAX: TensorFlow cannot be carried there.
# Needs python3 with jax[cuda] and keras 3; about 2.5 minutes (4 more with two GPUs, which adds
# keras-h200x2.json and keras-runner-x2.log). Outputs in $RESULTS_DIR:
#   keras-h200.json -> docs/data/keras-h200.json; keras-runner.log; keras-smi.csv (the samples,
#   with the runner's start time on its first line, for lining them up with the log).
set -u
: "${RESULTS_DIR:?set RESULTS_DIR to an empty folder for the outputs}"
cd "$(dirname "$0")/.."
export KERAS_BACKEND=jax TF_CPP_MIN_LOG_LEVEL=2 PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}

echo "# runner started at unix $(date +%s.%N)" > "$RESULTS_DIR/keras-smi.csv"
nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,nounits \
    --loop-ms=250 >> "$RESULTS_DIR/keras-smi.csv" &
smi=$!
timeout 210 "$PY" snippets/bench/run.py keras --compile-runs 0 \
    --output "$RESULTS_DIR/keras-h200.json" 2>&1 | grep -v '^[WI]0000' | tee "$RESULTS_DIR/keras-runner.log"
status=${PIPESTATUS[0]}
# Two GPUs or more: one against two, data parallel, at the same global batch (keras-h200x2.json).
# run_all.sh keeps NVLink multicast off (NCCL_NVLS_ENABLE=0 and the rest) for the all-reduce.
if [ "$(nvidia-smi -L | grep -c '^GPU')" -ge 2 ]; then
    timeout 240 "$PY" snippets/bench/run.py keras --cases gpu-augmented-1024 --compile-runs 0 \
        --output "$RESULTS_DIR/keras-h200x2.json" 2>&1 | grep -v '^[WI]0000' \
        | tee "$RESULTS_DIR/keras-runner-x2.log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
kill "$smi"
exit "$status"
