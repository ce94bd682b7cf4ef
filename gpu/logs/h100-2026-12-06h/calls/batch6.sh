#!/usr/bin/env bash
# Session 2026-12-06 (sixth), one batch from a copy of the tree, in a process session of its own:
# the eleven topics whose registries issue 41 trimmed, and the doctor; first, the syntax digest
# of every snippet on this machine's Python (3.12), to compare with the 3.11 of the CPU machine.
set -u
cd /tmp/tree
cp .whl-nb/*.whl .whl/ 2>/dev/null
echo "syntax start $(date +%T)" >> /tmp/r6/progress.txt
PYTHONPATH=snippets python3 -c "
import json, sys
from pathlib import Path
from bench import system
names = sorted(str(p) for p in Path('snippets').rglob('*.py'))
print(json.dumps({'python': sys.version.split()[0], 'digests': {n: system.syntax_digest(Path(n).read_bytes()) for n in names}}, indent=1))
" > /tmp/r6/syntax-digests-py312.json 2>> /tmp/r6/progress.txt
echo "run_all start $(date +%T)" >> /tmp/r6/progress.txt
SAXPY_NCU=${SAXPY_NCU:-0} REDUCE_BUDGET=330 OUT=/tmp/r6 bash gpu/run_all.sh ${TOPICS:-opencl fp8 compilers machine saxpy decode reduction mandelbrot notebook attention timeline frameworks} > /tmp/r6/console.txt 2>&1
echo "run_all exit $? $(date +%T)" >> /tmp/r6/progress.txt
touch /tmp/r6/DONE
