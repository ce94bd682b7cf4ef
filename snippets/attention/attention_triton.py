"""A fused attention forward pass (FlashAttention's idea) in Triton: O = softmax(Q K^T / sqrt(d)) V
without ever writing the N x N score matrix. Each program holds one block of BLOCK_M queries and
walks over the keys BLOCK_N at a time, keeping for every query row a running max m, a running
sum l of exp(s - m) and the weighted sum of values: the online softmax. When a new block raises
the max, what was summed so far is rescaled by exp(m_old - m_new). Tiles of Q, K and V come in
through TMA tensor descriptors of the (B, H, N, d) tensors; BF16 tiles go through tl.dot (tensor
cores) into FP32 accumulators. Check against a float32 NumPy reference:

    python snippets/attention/attention_triton.py 4096 --head-dim 128 --causal

Without a GPU, TRITON_INTERPRET=1 runs the same kernel on the CPU, in Triton's interpreter
(small sizes only; it takes PyTorch CPU tensors, FP32 there).
"""

# --8<-- [start:imports]
from __future__ import annotations

import argparse
import math
import os
import sys

import numpy as np
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

try:
    import torch
except ImportError:  # the kernel takes any tensor Triton accepts; the demo needs torch
    torch = None

INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"  # Triton's interpreter: CPU, FP32
LOG2E = 1.4426950408889634  # exp(x) = exp2(x * log2(e)): exp2 is the GPU's native instruction
# --8<-- [end:imports]


# --8<-- [start:kernel]
# (BLOCK_M, BLOCK_N, num_warps, num_stages) the autotuner tries at each new (N, d, mask), and
# its rule: the fastest, timed by Triton's do_bench. BLOCK_M is a multiple of BLOCK_N in every
# one (the causal diagonal starts on a key block). The interpreter takes one small tile.
CONFIGS = [(128, 64, 4, 2), (128, 64, 4, 3), (128, 64, 8, 3), (128, 128, 8, 3), (64, 64, 4, 4)]
SMALL = [(16, 16, 1, 1)]


def tile_shapes(args: dict) -> None:
    """The autotuner's hook before each launch: each descriptor copies tiles of the config's
    shape, one head's BLOCK_M queries or BLOCK_N keys (a descriptor is made before the config
    is known)."""
    bm, bn, d = args["BLOCK_M"], args["BLOCK_N"], args["HEAD_DIM"]
    args["q_desc"].block_shape = args["o_desc"].block_shape = [1, 1, bm, d]
    args["k_desc"].block_shape = args["v_desc"].block_shape = [1, 1, bn, d]


@triton.jit
def attend(acc, m_i, l_i, q, k_desc, v_desc, b, h, rows, lo, hi, N, qk_scale,
           HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr, MASKED: tl.constexpr,
           CAUSAL: tl.constexpr):
    # Key blocks lo, lo + BLOCK_N, ... < hi. MASKED: the blocks that need a mask (keys past N,
    # keys after the query in causal attention); the others skip it, which is most of them.
    for start in range(lo, hi, BLOCK_N):
        # One TMA copy a tile, into shared memory; rows past the head's N come in as zeros.
        k = k_desc.load([b, h, start, 0]).reshape(BLOCK_N, HEAD_DIM)
        s = tl.dot(q, k.T)  # raw scores, FP32
        if MASKED:
            keys = start + tl.arange(0, BLOCK_N)
            keep = keys[None, :] < N
            if CAUSAL:
                keep = keep & (keys[None, :] <= rows[:, None])
            s = tl.where(keep, s, float("-inf"))
        # In log2 units: qk_scale = log2(e)/sqrt(d) is applied inside exp2's argument, one FMA
        # an element (s * qk_scale - m), rather than a multiply of every score beforehand.
        m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
        p = tl.math.exp2(s * qk_scale - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)  # rescales what was summed under the old max
        l_i = l_i * alpha + tl.sum(p, 1)
        v = v_desc.load([b, h, start, 0]).reshape(BLOCK_N, HEAD_DIM)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])  # P in BF16, FP32 accumulator
        m_i = m_new
    return acc, m_i, l_i


