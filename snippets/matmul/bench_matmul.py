"""Benchmark the SGEMM kernels (Numba and, if built, CUDA C) against cuBLAS; write a results file.

For every size: draw random inputs, compute a float64 reference on the GPU, check each kernel
(NaN-poisoned output, relative Frobenius error within float32 bounds), then time it with CUDA
events. cuBLAS runs through PyTorch (FP32 with TF32 off, TF32, BF16) or, without PyTorch,
CuPy (FP32 only); the CUDA C binary times its kernels against its own cublasSgemm call.

    python snippets/matmul/bench_matmul.py --sizes 1024 4096 3001x4099x2053 \\
        --cuda-binary build/sgemm --out matmul-results.json
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from numba import config, cuda, float32, float64

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench import results, system, timing  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sgemm_numba as sg  # noqa: E402

SIMULATOR = bool(config.ENABLE_CUDASIM)
# Accuracy bounds for the library's reduced-precision modes (relative Frobenius error against
# the float64 product of the same float32 inputs; their inputs are rounded to 10 and 7 bits).
TOLERANCE = {"tf32": 2e-3, "bf16": 1.5e-2}
FAILED: list[str] = []  # kernels that failed their check: named in the notes, never timed


# --8<-- [start:reference]
@cuda.jit
def reference_f64(a, b, r):
    """r = a @ b accumulated in float64, tiled through shared memory (16 x 16)."""
    As = cuda.shared.array((16, 16), float64)
    Bs = cuda.shared.array((16, 16), float64)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * 16 + ty, cuda.blockIdx.x * 16 + tx
    M, K = a.shape
    N = b.shape[1]
    acc = float64(0.0)
    for k0 in range(0, K, 16):
        As[ty, tx] = a[row, k0 + tx] if row < M and k0 + tx < K else 0.0
        Bs[ty, tx] = b[k0 + ty, col] if k0 + ty < K and col < N else 0.0
        cuda.syncthreads()
        for kk in range(16):
            acc += As[ty, kk] * Bs[kk, tx]
        cuda.syncthreads()
    if row < M and col < N:
        r[row, col] = acc


@cuda.jit
def error_sums(c, r, sums):
    """sums += [sum (c - r)^2, sum r^2, count of non-finite c] over a 2-D grid-stride loop."""
    x0, y0 = cuda.grid(2)
    sx, sy = cuda.gridsize(2)
    d2 = float64(0.0)
    r2 = float64(0.0)
    bad = float64(0.0)
    for i in range(y0, c.shape[0], sy):
        for j in range(x0, c.shape[1], sx):
            v = float64(c[i, j])
            if math.isfinite(v):
                d2 += (v - r[i, j]) ** 2
            else:
                bad += 1.0
            r2 += r[i, j] ** 2
    cuda.atomic.add(sums, 0, d2)
    cuda.atomic.add(sums, 1, r2)
    cuda.atomic.add(sums, 2, bad)


def relative_error(d_c, d_ref) -> float:
    """||C - R|| / ||R||, infinite if C holds any NaN or inf (an element never written)."""
    sums = cuda.to_device(np.zeros(3))
    error_sums[(32, 32) if not SIMULATOR else (2, 2), (16, 16) if not SIMULATOR else (4, 4)](
        d_c, d_ref, sums)
    d2, r2, bad = sums.copy_to_host()
    return math.inf if bad > 0 else math.sqrt(d2 / r2)
# --8<-- [end:reference]


def tflops(flops: float, seconds: float) -> float:
    return flops / seconds / 1e12


def timed(fn, budget_s: float, max_repeats: int) -> timing.Stats:
    """One run to estimate (and warm up), then repeat within about budget_s (3 to N runs)."""
    one = timing.time_cuda(fn, repeats=1, warmup=0).median_s
    repeats = int(min(max_repeats, max(3, budget_s // max(one, 1e-9))))
    return timing.time_cuda(fn, repeats=repeats, warmup=0)


def cublas_variants():
    """[(variant, precision, function(a, b, c) -> None)] for the cuBLAS library on this machine."""
    if SIMULATOR:
        return []
    try:
        import torch

        if not torch.cuda.is_available():
            raise ImportError
    except ImportError:
        torch = None
    if torch is not None:
        def fp32(a, b, c, tf32=False):
            torch.backends.cuda.matmul.allow_tf32 = tf32
            torch.matmul(a, b, out=c)

        def bf16(a, b, c):
            torch.matmul(a, b, out=c)

        return [("torch", "fp32", fp32), ("torch", "tf32", lambda a, b, c: fp32(a, b, c, True)),
                ("torch", "bf16", bf16)]
    try:
        import cupy

        return [("cupy", "fp32", lambda a, b, c: cupy.matmul(a, b, out=c))]
    except ImportError:
        return []


def bench_cublas(d_a, d_b, d_ref, params, budget_s, max_repeats, flops, nbytes, out):
    for lib, precision, fn in cublas_variants():
        if lib == "torch":
            import torch

            a = torch.as_tensor(d_a, device="cuda")
            b = torch.as_tensor(d_b, device="cuda")
            if precision == "bf16":
                a, b = a.to(torch.bfloat16), b.to(torch.bfloat16)
            c = torch.full((a.shape[0], b.shape[1]), float("nan"), dtype=a.dtype, device="cuda")
            fn(a, b, c)
            torch.cuda.synchronize()
            err = relative_error(cuda.as_cuda_array(c.float()), d_ref)
        else:
            import cupy

            a, b = cupy.asarray(d_a), cupy.asarray(d_b)
            c = cupy.full((a.shape[0], b.shape[1]), cupy.nan, dtype=cupy.float32)
            fn(a, b, c)
            err = relative_error(cuda.as_cuda_array(c), d_ref)
        bound = TOLERANCE.get(precision, sg.tolerance(params["k"]))
        stats = timed(lambda: fn(a, b, c), budget_s, max_repeats)
        out.append(results.measurement(
            "sgemm", f"cublas_{precision}", "gpu", "kernel", stats, params=params, flops=flops,
            bytes=nbytes if precision != "bf16" else nbytes // 2, library=lib,
            error={"metric": "relative_frobenius", "value": err, "bound": bound,
                   "passed": err <= bound}))


def bench_numba(names, d_a, d_b, d_ref, params, budget_s, max_repeats, flops, nbytes, out):
    m, n, k = params["m"], params["n"], params["k"]
    bound = sg.tolerance(k)
    for name in names:
        d_c = cuda.to_device(np.full((m, n), np.nan, dtype=np.float32))
        t0 = time.perf_counter()
        sg.matmul(name, d_a, d_b, d_c)  # the first call compiles (for these argument types)
        cuda.synchronize()
        first_s = time.perf_counter() - t0
        err = relative_error(d_c, d_ref)
        record = dict(params=params, flops=flops, bytes=nbytes, first_call_s=round(first_s, 4),
                      error={"metric": "relative_frobenius", "value": err, "bound": bound,
                             "passed": err <= bound})
        if err > bound:  # a wrong kernel is recorded as failed and never timed
            print(f"FAILED: numba/{name} at {m}x{n}x{k}: relative error {err:.2e}",
                  file=sys.stderr)
            FAILED.append(f"numba/{name} at {m}x{n}x{k}: relative error {err:.2e} > {bound:.1e}")
            continue
        stats = timed(lambda: sg.matmul(name, d_a, d_b, d_c), budget_s, max_repeats)
        out.append(results.measurement("sgemm", f"numba/{name}", "gpu", "kernel", stats,
                                       **record))


def bench_cuda_c(binary, sizes, budget_s, max_repeats, out) -> str | None:
    """Run the CUDA C binary on all sizes; returns an error message or None."""
    with tempfile.TemporaryDirectory() as tmp:
        table = Path(tmp) / "sgemm.csv"
        cmd = [str(binary), "--repeats", str(max_repeats), "--budget", str(budget_s),
               "--csv", str(table), *[f"{m}x{n}x{k}" for m, n, k in sizes]]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        sys.stderr.write(proc.stdout)
        if not table.exists():
            return f"{binary} wrote no results: {proc.stderr.strip()}"
        rows = list(csv.DictReader(table.open()))
    for row in rows:
        m, n, k = int(row["m"]), int(row["n"]), int(row["k"])
        err = float(row["rel_error"])
        bound = sg.tolerance(k)
        stats = {key: float(row[key]) for key in ("median_s", "min_s", "max_s")}
        stats |= {"repeats": int(row["repeats"]), "clock": "cuda-event",
                  "spread": round(stats["max_s"] / stats["min_s"], 4)}
        name = "cublas_fp32" if row["kernel"] == "cublas" else row["kernel"]
        out.append(results.measurement(
            "sgemm", f"cuda_c/{name}", "gpu", "kernel", stats,
            params={"m": m, "n": n, "k": k}, flops=2 * m * n * k,
            bytes=4 * (m * k + k * n + m * n), library="cublas" if name == "cublas_fp32" else None,
            error={"metric": "relative_frobenius", "value": err, "bound": bound,
                   "passed": err <= bound}))
    return None if proc.returncode == 0 else f"{binary} exited {proc.returncode}"


def parse_size(text: str) -> tuple[int, int, int]:
    parts = text.lower().split("x")
    if len(parts) not in (1, 3) or not all(p.isdigit() for p in parts):
        raise argparse.ArgumentTypeError(f"size must be N or MxNxK, got {text!r}")
    m, n, k = (int(parts[0]),) * 3 if len(parts) == 1 else map(int, parts)
    if not 1 <= min(m, n, k) <= max(m, n, k) <= 32768:
        raise argparse.ArgumentTypeError(f"each dimension must be 1..32768, got {text!r}")
    return m, n, k


def summary(measurements: list[dict]) -> str:
    """The table printed last: TFLOP/s and fraction of cuBLAS FP32 from the same run."""
    base = {}
    for m in measurements:
        if m["phase"] == "kernel" and m["variant"] in ("cublas_fp32", "cuda_c/cublas_fp32"):
            base[(m["variant"].startswith("cuda_c"), tuple(m["params"].values()))] = m["median_s"]
    lines = [f"{'size':17s} {'variant':24s} {'ms':>9s} {'TFLOP/s':>8s} {'% cuBLAS':>8s}"]
    for m in measurements:
        p = m["params"]
        size = f"{p['m']}x{p['n']}x{p['k']}"
        ref = base.get((m["variant"].startswith("cuda_c"), tuple(p.values())))
        pct = f"{100 * ref / m['median_s']:8.1f}" if ref else f"{'-':>8s}"
        ok = "" if m["error"]["passed"] else "  FAILED"
        lines.append(f"{size:17s} {m['variant']:24s} {m['median_s'] * 1e3:9.3f} "
                     f"{tflops(m['flops'], m['median_s']):8.2f} {pct}{ok}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    parser.add_argument("--sizes", nargs="+", type=parse_size,
                        default=[parse_size(s) for s in ("1024", "2048", "4096")],
                        help="N (square) or MxNxK; default 1024 2048 4096")
    parser.add_argument("--kernels", nargs="+", choices=list(sg.KERNELS), default=list(sg.KERNELS),
                        help="Numba kernels to run (default: all)")
    parser.add_argument("--cuda-binary", type=Path,
                        help="the built snippets/matmul/sgemm.cu, run on the same sizes")
    parser.add_argument("--budget", type=float, default=1.0,
                        help="seconds of timed runs per measurement (at least 3 runs)")
    parser.add_argument("--max-repeats", type=int, default=20, help="at most this many runs")
    parser.add_argument("--out", type=Path, default=Path("matmul-results.json"),
                        help="results file to write")
    args = parser.parse_args(argv)
    if args.budget <= 0 or args.max_repeats < 3:
        parser.error("--budget must be positive and --max-repeats at least 3")
    if args.cuda_binary is not None and not os.access(args.cuda_binary, os.X_OK):
        parser.error(f"--cuda-binary {args.cuda_binary} is not an executable file")
    if not SIMULATOR and not cuda.is_available():
        print("error: no CUDA GPU found; to try this on the CPU, set NUMBA_ENABLE_CUDASIM=1",
              file=sys.stderr)
        return 1

    out, notes = [], []
    for m, n, k in args.sizes:
        params = {"m": m, "n": n, "k": k}
        flops, nbytes = 2 * m * n * k, 4 * (m * k + k * n + m * n)
        rng = np.random.default_rng(m * 1_000_003 + n * 1009 + k)
        d_a = cuda.to_device(rng.uniform(-1, 1, (m, k)).astype(np.float32))
        d_b = cuda.to_device(rng.uniform(-1, 1, (k, n)).astype(np.float32))
        d_ref = cuda.device_array((m, n), dtype=np.float64)
        reference_f64[(sg.ceil_div(n, 16), sg.ceil_div(m, 16)), (16, 16)](d_a, d_b, d_ref)
        bench_cublas(d_a, d_b, d_ref, params, args.budget, args.max_repeats, flops, nbytes, out)
        bench_numba(args.kernels, d_a, d_b, d_ref, params, args.budget, args.max_repeats,
                    flops, nbytes, out)
        print(f"done {m}x{n}x{k}", file=sys.stderr)
    if not cublas_variants():
        notes.append("No cuBLAS measurement: PyTorch or CuPy with a GPU is needed for it.")
    if args.cuda_binary is not None:
        problem = bench_cuda_c(args.cuda_binary, args.sizes, args.budget, args.max_repeats, out)
        if problem:
            notes.append(problem)
    notes.append("Inputs uniform in [-1, 1); each kernel checked against a float64 product on "
                 "the GPU with a NaN-filled output before timing; 1 warm-up run (CUDA C: 1 more); timed runs "
                 f"within {args.budget} s per measurement (3 to {args.max_repeats}); operands "
                 "stay in device memory, not rotated (1024^2 inputs fit in L2).")
    notes += [f"FAILED, not timed: {f}" for f in FAILED]
    results.write_results(args.out, "matmul", system.describe_system(), out, notes)
    print(summary(out))
    failed = FAILED + [m["variant"] for m in out if not m["error"]["passed"]]
    print(f"wrote {args.out}: {len(out)} measurements, {len(failed)} failed")
    return 1 if failed or any("exited" in s for s in notes) else 0


if __name__ == "__main__":
    sys.exit(main())
