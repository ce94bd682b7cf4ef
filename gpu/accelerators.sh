#!/usr/bin/env bash
# ML accelerators section on the GPU machine (about 2 minutes): JAX and PyTorch training-step
# timings, the jax.jit XLA demo and its optimized HLO, the framework scripts and Keras 3 on
# JAX as correctness checks, and OpenCL on the GPU when an OpenCL driver (ICD) is installed.
# Every output goes to $RESULTS_DIR; a summary table is printed at the end.
set -u
: "${RESULTS_DIR:?set RESULTS_DIR to an empty folder for the outputs}"
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1 TF_CPP_MIN_LOG_LEVEL=2
R="$RESULTS_DIR"
status=0
BUDGET=115  # seconds for all steps together; the summary comes after
step() {  # step NAME SECONDS COMMAND...: run with a time limit, log, remember failures
    local name=$1 limit=$2; shift 2
    local left=$(( BUDGET - SECONDS ))
    if [ "$left" -lt 5 ]; then
        echo "$name: skipped, time budget spent" | tee -a "$R/steps.txt"
        return
    fi
    [ "$limit" -le "$left" ] || limit=$left
    echo "=== $name (limit ${limit}s): $*"
    timeout "$limit" "$@" > "$R/$name.log" 2>&1
    local rc=$?
    tail -n 15 "$R/$name.log"
    echo "$name: exit $rc" | tee -a "$R/steps.txt"
    [ "$rc" -eq 0 ] || status=1
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$R/gpu.txt" 2>&1

# 1. Training-step timings, JAX then PyTorch (results written after every run).
step frameworks 60 python3 snippets/frameworks/bench_frameworks.py --frameworks jax,pytorch \
    --sizes small,large --out "$R/frameworks-h200.json"

# 2. XLA through jax.jit: eager vs compiled, compile time apart, and the optimized HLO.
step xla_jax 20 python3 snippets/compilers/xla_jax.py --out "$R/xla-jax-h200.json" \
    --hlo "$R/xla-hlo-jax-h200.txt"

# 3. The page's scripts as they are, for correctness on the GPU.
step train_jax 15 python3 snippets/frameworks/train_jax.py --mode jit
step train_pytorch 15 python3 snippets/frameworks/train_pytorch.py --mode eager
step keras_jax 15 env KERAS_BACKEND=jax python3 snippets/frameworks/train_keras.py --backend jax

# 4. OpenCL on the GPU, only when NVIDIA's OpenCL ICD is installed.
{ ls -l /etc/OpenCL/vendors 2>&1; timeout 10 python3 snippets/opencl/cl_device.py 2>&1; } > "$R/opencl-platforms.txt"
if timeout 10 python3 snippets/opencl/cl_device.py --device gpu > /dev/null 2>&1; then
    step opencl_bench 15 python3 snippets/opencl/bench_opencl.py --device gpu --out "$R/opencl-h200.json"
    step opencl_vector_add 8 python3 snippets/opencl/vector_add.py 1000003 --device gpu --verbose
    step opencl_saxpy 8 python3 snippets/opencl/saxpy.py 1000003 --device gpu --verbose
else
    echo "opencl: no OpenCL GPU device (no NVIDIA OpenCL ICD installed?); skipped" | tee -a "$R/steps.txt"
    cat "$R/opencl-platforms.txt"
fi

# 5. Summary.
python3 - "$R" <<'PY'
import json, sys
from pathlib import Path
root = Path(sys.argv[1])
print(f"\n{'file':<24} {'variant':<20} {'size':<8} {'phase':<14} {'median ms':>10}")
for f in sorted(root.glob("*.json")):
    for m in json.loads(f.read_text())["measurements"]:
        p = m.get("params", {})
        size = p.get("size") or p.get("n", "")
        label = m["variant"] if m["case"] == "train_step" else f"{m['case']}/{m['variant']}"
        print(f"{f.name:<24} {label:<20} {str(size):<8} {m['phase']:<14} {m['median_s'] * 1e3:>10.3f}")
PY
cat "$R/steps.txt"
echo "total ${SECONDS}s"
exit $status
