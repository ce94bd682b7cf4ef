#!/usr/bin/env bash
# LLM decode at the bandwidth bound on a GPU machine (at most 180 s on an H200). Writes into
# $RESULTS_DIR:
#   decode-<card>.json    python snippets/bench/run.py decode   (-> docs/data/decode-<card>.json):
#                       a large torch copy_ (the bound's bandwidth), then batch 1, 8 and 64 with
#                       1,024 tokens in the cache, eager, eager in one CUDA graph, torch.compile,
#                       torch.compile in one CUDA graph (the attention: the lesson's split-KV
#                       Triton kernel), and the last again with SDPA's attention; each row
#                       checked first against the eager step with SDPA's attention
#   decode-run.txt      what the runner printed
#   decode-lesson.txt   torch, CUDA and Triton versions and the GPU; the lesson's own check:
#                       cached steps (the split-KV kernel's attention) against a full forward
#                       pass, eager, and compiled in one CUDA graph, at a small size
#   decode-bar.txt      the bar test: the best batch-1 row at least 70 % of its bound
# A run cut short by its timeout is written final from its partial file (run.py --finish), with
# a note naming what it lacks.
source "$(dirname "$0")/lib/prelude.sh"  # set -u, cd to the root, RESULTS_DIR, step

step "versions, then the lesson's check: cached decode against the full forward pass"
(cd snippets/decode && timeout 45 sh -c 'python3 -c "import torch, triton
print(\"torch\", torch.__version__, \"CUDA\", torch.version.cuda, \"triton\", triton.__version__,
      torch.cuda.get_device_name())" ; python3 llama_decode.py') 2>&1 \
    | tee "$RESULTS_DIR/decode-lesson.txt" || status=1

step "the benchmark runner: the copy, then every step form at batch 1, 8 and 64"
out="$RESULTS_DIR/decode-$CARD.json"
timeout "${DECODE_TIMEOUT:-105}" python3 snippets/bench/run.py decode --compile-runs 0 \
    --output "$out" > "$RESULTS_DIR/decode-run.txt" 2>&1 || status=1
if [ ! -f "$out" ] && [ -f "${out%.json}.partial.json" ]; then
    timeout 15 python3 snippets/bench/run.py decode --finish --output "$out" \
        >> "$RESULTS_DIR/decode-run.txt" 2>&1 || status=1
fi
tail -30 "$RESULTS_DIR/decode-run.txt"

step "bar test on the results file: the best batch-1 row against its bound"
DECODE_RESULTS="$out" timeout 15 python3 -m pytest -q -s -o addopts="" -p no:cacheprovider \
    -m gpu tests/test_decode.py -k bar 2>&1 | tee "$RESULTS_DIR/decode-bar.txt" || status=1
exit $status
