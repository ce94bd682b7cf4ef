#!/usr/bin/env bash
# Cats vs dogs CNN on the GPU machine: training images/second, GPU vs the CPU of the same machine,
# and 1 -> 2 GPUs (data parallel) when two are visible. Keras 3 on JAX (no TensorFlow there).
# Needs python3 with jax[cuda] and keras 3 importable, RESULTS_DIR set; about 3 minutes.
# Writes $RESULTS_DIR/keras-training.json (-> docs/data/keras-training.json) and the logs.
set -uo pipefail
: "${RESULTS_DIR:?set RESULTS_DIR to an empty folder for the outputs}"
cd "$(dirname "$0")/.."
export KERAS_BACKEND=jax TF_CPP_MIN_LOG_LEVEL=2
BENCH=snippets/keras/bench_training.py
status=0

# GPU(s): 1,024 images per epoch, batch 256 and 32, then all GPUs together when there are several.
# The augmentation layers cost a fixed time per step under JAX (see the page), so batch 32 is
# slow: larger image counts ran past the time limit in earlier runs.
timeout 200 python3 "$BENCH" --device gpu --images 1024 --batch-sizes 256 32 --scaling \
    -o "$RESULTS_DIR/keras-gpu.json" 2>&1 | tee "$RESULTS_DIR/keras-gpu.log" || status=1
# The same model on the host CPU, every core (JAX_PLATFORMS=cpu hides the GPUs from JAX).
JAX_PLATFORMS=cpu timeout 65 python3 "$BENCH" --device cpu --images 512 --batch-sizes 32 256 \
    -o "$RESULTS_DIR/keras-cpu.json" 2>&1 | tee "$RESULTS_DIR/keras-cpu.log" || status=1

parts=()
for f in "$RESULTS_DIR/keras-gpu.json" "$RESULTS_DIR/keras-cpu.json"; do
    [ -f "$f" ] && parts+=("$f")
done
if [ ${#parts[@]} -eq 0 ]; then
    echo "keras.sh: no results were written" >&2
    exit 1
fi
python3 "$BENCH" --merge "${parts[@]}" -o "$RESULTS_DIR/keras-training.json" || status=1

python3 - "$RESULTS_DIR/keras-training.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
print(f"\n{'device':<8}{'devices':>8}{'batch':>7}{'images/s':>12}{'first epoch s':>15}")
for m in doc["measurements"]:
    if m["phase"] == "end_to_end":
        p = m["params"]
        first = next(x["median_s"] for x in doc["measurements"] if x["phase"] == "compile_first"
                     and x["variant"] == m["variant"] and x["params"] == p)
        print(f"{m['device']:<8}{p['devices']:>8}{p['batch_size']:>7}"
              f"{m['work']['images_per_s']:>12,.0f}{first:>15.2f}")
PY
exit $status
