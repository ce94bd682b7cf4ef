"""Triton's interpreter on NumPy arrays, for CPU CI (used by tests/test_matmul.py).

Run as a program, in a process started with TRITON_INTERPRET=1 (Triton reads it when it is
imported): python tests/triton_host.py M N K  prints the kernel's relative error against
float64 and its bound, then the error with a broken input; python tests/triton_host.py attention
B H N D CAUSAL [bnhd]  does the same for snippets/attention/attention_triton.py (CAUSAL: 0 or 1;
bnhd: the tensors stored (B, N, H, d), as a model's projections give them, seen (B, H, N, d)).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

SNIPPETS = Path(__file__).resolve().parents[1] / "snippets"
SNIPPET = SNIPPETS / "matmul" / "matmul_triton.py"


class HostTensor:
    """A NumPy array dressed in the part of PyTorch's tensor API that Triton's interpreter calls
    on a pointer argument (it copies each argument's storage to the host and back, and reads its
    dtype by name). PyTorch's CPU wheel is not on PyPI, so CPU CI runs the kernel on these."""

    _names = {np.float32: "torch.float32", np.float64: "torch.float64"}

    def __init__(self, array: np.ndarray):
        self.array = array
        self.dtype = type("dtype", (), {"__str__": lambda _: self._names[array.dtype.type],
                                        "itemsize": array.itemsize})()

    shape = property(lambda self: self.array.shape)

    def stride(self, dim=None):
        strides = tuple(s // self.array.itemsize for s in self.array.strides)
        return strides if dim is None else strides[dim]

    def data_ptr(self) -> int:
        return self.array.ctypes.data

    def untyped_storage(self):
        return self

    def cpu(self):
        return self

    def copy_(self, other) -> None:
        if other.array is not self.array:
            self.array[...] = other.array

    def new_empty(self, *shape, **kwargs):
        return HostTensor(self.array[:0])

    def set_(self, storage, offset, size, stride):
        self.array = storage.array
        return self

    def storage_offset(self) -> int:
        return 0

    def size(self):
        return self.array.shape


def lesson(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(m: int, n: int, k: int) -> None:
    mt = lesson(SNIPPET)
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    c = np.full((m, n), np.nan, np.float32)
    mt.matmul_into(HostTensor(a), HostTensor(b), HostTensor(c))
    broken = np.full((m, n), np.nan, np.float32)
    mt.matmul_into(HostTensor(np.zeros_like(a)), HostTensor(b), HostTensor(broken))
    print(mt.relative_error(c, ref), mt.tolerance("fp32", k), mt.relative_error(broken, ref))


def attention(b: int, h: int, n: int, d: int, causal: int, layout: str = "bhnd") -> None:
    at = lesson(SNIPPETS / "attention" / "attention_triton.py")
    rng = np.random.default_rng(2)
    order = (0, 2, 1, 3) if layout == "bnhd" else (0, 1, 2, 3)  # its own inverse
    stored = lambda x: np.ascontiguousarray(x.transpose(order)).transpose(order)  # noqa: E731
    q, k, v = (stored(rng.standard_normal((b, h, n, d)).astype(np.float32)) for _ in range(3))
    want = at.reference(q, k, v, bool(causal))
    errors = []
    for key in (k, np.zeros_like(k)):  # the second: zero keys, every score equal (a broken input)
        o = stored(np.full_like(q, np.nan))
        at.attention_into(HostTensor(q), HostTensor(key), HostTensor(v), HostTensor(o),
                          bool(causal))
        errors.append(at.relative_error(o, want))
    print(errors[0], at.tolerance("fp32"), errors[1])


if __name__ == "__main__":
    if sys.argv[1] == "attention":
        attention(*map(int, sys.argv[2:7]), *sys.argv[7:8])
    else:
        main(*map(int, sys.argv[1:4]))
