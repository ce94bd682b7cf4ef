"""Tuning run (H200): the Numba warp-tile kernel at several tile sizes, at 4096^3.

sgemm_numba_07_warptile.py takes its tile sizes from sgemm_numba_tiles.py as module constants.
For each candidate this script starts a fresh process with the tiles in MATMUL_NUMBA_WARPTILE
(read by sgemm_numba_tiles.py before the kernel is compiled), checks the kernel against
cuBLAS FP32 through PyTorch (relative Frobenius error), and times both with CUDA events (median
of 10 samples of several calls, after a warm-up), printing one JSON line per candidate.

    python3 gpu/explore/matmul-numba-tiles.py [SIZE]
"""

import json
import os
import subprocess
import sys

# (WBM, WBN, WBK, WM, WN, WMITER, WNITER, WTM, WTN, blocks per SM for launch_bounds)
# First the default of sgemm_numba_tiles.py; gpu/matmul.sh publishes the one with the highest share.
CANDIDATES = [(128, 128, 16, 64, 64, 2, 2, 8, 4, 2),    # 128 results a lane
              (128, 256, 16, 64, 64, 1, 2, 8, 8, 1),    # the CUDA C kernel's tiles, 128 a lane
              (128, 128, 8, 64, 32, 2, 2, 4, 4, 2)]     # 64 results a lane (published before)

CHILD = r"""
import json, statistics, sys
import sgemm_numba_tiles as T
import torch
from numba import cuda
from sgemm_numba_07_warptile import warptile
n = SIZE
torch.backends.cuda.matmul.allow_tf32 = False
a = torch.rand(n, n, device="cuda") * 2 - 1
b = torch.rand(n, n, device="cuda") * 2 - 1
c = torch.empty(n, n, device="cuda")
da, db, dc = cuda.as_cuda_array(a), cuda.as_cuda_array(b), cuda.as_cuda_array(c)
grid = ((n + T.WBN - 1) // T.WBN, (n + T.WBM - 1) // T.WBM)
run = lambda: warptile[grid, (T.WTHREADS,)](da, db, dc)
ref = lambda: torch.mm(a, b, out=c)
def median_s(fn, calls):
    fn(); cuda.synchronize()
    out = []
    for _ in range(10):
        e0, e1 = cuda.event(), cuda.event()
        e0.record()
        for _ in range(calls):
            fn()
        e1.record(); e1.synchronize()
        out.append(cuda.event_elapsed_time(e0, e1) / 1e3 / calls)
    return statistics.median(out)
run(); cuda.synchronize()
mine = c.clone()
ref(); torch.cuda.synchronize()
err = float(torch.linalg.norm((mine - c).double()) / torch.linalg.norm(c.double()))
t_ref, t_mine, t_ref2 = median_s(ref, 5), median_s(run, 5), median_s(ref, 5)
regs = warptile.get_regs_per_thread()
local = warptile.get_local_mem_per_thread()
print(json.dumps({"tiles": CFG, "size": n, "rel_err": err, "numba_s": t_mine,
                  "cublas_s": min(t_ref, t_ref2), "share": min(t_ref, t_ref2) / t_mine,
                  "regs": regs if isinstance(regs, int) else max(regs.values()),
                  "local_bytes": local if isinstance(local, int) else max(local.values())}))
"""

if __name__ == "__main__":
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "snippets", "matmul")
    path = [os.path.abspath(here), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in path if p)}
    for cfg in CANDIDATES:
        code = CHILD.replace("CFG", repr(cfg)).replace("SIZE", str(size))
        tiles = {"MATMUL_NUMBA_WARPTILE": ",".join(map(str, cfg))}
        proc = subprocess.run([sys.executable, "-c", code], env={**env, **tiles},
                              capture_output=True, text=True, timeout=120)
        line = proc.stdout.strip().splitlines()[-1:] or [""]
        if proc.returncode == 0 and line[0].startswith("{"):
            print(line[0], flush=True)
        else:
            print(json.dumps({"tiles": cfg, "size": size, "failed": proc.stderr.strip()[-400:]}),
                  flush=True)
