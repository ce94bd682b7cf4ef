#!/usr/bin/env bash
# Starts batch5.sh from a copy of the tree (once), then waits (wait5.sh).
set -u; cd "$(dirname "$0")/.."
nvidia-smi -L
mkdir -p /tmp/r5
if [ ! -e /tmp/r5/STARTED ]; then
    touch /tmp/r5/STARTED; rm -rf /tmp/tree; cp -a . /tmp/tree
    setsid nohup bash /tmp/tree/.gpu-batch/batch5.sh < /dev/null > /tmp/r5/batch5.txt 2>&1 &
fi
exec bash .gpu-batch/wait5.sh "${1:-560}"
