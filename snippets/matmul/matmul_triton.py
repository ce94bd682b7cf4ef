"""Matrix product C = A @ B in Triton: BF16 inputs, FP32 accumulation and output.

Triton writes the kernel for a whole tile of C (BLOCK_M x BLOCK_N) as block operations:
load a tile of A and of B, `tl.dot` them, step along K. The compiler decides what CUDA C makes
you write by hand: how threads share the tile, shared-memory staging, the copy pipeline, and
on an H100/H200 the tensor-core instructions (wgmma). Check against float64 NumPy:

    python snippets/matmul/matmul_triton.py 4096

Without a GPU, TRITON_INTERPRET=1 runs the same kernel on the CPU, in Triton's interpreter
(small sizes only; it takes PyTorch CPU tensors, FP32 there).

The second kernel, `matmul_tma_kernel`, is the Hopper form that Triton's tutorial "Persistent
Matmul" (python/tutorials/09-persistent-matmul.py) describes: one program per SM, each walking
over many tiles of C, its tiles of A and B copied by TMA through tensor descriptors, its tile
sizes chosen per size by a tuning run (`--tma` checks it; GPU only).
"""

# --8<-- [start:imports]
from __future__ import annotations

import argparse
import functools
import math
import os
import sys

import numpy as np
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor  # TMA descriptors made on the host

try:
    import torch
except ImportError:  # the kernel takes any tensor Triton accepts; the check and demo need torch
    torch = None

INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"  # Triton's interpreter: CPU, FP32
# --8<-- [end:imports]


# --8<-- [start:kernel]
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr):
    # Program `pid` computes one BLOCK_M x BLOCK_N tile of C. Consecutive programs walk down
    # GROUP_M tile rows before moving right, so programs running together share tiles of B
    # in L2 (the "grouped ordering" of Triton's tutorial).
    pid = tl.program_id(0)
    tiles_m, tiles_n = tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    group_m = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % group_m
    pid_n = (pid % per_group) // group_m

    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        # Elements past the edges of A and B load as zeros: any M, N, K works.
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < K - k0), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < K - k0) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)  # tensor cores for BF16 tiles; FP32 accumulator
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))
# --8<-- [end:kernel]


# --8<-- [start:launch]
# Tile shapes to try: (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages). The best
# on the H200 at 4096^3, with B stored N x K, comes first (docs/kernels/matmul.md has the runs).
CONFIGS = [(128, 256, 64, 8, 8, 3), (128, 256, 32, 8, 8, 4), (128, 256, 64, 8, 8, 4),
           (128, 128, 32, 8, 4, 4), (128, 128, 64, 8, 4, 4), (256, 128, 64, 8, 8, 4)]
SMALL = (16, 16, 16, 2, 1, 1)  # the interpreter: small tiles keep it quick


def matmul_into(a, b, c, config=None) -> None:
    """c = a @ b for 2-D torch tensors: on the GPU, or on the CPU in the interpreter."""
    (m, k), n = a.shape, b.shape[1]
    bm, bn, bk, group, warps, stages = config or (SMALL if INTERPRET else CONFIGS[0])
    grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)
    matmul_kernel[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                        c.stride(0), c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                        GROUP_M=group, num_warps=warps, num_stages=stages)
# --8<-- [end:launch]


# --8<-- [start:tma]
# (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages) per size class, the first of each
# the default. A product of at most 2048 x 2048 results gets small tiles, so that there are
# enough of them for every SM (1024^2 in 64x128 tiles: 128 tiles for 132 SMs); a larger one big
# tiles, which read A and B fewer times. The FP32 tile of C is staged through shared memory on
# its way out: a 128x256 one would take 128 KiB of the 227, so tiles that big go out in two
# halves, which leaves room for three stages of A and B (a config that does not fit fails at
# its first launch, and the tuning run says so). The tuning run of gpu/matmul.sh times every
# candidate of a size's class; the confirming run takes the fastest.
TMA_CONFIGS = {
    "small": [(64, 128, 64, 8, 4, 4), (128, 64, 64, 8, 4, 4), (64, 64, 64, 8, 4, 6),
              (64, 128, 128, 8, 4, 3), (128, 128, 64, 8, 4, 4), (64, 256, 64, 8, 4, 4)],
    "large": [(256, 128, 64, 8, 8, 3), (128, 256, 64, 8, 8, 3), (128, 256, 64, 16, 8, 3),
              (128, 128, 64, 8, 4, 4), (128, 128, 64, 8, 8, 4), (256, 128, 64, 16, 8, 3)]}


