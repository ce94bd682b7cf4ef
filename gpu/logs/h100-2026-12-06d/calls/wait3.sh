#!/usr/bin/env bash
# Waits up to $1 seconds for batch 3, then returns everything it wrote so far in $OUT.
end=$(( SECONDS + ${1:-560} ))
while [ $SECONDS -lt $end ] && [ ! -e /tmp/r4/DONE ]; do sleep 5; done
cat /tmp/r4/progress.txt /tmp/r4/summary.txt 2>/dev/null; tail -3 /tmp/r4/console.txt 2>/dev/null
[ -e /tmp/r4/DONE ] && echo "ALL DONE" || echo "still running"
tar czf $OUT/r4.tgz -C /tmp r4 2>/dev/null; true
