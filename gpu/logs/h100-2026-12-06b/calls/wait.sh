#!/usr/bin/env bash
# Waits (at most 560 s) for the background run, then returns what it has so far.
for i in $(seq 56); do [ -e /tmp/r2/DONE ] && break; sleep 10; done
cat /tmp/r2/summary.txt 2>/dev/null; tail -5 /tmp/r2/console.txt 2>/dev/null
[ -e /tmp/r2/DONE ] && echo "ALL DONE" || echo "still running"
cp /tmp/r2/results.tgz $OUT/results-r2.tgz 2>/dev/null
cp /tmp/r2/summary.txt /tmp/r2/console.txt /tmp/r2/topics.txt /tmp/r2/*.txt $OUT/ 2>/dev/null; true