@triton.autotune([triton.Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_warps=w, num_stages=s,
                                pre_hook=tile_shapes)
                  for bm, bn, w, s in (SMALL if INTERPRET else CONFIGS)],
                 key=["N", "HEAD_DIM", "CAUSAL"])
@triton.jit
def attention_kernel(q_desc, k_desc, v_desc, o_desc, N, H, qk_scale,
                     HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # Program (i, bh): queries i*BLOCK_M ... of head bh. Causal: the programs with the most key
    # blocks (the last query blocks) start first, so the short ones fill the tail of the grid.
    block = tl.program_id(0)
    if CAUSAL:
        block = tl.cdiv(N, BLOCK_M) - 1 - block
    b, h = tl.program_id(1) // H, tl.program_id(1) % H
    rows = block * BLOCK_M + tl.arange(0, BLOCK_M)
    q = q_desc.load([b, h, block * BLOCK_M, 0]).reshape(BLOCK_M, HEAD_DIM)
    m_i = tl.full((BLOCK_M,), float("-inf"), tl.float32)  # running max of each row (log2 units)
    l_i = tl.zeros((BLOCK_M,), tl.float32)  # running sum of exp2(s - m_i)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), tl.float32)  # running sum of exp2(s - m_i) * v
    if CAUSAL:  # keys before the block: no mask; the diagonal block: masked; after: skipped
        diagonal = block * BLOCK_M
        end = tl.minimum(diagonal + BLOCK_M, N)
    else:  # every key; only a last, partial block is masked
        diagonal = N - N % BLOCK_N
        end = N
    acc, m_i, l_i = attend(acc, m_i, l_i, q, k_desc, v_desc, b, h, rows, 0, diagonal, N,
                           qk_scale, HEAD_DIM, BLOCK_N, False, CAUSAL)
    acc, m_i, l_i = attend(acc, m_i, l_i, q, k_desc, v_desc, b, h, rows, diagonal, end, N,
                           qk_scale, HEAD_DIM, BLOCK_N, True, CAUSAL)
    out = (acc / l_i[:, None]).to(o_desc.dtype)
    o_desc.store([b, h, block * BLOCK_M, 0], out.reshape(1, 1, BLOCK_M, HEAD_DIM))  # not past N
# --8<-- [end:kernel]


# --8<-- [start:launch]
def descriptors(*tensors):
    """A TMA descriptor of each (B, H, N, d) tensor: its shape and strides; the tile shape is
    set at launch (tile_shapes)."""
    return [TensorDescriptor(t, list(t.shape), list(t.stride()), [1, 1, 16, t.shape[3]])
            for t in tensors]


def attention_into(q, k, v, o, causal: bool = False) -> None:
    """o = softmax(q k^T / sqrt(d)) v for tensors of shape (batch, heads, N, d), all four with
    unit stride along d and the other strides multiples of 16 bytes (as TMA needs); causal:
    query i sees keys 0..i only."""
    b, h, n, d = q.shape
    if not (q.shape == k.shape == v.shape == o.shape) or d not in (16, 32, 64, 128, 256):
        raise ValueError(f"q, k, v, o must share one shape (B, H, N, d), d a power of two "
                         f"from 16 to 256; got {q.shape}, {k.shape}, {v.shape}, {o.shape}")
    if any(t.stride(3) != 1 for t in (q, k, v, o)):
        raise ValueError("q, k, v, o must have unit stride along d")

    def grid(meta):  # one program per block of queries of each head
        return (triton.cdiv(n, meta["BLOCK_M"]), b * h)
    attention_kernel[grid](*descriptors(q, k, v, o), n, h, LOG2E / math.sqrt(d), HEAD_DIM=d,
                           CAUSAL=causal)


def attention(q, k, v, causal: bool = False):
    """The same into a new tensor like q."""
    attention_into(q, k, v, o := torch.empty_like(q), causal)
    return o
# --8<-- [end:launch]


# --8<-- [start:check]
def reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool,
              rows: np.ndarray | None = None) -> np.ndarray:
    """Attention in float32 NumPy, the plain way (the whole score row, then softmax), for the
    query rows `rows` of every head (None: all): shape (B, H, len(rows), d). A slice of the
    rows keeps the reference cheap at large N."""
    q, k, v = (np.asarray(x, np.float32) for x in (q, k, v))
    n = q.shape[2]
    rows = np.arange(n) if rows is None else np.asarray(rows)
    s = q[:, :, rows] @ np.swapaxes(k, 2, 3) / np.float32(math.sqrt(q.shape[3]))
    if causal:  # key j > query i is masked out
        s = np.where(np.arange(n)[None, :] > rows[:, None], -np.inf, s)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return (p / p.sum(axis=-1, keepdims=True)) @ v


