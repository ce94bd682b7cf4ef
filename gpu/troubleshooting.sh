#!/usr/bin/env bash
# The troubleshooting and check-your-GPU pages on a real GPU: the compute-sanitizer demo (a planted
# out-of-bounds write), the topology, clocks and throttle reasons, ECC and row remapping, the
# kernel log's Xid lines, dcgmi where installed, and the memory a CUDA context takes.
# Budget: about 1 minute. Each output -> gpu/logs/<run>/troubleshooting-<name>.txt
set -u
: "${RESULTS_DIR:?set RESULTS_DIR to an empty folder for the outputs}"
out="$RESULTS_DIR"
bin="$out/oob_kernel"

# The compute-sanitizer demo.
{
    echo "\$ nvcc -arch=native -lineinfo -o oob_kernel snippets/troubleshooting/oob_kernel.cu"
    timeout 120 nvcc -arch=native -lineinfo -o "$bin" snippets/troubleshooting/oob_kernel.cu 2>&1
    echo "exit status $?"
    echo "\$ ./oob_kernel"
    timeout 30 "$bin" 2>&1; echo "exit status $?"
    echo "\$ compute-sanitizer --error-exitcode 99 ./oob_kernel"
    timeout 60 compute-sanitizer --error-exitcode 99 "$bin" 2>&1; echo "exit status $?"
    echo "\$ ./oob_kernel --far"
    timeout 30 "$bin" --far 2>&1; echo "exit status $?"
} > "$out/troubleshooting-sanitizer.txt" 2>&1
rm -f "$bin"

# What the check-your-GPU page shows.
{ echo "\$ nvidia-smi topo -m"; timeout 20 nvidia-smi topo -m 2>&1; } > "$out/troubleshooting-topo.txt"
{ echo "\$ nvidia-smi -q -d PERFORMANCE"; timeout 20 nvidia-smi -q -d PERFORMANCE 2>&1
  echo "\$ nvidia-smi -q -d CLOCK"; timeout 20 nvidia-smi -q -d CLOCK 2>&1; } > "$out/troubleshooting-performance.txt"
{ echo "\$ nvidia-smi -q -d ECC,ROW_REMAPPER"; timeout 20 nvidia-smi -q -d ECC,ROW_REMAPPER 2>&1
  echo "\$ nvidia-smi --query-remapped-rows=gpu_bus_id,remapped_rows.correctable,remapped_rows.uncorrectable,remapped_rows.pending,remapped_rows.failure --format=csv"
  timeout 20 nvidia-smi --query-remapped-rows=gpu_bus_id,remapped_rows.correctable,remapped_rows.uncorrectable,remapped_rows.pending,remapped_rows.failure --format=csv 2>&1
} > "$out/troubleshooting-ecc.txt"
{ echo "\$ dmesg | grep -i xid"; (timeout 10 dmesg 2>&1 || true) | grep -i -E "xid|dmesg:|permitted" | tail -n 20
  echo "(end of Xid lines)"; } > "$out/troubleshooting-xid.txt"
{ if command -v dcgmi >/dev/null; then echo "\$ dcgmi diag -r 1"; timeout 60 dcgmi diag -r 1 2>&1
  else echo "dcgmi: not installed on this machine (DCGM is a separate package)"; fi; } > "$out/troubleshooting-dcgmi.txt"

# The memory a process's CUDA context takes before its first allocation of note: one float.
{ echo "\$ python3 -c '... torch.zeros(1, device=\"cuda\"); nvidia-smi --query-compute-apps ...'"
  timeout 60 python3 -c 'import subprocess, torch; x = torch.zeros(1, device="cuda"); torch.cuda.synchronize(); print(subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv"], capture_output=True, text=True).stdout, end=""); print("torch.cuda.memory_allocated:", torch.cuda.memory_allocated())' 2>&1
} > "$out/troubleshooting-context.txt"

cat "$out"/troubleshooting-*.txt
