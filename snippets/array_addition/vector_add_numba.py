"""Array addition on an NVIDIA GPU with Numba: the CUDA C example, in Python.
Run: python vector_add_numba.py [N]  (without a GPU: NUMBA_ENABLE_CUDASIM=1 python ...)"""

# --8<-- [start:imports]
import argparse

import numpy as np
from numba import cuda
# --8<-- [end:imports]


# --8<-- [start:kernel]
@cuda.jit
def vector_add(a, b, c):
    i = cuda.grid(1)  # blockIdx.x * blockDim.x + threadIdx.x
    if i < c.size:  # the last block may run past the end of the arrays
        c[i] = a[i] + b[i]
# --8<-- [end:kernel]


# --8<-- [start:launch]
THREADS_PER_BLOCK = 256


def add_on_gpu(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    d_a = cuda.to_device(a)
    d_b = cuda.to_device(b)
    d_c = cuda.device_array_like(a)
    blocks = (a.size + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
    vector_add[blocks, THREADS_PER_BLOCK](d_a, d_b, d_c)
    return d_c.copy_to_host()  # waits for the kernel to finish
# --8<-- [end:launch]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Add A[i] = i + 1 and B[i] = i + 7 on the GPU.",
                                     usage=argparse.SUPPRESS)  # an error is one line
    parser.add_argument("n", nargs="?", type=int, default=6,
                        help="number of elements, 1 to 2**28 (default 6)")
    n = parser.parse_args().n
    if not 1 <= n <= 2**28:  # 2**28 floats: 1 GiB an array
        parser.error(f"n must be a whole number from 1 to 2**28, got {n}")
    a, b = np.arange(1, n + 1, dtype=np.float32), np.arange(7, n + 7, dtype=np.float32)
    c = add_on_gpu(a, b)
    words = [f"{x:.0f}" for x in (c if n <= 10 else np.concatenate([c[:3], c[-3:]]))]
    print("C = A + B:", *(words if n <= 10 else words[:3] + ["..."] + words[3:]))
    if not np.array_equal(c, a + b):  # the same float32 additions, done by NumPy on the CPU
        raise SystemExit(f"error: {np.count_nonzero(c != a + b)} of {n} elements are wrong")
    print(f"OK: all {n} elements match")
