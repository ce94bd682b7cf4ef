"""Step 2 in Numba: threadIdx.x along a row of C, so that a warp's loads of B coalesce."""

# --8<-- [start:imports]
from numba import cuda

from sgemm_numba_01_naive import dot  # row of A times column of B, as in step 1
# --8<-- [end:imports]


# --8<-- [start:coalesced]
@cuda.jit(fastmath=True)
def coalesced(a, b, c):
    # threadIdx.x walks along a row of C: a warp reads 32 neighbouring floats of B at once.
    # cuda.grid(2) is (blockIdx.x * blockDim.x + threadIdx.x, the same along y).
    col, row = cuda.grid(2)
    if row < c.shape[0] and col < c.shape[1]:
        c[row, col] = dot(a, b, row, col)
# --8<-- [end:coalesced]
