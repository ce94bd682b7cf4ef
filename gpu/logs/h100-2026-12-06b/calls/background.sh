#!/usr/bin/env bash
# Starts, in a process session of its own (it outlives this call) from a copy of the tree:
# two exploration probes (issue 47), then gpu/run_all.sh on the topics named; then waits (wait.sh).
# Call again to keep waiting.
set -u; cd "$(dirname "$0")/.."
nvidia-smi -L
mkdir -p /tmp/r2
if [ ! -e /tmp/r2/STARTED ]; then
    touch /tmp/r2/STARTED; rm -rf /tmp/tree; cp -a . /tmp/tree; cp .whl-nb/*.whl /tmp/tree/.whl/ 2>/dev/null
    echo "topics: $*" | tee /tmp/r2/topics.txt
    setsid nohup bash -c "cd /tmp/tree && source .gpu-batch/env.sh && \
        (timeout 200 python3 gpu/explore/attention-variants.py > /tmp/r2/attention-variants.txt 2>&1; \
         timeout 150 python3 gpu/explore/decode-profile.py > /tmp/r2/decode-profile.txt 2>&1); \
        REDUCE_NCU=1 OUT=/tmp/r2 bash gpu/run_all.sh $* > /tmp/r2/console.txt 2>&1; touch /tmp/r2/DONE" \
        < /dev/null > /dev/null 2>&1 &
fi
exec bash .gpu-batch/wait.sh
