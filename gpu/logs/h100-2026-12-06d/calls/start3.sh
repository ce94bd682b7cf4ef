#!/usr/bin/env bash
# Starts batch3.sh from a copy of the tree (once), then waits (wait3.sh).
set -u; cd "$(dirname "$0")/.."
nvidia-smi -L
mkdir -p /tmp/r4
if [ ! -e /tmp/r4/STARTED ]; then
    touch /tmp/r4/STARTED; rm -rf /tmp/tree; cp -a . /tmp/tree
    setsid nohup bash /tmp/tree/.gpu-batch/batch3.sh < /dev/null > /tmp/r4/batch3.txt 2>&1 &
fi
exec bash .gpu-batch/wait3.sh "${1:-560}"
