#!/usr/bin/env bash
# Starts the long topics in a process session of their own (they outlive this call), from a
# copy of the tree (later calls re-send the tree), then waits.
set -u; cd "$(dirname "$0")/.."
mkdir -p /tmp/r2
if [ ! -e /tmp/r2/STARTED ]; then
    touch /tmp/r2/STARTED; rm -rf /tmp/tree; cp -a . /tmp/tree
    TRAIN_PARTS=climb setsid nohup bash -c "cd /tmp/tree && OUT=/tmp/r2 bash gpu/run_all.sh $* > /tmp/r2/console.txt 2>&1; touch /tmp/r2/DONE" < /dev/null > /dev/null 2>&1 &
fi
exec bash .gpu-batch/wait.sh
