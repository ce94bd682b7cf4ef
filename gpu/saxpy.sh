#!/usr/bin/env bash
# SAXPY and "measure your machine" on a GPU machine (budget: 3 minutes in all).
# Writes into $RESULTS_DIR:
#   saxpy-h200.json       every SAXPY version over N = 2^10..2^28, with copies and transfers
#   machine-h200.json     CPU and GPU ceilings (bandwidths, FP32/TF32/BF16 matrix products)
#   roofline-h200.png     the roofline from machine-h200.json, with SAXPY, matmul, Mandelbrot points
#   saxpy-cuda-c.txt, machine.txt, saxpy-progress.txt, pytest-gpu.txt   what each step printed
# and prints the SAXPY bandwidth table last.
set -u -o pipefail
cd "$(dirname "$0")/.."
: "${RESULTS_DIR:?set RESULTS_DIR to an empty folder for the results}"
mkdir -p build "$RESULTS_DIR"
status=0
deadline=$(( $(date +%s) + 178 ))
step() { echo "== $* ($(date +%T))"; }
# limit N: at most N seconds, and never past the 3-minute deadline
limit() { local left=$(( deadline - $(date +%s) )); (( left < 1 )) && left=1; echo $(( $1 < left ? $1 : left )); }
# SAXPY_QUICK=1: tiny sizes, to try this script on a machine without a GPU
if [ "${SAXPY_QUICK:-0}" = 1 ]; then
    sweep=(--sizes 10:14:2 --no-transfers); machine=(--quick); big=1048576
else
    sweep=(--cpu-sizes 10:26:2); machine=(); big=268435456
fi

step "compile the CUDA C version for Hopper"
timeout "$(limit 45)" nvcc -O3 -arch=sm_90 -o build/saxpy snippets/saxpy/saxpy.cu || status=1

step "CUDA C at N = $big (bar at 2^28: saxpy / copy >= 0.9)"
timeout "$(limit 20)" ./build/saxpy "$big" 2>&1 | tee "$RESULTS_DIR/saxpy-cuda-c.txt" || status=1

step "every SAXPY version over a range of N (${sweep[*]:-default sizes})"
timeout "$(limit 95)" python3 snippets/saxpy/measure_saxpy.py --cuda-binary build/saxpy ${sweep[@]+"${sweep[@]}"} \
    --out "$RESULTS_DIR/saxpy-h200.json" > "$RESULTS_DIR/saxpy-table.txt" \
    2> "$RESULTS_DIR/saxpy-progress.txt" || { status=1; tail -20 "$RESULTS_DIR/saxpy-progress.txt"; }

step "measure the machine; roofline with the kernels measured so far"
kernels=("$RESULTS_DIR/saxpy-h200.json")
for f in docs/data/matmul-h200.json docs/data/mandelbrot-h200.json; do
    [ -f "$f" ] && kernels+=("$f")
done
timeout "$(limit 45)" python3 snippets/machine/measure_machine.py ${machine[@]+"${machine[@]}"} --out "$RESULTS_DIR/machine-h200.json" \
    --plot "$RESULTS_DIR/roofline-h200.png" --kernels "${kernels[@]}" \
    > "$RESULTS_DIR/machine.txt" 2>&1 || status=1
cat "$RESULTS_DIR/machine.txt"

step "Numba CUDA at N = $big with other grid sizes (blocks of 256 threads per SM)"
for per_sm in 4 8 128; do
    timeout "$(limit 15)" python3 snippets/saxpy/saxpy_numba_cuda.py "$big" --no-transfers \
        --blocks-per-sm "$per_sm" 2>&1 | grep -E "blocks|saxpy|copy|error" \
        | tee -a "$RESULTS_DIR/saxpy-numba-grids.txt"
done

step "GPU tests of this topic (the 90% bars as tests)"
timeout "$(limit 60)" python3 -m pytest -q -o addopts="" -p no:cacheprovider -m gpu \
    tests/test_saxpy.py tests/test_measure_machine.py > "$RESULTS_DIR/pytest-gpu.txt" 2>&1 \
    || status=1
tail -5 "$RESULTS_DIR/pytest-gpu.txt"

step "SAXPY bandwidth at the largest N (of copy = against the copy measured in the same run)"
cat "$RESULTS_DIR/saxpy-table.txt"
exit $status
