#!/usr/bin/env bash
# The Mandelbrot notebook, executed on the GPU machine against docs/data/mandelbrot-<card>.json
# (the one run_all.sh's mandelbrot topic just measured, when it ran before this), with nbclient, the same executor the tests use. Needs
# nbclient and ipykernel (carried as wheels in .whl/). Writes into $RESULTS_DIR:
#   mandelbrot-notebook.ipynb  -> docs/kernels/mandelbrot-notebook.ipynb
set -u
: "${RESULTS_DIR:?set RESULTS_DIR to an empty folder for the outputs}"
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
source gpu/lib/card.sh
fresh="$RESULTS_DIR/../mandelbrot/mandelbrot-$CARD.json"  # run_all.sh's folder of that topic
[ -f "$fresh" ] && cp "$fresh" "docs/data/mandelbrot-$CARD.json"
export MANDELBROT_NB_RESULTS="../data/mandelbrot-$CARD.json|../data/mandelbrot-cpu.json"
timeout 300 python3 - "$RESULTS_DIR/mandelbrot-notebook.ipynb" <<'PY'
import sys

import nbformat
from nbclient import NotebookClient

source = "docs/kernels/mandelbrot-notebook.ipynb"
nb = nbformat.read(source, as_version=4)
NotebookClient(nb, timeout=240, kernel_name="python3",
               resources={"metadata": {"path": "docs/kernels"}}).execute()
nbformat.write(nb, sys.argv[1])
print(f"executed {source} -> {sys.argv[1]}")
PY
