#!/usr/bin/env bash
# Call 1: smoke of the new GPU paths (matmul's C runner with cuBLAS, the keras rounds, PyTorch
# with CUDA graphs), then the quick topics through gpu/run_all.sh. Everything lands in $OUT.
set -u; cd "$(dirname "$0")/.."
mkdir -p /tmp/smoke build
( source .gpu-batch/env.sh
  step() { n=$1; shift; s=$(date +%s); timeout 200 "$@" > /tmp/smoke/$n.log 2>&1; echo "smoke $n: exit $? in $(( $(date +%s)-s )) s"; tail -6 /tmp/smoke/$n.log; }
  step sgemm bash -c 'nvcc -O3 -arch=sm_90a -DLESSON="\"$PWD/snippets/matmul/sgemm.cu\"" -o build/bench-sgemm snippets/bench/runner.cu -DWITH_CUBLAS -lcublas && build/bench-sgemm --kernel all --repeats 10 3001x257x67'
  KERAS_BACKEND=jax XLA_PYTHON_CLIENT_PREALLOCATE=false step keras python3 snippets/bench/run.py keras --cases climb-smoke --output /tmp/smoke/keras.json
  step torch python3 -c "
import sys; sys.path.insert(0, 'snippets/keras'); import torch, climb_torch as c
x = torch.randint(0, 255, (4096, 64, 64, 3), dtype=torch.uint8, device='cuda'); y = torch.randint(0, 2, (4096, 1), device='cuda').float()
for g in (False, True):
    m, e = c.trainer(x, y, batch=1024, reshape_pool=True, graphs=g); print('graphs', g, [round(e(), 4) for _ in range(3)])"
  step torch-demo python3 snippets/keras/climb_torch.py
) 2>&1 | tee /tmp/smoke/summary.txt
tar czf $OUT/smoke.tgz -C /tmp smoke
mkdir -p /tmp/r1 && OUT=/tmp/r1 bash gpu/run_all.sh opencl fp8 compilers machine
cp /tmp/r1/results.tgz $OUT/results-call1.tgz; cp /tmp/r1/summary.txt $OUT/summary-call1.txt
