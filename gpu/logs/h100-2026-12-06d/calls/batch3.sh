#!/usr/bin/env bash
# Session 2026-12-06 (fourth), one batch from a copy of the tree, in a process session of its own:
# run_all.sh matmul train reduction, then two exploration probes of issue 47.
set -u
cd /tmp/tree
source .gpu-batch/env.sh
echo "run_all start $(date +%T)" >> /tmp/r4/progress.txt
REDUCE_BUDGET=330 OUT=/tmp/r4 bash gpu/run_all.sh matmul train reduction > /tmp/r4/console.txt 2>&1
echo "run_all exit $? $(date +%T)" >> /tmp/r4/progress.txt
timeout 170 python3 gpu/explore/decode-profile.py > /tmp/r4/decode-profile.txt 2>&1
echo "decode-profile exit $? $(date +%T)" >> /tmp/r4/progress.txt
timeout 300 python3 gpu/explore/attention-variants.py > /tmp/r4/attention-variants.txt 2>&1
echo "attention-variants exit $? $(date +%T)" >> /tmp/r4/progress.txt
touch /tmp/r4/DONE
