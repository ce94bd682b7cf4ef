#!/usr/bin/env bash
# Waits up to $1 seconds for batch 6, then returns everything it wrote so far in $OUT.
end=$(( SECONDS + ${1:-560} ))
while [ $SECONDS -lt $end ] && [ ! -e /tmp/r7/DONE ]; do sleep 5; done
cat /tmp/r7/progress.txt /tmp/r7/summary.txt 2>/dev/null; tail -3 /tmp/r7/console.txt 2>/dev/null
[ -e /tmp/r7/DONE ] && echo "ALL DONE" || echo "still running"
tar czf $OUT/r7.tgz -C /tmp r7 2>/dev/null; true
