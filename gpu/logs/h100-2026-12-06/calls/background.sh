#!/usr/bin/env bash
# Starts the topics named in a process session of their own (they outlive this call), from a
# copy of the tree, then waits (wait.sh). Call again with the same folder to keep waiting.
set -u; cd "$(dirname "$0")/.."
nvidia-smi -L
mkdir -p /tmp/r2
if [ ! -e /tmp/r2/STARTED ]; then
    touch /tmp/r2/STARTED; rm -rf /tmp/tree; cp -a . /tmp/tree; cp .whl-nb/*.whl /tmp/tree/.whl/ 2>/dev/null
    topics="$*"  # on an H100, only the new topics (their comparisons are within one run)
    nvidia-smi -L | grep -q H200 || topics="attention decode timeline"
    echo "topics: $topics" | tee /tmp/r2/topics.txt
    setsid nohup bash -c "cd /tmp/tree && OUT=/tmp/r2 bash gpu/run_all.sh $topics > /tmp/r2/console.txt 2>&1; touch /tmp/r2/DONE" < /dev/null > /dev/null 2>&1 &
fi
exec bash .gpu-batch/wait.sh
