#!/usr/bin/env bash
# OpenCL on the GPU machine, through NVIDIA's own OpenCL driver. The machine ships the driver
# library but no ICD file naming it, so the loader finds no GPU platform until one is written
# (a private vendors folder, OCL_ICD_VENDORS). Needs pyopencl (carried as a wheel in .whl/).
# About 30 s. Writes into $RESULTS_DIR:
#   opencl-platforms.txt   the platforms and devices the loader sees, with the ICD used
#   opencl-<card>.json       python snippets/bench/run.py opencl --variants opencl_gpu
set -uo pipefail
cd "$(dirname "$0")/.."
: "${RESULTS_DIR:?set RESULTS_DIR to an empty folder for the outputs}"
lib=$(ldconfig -p | awk '/libnvidia-opencl\.so\.1 / {print $NF; exit}')
[ -n "$lib" ] || { echo "no libnvidia-opencl.so.1 on this machine"; exit 1; }
export OCL_ICD_VENDORS=$(mktemp -d)
echo "$lib" > "$OCL_ICD_VENDORS/nvidia.icd"
{ echo "## OCL_ICD_VENDORS=$OCL_ICD_VENDORS (nvidia.icd -> $lib)"
  timeout 60 python3 snippets/opencl/cl_device.py; echo "exit $?"; } > "$RESULTS_DIR/opencl-platforms.txt" 2>&1
cat "$RESULTS_DIR/opencl-platforms.txt"
timeout 120 python3 snippets/bench/run.py opencl --variants opencl_gpu --compile-runs 0 \
    --output "$RESULTS_DIR/opencl-$CARD.json"
