#!/usr/bin/env bash
# Why the GPU is idle (issue 46) on a GPU machine, within 150 s on an H200. Writes into
# $RESULTS_DIR:
#   timeline-<card>.json        run.py timeline: overlap.cu's stages and pipelines (chunks x streams),
#                             Numba's pipelines, graphs.cu's chains and PyTorch's (-> docs/data/)
#   timeline-run.txt          what the runner printed
#   timeline-lessons.txt      ./build/overlap, ./build/graphs, overlap_numba.py: each lesson's own
#                             check (graphs_torch.py's functions run in run.py's graphs case)
#   timeline-trace-<card>.json  tools/timeline_trace.py on the traces below (-> docs/data/)
#   timeline-trace.txt        how each trace was recorded, nsys stats or the tool's summaries
#   timeline-tools.txt        the GPU, driver, nvcc, nsys (or its absence), numba, torch, jax, keras
#   timeline-bar.txt          the bar tests on timeline-<card>.json (tests/test_timeline.py -m gpu)
# The traces: train.py from files (a small data set, KERAS_BACKEND=jax) and a pipeline (label
# "pipeline"): ./build/overlap with Nsight Systems where `nsys` is on PATH, else train.py and
# overlap_numba.py with jax.profiler (trace_jax.py).
source "$(dirname "$0")/lib/prelude.sh"  # set -u, cd to the root, RESULTS_DIR, step
export KERAS_BACKEND=jax TF_CPP_MIN_LOG_LEVEL=2 XLA_PYTHON_CLIENT_PREALLOCATE=false
trace_json="$RESULTS_DIR/timeline-trace-$CARD.json"
log="$RESULTS_DIR/timeline-trace.txt"

deadline=$(( $(date +%s) + ${TIMELINE_SECONDS:-145} ))  # the script's whole budget
cap() { local left=$(( deadline - $(date +%s) - ${2:-3} ));  # N [seconds kept for later steps]
    echo $(( left < $1 ? (left > 1 ? left : 1) : $1 )); }

step "what this machine has (-> timeline-tools.txt)"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  nvcc --version | tail -2; command -v nsys > /dev/null && nsys --version || echo "nsys: not on PATH"
  timeout 10 python3 -c 'from importlib.metadata import version, PackageNotFoundError
for m in ("numba", "numba-cuda", "numpy", "torch", "jax", "jaxlib", "keras"):
    try: print(m, version(m))
    except PackageNotFoundError: print(m, "not installed")'
} 2>&1 | tee "$RESULTS_DIR/timeline-tools.txt"

step "compile the CUDA C lessons for Hopper, and the runner around each (in parallel)"
for lesson in overlap graphs; do
    timeout 60 nvcc -O3 -arch=sm_90 -o "build/$lesson" "snippets/timeline/$lesson.cu" &
    timeout 60 nvcc -O3 -arch=sm_90 -DLESSON="\"$PWD/snippets/timeline/$lesson.cu\"" \
        -o "build/bench-$lesson" snippets/bench/runner.cu &
done
for job in $(jobs -p); do wait "$job" || status=1; done

step "the benchmark runner: pipelines against their ideal, chains one by one and as graphs"
timeout "$(cap 70 55)" python3 snippets/bench/run.py timeline --output "$RESULTS_DIR/timeline-$CARD.json" \
    > "$RESULTS_DIR/timeline-run.txt" 2>&1 || status=1
tail -45 "$RESULTS_DIR/timeline-run.txt"

step "record the timelines: train.py from files, and overlap.cu's program"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
timeout "$(cap 15 12)" python3 snippets/keras/make_dataset.py "$work/data" --images 1000 --size 64 \
    > /dev/null 2>&1 || status=1
train=(snippets/keras/train.py "$work/data" --output-dir "$work/run" --epochs 2 --batch-size 256)
tool() { timeout "$(cap 30 12)" python3 tools/timeline_trace.py "$@" --output "$trace_json" --add 2>&1 | tee -a "$log"; }
if command -v nsys > /dev/null; then
    echo "nsys: $(nsys --version)" | tee "$log"
    record() {  # NAME SECONDS PROGRAM...: record, export to SQLite, sum up, name the gaps
        local name=$1 seconds; seconds=$(cap "$2" 12); shift 2  # past --duration: stopped, written
        timeout "$seconds" nsys profile -t cuda,nvtx,osrt --cuda-graph-trace=node \
            --duration $(( seconds > 13 ? seconds - 8 : 5 )) --force-overwrite true \
            -o "$work/$name" "$@" >> "$log" 2>&1
        [ -f "$work/$name.nsys-rep" ] || return 1
        timeout "$(cap 20 12)" nsys export --type sqlite --force-overwrite true \
            -o "$work/$name.sqlite" "$work/$name.nsys-rep" >> "$log" 2>&1 || return 1
        timeout "$(cap 10 12)" nsys stats -r cuda_gpu_kern_sum,cuda_api_sum -f csv \
            "$work/$name.sqlite" 2>/dev/null | head -40 >> "$log"
    }
    { record train 50 python3 "${train[@]}" && tool "$work/train.sqlite" --label train.py; } || status=1
    { record overlap 15 ./build/overlap && tool "$work/overlap.sqlite" --label pipeline --window 0.05; } \
        || status=1
else
    echo "no nsys on PATH: jax.profiler (snippets/timeline/trace_jax.py)" | tee "$log"
    # SIGINT when time is up: train.py stops with exit 130 and trace_jax.py still writes the trace
    timeout -s INT -k 25 "$(cap 50 40)" python3 snippets/timeline/trace_jax.py "$work/trace" "${train[@]}" >> "$log" 2>&1 \
        || status=1
    trace=$(find "$work/trace" -name 'perfetto_trace.json.gz' | head -1)
    [ -n "$trace" ] && { tool "$trace" --label train.py || status=1; }
    # The kernel program: Numba's pipeline, whose kernels and copies JAX's CUPTI tracer may see
    timeout -s INT -k 10 "$(cap 25 25)" python3 snippets/timeline/trace_jax.py "$work/trace-pipeline" \
        snippets/timeline/overlap_numba.py 16777216 >> "$log" 2>&1 || status=1
    trace=$(find "$work/trace-pipeline" -name 'perfetto_trace.json.gz' | head -1)
    [ -n "$trace" ] && { tool "$trace" --label pipeline --window 0.05 || status=1; }
fi
[ -f "$trace_json" ] || status=1

step "each lesson's own check"
{ timeout "$(cap 20 8)" ./build/overlap; timeout "$(cap 10 8)" ./build/graphs
  timeout "$(cap 20 8)" python3 snippets/timeline/overlap_numba.py; } 2>&1 \
    | tee "$RESULTS_DIR/timeline-lessons.txt" || status=1

step "bar tests on the results file: the best pipeline against its ideal, graphs against launches"
TIMELINE_RESULTS="$RESULTS_DIR/timeline-$CARD.json" timeout "$(cap 20)" python3 -m pytest -q -s -o addopts="" \
    -p no:cacheprovider -m gpu tests/test_timeline.py -k bar 2>&1 | tee "$RESULTS_DIR/timeline-bar.txt" \
    || status=1
exit $status
