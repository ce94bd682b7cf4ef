#!/usr/bin/env bash
# Framework training steps on the GPU through the benchmark runner: PyTorch (eager, compiled
# model, compiled whole step, reduce-overhead/CUDA graphs) and JAX (eager, jit), small and large.
# TensorFlow is not installed on the GPU machine; its rows come from the CPU machine. Output:
#   $RESULTS_DIR/frameworks-<card>.json -> docs/data/frameworks-<card>.json
set -u
: "${RESULTS_DIR:?set RESULTS_DIR to an empty folder for the outputs}"
cd "$(dirname "$0")/.."
if ! command -v nvidia-smi > /dev/null; then
    echo "gpu/frameworks.sh: no NVIDIA GPU here (nvidia-smi not found); nothing measured" >&2
    exit 1
fi
# The first call of each variant (tracing, compilation) is timed inside setup(): no
# fresh-process compile probes (--compile-runs 0), which would import the frameworks again.
# About 2-4 minutes (JAX eager compiles every op of the large step; torch.compile three modes
# twice); SIGINT on time-out makes run.py keep what it measured in a .partial.json.
timeout -s INT 240 python3 snippets/bench/run.py frameworks --cases small,large --compile-runs 0 \
    --output "$RESULTS_DIR/frameworks-$CARD.json"
status=$?
# The PyTorch scripts themselves, on the GPU (CPU CI has no PyTorch): every mode of
# train_pytorch.py, and parallel_pytorch.py (autocast, DDP, ONNX export).
timeout 150 python3 -m pytest -q -o addopts="" -p no:cacheprovider -m gpu tests/test_frameworks.py \
    -k pytorch_on_the_gpu || status=1
exit $status
