"""Attention in PyTorch two ways: naive, as the formula reads, which writes the whole N x N score
matrix of every head to GPU memory, and PyTorch's fused `scaled_dot_product_attention` with one
backend chosen (flash, cuDNN, memory-efficient or math). The naive one's peak memory grows as
N^2, until the GPU runs out: the demo doubles N from 1024 and prints it at each size.
Run: python attention_torch.py   (an NVIDIA GPU and PyTorch; attention_triton.py beside it)
"""
import argparse
import sys
import warnings

# --8<-- [start:imports]
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.functional import scaled_dot_product_attention

from attention_triton import reference_slice, slice_error, tolerance
# --8<-- [end:imports]


# --8<-- [start:naive]
def naive(q, k, v, causal: bool = False):
    """softmax(q k^T / sqrt(d)) v for (B, H, N, d) tensors, one PyTorch op at a time."""
    scores = q @ k.transpose(-2, -1) * q.shape[-1] ** -0.5  # B x H x N x N, written to memory
    if causal:  # key j > query i gets -inf: weight exp(-inf) = 0 after the softmax
        n = q.shape[-2]
        later = torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(later, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v  # another N x N matrix, read again by the product
# --8<-- [end:naive]


# --8<-- [start:sdpa]
BACKENDS = {"flash": "FLASH_ATTENTION", "cudnn": "CUDNN_ATTENTION",
            "efficient": "EFFICIENT_ATTENTION", "math": "MATH"}  # names in SDPBackend


def sdpa(backend: str, q, k, v, causal: bool = False):
    """PyTorch's fused attention, allowed to use this one backend only: a backend that cannot
    take these inputs raises RuntimeError ("No available kernel") instead of falling back."""
    with sdpa_kernel(getattr(SDPBackend, BACKENDS[backend])):
        return scaled_dot_product_attention(q, k, v, is_causal=causal)


def refusal(backend: str, d: int, causal: bool = False) -> str:
    """"" where `backend` takes BF16 inputs of head dim d on this GPU, else why not: the
    warnings PyTorch gives with its "No available kernel" error name the reason."""
    if not hasattr(SDPBackend, BACKENDS[backend]):
        return f"this PyTorch ({torch.__version__}) has no SDPBackend.{BACKENDS[backend]}"
    q = torch.zeros(1, 1, 256, d, device="cuda", dtype=torch.bfloat16)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        try:
            sdpa(backend, q, q, q, causal)
            return ""
        except Exception as exc:  # noqa: BLE001 - whatever it raises, the backend refused
            why = [str(w.message) for w in said] + [f"{type(exc).__name__}: {exc}"]
    return " ".join(" ".join(why).split())[:300]


def refusals(d: int, causal: bool = False) -> dict[str, str]:
    """{backend: why it refuses BF16 inputs of head dim d here} for each backend that does."""
    return {b: why for b in BACKENDS if (why := refusal(b, d, causal))}
# --8<-- [end:sdpa]


def random_qkv(batch: int, heads: int, n: int, d: int, seed: int = 0):
    """Q, K and V of shape (batch, heads, n, d): FP32 normal values, made on the GPU."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    return tuple(torch.randn(batch, heads, n, d, device="cuda", generator=g) for _ in "qkv")


# --8<-- [start:memory]
def peak_memory(n: int, heads: int = 16, d: int = 128, causal: bool = False,
                batch: int = 1) -> int | str:
    """GPU memory (bytes) one naive call needs beyond its inputs, at its peak, for BF16
    (batch, heads, n, d) inputs; or the out-of-memory message where the GPU runs out."""
    torch.cuda.empty_cache()
    q, k, v = (torch.randn(batch, heads, n, d, device="cuda", dtype=torch.bfloat16)
               for _ in range(3))
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    try:
        naive(q, k, v, causal)
        torch.cuda.synchronize()
        return torch.cuda.max_memory_allocated() - before
    except torch.cuda.OutOfMemoryError as exc:
        return str(exc).splitlines()[0]
    finally:
        del q, k, v
        torch.cuda.empty_cache()


def memory_sweep(start: int = 1024, heads: int = 16, d: int = 128, largest: int = 2**20):
    """(n, peak bytes or the out-of-memory message) for n = start, 2 start, ... up to the first
    size that runs out (or `largest`)."""
    found, n = [], start
    while n <= largest:
        found.append((n, peak_memory(n, heads, d)))
        if isinstance(found[-1][1], str):
            break
        n *= 2
    return found
# --8<-- [end:memory]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("error: no CUDA GPU found (this lesson runs PyTorch on the GPU)", file=sys.stderr)
        return 1
    q, k, v = (x.bfloat16() for x in random_qkv(1, 8, 2048, 64))
    where, want = reference_slice(q, k, v, True)
    ok = True
    for name, fn in [("naive", naive),
                     *((b, lambda *a, b=b: sdpa(b, *a)) for b in BACKENDS)]:
        try:
            err = slice_error(fn(q, k, v, True), where, want)
        except RuntimeError as exc:  # a backend that refuses these inputs, said in one line
            print(f"{name:>9}: unavailable ({str(exc).splitlines()[0][:100]})")
            continue
        ok &= err <= tolerance("bf16")
        print(f"{name:>9}: relative error {err:.1e} "
              f"{'OK' if err <= tolerance('bf16') else 'FAILED'} (bound {tolerance('bf16'):.1e})")
    for n, peak in memory_sweep(largest=2**17):
        print(f"naive, N={n:>6}, 16 heads, d=128: " +
              (f"peak {peak / 2**30:8.2f} GiB" if isinstance(peak, int) else "out of memory"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
