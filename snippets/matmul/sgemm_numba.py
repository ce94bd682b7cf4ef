"""FP32 matrix product C = A @ B in Numba CUDA: seven kernels, from naive to warp-tiled.

Each kernel is a file of its own beside this one, numbered as the steps of
docs/kernels/matmul.md (sgemm_numba_01_naive.py to sgemm_numba_07_warptile.py; their tile sizes
are in sgemm_numba_tiles.py). Each handles any M, N, K (tiles that overhang the matrices load
zeros and skip their stores). This file launches them and checks one or all against a float64
NumPy reference:

    python snippets/matmul/sgemm_numba.py --kernel all 37 29 23

Without a GPU, set NUMBA_ENABLE_CUDASIM=1: the simulator runs the same kernels on the CPU,
with smaller tiles (it runs one Python thread per GPU thread).
"""

# --8<-- [start:imports]
from __future__ import annotations

import argparse
import math
import sys

import numpy as np
from numba import cuda

from sgemm_numba_01_naive import naive
from sgemm_numba_02_coalesced import coalesced
from sgemm_numba_03_smem import smem
from sgemm_numba_04_blocktile_1d import blocktile_1d
from sgemm_numba_05_blocktile_2d import blocktile_2d
from sgemm_numba_06_vectorized import vectorized
from sgemm_numba_07_warptile import warptile
from sgemm_numba_tiles import (BM, BM1, BN, BN1, SIMULATOR, THREADS_1D, THREADS_2D, TILE, WBM, WBN,
                               WTHREADS)
# --8<-- [end:imports]


# --8<-- [start:launch]
def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def launch_config(name: str, m: int, n: int) -> tuple[tuple, tuple]:
    """(blocks, threads) for kernel `name` and an m x n result."""
    if name == "naive":
        return (ceil_div(m, TILE), ceil_div(n, TILE)), (TILE, TILE)
    if name in ("coalesced", "smem"):
        return (ceil_div(n, TILE), ceil_div(m, TILE)), (TILE, TILE)
    if name == "blocktile_1d":
        return (ceil_div(n, BN1), ceil_div(m, BM1)), (THREADS_1D,)
    if name in ("blocktile_2d", "vectorized"):
        return (ceil_div(n, BN), ceil_div(m, BM)), (THREADS_2D,)
    if name == "warptile":
        return (ceil_div(n, WBN), ceil_div(m, WBM)), (WTHREADS,)
    raise KeyError(name)


KERNELS = {"naive": naive, "coalesced": coalesced, "smem": smem, "blocktile_1d": blocktile_1d,
           "blocktile_2d": blocktile_2d, "vectorized": vectorized, "warptile": warptile}


def matmul(name: str, d_a, d_b, d_c) -> None:
    """Launch kernel `name` on device arrays: d_c (m x n) = d_a (m x k) @ d_b (k x n)."""
    blocks, threads = launch_config(name, d_c.shape[0], d_c.shape[1])
    KERNELS[name][blocks, threads](d_a, d_b, d_c)
# --8<-- [end:launch]


# --8<-- [start:check]
def tolerance(k: int) -> float:
    """float32 rounding grows like sqrt(K) * 2^-24 for random data; allow 8 times that."""
    return 8.0 * math.sqrt(k) * 2.0**-24


def relative_error(c: np.ndarray, ref: np.ndarray) -> float:
    """||C - R|| / ||R|| in float64; infinite if any element is NaN (never written) or inf."""
    c = np.asarray(c, dtype=np.float64)
    if not np.isfinite(c).all():
        return math.inf
    return float(np.linalg.norm(c - ref) / np.linalg.norm(ref))


def make_inputs(m: int, n: int, k: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    return a, b


def run_checked(name: str, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, float]:
    """Run kernel `name` into a NaN-filled C and return (C, relative error vs float64)."""
    d_c = cuda.to_device(np.full((a.shape[0], b.shape[1]), np.nan, dtype=np.float32))
    matmul(name, cuda.to_device(a), cuda.to_device(b), d_c)
    c = d_c.copy_to_host()
    ref = a.astype(np.float64) @ b.astype(np.float64)
    return c, relative_error(c, ref)
# --8<-- [end:check]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Check Numba CUDA SGEMM kernels against a float64 NumPy reference.")
    # A small odd default: every tile overhangs, and the simulator runs it in seconds.
    parser.add_argument("m", type=int, nargs="?", help="rows of A and C (default: 19x13x11)")
    parser.add_argument("n", type=int, nargs="?", help="columns of B and C (default: m)")
    parser.add_argument("k", type=int, nargs="?", help="columns of A, rows of B (default: m)")
    parser.add_argument("--kernel", default="all", choices=["all", *KERNELS],
                        help="which kernel to check (default: all)")
    args = parser.parse_args(argv)
    m, n, k = (19, 13, 11) if args.m is None else (args.m, args.n or args.m, args.k or args.m)
    if not 1 <= min(m, n, k) <= max(m, n, k) <= 16384:
        parser.error("M, N and K must be from 1 to 16384")
    if not SIMULATOR and not cuda.is_available():
        print("error: no CUDA GPU found; to try this on the CPU, set NUMBA_ENABLE_CUDASIM=1",
              file=sys.stderr)
        return 1
    a, b = make_inputs(m, n, k)
    failed = 0
    for name in KERNELS if args.kernel == "all" else [args.kernel]:
        _, err = run_checked(name, a, b)
        ok = err <= tolerance(k)
        failed += not ok
        print(f"{name:13s} {m}x{n}x{k}: relative error {err:.1e} "
              f"{'OK' if ok else 'FAILED'} (bound {tolerance(k):.1e})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
