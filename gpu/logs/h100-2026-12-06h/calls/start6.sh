#!/usr/bin/env bash
# Starts batch6.sh from a copy of the tree (once), then waits (wait6.sh).
set -u; cd "$(dirname "$0")/.."
nvidia-smi -L
mkdir -p /tmp/r6
if [ ! -e /tmp/r6/STARTED ]; then
    touch /tmp/r6/STARTED; rm -rf /tmp/tree; cp -a . /tmp/tree
    setsid nohup bash /tmp/tree/.gpu-batch/batch6.sh < /dev/null > /tmp/r6/batch6.txt 2>&1 &
fi
exec bash .gpu-batch/wait6.sh "${1:-560}"
