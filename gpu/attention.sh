#!/usr/bin/env bash
# Attention on a GPU machine (under 4 minutes on an H100), in one process for the measurements:
# 1. the tuning sweep: at each new (N, head dim, mask) Triton's autotuner times every config of
#    CONFIGS in snippets/attention/attention_triton.py (TRITON_PRINT_AUTOTUNING=1 logs each pick);
# 2. the rule, written beside CONFIGS: the fastest by Triton's do_bench; the results file records
#    the pick of every case (extra.config);
# 3. the confirming run: the runner times the picked kernel with the harness's CUDA events, in
#    the same process as the naive version and PyTorch's SDPA under each backend, every case.
# Then the two lessons' own demos: the Triton check, the torch check and the naive memory sweep.
# Writes into $RESULTS_DIR (-> where it goes in the repository):
#   attention-<card>.json    results file              (-> docs/data/attention-<card>.json)
#   attention-run.txt      what the runner printed   (log)
#   attention-demo.txt     the lessons' demos        (log)
source "$(dirname "$0")/lib/prelude.sh"  # set -u, cd to the root, RESULTS_DIR, step
export TRITON_PRINT_AUTOTUNING=1 TRITON_CACHE_DIR="${TRITON_CACHE_DIR:-$(mktemp -d)}"
out="$RESULTS_DIR/attention-$CARD.json"

step "versions: torch, triton, CUDA, cuDNN"
timeout 10 python3 -c 'import torch, triton; print("torch", torch.__version__, "triton",
    triton.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(),
    torch.cuda.get_device_name())' || status=1

step "the benchmark runner: naive, ours, SDPA's four backends; 20 cases"
timeout "${ATTENTION_TIMEOUT:-150}" python3 snippets/bench/run.py attention --compile-runs 0 \
    --warmup 1 --min-sample 0.005 --output "$out" > "$RESULTS_DIR/attention-run.txt" 2>&1 || status=1
if [ ! -s "$out" ] && [ -s "${out%.json}.partial.json" ]; then  # cut short: keep what it measured
    timeout 10 python3 snippets/bench/run.py attention --finish --output "$out" \
        >> "$RESULTS_DIR/attention-run.txt" 2>&1
fi
grep -E "failed|unavailable|autotuning|best config" "$RESULTS_DIR/attention-run.txt" | head -40
tail -30 "$RESULTS_DIR/attention-run.txt"

step "the lessons' demos"
(cd snippets/attention && timeout 25 python3 attention_triton.py 4096 --head-dim 128 &&
    timeout 20 python3 attention_torch.py) > "$RESULTS_DIR/attention-demo.txt" 2>&1 || status=1
cat "$RESULTS_DIR/attention-demo.txt"
exit $status