def sample_rows(n: int, count: int = 256) -> np.ndarray:
    """`count` query rows spread from the first to the last (causal: few keys to all keys)."""
    return np.unique(np.linspace(0, n - 1, min(n, count)).round().astype(int))


def tolerance(precision: str) -> float:
    """Relative Frobenius error bound: BF16 inputs, P and output carry 8 significant bits
    (4 units of their rounding); FP32 (the interpreter) a few hundred units of 2^-24."""
    return 4 * 2.0**-8 if precision == "bf16" else 2.0**-16


def relative_error(got, want) -> float:
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape or not np.isfinite(got).all():
        return math.inf
    return float(np.linalg.norm(got - want) / np.linalg.norm(want))


def reference_slice(q, k, v, causal: bool):
    """(where, want): the float32 reference of (B, H, N, d) tensors on 256 query rows of the
    first and the last head of the first batch entry."""
    where = (sorted({0, q.shape[1] - 1}), sample_rows(q.shape[2]))
    host = (x[:1, where[0]].float().cpu().numpy() for x in (q, k, v))
    return where, reference(*host, causal, where[1])


def slice_error(o, where, want) -> float:
    """The relative error of output `o` on the rows `reference_slice` checked."""
    return relative_error(o[:1, where[0]][:, :, where[1]].float().cpu().numpy(), want)


def run_checked(b: int, h: int, n: int, d: int, causal: bool, seed: int = 0):
    """(relative error, bound, precision) of attention on random inputs, against the float32
    reference on the same (BF16-rounded) inputs."""
    rng = np.random.default_rng(seed)
    device, dtype = ("cpu", torch.float32) if INTERPRET else ("cuda", torch.bfloat16)
    q, k, v = (torch.from_numpy(rng.standard_normal((b, h, n, d), np.float32)).to(device, dtype)
               for _ in range(3))
    o = torch.full_like(q, float("nan"))
    attention_into(q, k, v, o, causal)
    precision = "fp32" if INTERPRET else "bf16"
    return slice_error(o, *reference_slice(q, k, v, causal)), tolerance(precision), precision
# --8<-- [end:check]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Check the fused Triton attention against a float32 NumPy reference.")
    parser.add_argument("n", type=int, nargs="?", default=1024, help="sequence length (1024)")
    parser.add_argument("--head-dim", type=int, choices=(64, 128), default=64)
    parser.add_argument("--heads", type=int, default=4, help="batch x heads (4)")
    parser.add_argument("--causal", action="store_true", help="query i sees keys 0..i only")
    args = parser.parse_args(argv)
    if args.n < 1 or args.heads < 1:
        parser.error("the sequence length and the heads must be at least 1")
    if torch is None:
        parser.error("this demo needs PyTorch (the check runs on torch tensors)")
    if not INTERPRET and not torch.cuda.is_available():
        print("error: no CUDA GPU found; to try this on the CPU, set TRITON_INTERPRET=1",
              file=sys.stderr)
        return 1
    err, bound, precision = run_checked(1, args.heads, args.n, args.head_dim, args.causal)
    ok = err <= bound
    print(f"triton attention {precision} N={args.n} d={args.head_dim}"
          f"{' causal' if args.causal else ''}: relative error {err:.1e} "
          f"{'OK' if ok else 'FAILED'} (bound {bound:.1e})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
