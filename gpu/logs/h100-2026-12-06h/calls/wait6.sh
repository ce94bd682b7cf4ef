#!/usr/bin/env bash
# Waits up to $1 seconds for batch 6, then returns everything it wrote so far in $OUT.
end=$(( SECONDS + ${1:-560} ))
while [ $SECONDS -lt $end ] && [ ! -e /tmp/r6/DONE ]; do sleep 5; done
cat /tmp/r6/progress.txt /tmp/r6/summary.txt 2>/dev/null; tail -3 /tmp/r6/console.txt 2>/dev/null
[ -e /tmp/r6/DONE ] && echo "ALL DONE" || echo "still running"
tar czf $OUT/r6.tgz -C /tmp r6 2>/dev/null; true
