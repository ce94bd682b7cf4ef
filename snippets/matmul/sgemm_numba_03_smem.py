"""Step 3 in Numba: tiles of A and B staged in shared memory."""

# --8<-- [start:imports]
from numba import cuda, float32

from sgemm_numba_tiles import TILE
# --8<-- [end:imports]


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
