#!/usr/bin/env bash
# Waits up to $1 seconds for batch 2, then packs everything it wrote so far into $OUT.
end=$(( SECONDS + ${1:-540} ))
while [ $SECONDS -lt $end ] && [ ! -e /tmp/r3/DONE ]; do sleep 5; done
cat /tmp/r3/progress.txt /tmp/r3/summary.txt 2>/dev/null
[ -e /tmp/r3/DONE ] && echo "ALL DONE" || echo "still running"
tar czf $OUT/r3.tgz -C /tmp r3 2>/dev/null; true