def tma_config(m: int, n: int, config=None) -> tuple:
    """`config`, or the default (first) config of the size class of an m x n result."""
    return tuple(config or TMA_CONFIGS["small" if m * n <= 2048 * 2048 else "large"][0])


def tma_meta(config) -> dict:
    """The kernel's compile-time arguments for a config of TMA_CONFIGS."""
    bm, bn, bk, group, warps, stages = config
    return {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": group,
            "HALVES": bm * bn >= 128 * 256, "num_warps": warps, "num_stages": stages}


@triton.jit
def matmul_tma_kernel(a_desc, b_desc, c_ptr, M, N, K, ldc, NUM_SMS: tl.constexpr,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                      GROUP_M: tl.constexpr, HALVES: tl.constexpr):
    # A (M x K) and B^T (N x K) are both read along K, through tensor descriptors made on the
    # host: each load of a tile is one TMA copy into shared memory (zeros past the edges),
    # which wgmma reads.
    tiles_m, tiles_n = tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    # Persistent: NUM_SMS programs, program p takes tiles p, p + NUM_SMS, ... in grouped order.
    for tile in tl.range(tl.program_id(0), tiles_m * tiles_n, NUM_SMS, flatten=True):
        first_m = (tile // per_group) * GROUP_M
        group_m = min(tiles_m - first_m, GROUP_M)
        pid_m = first_m + (tile % per_group) % group_m
        pid_n = (tile % per_group) // group_m
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
            b = b_desc.load([pid_n * BLOCK_N, k * BLOCK_K])
            acc = tl.dot(a, b.T, acc)
        rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        if HALVES:  # the tile goes out in two halves, each staged through half the memory
            acc0, acc1 = tl.split(tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)),
                                             (0, 2, 1)))
            rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N // 2)
            tl.store(c_ptr + rm[:, None] * ldc + rn[None, :], acc0,
                     mask=(rm[:, None] < M) & (rn[None, :] < N))
            rn += BLOCK_N // 2
            tl.store(c_ptr + rm[:, None] * ldc + rn[None, :], acc1,
                     mask=(rm[:, None] < M) & (rn[None, :] < N))
        else:
            rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
            tl.store(c_ptr + rm[:, None] * ldc + rn[None, :], acc,
                     mask=(rm[:, None] < M) & (rn[None, :] < N))


