#!/usr/bin/env bash
# Mandelbrot on the GPU: the SASS of the CUDA kernels, the float64 bar test three times in a
# row, the runner for every default case, and the full-size check at an iteration count that is
# not a multiple of four. Budget: about 3 minutes (each step has its own timeout).
# Outputs in $RESULTS_DIR:
#   mandelbrot-h200.json      -> docs/data/mandelbrot-h200.json
#   mandelbrot-sass-h200.txt  -> docs/data/mandelbrot-sass-h200.txt
#   mandelbrot-summary.txt, mandelbrot-runner.log, mandelbrot-sass.txt, mandelbrot-tests.txt,
#   mandelbrot-host.txt       -> gpu/logs/<date>/mandelbrot-*.txt
# The image (docs/assets/images/mandelbrot.png) and the notebook are made by the commands of the
# page (tools/mandelbrot_image.py; jupyter execute), not here: both take longer than this budget.
# MANDELBROT_DRY_RUN=1 does the same steps on the CUDA simulator at tiny sizes (no SASS there).
set -u
: "${RESULTS_DIR:?set RESULTS_DIR to an empty folder for the outputs}"
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
RUN_ARGS=(--compile-runs 1)
TEST_ARGS=(-m gpu)
if [ "${MANDELBROT_DRY_RUN:-0}" = 1 ]; then
    export NUMBA_ENABLE_CUDASIM=1
    RUN_ARGS=(--cases smoke --repeats 3 --compile-runs 0)
    TEST_ARGS=(-m "not gpu")
else
    unset NUMBA_ENABLE_CUDASIM
fi
start=$SECONDS
step() { echo "== [$((SECONDS - start)) s] $*"; }

step "host"  # the CPU the CPU figures ran on: model, vCPUs, and whether it is a virtual machine
{ nproc; grep -m1 "model name" /proc/cpuinfo; grep -c -w hypervisor /proc/cpuinfo;
  command -v systemd-detect-virt >/dev/null && systemd-detect-virt; } \
    > "$RESULTS_DIR/mandelbrot-host.txt" 2>&1
cat "$RESULTS_DIR/mandelbrot-host.txt"

if [ "${MANDELBROT_DRY_RUN:-0}" != 1 ]; then
    step "SASS of the CUDA kernels"
    timeout 20 $PY snippets/bench/run.py mandelbrot --sass "$RESULTS_DIR/mandelbrot-sass-h200.txt" \
        2>&1 | tee "$RESULTS_DIR/mandelbrot-sass.txt"
fi

step "gpu test: the float64 bar, three times in a row"
for run in 1 2 3; do
    timeout 20 $PY -m pytest -q -s -o addopts="" -p no:cacheprovider "${TEST_ARGS[@]}" \
        -k clears_the_bar tests/test_mandelbrot.py 2>&1 | grep -E "^BAR|passed|failed|error" \
        | sed "s/^/run $run: /"
done 2>&1 | tee "$RESULTS_DIR/mandelbrot-tests.txt"
step "runner (progress in mandelbrot-runner.log)"
timeout 145 $PY snippets/bench/run.py mandelbrot "${RUN_ARGS[@]}" \
    --output "$RESULTS_DIR/mandelbrot-h200.json" > "$RESULTS_DIR/mandelbrot-summary.txt" \
    2> "$RESULTS_DIR/mandelbrot-runner.log"
echo "runner exit status $?"
cat "$RESULTS_DIR/mandelbrot-summary.txt"


step "gpu test: full size at an iteration count that is not a multiple of four"
timeout 20 $PY -m pytest -q -o addopts="" -p no:cacheprovider "${TEST_ARGS[@]}" \
    -k "full_size and 999" tests/test_mandelbrot.py 2>&1 | tail -n 3 \
    | tee -a "$RESULTS_DIR/mandelbrot-tests.txt"
step "done"
