#!/usr/bin/env bash
# Batch 2 (run from a copy of the tree, in its own process session): matmul's confirming run
# with launchers.py's fix, on batch 1's tuning files; then run_all.sh reduction decode attention;
# (decode and attention: the helpers' changes of issue 47).
set -u
cd /tmp/tree
source .gpu-batch/env.sh
source gpu/lib/card.sh
R=/tmp/r3/matmul; mkdir -p $R
cp docs/data/matmul-tune-$CARD.json docs/data/matmul-numba-tiles-$CARD.jsonl docs/data/matmul-triton-configs-$CARD.jsonl $R/
export MATMUL_TUNED=$R/matmul-tune-$CARD.json MATMUL_NUMBA_TUNED=$R/matmul-numba-tiles-$CARD.jsonl \
    MATMUL_TRITON_TUNED=$R/matmul-triton-configs-$CARD.jsonl TRITON_CACHE_DIR=$(mktemp -d)
echo "matmul start $(date +%T)" >> /tmp/r3/progress.txt
timeout 260 python3 snippets/bench/run.py matmul --compile-runs 1 --output $R/matmul-$CARD.json \
    > $R/log.txt 2>&1
echo "matmul exit $? $(date +%T)" >> /tmp/r3/progress.txt
unset MATMUL_TUNED MATMUL_NUMBA_TUNED MATMUL_TRITON_TUNED
REDUCE_BUDGET=330 OUT=/tmp/r3 bash gpu/run_all.sh reduction decode attention > /tmp/r3/console.txt 2>&1
echo "run_all exit $? $(date +%T)" >> /tmp/r3/progress.txt
touch /tmp/r3/DONE
