#!/usr/bin/env bash
# Waits up to $1 seconds for batch 5, then returns everything it wrote so far in $OUT.
end=$(( SECONDS + ${1:-560} ))
while [ $SECONDS -lt $end ] && [ ! -e /tmp/r5/DONE ]; do sleep 5; done
cat /tmp/r5/progress.txt /tmp/r5/summary.txt 2>/dev/null; tail -3 /tmp/r5/console.txt 2>/dev/null
[ -e /tmp/r5/DONE ] && echo "ALL DONE" || echo "still running"
tar czf $OUT/r5.tgz -C /tmp r5 2>/dev/null; true
