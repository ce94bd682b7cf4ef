#!/usr/bin/env bash
# Session 2026-12-06 (seventh), one batch from a copy of the tree, in a process session of its
# own: the topics whose registries changed (attention: an unused import; decode and timeline:
# the Built adapter).
set -u
cd /tmp/tree
cp .whl-nb/*.whl .whl/ 2>/dev/null
echo "run_all start $(date +%T)" >> /tmp/r7/progress.txt
OUT=/tmp/r7 bash gpu/run_all.sh ${TOPICS:-decode timeline attention} > /tmp/r7/console.txt 2>&1
echo "run_all exit $? $(date +%T)" >> /tmp/r7/progress.txt
touch /tmp/r7/DONE
