"""Tuning run (any GPU): the persistent TMA Triton kernel of matmul_triton.py in every config of its
size class (TMA_CONFIGS), at every size of the benchmark, with cuBLAS BF16 through PyTorch timed
in the same process (as the benchmark's torch/cublas_bf16 row: BF16 output) just before and
after each. Each candidate is checked against cuBLAS on the same BF16 operands in FP32 (no
TF32). Both are timed as replays of a CUDA graph (matmul_tma_graphed; falling back to plain
calls where a graph cannot be made), so that a config's figure is its kernel's and not the
launch from Python, which at the small sizes takes longer than the kernel whatever the config:
CUDA events, median of 10 samples of enough calls to fill about 2 ms, after a warm-up. One JSON
line per (size, config):

    {"size": [M, N, K], "config": [...], "ok": bool, "rel_err": e, "s": t, "cublas_s": t0,
     "share": t0 / t, "graphs": bool}        (or "failed": the error's last line)

gpu/matmul.sh publishes, at each size, the checked config with the highest share (`best` in
snippets/matmul/launchers.py). Stops starting new candidates after --budget seconds.

    python3 gpu/explore/matmul-triton-configs.py [--budget SECONDS] > configs.jsonl
"""

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "snippets", "matmul"))
# In this order: the sizes left when the budget runs out run the default config of their class.
SIZES = [(1024,) * 3, (2048,) * 3, (4096,) * 3, (8192,) * 3, (3001, 4099, 2053)]


def median_s(torch, fn) -> float:
    """Median seconds a call, 10 samples of enough calls to fill about 2 ms each."""
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    calls = max(1, min(200, int(2e-3 / max(time.perf_counter() - t0, 1e-6))))
    out = []
    for _ in range(10):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(calls):
            fn()
        e1.record()
        e1.synchronize()
        out.append(e0.elapsed_time(e1) / 1e3 / calls)
    return statistics.median(out)


def replayed(torch, fn):
    """fn recorded into a CUDA graph, as a function that replays it (fn itself if it cannot be
    recorded), and whether it is a graph."""
    fn()
    torch.cuda.synchronize()
    try:
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            fn()
        return graph.replay, True
    except Exception as exc:  # noqa: BLE001 - time the plain calls instead, and say so
        print(f"no CUDA graph ({exc}); timing plain calls", file=sys.stderr)
        return fn, False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=90.0,
                        help="seconds after which no new candidate starts (default 90)")
    args = parser.parse_args()
    import numpy as np
    import torch

    import matmul_triton as mt

    torch.backends.cuda.matmul.allow_tf32 = False
    print(f"triton {mt.triton.__version__}, torch {torch.__version__}, "
          f"{torch.cuda.get_device_name()}", file=sys.stderr)
    start = time.monotonic()
    for m, n, k in SIZES:
        rng = np.random.default_rng(m + n + k)
        a, b = (rng.uniform(-1, 1, s).astype(np.float32) for s in ((m, k), (k, n)))
        x, y = mt.tma_operands(a, b)
        c = torch.empty((m, n), dtype=torch.float32, device="cuda")
        ref = x.float() @ y.float()  # the same BF16 operands, FP32 products and sums
        out_bf16 = torch.empty((m, n), dtype=torch.bfloat16, device="cuda")
        cublas, graphs = replayed(torch, lambda: torch.mm(x, y, out=out_bf16))
        for config in mt.TMA_CONFIGS["small" if m * n <= 2048 * 2048 else "large"]:
            if time.monotonic() - start > args.budget:
                print(f"budget of {args.budget:g} s spent: {m}x{n}x{k} {config} not run",
                      file=sys.stderr)
                continue
            row = {"size": [m, n, k], "config": list(config)}
            try:
                c.fill_(float("nan"))
                mt.matmul_tma_into(x, y, c, config)
                err = float(torch.linalg.norm((c - ref).double())
                            / torch.linalg.norm(ref.double()))
                before = median_s(torch, cublas)  # cuBLAS just before and after the candidate
                def plain():
                    mt.matmul_tma_into(x, y, c, config)
                run, graphed = replayed(torch, plain) if graphs else (plain, False)
                t = median_s(torch, run)
                ref_s = min(before, median_s(torch, cublas))
                row.update(ok=err < 1e-3, rel_err=err, s=t, cublas_s=ref_s, share=ref_s / t,
                           graphs=graphed)
            except Exception as exc:  # out of shared memory, a compile error: log it, go on
                last = (str(exc).strip().splitlines() or [repr(exc)])[-1]
                row.update(ok=False, failed=last[:300])
            print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
