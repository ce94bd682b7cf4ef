"""FP32 matrix product C = A @ B in Numba CUDA: seven kernels, from naive to warp-tiled.

Each kernel handles any M, N, K (tiles that overhang the matrices load zeros and skip their
stores). The command line checks one or all kernels against a float64 NumPy reference:

    python snippets/matmul/sgemm_numba.py --kernel all 37 29 23

Without a GPU, set NUMBA_ENABLE_CUDASIM=1: the simulator runs the same kernels on the CPU,
with smaller tiles (it runs one Python thread per GPU thread).
"""

# --8<-- [start:imports]
from __future__ import annotations

import os
import signal
import sys


def interrupted(signum, frame):
    """Ctrl-C, wherever it lands (even inside a slow import below): one line and exit code 130."""
    os.write(2, b"interrupted\n")
    os._exit(130)  # at once: an exception raised here could land in a C extension or be ignored


if __name__ == "__main__":
    signal.signal(signal.SIGINT, interrupted)

import argparse
import math

import numpy as np
from llvmlite import ir
from numba import config, cuda, float32, int32, types
from numba.cuda import cgutils
from numba.cuda.extending import intrinsic
# --8<-- [end:imports]

SIMULATOR = bool(config.ENABLE_CUDASIM)


def number(kind, low, high):
    """An argparse type: a `kind` (int or float) from low to high; anything else is a one-line error."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {'a whole number' if kind is int else 'a number'}: {text!r}") from None
        if not low <= value <= high:  # false for nan too
            raise argparse.ArgumentTypeError(f"must be from {low} to {high}, got {text}")
        return value
    return parse


# --8<-- [start:tiles]
# Tile sizes are module constants: Numba compiles them into the kernels as literals, so
# cuda.shared.array / cuda.local.array get fixed sizes and loops over them can be unrolled.
if not SIMULATOR:
    TILE = 32                                  # smem: 32x32 tile, one thread per element
    BM1, BN1, BK1, TM1 = 64, 64, 8, 8          # blocktile_1d: 512 threads, 8 results each
    BM, BN, BK, TM, TN = 128, 128, 8, 8, 8     # blocktile_2d, vectorized: 256 threads, 8x8 each
    WBM, WBN, WBK, WM, WN = 128, 128, 8, 64, 32    # warptile: block, warp tiles (BK 8: tuned)
    WMITER, WNITER, WTM, WTN = 2, 2, 4, 4      # warptile: 2x2 sub-tiles of 4x4 per lane
else:  # the CUDA simulator: same code, small tiles, so that CI runs in seconds
    TILE = 8
    BM1, BN1, BK1, TM1 = 8, 8, 2, 4
    BM, BN, BK, TM, TN = 16, 16, 4, 4, 4
    WBM, WBN, WBK, WM, WN = 16, 16, 4, 16, 8
    WMITER, WNITER, WTM, WTN = 2, 1, 4, 4
# --8<-- [end:tiles]

THREADS_1D = BM1 * BN1 // TM1
THREADS_2D = (BM // TM) * (BN // TN)
PAD = 4                                     # shared-memory row padding against bank conflicts
WSUBM, WSUBN = WM // WMITER, WN // WNITER
# Shapes of shared and local arrays must be plain constants, not expressions: name them here.
AS_COLS = BM + PAD                          # vectorized: padded row of the transposed A tile
WAS_COLS = WBM + PAD                        # warptile: the same
WACC_M, WACC_N = WMITER * WTM, WNITER * WTN  # warptile: results per lane
WLANES_N = WSUBN // WTN                     # lanes along one row of a warp's sub-tile
WARP = 32 if not SIMULATOR else (WSUBM // WTM) * WLANES_N
WTHREADS = (WBM // WM) * (WBN // WN) * WARP
A_LOADS = WBM * WBK // 4 // WTHREADS        # float4s of A each thread copies per step
B_LOADS = WBK * WBN // 4 // WTHREADS
# At most 128 registers per thread, so that two warptile blocks fit on an SM (the simulator's
# cuda.jit takes no launch_bounds).
WARPTILE_OPTIONS = {"launch_bounds": (WTHREADS, 2)} if not SIMULATOR else {}
ALIGN = 16 if not SIMULATOR else None      # shared tiles read 16 bytes at a time (see load4)
# The copy loops assume every thread copies the same number of elements of each tile.
assert BM1 * BK1 == THREADS_1D == BK1 * BN1
assert BM * BK == 4 * THREADS_2D == BK * BN and BK % 4 == 0
assert (WSUBM // WTM) * WLANES_N == WARP and A_LOADS * WTHREADS * 4 == WBM * WBK
assert B_LOADS * WTHREADS * 4 == WBK * WBN and WTM % 4 == 0 and WTN % 4 == 0


# --8<-- [start:naive]
@cuda.jit(device=True, fastmath=True)
def dot(a, b, row, col):
    """Row `row` of A times column `col` of B: the K multiply-adds of one element of C."""
    acc = float32(0.0)
    for k in range(a.shape[1]):
        acc += a[row, k] * b[k, col]
    return acc


@cuda.jit(fastmath=True)
def naive(a, b, c):
    # threadIdx.x walks down a column of C: neighbouring threads read rows of A K floats apart.
    row = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    col = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < c.shape[0] and col < c.shape[1]:
        c[row, col] = dot(a, b, row, col)
# --8<-- [end:naive]


# --8<-- [start:coalesced]
@cuda.jit(fastmath=True)
def coalesced(a, b, c):
    # threadIdx.x walks along a row of C: a warp reads 32 neighbouring floats of B at once.
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < c.shape[0] and col < c.shape[1]:
        c[row, col] = dot(a, b, row, col)
# --8<-- [end:coalesced]


# --8<-- [start:smem]
@cuda.jit(fastmath=True)
def smem(a, b, c):
    M, K = a.shape
    N = b.shape[1]
    As = cuda.shared.array((TILE, TILE), float32)
    Bs = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = float32(0.0)
    for k0 in range(0, K, TILE):
        # Elements outside the matrices are loaded as zeros: no special case in the tile loop.
        As[ty, tx] = a[row, k0 + tx] if row < M and k0 + tx < K else float32(0.0)
        Bs[ty, tx] = b[k0 + ty, col] if k0 + ty < K and col < N else float32(0.0)
        cuda.syncthreads()          # the tiles are complete before anyone reads them
        for kk in range(TILE):
            acc += As[ty, kk] * Bs[kk, tx]
        cuda.syncthreads()          # everyone is done before the next tiles overwrite them
    if row < M and col < N:
        c[row, col] = acc
# --8<-- [end:smem]


# --8<-- [start:blocktile_1d]
@cuda.jit(fastmath=True)
def blocktile_1d(a, b, c):
    M, K = a.shape
    N = b.shape[1]
    As = cuda.shared.array((BM1, BK1), float32)
    Bs = cuda.shared.array((BK1, BN1), float32)
    acc = cuda.local.array(TM1, float32)       # TM1 results per thread, kept in registers
    t = cuda.threadIdx.x
    tcol, trow = t % BN1, t // BN1
    row0, col0 = cuda.blockIdx.y * BM1, cuda.blockIdx.x * BN1
    ar, ac = t // BK1, t % BK1
    br, bc = t // BN1, t % BN1
    for i in range(TM1):
        acc[i] = 0.0
    for k0 in range(0, K, BK1):
        As[ar, ac] = a[row0 + ar, k0 + ac] if row0 + ar < M and k0 + ac < K else float32(0.0)
        Bs[br, bc] = b[k0 + br, col0 + bc] if k0 + br < K and col0 + bc < N else float32(0.0)
        cuda.syncthreads()
        for kk in range(BK1):
            bv = Bs[kk, tcol]                  # one value of B, reused TM1 times
            for i in range(TM1):
                acc[i] += As[trow * TM1 + i, kk] * bv
        cuda.syncthreads()
    for i in range(TM1):
        r, cc = row0 + trow * TM1 + i, col0 + tcol
        if r < M and cc < N:
            c[r, cc] = acc[i]
# --8<-- [end:blocktile_1d]


# --8<-- [start:blocktile_2d]
@cuda.jit(fastmath=True)
def blocktile_2d(a, b, c):
    M, K = a.shape
    N = b.shape[1]
    As = cuda.shared.array((BM, BK), float32)
    Bs = cuda.shared.array((BK, BN), float32)
    acc = cuda.local.array((TM, TN), float32)  # an 8x8 tile of C per thread
    a_reg = cuda.local.array(TM, float32)
    b_reg = cuda.local.array(TN, float32)
    t = cuda.threadIdx.x
    trow, tcol = t // (BN // TN), t % (BN // TN)
    row0, col0 = cuda.blockIdx.y * BM, cuda.blockIdx.x * BN
    for i in range(TM):
        for j in range(TN):
            acc[i, j] = 0.0
    for k0 in range(0, K, BK):
        for l in range(BM * BK // THREADS_2D):
            e = t + l * THREADS_2D
            r, cc = e // BK, e % BK
            As[r, cc] = a[row0 + r, k0 + cc] if row0 + r < M and k0 + cc < K else float32(0.0)
        for l in range(BK * BN // THREADS_2D):
            e = t + l * THREADS_2D
            r, cc = e // BN, e % BN
            Bs[r, cc] = b[k0 + r, col0 + cc] if k0 + r < K and col0 + cc < N else float32(0.0)
        cuda.syncthreads()
        for kk in range(BK):
            for i in range(TM):
                a_reg[i] = As[trow * TM + i, kk]
            for j in range(TN):
                b_reg[j] = Bs[kk, tcol * TN + j]
            for i in range(TM):                # the outer product: TM*TN multiply-adds
                for j in range(TN):
                    acc[i, j] += a_reg[i] * b_reg[j]
        cuda.syncthreads()
    for i in range(TM):
        for j in range(TN):
            r, cc = row0 + trow * TM + i, col0 + tcol * TN + j
            if r < M and cc < N:
                c[r, cc] = acc[i, j]
# --8<-- [end:blocktile_2d]


# --8<-- [start:wide]
# Numba has no float4: arrays hold scalars, and NVVM does not merge four scalar loads into one,
# since it cannot prove they are 16-byte aligned. numba-cuda's @intrinsic lets a few lines of
# Python emit the LLVM IR for one <4 x float> load or store with 16-byte alignment, which
# becomes ld.global.v4.f32 / ld.shared.v4.f32 in the PTX. The caller guarantees alignment:
# j a multiple of 4, rows a multiple of 4 floats long, the array 16-byte aligned (device
# arrays are; shared arrays are declared with alignment=ALIGN). The simulator gets plain Python.
F4 = types.UniTuple(float32, 4)


def _vector_pointer(context, builder, sig, args):
    arrty, ity, jty = sig.args[:3]
    ary = context.make_array(arrty)(context, builder, value=args[0])
    idx = [context.cast(builder, args[1], ity, types.intp),
           context.cast(builder, args[2], jty, types.intp)]
    ptr = cgutils.get_item_pointer(context, builder, arrty, ary, idx, wraparound=False)
    return builder.bitcast(ptr, ir.VectorType(ir.FloatType(), 4).as_pointer(ptr.type.addrspace))


if not SIMULATOR:
    @intrinsic
    def load4(typingctx, arr, i, j):
        """arr[i, j:j+4] as one 16-byte load."""
        def codegen(context, builder, sig, args):
            vec = builder.load(_vector_pointer(context, builder, sig, args), align=16)
            return context.make_tuple(builder, F4, [
                builder.extract_element(vec, ir.Constant(ir.IntType(32), q)) for q in range(4)])
        return F4(arr, i, j), codegen

    @intrinsic
    def store4(typingctx, arr, i, j, v):
        """arr[i, j:j+4] = v (four float32) as one 16-byte store."""
        def codegen(context, builder, sig, args):
            vec = ir.Constant(ir.VectorType(ir.FloatType(), 4), None)
            for q in range(4):
                vec = builder.insert_element(vec, builder.extract_value(args[3], q),
                                             ir.Constant(ir.IntType(32), q))
            builder.store(vec, _vector_pointer(context, builder, sig, args), align=16)
            return context.get_dummy_value()
        return types.void(arr, i, j, v), codegen
else:
    def load4(arr, i, j):
        return (arr[i, j], arr[i, j + 1], arr[i, j + 2], arr[i, j + 3])

    def store4(arr, i, j, v):
        for q in range(4):
            arr[i, j + q] = v[q]


@cuda.jit(device=True, inline=True)
def fetch4(x, r, c, vec_ok):
    """x[r, c:c+4] with one 16-byte load when allowed and inside; zeros outside the matrix."""
    rows, cols = x.shape
    if r < rows and vec_ok and c + 3 < cols:
        return load4(x, r, c)
    v0 = x[r, c] if r < rows and c < cols else float32(0.0)
    v1 = x[r, c + 1] if r < rows and c + 1 < cols else float32(0.0)
    v2 = x[r, c + 2] if r < rows and c + 2 < cols else float32(0.0)
    v3 = x[r, c + 3] if r < rows and c + 3 < cols else float32(0.0)
    return (v0, v1, v2, v3)
# --8<-- [end:wide]


# --8<-- [start:vectorized]
@cuda.jit(fastmath=True)
def vectorized(a, b, c):
    # A's tile is stored transposed (As[k, m]) and padded, so the TM values of A a thread needs
    # for one k are contiguous in shared memory, like B's: both come in as 16-byte loads.
    # Each thread copies one float4 of A and one of B per step.
    M, K = a.shape
    N = b.shape[1]
    As = cuda.shared.array((BK, AS_COLS), float32, alignment=ALIGN)
    Bs = cuda.shared.array((BK, BN), float32, alignment=ALIGN)
    acc = cuda.local.array((TM, TN), float32)
    a_reg = cuda.local.array(TM, float32)
    b_reg = cuda.local.array(TN, float32)
    t = cuda.threadIdx.x
    trow, tcol = t // (BN // TN), t % (BN // TN)
    row0, col0 = cuda.blockIdx.y * BM, cuda.blockIdx.x * BN
    a_vec, b_vec = K % 4 == 0, N % 4 == 0
    ar, ac = t // int32(BK // 4), (t % int32(BK // 4)) * int32(4)
    br, bc = t // int32(BN // 4), (t % int32(BN // 4)) * int32(4)
    for i in range(TM):
        for j in range(TN):
            acc[i, j] = 0.0
    for k0 in range(0, K, BK):
        v = fetch4(a, row0 + ar, k0 + ac, a_vec)
        for q in range(4):
            As[ac + q, ar] = v[q]              # transposed on the way in
        store4(Bs, br, bc, fetch4(b, k0 + br, col0 + bc, b_vec))
        cuda.syncthreads()
        for kk in range(BK):
            for i in range(0, TM, 4):
                v = load4(As, kk, trow * TM + i)
                for q in range(4):
                    a_reg[i + q] = v[q]
            for j in range(0, TN, 4):
                v = load4(Bs, kk, tcol * TN + j)
                for q in range(4):
                    b_reg[j + q] = v[q]
            for i in range(TM):
                for j in range(TN):
                    acc[i, j] += a_reg[i] * b_reg[j]
        cuda.syncthreads()
    for i in range(TM):
        r = row0 + trow * TM + i
        if r < M:
            for j in range(TN):
                cc = col0 + tcol * TN + j
                if cc < N:
                    c[r, cc] = acc[i, j]
# --8<-- [end:vectorized]


# --8<-- [start:warptile]
@cuda.jit(fastmath=True, **WARPTILE_OPTIONS)
def warptile(a, b, c):
    # Warp tiling plus double buffering, as in the CUDA C kernel: each warp owns a WM x WN piece
    # of the block's tile, split into WMITER x WNITER sub-tiles in which lane (lr, lc) computes
    # WTM x WTN results. The float4s of tile k+1 are loaded into registers before tile k is
    # multiplied and stored into the other shared buffer after it.
    M, K = a.shape
    N = b.shape[1]
    As = cuda.shared.array((2, WBK, WAS_COLS), float32, alignment=ALIGN)
    Bs = cuda.shared.array((2, WBK, WBN), float32, alignment=ALIGN)
    acc = cuda.local.array((WACC_M, WACC_N), float32)
    a_reg = cuda.local.array(WACC_M, float32)
    b_reg = cuda.local.array(WACC_N, float32)
    a_stage = cuda.local.array((A_LOADS, 4), float32)
    b_stage = cuda.local.array((B_LOADS, 4), float32)
    t = int32(cuda.threadIdx.x)
    warp, lane = t // int32(WARP), t % int32(WARP)
    wrow, wcol = warp // int32(WBN // WN), warp % int32(WBN // WN)
    lr, lc = lane // int32(WLANES_N), lane % int32(WLANES_N)
    row0, col0 = int32(cuda.blockIdx.y * WBM), int32(cuda.blockIdx.x * WBN)
    a_vec, b_vec = K % 4 == 0, N % 4 == 0
    for i in range(WACC_M):
        for j in range(WACC_N):
            acc[i, j] = 0.0
    buf = 0
    for k0 in range(-WBK, K, WBK):             # the first trip only loads tile 0
        k1 = k0 + WBK
        if k1 < K:                             # tile k1 into registers, 16 bytes at a time
            for l in range(A_LOADS):
                e = t + l * WTHREADS
                v = fetch4(a, row0 + e // (WBK // 4), k1 + (e % (WBK // 4)) * 4, a_vec)
                for q in range(4):
                    a_stage[l, q] = v[q]
            for l in range(B_LOADS):
                e = t + l * WTHREADS
                v = fetch4(b, k1 + e // (WBN // 4), col0 + (e % (WBN // 4)) * 4, b_vec)
                for q in range(4):
                    b_stage[l, q] = v[q]
        if k0 >= 0:
            for kk in range(WBK):              # multiply tile k0
                for wm in range(WMITER):
                    for i in range(0, WTM, 4):
                        v = load4(As[buf], kk, wrow * WM + wm * WSUBM + lr * WTM + i)
                        for q in range(4):
                            a_reg[wm * WTM + i + q] = v[q]
                for wn in range(WNITER):
                    for j in range(0, WTN, 4):
                        v = load4(Bs[buf], kk, wcol * WN + wn * WSUBN + lc * WTN + j)
                        for q in range(4):
                            b_reg[wn * WTN + j + q] = v[q]
                for i in range(WACC_M):
                    for j in range(WACC_N):
                        acc[i, j] += a_reg[i] * b_reg[j]
            buf = 1 - buf
        if k1 < K:                             # park tile k1 in the other buffer
            for l in range(A_LOADS):
                e = t + l * WTHREADS
                r, cc = e // (WBK // 4), (e % (WBK // 4)) * 4
                for q in range(4):
                    As[buf, cc + q, r] = a_stage[l, q]
            for l in range(B_LOADS):
                e = t + l * WTHREADS
                store4(Bs[buf], e // (WBN // 4), (e % (WBN // 4)) * 4,
                       (b_stage[l, 0], b_stage[l, 1], b_stage[l, 2], b_stage[l, 3]))
        cuda.syncthreads()
    for wm in range(WMITER):
        for i in range(WTM):
            r = row0 + wrow * WM + wm * WSUBM + lr * WTM + i
            if r < M:
                for wn in range(WNITER):
                    for j in range(WTN):
                        cc = col0 + wcol * WN + wn * WSUBN + lc * WTN + j
                        if cc < N:
                            c[r, cc] = acc[wm * WTM + i, wn * WTN + j]
# --8<-- [end:warptile]


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
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    side = number(int, 1, 16384)
    parser.add_argument("m", type=side, nargs="?", default=256, help="rows of A and C")
    parser.add_argument("n", type=side, nargs="?", help="columns of B and C (default: m)")
    parser.add_argument("k", type=side, nargs="?", help="columns of A, rows of B (default: m)")
    parser.add_argument("--kernel", default="all", choices=["all", *KERNELS],
                        help="which kernel to check (default: all)")
    args = parser.parse_args(argv)
    m = args.m
    n = args.n if args.n is not None else m
    k = args.k if args.k is not None else m
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
