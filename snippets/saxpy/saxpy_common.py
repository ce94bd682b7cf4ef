"""What every SAXPY program of this folder shares: the inputs and the check against NumPy.
Keep it beside them (`from saxpy_common import ...`).
"""

import numpy as np

A = np.float32(2.0)


def make_inputs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Exactly representable values: a*x + y is exact in float32, with or without an FMA."""
    i = np.arange(n, dtype=np.int64)
    return ((i % 1000) * 0.5 - 250).astype(np.float32), ((i % 777) * 0.25).astype(np.float32)


def mismatches(saxpy, n: int, to_device=np.asarray, to_host=np.asarray) -> int:
    """Run saxpy(A, x, y) once, in place, on the inputs above (copied to the device and back with
    to_device and to_host); how many elements of y differ from NumPy's A*x + y. Exact inputs:
    the check is exact."""
    x, y = make_inputs(n)
    want = A * x + y
    d_y = to_device(y)
    saxpy(A, to_device(x), d_y)
    return int(np.count_nonzero(to_host(d_y) != want))
