"""What the reduction programs of this folder share: the inputs, their exact sum and the error
bound every float32 sum is held to. Keep it beside them (`from reduce_common import ...`).
"""

import numpy as np

U = 2.0**-24  # unit roundoff of float32 (round to nearest)


# --8<-- [start:inputs]
def make_input(n: int, seed: int = 0) -> np.ndarray:
    """n float32 in [-1, 1) on a grid of 2^-23: each is exact in float32, and every float64 sum
    of up to 2^29 of them is exact (at most 29 + 23 = 52 significant bits)."""
    k = np.random.default_rng(seed).integers(0, 2**24, n, dtype=np.int32)
    k -= 2**23
    return k.astype(np.float32) * np.float32(2.0**-23)


def exact_sum(x: np.ndarray) -> float:
    return float(np.sum(x, dtype=np.float64))  # exact for make_input's numbers
# --8<-- [end:inputs]


# --8<-- [start:bound]
def error_bound(depth: float, abs_sum: float) -> float:
    """A float32 sum whose additions form a tree of depth `depth` (the most additions any one
    element goes through) is off by at most h*u/(1 - h*u) * sum|x| (Higham, Accuracy and
    Stability of Numerical Algorithms, 2nd ed., section 4.2); no bound once h*u >= 1."""
    hu = depth * U
    return hu / (1 - hu) * abs_sum if hu < 1 else float("inf")
# --8<-- [end:bound]


def check_sum(got: float, x: np.ndarray, depth: float) -> tuple[float, float]:
    """(|error|, its bound) of a float32 sum of x; raises ValueError when the bound is broken."""
    error = abs(float(got) - exact_sum(x))
    bound = error_bound(depth, float(np.sum(np.abs(x), dtype=np.float64)))
    if not error <= bound:
        raise ValueError(f"sum {got} is off by {error:.3g}, more than its bound {bound:.3g}")
    return error, bound
