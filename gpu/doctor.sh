#!/usr/bin/env bash
# The GPU doctor on a real GPU machine: its text report and JSON, plus the raw tool outputs it
# reads (so tests/fixtures/doctor/ can be refreshed from real recordings). Budget: 1 minute.
#   RESULTS_DIR/doctor-h200.json  -> docs/data/doctor-h200.json
#   RESULTS_DIR/doctor-h200.txt   the same report as text (for the log)
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
# is cut at 50 s so the script stays inside its minute.
timeout 50 python3 snippets/doctor/gpu_doctor.py --timeout 30 --json "$RESULTS_DIR/doctor-h200.json" \
    > "$RESULTS_DIR/doctor-h200.txt" 2>&1
status=$?

echo "== GPU doctor on $(hostname): exit status $status (0 = usable GPU, no problem found) =="
cat "$RESULTS_DIR/doctor-h200.txt"
echo
echo "== summary =="
python3 - "$RESULTS_DIR/doctor-h200.json" <<'EOF'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except (OSError, ValueError) as exc:
    sys.exit(f"no JSON report: {exc}")
f = r["facts"]
print(f"{'usable':<14}{r['usable']}")
print(f"{'exit status':<14}{r['exit_status']}")
print(f"{'driver':<14}{f['kernel_driver'].get('version')} (CUDA {f['libcuda'].get('driver_cuda')})")
print(f"{'GPUs':<14}{', '.join(d['name'] + ' cc ' + d['cc'] for d in f['libcuda'].get('devices', []))}")
print(f"{'nvcc':<14}{f['toolkit'].get('nvcc_version')}")
for name, fw in sorted(f.get("frameworks", {}).items()):
    print(f"{name:<14}{fw.get('version')} CUDA {fw.get('cuda_build')} kernel={fw.get('kernel')} {fw.get('error', '')}")
print(f"{'findings':<14}{', '.join(x['id'] for x in r['findings'])}")
EOF
exit $status
