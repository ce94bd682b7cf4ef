#!/usr/bin/env bash
# The framework training-step timings alone, with more time than gpu/accelerators.sh gives them
# (JAX's eager first step compiles every op, several seconds). Output:
#   $RESULTS_DIR/frameworks-h200.json -> docs/data/frameworks-h200.json
set -u
: "${RESULTS_DIR:?set RESULTS_DIR to an empty folder for the outputs}"
cd "$(dirname "$0")/.."
timeout 120 python3 snippets/frameworks/bench_frameworks.py --frameworks pytorch,jax \
    --sizes small,large --out "$RESULTS_DIR/frameworks-h200.json"
