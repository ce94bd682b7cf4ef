"""Step 1 of docs/kernels/matmul.md in Numba: one thread per element of C, mapped the wrong way."""

# --8<-- [start:imports]
from numba import cuda, float32
# --8<-- [end:imports]


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
