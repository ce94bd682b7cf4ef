"""Step 4 in Numba: each thread computes a column of TM1 results (a 1-D register tile)."""

# --8<-- [start:imports]
from numba import cuda, float32

from sgemm_numba_tiles import BK1, BM1, BN1, TM1
# --8<-- [end:imports]


# --8<-- [start:blocktile_1d]
@cuda.jit(fastmath=True)
def blocktile_1d(a, b, c):
    M, K = a.shape
    N = b.shape[1]
    acc = cuda.local.array(TM1, float32)       # TM1 results per thread, kept in registers
    As = cuda.shared.array((BM1, BK1), float32)
    Bs = cuda.shared.array((BK1, BN1), float32)
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
