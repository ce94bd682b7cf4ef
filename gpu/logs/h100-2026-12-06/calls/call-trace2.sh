#!/usr/bin/env bash
# train.py's trace again, with JAX's Python tracer off (its events made the export too slow).
cd "$(dirname "$0")/.."
h=$(mktemp -d); ln -s "$PWD/snippets/bench" "$h/bench"
export PYTHONPATH=/tmp/site:$h KERAS_BACKEND=jax TF_CPP_MIN_LOG_LEVEL=2 XLA_PYTHON_CLIENT_PREALLOCATE=false
ls /tmp/site >/dev/null 2>&1 || python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
w=/tmp/tw2; rm -rf $w; mkdir -p $w; log=$OUT/timeline-trace-train.txt
timeout 15 python3 snippets/keras/make_dataset.py $w/data --images 1000 --size 64 > $log 2>&1
s=$(date +%s)
timeout -s INT -k 10 75 python3 - $w/trace snippets/keras/train.py $w/data --output-dir $w/run --epochs 2 --batch-size 256 >> $log 2>&1 <<'PY'
import runpy, sys
from pathlib import Path
import jax
out, program = sys.argv[1], sys.argv[2]
sys.argv = sys.argv[2:]
sys.path.insert(0, str(Path(program).resolve().parent))
options = jax.profiler.ProfileOptions()
options.python_tracer_level = 0  # no Python function events: the export stays small
options.host_tracer_level = 1
print("profile options:", options, flush=True)
jax.profiler.start_trace(out, create_perfetto_trace=True, profiler_options=options)
try:
    runpy.run_path(program, run_name="__main__")
except SystemExit as done:
    code = done.code
else:
    code = 0
finally:
    jax.profiler.stop_trace()
sys.exit(code)
PY
echo "train.py traced: exit $? in $(( $(date +%s)-s )) s" | tee -a $log
t=$(find $w/trace -name 'perfetto_trace.json.gz' | head -1); ls -la $t | tee -a $log
cp /work/.device/15/timeline-trace-h200.json $OUT/ 2>/dev/null
[ -n "$t" ] && timeout 25 python3 tools/timeline_trace.py "$t" --label train.py --output $OUT/train-trace.json 2>&1 | tee -a $log
cp "$t" $OUT/train-perfetto.json.gz 2>/dev/null; true
