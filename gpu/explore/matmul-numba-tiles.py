"""Tuning run (any GPU): the Numba warp-tile kernel at several tile sizes, at every size of the
benchmark.

sgemm_numba_07_warptile.py takes its tile sizes from sgemm_numba_tiles.py as module constants.
For each candidate this script starts a fresh process with the tiles in MATMUL_NUMBA_WARPTILE
(read by sgemm_numba_tiles.py before the kernel is compiled); at each size it checks the kernel
against cuBLAS FP32 through PyTorch (relative Frobenius error) and times both with CUDA events
(median of 10 samples of enough calls to fill about 2 ms, after a warm-up), printing one JSON
line per (candidate, size):

    {"tiles": [...], "size": [M, N, K], "ok": bool, "rel_err": e, "numba_s": t, "cublas_s": t0,
     "share": t0 / t, "regs": r, "local_bytes": b}        (or "failed": the error's end)

gpu/matmul.sh publishes, at each size, the checked tile with the highest share (`best` in
snippets/matmul/launchers.py). No candidate starts after --budget seconds.

    python3 gpu/explore/matmul-numba-tiles.py [--budget SECONDS] > tiles.jsonl
"""

import argparse
import json
import os
import subprocess
import sys
import time

# (WBM, WBN, WBK, WM, WN, WMITER, WNITER, WTM, WTN, blocks per SM for launch_bounds)
# In this order: those left when the budget runs out are not tried.
CANDIDATES = [(128, 256, 16, 64, 64, 1, 2, 8, 8, 1),    # the CUDA C kernel's tiles, 128 a lane
              # smaller block tiles, more blocks for small sizes (1024^2: 128 and 256 blocks)
              (64, 128, 16, 32, 64, 1, 2, 8, 4, 4),     # 64 results a lane, 4 warps
              (64, 64, 16, 32, 32, 1, 1, 8, 4, 4),      # 32 a lane, 4 warps
              (128, 128, 16, 64, 64, 2, 2, 8, 4, 2),    # 128 a lane, 4 warps
              (128, 64, 16, 64, 32, 2, 1, 8, 4, 4),     # 64 a lane, 4 warps
              (128, 128, 8, 64, 32, 2, 2, 4, 4, 2)]     # 64 a lane, 8 warps (published before)
SIZES = [(1024,) * 3, (2048,) * 3, (4096,) * 3, (3001, 4099, 2053), (8192,) * 3]

CHILD = r"""
import json, statistics, sys, time
import sgemm_numba_tiles as T
import torch
from numba import cuda
from sgemm_numba_07_warptile import warptile
torch.backends.cuda.matmul.allow_tf32 = False

def median_s(fn):
    fn(); cuda.synchronize()
    t0 = time.perf_counter(); fn(); cuda.synchronize()
    calls = max(1, min(200, int(2e-3 / max(time.perf_counter() - t0, 1e-6))))
    out = []
    for _ in range(10):
        e0, e1 = cuda.event(), cuda.event()
        e0.record()
        for _ in range(calls):
            fn()
        e1.record(); e1.synchronize()
        out.append(cuda.event_elapsed_time(e0, e1) / 1e3 / calls)
    return statistics.median(out)

for m, n, k in SIZES:
    a = torch.rand(m, k, device="cuda") * 2 - 1
    b = torch.rand(k, n, device="cuda") * 2 - 1
    c = torch.full((m, n), float("nan"), device="cuda")
    da, db, dc = cuda.as_cuda_array(a), cuda.as_cuda_array(b), cuda.as_cuda_array(c)
    grid = ((n + T.WBN - 1) // T.WBN, (m + T.WBM - 1) // T.WBM)
    run = lambda: warptile[grid, (T.WTHREADS,)](da, db, dc)
    ref = lambda: torch.mm(a, b, out=c)
    run(); cuda.synchronize()
    mine = c.clone()
    ref(); torch.cuda.synchronize()
    err = float(torch.linalg.norm((mine - c).double()) / torch.linalg.norm(c.double()))
    err = err if err == err else 1e300  # NaN: an element never written
    t_ref, t_mine, t_ref2 = median_s(ref), median_s(run), median_s(ref)
    regs = warptile.get_regs_per_thread()
    local = warptile.get_local_mem_per_thread()
    print(json.dumps({"tiles": CFG, "size": [m, n, k], "ok": err < 1e-5, "rel_err": err,
                      "numba_s": t_mine, "cublas_s": min(t_ref, t_ref2),
                      "share": min(t_ref, t_ref2) / t_mine,
                      "regs": regs if isinstance(regs, int) else max(regs.values()),
                      "local_bytes": local if isinstance(local, int) else max(local.values())}),
          flush=True)
    del a, b, c, mine, da, db, dc
"""

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=80.0,
                        help="seconds after which no new candidate starts (default 80)")
    args = parser.parse_args()
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "snippets",
                        "matmul")
    path = [os.path.abspath(here), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in path if p)}
    start = time.monotonic()
    for cfg in CANDIDATES:
        left = args.budget - (time.monotonic() - start)
        if left <= 0:
            print(f"budget of {args.budget:g} s spent: {cfg} not run", file=sys.stderr)
            continue
        code = CHILD.replace("CFG", repr(list(cfg))).replace("SIZES", repr(SIZES))
        tiles = {"MATMUL_NUMBA_WARPTILE": ",".join(map(str, cfg))}
        try:
            proc = subprocess.run([sys.executable, "-c", code], env={**env, **tiles},
                                  capture_output=True, text=True, timeout=max(left, 20))
            out, err, rc = proc.stdout, proc.stderr, proc.returncode
        except subprocess.TimeoutExpired as exc:
            out, err, rc = exc.stdout or "", "timed out", 124
            out = out.decode() if isinstance(out, bytes) else out
        done = [line for line in out.splitlines() if line.startswith("{")]
        for line in done:
            print(line, flush=True)
        if rc != 0 or len(done) < len(SIZES):  # the sizes it did not reach
            for m, n, k in SIZES[len(done):]:
                print(json.dumps({"tiles": list(cfg), "size": [m, n, k], "ok": False,
                                  "failed": err.strip()[-400:] or f"exit {rc}"}), flush=True)
