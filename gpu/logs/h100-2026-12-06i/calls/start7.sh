#!/usr/bin/env bash
# Starts batch7.sh from a copy of the tree (once), then waits (wait7.sh).
set -u; cd "$(dirname "$0")/.."
nvidia-smi -L
mkdir -p /tmp/r7
if [ ! -e /tmp/r7/STARTED ]; then
    touch /tmp/r7/STARTED; rm -rf /tmp/tree; cp -a . /tmp/tree
    setsid nohup bash /tmp/tree/.gpu-batch/batch7.sh < /dev/null > /tmp/r7/batch7.txt 2>&1 &
fi
exec bash .gpu-batch/wait7.sh "${1:-560}"
