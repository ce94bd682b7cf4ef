#!/usr/bin/env bash
# Starts batch2.sh from a copy of the tree in a session of its own, then waits (wait2.sh).
set -u; cd "$(dirname "$0")/.."
nvidia-smi -L
mkdir -p /tmp/r3
if [ ! -e /tmp/r3/STARTED ]; then
    touch /tmp/r3/STARTED; rm -rf /tmp/tree; cp -a . /tmp/tree; cp .whl-nb/*.whl /tmp/tree/.whl/ 2>/dev/null
    setsid nohup bash /tmp/tree/.gpu-batch/batch2.sh < /dev/null > /tmp/r3/batch2.txt 2>&1 &
fi
exec bash .gpu-batch/wait2.sh "${1:-540}"
