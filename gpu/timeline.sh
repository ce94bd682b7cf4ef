#!/usr/bin/env bash
# Why the GPU is idle (issue 46) on a GPU machine, within 150 s on an H200. Writes into
# $RESULTS_DIR:
#   timeline-h200.json        run.py timeline: overlap.cu's stages and pipelines (chunks x streams),
#                             Numba's pipelines, graphs.cu's chains and PyTorch's (-> docs/data/)
#   timeline-run.txt          what the runner printed
#   timeline-lessons.txt      ./build/overlap, ./build/graphs, overlap_numba.py, graphs_torch.py:
#                             each lesson's own check
#   timeline-trace-h200.json  tools/timeline_trace.py on the traces below (-> docs/data/)
#   timeline-trace.txt        how each trace was recorded, nsys stats or the tool's summaries
#   timeline-bar.txt          the bar tests on timeline-h200.json (tests/test_timeline.py -m gpu)
# The traces: train.py from files (a small data set, KERAS_BACKEND=jax) and ./build/overlap,
# with Nsight Systems where `nsys` is on PATH, else train.py with jax.profiler (trace_jax.py).
source "$(dirname "$0")/lib/prelude.sh"  # set -u, cd to the root, RESULTS_DIR, step
export KERAS_BACKEND=jax TF_CPP_MIN_LOG_LEVEL=2 XLA_PYTHON_CLIENT_PREALLOCATE=false
trace_json="$RESULTS_DIR/timeline-trace-h200.json"
log="$RESULTS_DIR/timeline-trace.txt"

deadline=$(( $(date +%s) + ${TIMELINE_SECONDS:-145} ))  # the script's whole budget
cap() { local left=$(( deadline - $(date +%s) - ${2:-3} ));  # N [seconds kept for later steps]
    echo $(( left < $1 ? (left > 1 ? left : 1) : $1 )); }

step "compile the CUDA C lessons for Hopper, and the runner around each (in parallel)"
for lesson in overlap graphs; do
    timeout 60 nvcc -O3 -arch=sm_90 -o "build/$lesson" "snippets/timeline/$lesson.cu" &
    timeout 60 nvcc -O3 -arch=sm_90 -DLESSON="\"$PWD/snippets/timeline/$lesson.cu\"" \
        -o "build/bench-$lesson" snippets/bench/runner.cu &
done
for job in $(jobs -p); do wait "$job" || status=1; done

step "the benchmark runner: pipelines against their ideal, chains one by one and as graphs"
timeout "$(cap 80 45)" python3 snippets/bench/run.py timeline --output "$RESULTS_DIR/timeline-h200.json" \
    > "$RESULTS_DIR/timeline-run.txt" 2>&1 || status=1
tail -45 "$RESULTS_DIR/timeline-run.txt"

step "record the timelines: train.py from files, and overlap.cu's program"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
timeout "$(cap 15 20)" python3 snippets/keras/make_dataset.py "$work/data" --images 2000 --size 64 \
    > /dev/null 2>&1 || status=1
train=(snippets/keras/train.py "$work/data" --output-dir "$work/run" --epochs 2 --batch-size 256)
tool() { timeout "$(cap 30 20)" python3 tools/timeline_trace.py "$@" --output "$trace_json" --add 2>&1 | tee -a "$log"; }
if command -v nsys > /dev/null; then
    echo "nsys: $(nsys --version)" | tee "$log"
    timeout "$(cap 50 20)" nsys profile -t cuda,nvtx,osrt --cuda-graph-trace=node --force-overwrite true -o "$work/train" \
        python3 "${train[@]}" >> "$log" 2>&1 || status=1
    timeout "$(cap 15 20)" nsys profile -t cuda,nvtx --cuda-graph-trace=node --force-overwrite true -o "$work/overlap" ./build/overlap \
        >> "$log" 2>&1 || status=1
    for name in train overlap; do
        timeout "$(cap 20 20)" nsys export --type sqlite --force-overwrite true -o "$work/$name.sqlite" \
            "$work/$name.nsys-rep" >> "$log" 2>&1 || status=1
        timeout "$(cap 10 20)" nsys stats -r cuda_gpu_kern_sum,cuda_api_sum -f csv "$work/$name.sqlite" 2>/dev/null \
            | head -40 >> "$log"
    done
    tool "$work/train.sqlite" --label train.py || status=1
    tool "$work/overlap.sqlite" --label overlap.cu --window 0.05 || status=1
else
    echo "no nsys on PATH: jax.profiler (snippets/timeline/trace_jax.py)" | tee "$log"
    timeout "$(cap 60 20)" python3 snippets/timeline/trace_jax.py "$work/trace" "${train[@]}" >> "$log" 2>&1 \
        || status=1
    trace=$(find "$work/trace" -name 'perfetto_trace.json.gz' | head -1)
    [ -n "$trace" ] && { tool "$trace" --label train.py || status=1; }
fi
[ -f "$trace_json" ] || status=1

step "each lesson's own check"
{ timeout "$(cap 20 8)" ./build/overlap; timeout "$(cap 10 8)" ./build/graphs
  timeout "$(cap 20 8)" python3 snippets/timeline/overlap_numba.py
  timeout "$(cap 25 8)" python3 snippets/timeline/graphs_torch.py 10; } 2>&1 \
    | tee "$RESULTS_DIR/timeline-lessons.txt" || status=1

step "bar tests on the results file: the best pipeline against its ideal, graphs against launches"
TIMELINE_RESULTS="$RESULTS_DIR/timeline-h200.json" timeout "$(cap 20)" python3 -m pytest -q -s -o addopts="" \
    -p no:cacheprovider -m gpu tests/test_timeline.py -k bar 2>&1 | tee "$RESULTS_DIR/timeline-bar.txt" \
    || status=1
exit $status
