#!/usr/bin/env bash
# Mandelbrot on the GPU: the runner for every case, the picture, the executed notebook, the gpu
# tests; a summary table last. Budget: 4 minutes (each step has its own timeout).
# Outputs in $RESULTS_DIR:
#   mandelbrot-h200.json            -> docs/data/mandelbrot-h200.json
#   mandelbrot.png                  -> docs/assets/images/mandelbrot.png
#   mandelbrot-notebook.ipynb       -> docs/kernels/mandelbrot-notebook.ipynb
#   mandelbrot-runner.log, mandelbrot-image.txt, mandelbrot-notebook.log, mandelbrot-tests.txt
# A dry run on a machine without a GPU (MANDELBROT_DRY_RUN=1) does the same steps on the CUDA
# simulator at tiny sizes, writing only to $RESULTS_DIR.
set -u
: "${RESULTS_DIR:?set RESULTS_DIR to an empty folder for the outputs}"
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
RESULTS_FILE=docs/data/mandelbrot-h200.json
RUN_ARGS=()
IMAGE_ARGS=(--iterations 1000)
if [ "${MANDELBROT_DRY_RUN:-0}" = 1 ]; then
    export NUMBA_ENABLE_CUDASIM=1 MANDELBROT_NB_WIDTH=24 MANDELBROT_NB_HEIGHT=16
    RESULTS_FILE="$RESULTS_DIR/mandelbrot-h200.json"
    RUN_ARGS=(--cases smoke --repeats 3 --compile-runs 1)
    IMAGE_ARGS=(--width 48 --height 32)
else
    unset NUMBA_ENABLE_CUDASIM
fi
start=$SECONDS
step() { echo "== [$((SECONDS - start)) s] $*"; }

# 1. The benchmark: every default case; the file is rewritten after each case, so a timeout
#    still leaves the cases that finished (marked partial in its notes).
step "runner (progress in mandelbrot-runner.log)"
timeout 160 $PY snippets/bench/run.py mandelbrot ${RUN_ARGS[@]+"${RUN_ARGS[@]}"} \
    --output "$RESULTS_FILE" > "$RESULTS_DIR/mandelbrot-summary.txt" \
    2> "$RESULTS_DIR/mandelbrot-runner.log"
echo "runner exit status $?"
if [ "$RESULTS_FILE" != "$RESULTS_DIR/mandelbrot-h200.json" ]; then
    cp "$RESULTS_FILE" "$RESULTS_DIR/" 2>/dev/null || echo "no results file written"
fi
tail -n 3 "$RESULTS_DIR/mandelbrot-runner.log"

# 2. The picture, from the float64 kernel, with both kernels checked at 1000 iterations.
step "image"
timeout 20 $PY snippets/mandelbrot/mandelbrot.py "${IMAGE_ARGS[@]}" \
    --variants cuda_f64,cuda_f32,njit_parallel --image "$RESULTS_DIR/mandelbrot.png" \
    2>&1 | tee "$RESULTS_DIR/mandelbrot-image.txt"

# 3. The notebook, executed against the results file just written.
step "notebook"
case "$RESULTS_FILE" in /*) ;; *) RESULTS_FILE="$PWD/$RESULTS_FILE" ;; esac
export MANDELBROT_NB_RESULTS="$RESULTS_FILE"
timeout 35 $PY - "$RESULTS_DIR/mandelbrot-notebook.ipynb" > "$RESULTS_DIR/mandelbrot-notebook.log" 2>&1 <<'EOF'
"""Execute docs/kernels/mandelbrot-notebook.ipynb with nbclient, or, where Jupyter is missing,
run its code cells in order here and store stdout and figures as the notebook's outputs."""
import base64, contextlib, io, json, os, sys, traceback
src, dst = "docs/kernels/mandelbrot-notebook.ipynb", sys.argv[1]
here = os.getcwd()
try:
    import nbclient, nbformat
    nb = nbformat.read(src, as_version=4)
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": "docs/kernels"}}).execute()
    nbformat.write(nb, dst)
    print("executed with nbclient")
    sys.exit(0)
except ImportError as exc:
    print(f"nbclient unavailable ({exc}); running the cells here")
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
nb = json.load(open(src))
os.chdir("docs/kernels")
scope, count = {"__name__": "__main__"}, 0
for cell in nb["cells"]:
    if cell["cell_type"] != "code":
        continue
    count += 1
    figures, out = [], io.StringIO()
    def show(*args, **kwargs):
        for num in plt.get_fignums():
            buf = io.BytesIO()
            plt.figure(num).savefig(buf, format="png", bbox_inches="tight")
            figures.append(base64.b64encode(buf.getvalue()).decode())
        plt.close("all")
    plt.show = show
    with contextlib.redirect_stdout(out):
        try:
            exec(compile("".join(cell["source"]), f"<cell {count}>", "exec"), scope)
        except Exception:
            traceback.print_exc(file=sys.stdout)
            print(out.getvalue(), file=sys.__stderr__)
            sys.exit(1)
    outputs = []
    if out.getvalue():
        outputs.append({"output_type": "stream", "name": "stdout", "text": out.getvalue()})
    outputs += [{"output_type": "display_data", "metadata": {},
                 "data": {"image/png": f, "text/plain": "<Figure>"}} for f in figures]
    cell["outputs"], cell["execution_count"] = outputs, count
os.chdir(here)
json.dump(nb, open(dst, "w"), indent=1)
print("executed by the fallback runner")
EOF
echo "notebook exit status $? ($(tail -n 1 "$RESULTS_DIR/mandelbrot-notebook.log"))"

# 4. The gpu tests of this topic (full-size kernels against the CPU reference).
step "gpu tests"
timeout 20 $PY -m pytest -q -o addopts="" -p no:cacheprovider -m gpu tests/test_mandelbrot.py \
    > "$RESULTS_DIR/mandelbrot-tests.txt" 2>&1
echo "tests exit status $? ($(tail -n 1 "$RESULTS_DIR/mandelbrot-tests.txt"))"

# 5. Summary, last: the bars, then the runner's table.
step "summary"
$PY - "$RESULTS_FILE" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
for note in doc["notes"]:
    print("note:", note)
for m in doc["measurements"]:
    if m["case"] != "compile" and m["device"] == "gpu" and m["phase"] == "kernel":
        rate = m["work"]["pixel_iterations"] / m["median_s"]
        print(f"{m['case']:<8} {m['variant']:<9} kernel {rate:.3g} pixel-iterations/s, "
              f"spread {m['spread']:.3f}, differing {m['error']['value']:.4%}")
EOF
cat "$RESULTS_DIR/mandelbrot-summary.txt"
step "done"
