#!/usr/bin/env bash
# The GPU doctor on a real GPU machine: its text report and JSON, plus the raw tool outputs it
# reads (so tests/fixtures/doctor/ can be refreshed from real recordings). Budget: 1 minute.
#   RESULTS_DIR/doctor-<card>.json  -> docs/data/doctor-<card>.json, then the page's report:
#       python snippets/doctor/gpu_doctor.py --replay docs/data/doctor-<card>.json > docs/data/doctor-<card>.txt
#   RESULTS_DIR/doctor-<card>.txt   the same report as text -> gpu/logs/<run>/doctor-<card>.txt
#   RESULTS_DIR/recorded/*        nvidia-smi, lspci, nvcc and /proc outputs (fixture material)
set -u
: "${RESULTS_DIR:?set RESULTS_DIR to an empty folder for the outputs}"
mkdir -p "$RESULTS_DIR/recorded"
rec="$RESULTS_DIR/recorded"

# Raw outputs first: a few seconds at most, each bounded.
timeout 20 nvidia-smi > "$rec/nvidia-smi.txt" 2>&1
timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap,pci.bus_id \
    --format=csv,noheader,nounits > "$rec/nvidia-smi-query.csv" 2>&1
timeout 10 lspci -nn > "$rec/lspci-nn.txt" 2>&1 || echo "lspci unavailable" > "$rec/lspci-nn.txt"
cat /proc/driver/nvidia/version > "$rec/proc-driver-nvidia-version.txt" 2>&1
timeout 20 nvcc --version > "$rec/nvcc-version.txt" 2>&1
timeout 20 nvcc --list-gpu-arch > "$rec/nvcc-list-gpu-arch.txt" 2>&1
for d in /sys/bus/pci/devices/*; do
    if [ "$(cat "$d/vendor" 2>/dev/null)" = "0x10de" ]; then
        echo "$(basename "$d") vendor=0x10de class=$(cat "$d/class") device=$(cat "$d/device")" \
            "driver=$(basename "$(readlink -f "$d/driver" 2>/dev/null)" 2>/dev/null)"
    fi
done > "$rec/sysfs-nvidia.txt"

# The doctor itself, as a reader runs it. Each framework probe gets at most 30 s; the whole run
# is cut at 50 s so the script stays inside its minute. Its text report is the summary.
timeout 50 python3 snippets/doctor/gpu_doctor.py --timeout 30 --json "$RESULTS_DIR/doctor-$CARD.json" \
    > "$RESULTS_DIR/doctor-$CARD.txt" 2>&1
status=$?
echo "== GPU doctor on $(hostname): exit status $status (0 usable, 1 no usable GPU, 3 usable with errors) =="
cat "$RESULTS_DIR/doctor-$CARD.txt"
exit $status
