"""Step 5 in Numba: each thread computes a TM x TN tile of results (a 2-D register tile)."""

# --8<-- [start:imports]
from numba import cuda, float32

from sgemm_numba_tiles import BK, BM, BN, THREADS_2D, TM, TN
# --8<-- [end:imports]


# --8<-- [start:blocktile_2d]
@cuda.jit(fastmath=True)
def blocktile_2d(a, b, c):
    M, K = a.shape
    N = b.shape[1]
    acc = cuda.local.array((TM, TN), float32)  # an 8x8 tile of C per thread
    a_reg = cuda.local.array(TM, float32)
    b_reg = cuda.local.array(TN, float32)
    As = cuda.shared.array((BM, BK), float32)
    Bs = cuda.shared.array((BK, BN), float32)
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
