#!/usr/bin/env bash
# Runs topic scripts on a machine with an NVIDIA GPU and packs what they write.
#   OUT=/some/dir bash gpu/run_all.sh array_addition mandelbrot ...
# Each gpu/<topic>.sh gets an empty RESULTS_DIR; everything ends up in $OUT/results.tgz
# (plus $OUT/summary.txt). Python wheels found in .whl/ (e.g. numpy 2.4 for numba-cuda,
# keras) are installed to a private folder first and put on PYTHONPATH; the `bench` harness is
# taken from this tree's snippets/bench. OUT, the topics and the wheels are checked before any work.
# Results files record the sha256 of each source file a run executed, and the git commit of the
# code. A copied tree without .git cannot tell the commit,
# and one whose .git is older than its files names the wrong commit: name it from the checkout
# that sent the tree, expanded there before the command is sent, e.g.
#   BENCH_GIT_COMMIT=$(git rev-parse HEAD) BENCH_GIT_DIRTY=$(git status --porcelain -uno | grep -q . && echo 1 || echo 0) OUT=... bash gpu/run_all.sh ...
# A topic cut short keeps what it measured in <name>.partial.json (packed like the rest).
# Exit status 1 when a topic fails (after packing what finished) or the packing cannot be written.
set -u
cd "$(dirname "$0")/.."
: "${OUT:?set OUT to the folder that should receive results.tgz}"
if [ ! -d "$OUT" ] || ! touch "$OUT/.probe" 2>/dev/null; then
    echo "error: OUT=$OUT is not a folder this run can write in; nothing was run" >&2; exit 2
fi
rm -f "$OUT/.probe"
[ $# -gt 0 ] || { echo "error: name at least one topic (gpu/<topic>.sh)" >&2; exit 2; }
for topic in "$@"; do
    [ -f "gpu/$topic.sh" ] || { echo "error: no topic $topic (gpu/$topic.sh does not exist); nothing was run" >&2; exit 2; }
done
if [ -z "${BENCH_GIT_COMMIT:-}" ] && git rev-parse HEAD >/dev/null 2>&1; then
    BENCH_GIT_COMMIT=$(git rev-parse HEAD)
    # --no-optional-locks: status may not rewrite the index (git killed by a file-size limit
    # there leaves .git/index.lock behind, and every later git command in the checkout fails)
    BENCH_GIT_DIRTY=$(git --no-optional-locks status --porcelain -uno | grep -q . && echo 1 || echo 0)
fi
export BENCH_GIT_COMMIT="${BENCH_GIT_COMMIT:-}" BENCH_GIT_DIRTY="${BENCH_GIT_DIRTY:-}"
if compgen -G ".whl/*.whl" >/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl || exit 1
    export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
# Several-GPU machines here must keep NVLink multicast off.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1 NUMBA_ENABLE_CUDASIM=0
# The harness (snippets/bench) from this tree, unless a wheel in .whl/ installed it: a folder
# holding only a link to it, so no other snippets/ folder (keras/, ...) shadows a real package.
if ! python3 -c "import bench.runner" 2>/dev/null; then
    harness=$(mktemp -d /tmp/bench_path.XXXXXX)
    ln -s "$PWD/snippets/bench" "$harness/bench"
    export PYTHONPATH=$harness${PYTHONPATH:+:$PYTHONPATH}
fi
python3 -c "import bench.runner" 2>/dev/null || {
    echo "error: the bench harness is not importable from snippets/bench (or a wheel in .whl/)" >&2; exit 2; }
root=$(mktemp -d /tmp/gpu_results.XXXXXX)
trap 'rm -rf "$root"' EXIT
# Pack into temporary files in $OUT, then rename: a full disk keeps the earlier results.tgz and
# summary.txt whole, and the run's folder stays (named) for a copy by hand.
pack() {
    local tgz="$OUT/.results.tgz.$$" sum="$OUT/.summary.txt.$$"
    if tar czf "$tgz" -C "$root" . && cp "$root/summary.txt" "$sum" \
            && mv -f "$tgz" "$OUT/results.tgz" && mv -f "$sum" "$OUT/summary.txt"; then
        return 0
    fi
    rm -f "$tgz" "$sum"
    trap - EXIT
    echo "error: cannot write $OUT/results.tgz (the earlier one is as it was); this run's results are in $root" >&2
    return 1
}
nvidia-smi > "$root/nvidia-smi.txt" 2>&1
source gpu/lib/card.sh  # each topic names its results files for the card: saxpy-h100.json
export CARD
failed=()
for topic in "$@"; do
    export RESULTS_DIR="$root/$topic"
    mkdir -p "$RESULTS_DIR"
    start=$(date +%s)
    bash "gpu/$topic.sh" > "$RESULTS_DIR/log.txt" 2>&1
    status=$?
    [ $status -eq 0 ] || failed+=("$topic")
    echo "$topic: exit $status in $(( $(date +%s) - start )) s" | tee -a "$root/summary.txt"
    tail -n 25 "$RESULTS_DIR/log.txt"
    # Pack after every topic: a run cut short still returns what finished.
    pack || exit 1
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "error: ${#failed[@]} topic(s) failed: ${failed[*]} (their logs are in $OUT/results.tgz)" >&2
    exit 1
fi
