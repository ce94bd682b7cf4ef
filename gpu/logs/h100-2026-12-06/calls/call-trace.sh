#!/usr/bin/env bash
# The timeline topic's traces again (the first run's trace step ran out of time): train.py from
# files under jax.profiler, then Numba's pipeline, each turned into timeline-trace-h200.json.
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
h=$(mktemp -d); ln -s "$PWD/snippets/bench" "$h/bench"
export PYTHONPATH=/tmp/site:$h KERAS_BACKEND=jax TF_CPP_MIN_LOG_LEVEL=2 XLA_PYTHON_CLIENT_PREALLOCATE=false NUMBA_ENABLE_CUDASIM=0
nvidia-smi -L
w=/tmp/tw; rm -rf $w; mkdir -p $w
trace_json=$OUT/timeline-trace-h200.json; log=$OUT/timeline-trace.txt
echo "no nsys on PATH: jax.profiler (snippets/timeline/trace_jax.py)" > $log
timeout 20 python3 snippets/keras/make_dataset.py $w/data --images 2000 --size 64 >> $log 2>&1
s=$(date +%s)
timeout -s INT -k 30 90 python3 snippets/timeline/trace_jax.py $w/trace snippets/keras/train.py $w/data --output-dir $w/run --epochs 2 --batch-size 256 >> $log 2>&1
echo "train.py traced: exit $? in $(( $(date +%s)-s )) s" | tee -a $log
t=$(find $w/trace -name 'perfetto_trace.json.gz' | head -1); ls -la $t
[ -n "$t" ] && timeout 40 python3 tools/timeline_trace.py "$t" --label train.py --output $trace_json --add 2>&1 | tee -a $log
s=$(date +%s)
timeout -s INT -k 20 45 python3 snippets/timeline/trace_jax.py $w/trace-pipeline snippets/timeline/overlap_numba.py 16777216 >> $log 2>&1
echo "pipeline traced: exit $? in $(( $(date +%s)-s )) s" | tee -a $log
t=$(find $w/trace-pipeline -name 'perfetto_trace.json.gz' | head -1)
[ -n "$t" ] && timeout 30 python3 tools/timeline_trace.py "$t" --label pipeline --window 0.05 --output $trace_json --add 2>&1 | tee -a $log
ls -la $OUT
