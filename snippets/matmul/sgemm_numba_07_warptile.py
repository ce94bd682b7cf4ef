"""Step 7 in Numba: warp tiles and double buffering, with step 6's 16-byte loads."""

# --8<-- [start:imports]
from numba import cuda, float32, int32

from sgemm_numba_06_vectorized import fetch4, load4, store4
from sgemm_numba_tiles import (A_LOADS, ALIGN, B_LOADS, WACC_M, WACC_N, WARP, WARPTILE_OPTIONS,
                               WAS_COLS, WBK, WBM, WBN, WLANES_N, WM, WMITER, WN, WNITER, WSUBM,
                               WSUBN, WTHREADS, WTM, WTN)
# --8<-- [end:imports]


# --8<-- [start:warptile]
@cuda.jit(device=True, inline=True)
def load4_clamped(x, r, c):
    """x[r, c:c+4] as four 4-byte loads (rows that are not 16-byte aligned), without guards:
    a column past the last reads the last, a value that only meets results never stored."""
    last = x.shape[1] - 1
    return (x[r, min(c, last)], x[r, min(c + 1, last)], x[r, min(c + 2, last)],
            x[r, min(c + 3, last)])


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
    # Every tile but the last along K loads without fetch4's guards, which cost more than the
    # loads: 16-byte loads where the rows allow them (K, N multiples of 4), else four 4-byte
    # loads. An edge block's rows past M read row M - 1, its columns past N column N - 1: those
    # values only meet results that are never stored. Only the last tile must read zeros past K.
    b_wide = b_vec and col0 + WBN <= N         # 16-byte loads of B: all of its columns inside
    for i in range(WACC_M):
        for j in range(WACC_N):
            acc[i, j] = 0.0
    buf = 0
    for k0 in range(-WBK, K, WBK):             # the first trip only loads tile 0
        k1 = k0 + WBK
        if k1 < K:                             # tile k1 into registers, 16 bytes at a time
            fast = k1 + WBK <= K
            for l in range(A_LOADS):
                e = t + l * WTHREADS
                r, cc = row0 + e // (WBK // 4), k1 + (e % (WBK // 4)) * 4
                rr = min(r, M - 1)
                v = fetch4(a, r, cc, a_vec) if not fast else (
                    load4(a, rr, cc) if a_vec else load4_clamped(a, rr, cc))
                for q in range(4):
                    a_stage[l, q] = v[q]
            for l in range(B_LOADS):
                e = t + l * WTHREADS
                r, cc = k1 + e // (WBN // 4), col0 + (e % (WBN // 4)) * 4
                v = fetch4(b, r, cc, b_vec) if not fast else (
                    load4(b, r, cc) if b_wide else load4_clamped(b, r, cc))
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