def padded_bf16(x):
    """x (rows x cols) as BF16 in rows padded to a multiple of 8 elements (16 bytes, which TMA
    needs for every row stride): a view of the first cols columns."""
    rows, cols = x.shape
    out = torch.zeros((rows, -(-cols // 8) * 8), dtype=torch.bfloat16, device=x.device)
    out[:, :cols] = x
    return out[:, :cols]


def tma_operands(a: np.ndarray, b: np.ndarray, device="cuda"):
    """A and B as matmul_tma_into takes them: BF16 on `device`, rows padded, B stored
    transposed (N x K, as a Linear layer's weight) and seen K x N through its strides."""
    return (padded_bf16(torch.from_numpy(a).to(device)),
            padded_bf16(torch.from_numpy(b.T.copy()).to(device)).T)


@functools.cache
def sm_count(device) -> int:
    return torch.cuda.get_device_properties(device).multi_processor_count


def matmul_tma_into(a, b, c, config=None) -> None:
    """c = a @ b on the GPU: a (M x K) and b.T (N x K) BF16 with unit stride along K and rows
    16-byte aligned (padded_bf16 makes them), c FP32 (M x N) with unit column stride; `config`
    one of TMA_CONFIGS (None: the default of the size class)."""
    (m, k), n = a.shape, b.shape[1]
    if a.stride(1) != 1 or b.stride(0) != 1 or c.stride(1) != 1:
        raise ValueError("a and b.T must be contiguous along K, c along N")
    meta = tma_meta(tma_config(m, n, config))
    bm, bn, bk = meta["BLOCK_M"], meta["BLOCK_N"], meta["BLOCK_K"]
    a_desc = TensorDescriptor(a, [m, k], [a.stride(0), 1], [bm, bk])
    b_desc = TensorDescriptor(b.T, [n, k], [b.stride(1), 1], [bn, bk])
    sms = sm_count(a.device)
    grid = (min(sms, triton.cdiv(m, bm) * triton.cdiv(n, bn)),)
    matmul_tma_kernel[grid](a_desc, b_desc, c, m, n, k, c.stride(0), NUM_SMS=sms, **meta)
# --8<-- [end:tma]


# --8<-- [start:graph]
GRAPHS: dict = {}  # the graph of the last tensors and config, with those tensors


def matmul_tma_graphed(a, b, c, config=None) -> None:
    """matmul_tma_into replayed from a CUDA graph: the first call on these tensors (and config)
    compiles, then records the launch into a graph; every call replays it. A replay is one
    driver call, instead of Triton's launch path in Python (microseconds a call, whatever the
    kernel). A graph replays the same addresses: it keeps the tensors it was recorded with."""
    key = (a.data_ptr(), b.data_ptr(), c.data_ptr(), *a.shape, *b.shape, *c.shape, config)
    if key not in GRAPHS:
        matmul_tma_into(a, b, c, config)  # compile outside the recording
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            matmul_tma_into(a, b, c, config)
        GRAPHS.clear()  # one graph at a time: an older one would hold its tensors
        GRAPHS[key] = graph, (a, b, c)
    GRAPHS[key][0].replay()
# --8<-- [end:graph]


# --8<-- [start:check]
def tolerance(precision: str, k: int) -> float:
    """Relative Frobenius error bound: BF16 inputs carry 8 significant bits (4 units of their
    rounding); FP32 inputs (the interpreter) the float32 bound 8 * sqrt(K) * 2^-24."""
    return 4 * 2.0**-8 if precision == "bf16" else 8 * math.sqrt(k) * 2.0**-24


def relative_error(c: np.ndarray, ref: np.ndarray) -> float:
    c = np.asarray(c, dtype=np.float64)
    if not np.isfinite(c).all():
        return math.inf
    return float(np.linalg.norm(c - ref) / np.linalg.norm(ref))


def run_checked(m: int, n: int, k: int, seed: int = 0,
                tma: bool = False) -> tuple[float, float, str]:
    """(relative error, bound, precision) of one product of random inputs in [-1, 1)."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    device, dtype = ("cpu", torch.float32) if INTERPRET else ("cuda", torch.bfloat16)
    out = torch.full((m, n), float("nan"), dtype=torch.float32, device=device)
    if tma:  # B stored transposed (N x K), rows padded to 16 bytes
        matmul_tma_into(*tma_operands(a, b, device), out)
    else:
        matmul_into(torch.from_numpy(a).to(device).to(dtype),
                    torch.from_numpy(b).to(device).to(dtype), out)
    c = out.cpu().numpy()
    precision = "fp32" if INTERPRET else "bf16"
    ref = a.astype(np.float64) @ b.astype(np.float64)
    return relative_error(c, ref), tolerance(precision, k), precision
# --8<-- [end:check]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Check a Triton matrix product against a float64 NumPy reference.")
    parser.add_argument("size", type=int, nargs="*", default=[256],
                        help="M [N [K]]: C (M x N) = A (M x K) @ B (K x N); N and K default "
                             "to M, M to 256")
    parser.add_argument("--tma", action="store_true",
                        help="check the persistent TMA kernel instead (GPU only)")
    args = parser.parse_args(argv)
    if len(args.size) > 3 or min(args.size) < 1:
        parser.error("give one to three sizes (M N K), each at least 1")
    if torch is None:
        parser.error("this demo needs PyTorch (the check runs on torch tensors)")
    m, n, k = [*args.size, args.size[0], args.size[0]][:3]  # N and K default to M
    if not INTERPRET and not torch.cuda.is_available():
        print("error: no CUDA GPU found; to try this on the CPU, set TRITON_INTERPRET=1",
              file=sys.stderr)
        return 1
    if args.tma and INTERPRET:
        parser.error("--tma needs a GPU (TMA is hardware; the interpreter has none)")
    err, bound, precision = run_checked(m, n, k, tma=args.tma)
    ok = err <= bound
    print(f"triton{' tma' if args.tma else ''} {precision} {m}x{n}x{k}: relative error {err:.1e} "
          f"{'OK' if ok else 'FAILED'} (bound {bound:.1e})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
