#!/usr/bin/env bash
# Session 2026-12-06 (fifth), one batch from a copy of the tree, in a process session of its own:
# the five topics whose registries issue 41 trimmed (machine, fp8, reduction, matmul, the climb).
set -u
cd /tmp/tree
echo "run_all start $(date +%T)" >> /tmp/r5/progress.txt
REDUCE_BUDGET=330 TRAIN_PARTS=climb OUT=/tmp/r5 bash gpu/run_all.sh ${TOPICS:-machine fp8 reduction matmul train} > /tmp/r5/console.txt 2>&1
echo "run_all exit $? $(date +%T)" >> /tmp/r5/progress.txt
touch /tmp/r5/DONE
