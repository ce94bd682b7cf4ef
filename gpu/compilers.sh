#!/usr/bin/env bash
# ML compilers on the GPU: bias + GELU op by op and under jax.jit through the benchmark runner,
# XLA's optimized HLO, and the kernel TorchInductor generates for the same function. Outputs:
#   $RESULTS_DIR/xla-jax-<card>.json        -> docs/data/xla-jax-<card>.json
#   $RESULTS_DIR/xla-hlo-jax-<card>.txt     -> docs/data/xla-hlo-jax-<card>.txt
#   $RESULTS_DIR/inductor-kernel-<card>.txt -> docs/data/inductor-kernel-<card>.txt
set -u
: "${RESULTS_DIR:?set RESULTS_DIR to an empty folder for the outputs}"
cd "$(dirname "$0")/.."
if ! command -v nvidia-smi > /dev/null; then
    echo "gpu/compilers.sh: no NVIDIA GPU here (nvidia-smi not found); nothing measured" >&2
    exit 1
fi
status=0
timeout -s INT 60 python3 snippets/bench/run.py compilers --variants jax_eager,jax_jit --compile-runs 0 \
    --output "$RESULTS_DIR/xla-jax-$CARD.json" || status=1
timeout 30 python3 snippets/compilers/xla_jax.py --hlo "$RESULTS_DIR/xla-hlo-jax-$CARD.txt" || status=1
timeout 60 python3 snippets/compilers/inductor_torch.py \
    --kernels "$RESULTS_DIR/inductor-kernel-$CARD.txt" || status=1
exit $status
