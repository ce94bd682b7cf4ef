"""One token at a time through a Llama-shaped decoder in PyTorch: random BF16 weights of Llama 3.1
8B's published shape (nothing is downloaded), a KV cache, attention over it by our split-KV
(flash-decoding) Triton kernel on a GPU, and a decode step in four forms: eager, torch.compile,
and each replayed as one CUDA graph. The check: the cached step gives the
logits of a full forward pass over the whole sequence, which recomputes every key and value.
Run: python llama_decode.py   (a small model of the same shape on the GPU, or on the CPU without one)
"""
import sys

# --8<-- [start:config]
import math
from dataclasses import dataclass

import torch

try:  # the attention kernel below is Triton's; PyTorch's CPU wheels come without Triton
    import triton
    import triton.language as tl
    from torch.library import triton_op, wrap_triton
except ImportError:
    triton = None


@dataclass(frozen=True)
class Config:
    """Llama 3.1 8B's shape, from its published config.json (meta-llama/Llama-3.1-8B on Hugging
    Face, as of 2026-11): 32 layers, hidden 4096, 32 query heads sharing 8 key/value heads (GQA),
    head dim 128, SwiGLU FFN 14336, vocabulary 128256, untied LM head, RMSNorm eps 1e-5, RoPE base
    500000. Llama 3.1's RoPE frequency scaling (for contexts past 8k) is left out: it changes the
    frequencies, not the work."""
    layers: int = 32
    hidden: int = 4096
    heads: int = 32
    kv_heads: int = 8
    head_dim: int = 128
    ffn: int = 14336
    vocab: int = 128256
    eps: float = 1e-5
    rope_base: float = 500000.0


def random_model(c: Config, device, dtype=torch.bfloat16, seed=0) -> dict:
    """Random weights of shape `c`, each scaled by 1/sqrt(fan-in) so activations stay near 1.
    Q, K and V are one matrix and gate and up another: one matrix product each, not three and two."""
    g = torch.Generator(device=device).manual_seed(seed)
    w = lambda rows, cols: (torch.randn(rows, cols, generator=g, device=device, dtype=dtype)
                            / math.sqrt(cols))
    qkv = (c.heads + 2 * c.kv_heads) * c.head_dim
    layers = [{"attn_norm": torch.ones(c.hidden, device=device, dtype=dtype),
               "qkv": w(qkv, c.hidden), "o": w(c.hidden, c.heads * c.head_dim),
               "mlp_norm": torch.ones(c.hidden, device=device, dtype=dtype),
               "gate_up": w(2 * c.ffn, c.hidden), "down": w(c.hidden, c.ffn)}
              for _ in range(c.layers)]
    return {"embed": w(c.vocab, c.hidden) * math.sqrt(c.hidden), "layers": layers,
            "norm": torch.ones(c.hidden, device=device, dtype=dtype),
            "lm_head": w(c.vocab, c.hidden)}


def kv_cache(c: Config, batch: int, length: int, device, dtype=torch.bfloat16, new=torch.zeros):
    """One key and one value tensor per layer, (batch, KV heads, length, head dim), allocated once:
    the step writes position `pos` and reads every position up to it."""
    shape = (batch, c.kv_heads, length, c.head_dim)
    return {"k": [new(shape, device=device, dtype=dtype) for _ in range(c.layers)],
            "v": [new(shape, device=device, dtype=dtype) for _ in range(c.layers)]}


def rope_tables(c: Config, length: int, device) -> tuple:
    """cos and sin of every position's rotation angles, (length, head dim), float32."""
    inv = c.rope_base ** -(torch.arange(0, c.head_dim, 2, device=device) / c.head_dim)
    angles = torch.outer(torch.arange(length, device=device, dtype=torch.float32), inv)
    angles = torch.cat([angles, angles], dim=-1)
    return angles.cos(), angles.sin()
# --8<-- [end:config]


# --8<-- [start:layer]
def rms_norm(x, weight, eps):
    x32 = x.float()
    return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * weight


def rotate(x, cos, sin):
    """RoPE (the rotate-half form of Hugging Face's Llama): x (..., head dim) at its position."""
    half = x.shape[-1] // 2
    x32 = x.float()
    turned = torch.cat([-x32[..., half:], x32[..., :half]], dim=-1)
    return (x32 * cos + turned * sin).to(x.dtype)


def decoder_layer(x, layer, k_cache, v_cache, pos, cos, sin, c: Config, split_kv=True):
    """One layer for this token of each sequence: x (batch, hidden) in and out. `split_kv=False`:
    PyTorch's fused attention on a GPU too (what the split-KV kernel is measured against)."""
    b, length, groups = x.shape[0], k_cache.shape[2], c.heads // c.kv_heads
    # normalise; this token's query, key and value with one product; rotate q and k
    qkv = rms_norm(x, layer["attn_norm"], c.eps) @ layer["qkv"].T
    q, k, v = qkv.split([c.heads * c.head_dim, c.kv_heads * c.head_dim,
                         c.kv_heads * c.head_dim], dim=-1)
    q = rotate(q.view(b, c.kv_heads, groups, c.head_dim), cos, sin)
    k = rotate(k.view(b, c.kv_heads, 1, c.head_dim), cos, sin)
    # the key and value into the cache at `pos`, in place
    k_cache.index_copy_(2, pos, k)
    v_cache.index_copy_(2, pos, v.view(b, c.kv_heads, 1, c.head_dim))
    # attention over the cache. The query heads that share a key/value head are rows of queries
    # against that head's cache, so each cached key and value is read once (repeat_interleave
    # would copy the cache 4 times over first). On a GPU our split-KV kernel (below: it spreads
    # the cache over every SM at batch 1); elsewhere PyTorch's fused call, with a mask that
    # keeps the positions written so far (Triton compiles for GPUs)
    if split_kv and q.is_cuda and triton is not None:
        attn = splitkv_attention(q, k_cache, v_cache, pos, split_count(b, c.kv_heads))
    else:
        written = torch.arange(length, device=x.device).view(1, length) <= pos
        attn = torch.nn.functional.scaled_dot_product_attention(q, k_cache, v_cache,
                                                                attn_mask=written)
    # the output projection added to the residual stream: addmm is x + a @ w.T in one call
    x = torch.addmm(x, attn.reshape(b, c.heads * c.head_dim), layer["o"].T)
    # the SwiGLU MLP: gate and up with one product
    gate, up = (rms_norm(x, layer["mlp_norm"], c.eps) @ layer["gate_up"].T).chunk(2, dim=-1)
    return torch.addmm(x, torch.nn.functional.silu(gate) * up, layer["down"].T)
# --8<-- [end:layer]


# --8<-- [start:splitkv]
def split_count(batch: int, kv_heads: int) -> int:
    """Splits of each (sequence, KV head)'s cache: about 512 programs, four an SM of an H100
    (132), and never fewer than 4 splits. At batch 1 (8 KV heads, 1,025 positions in 17 tiles)
    each program then has one tile at most, so none waits on a second; at batch 64, four splits
    keep more loads in flight than one. Chosen on a probe at batch 1, 8 and 64, where four
    times the splits of a one-program-an-SM rule ran fastest (gpu/explore/decode-profile.py)."""
    return max(4, 512 // (batch * kv_heads))


if triton is not None:
    @triton.jit
    def attend_split(q_ptr, k_ptr, v_ptr, pos_ptr, out_ptr, lse_ptr, length, SCALE: tl.constexpr,
                     GROUPS: tl.constexpr, ROWS: tl.constexpr, HEAD_DIM: tl.constexpr,
                     BLOCK_N: tl.constexpr):
        """One program: the GROUPS query rows of one (sequence, KV head), against its share of
        the cached positions 0..pos: the tiles split, split + splits, ... of BLOCK_N keys. Writes
        its softmax-weighted sum of values and the log-sum-exp of its scores, per row."""
        head, split, splits = tl.program_id(0), tl.program_id(1), tl.num_programs(1)
        rows, dims = tl.arange(0, ROWS), tl.arange(0, HEAD_DIM)
        real = rows < GROUPS  # tl.dot takes 16 rows at least: the rest are zeros, never stored
        q = tl.load(q_ptr + (head * GROUPS + rows[:, None]) * HEAD_DIM + dims[None, :],
                    mask=real[:, None], other=0.0)
        pos = tl.load(pos_ptr).to(tl.int32)  # read on the GPU: a CUDA graph replays at any pos
        k_ptr += head.to(tl.int64) * length * HEAD_DIM  # this (sequence, KV head)'s cache
        v_ptr += head.to(tl.int64) * length * HEAD_DIM
        m = tl.full([ROWS], float("-inf"), tl.float32)  # the online softmax: running max,
        l = tl.zeros([ROWS], tl.float32)  # the sum of exp(score - max), and the weighted values
        acc = tl.zeros([ROWS, HEAD_DIM], tl.float32)
        tile = split
        while tile * BLOCK_N <= pos:  # (a while: the interpreter takes no loaded range bound)
            keys = tile * BLOCK_N + tl.arange(0, BLOCK_N)
            written = keys <= pos
            at = keys[:, None] * HEAD_DIM + dims[None, :]
            k = tl.load(k_ptr + at, mask=written[:, None], other=0.0)
            v = tl.load(v_ptr + at, mask=written[:, None], other=0.0)  # both loads in flight
            s = tl.where(written[None, :], tl.dot(q, tl.trans(k)) * SCALE, float("-inf"))
            m_new = tl.maximum(m, tl.max(s, 1))
            p = tl.exp(s - m_new[:, None])
            alpha = tl.exp(m - m_new)  # rescales what was summed under the old max
            l = l * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
            m = m_new
            tile += splits
        # a split whose tiles all lie past pos read nothing: output 0, log-sum-exp -inf (weight 0)
        found = l > 0
        part = (head * splits + split) * GROUPS + rows
        tl.store(out_ptr + part[:, None] * HEAD_DIM + dims[None, :],
                 acc / tl.where(found, l, 1.0)[:, None], mask=real[:, None])
        tl.store(lse_ptr + part, tl.where(found, m + tl.log(tl.where(found, l, 1.0)),
                                          float("-inf")), mask=real)

    @triton_op("decode::splitkv_attention", mutates_args=())
    def splitkv_attention(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                          pos: torch.Tensor, splits: int, block_n: int = 64) -> torch.Tensor:
        """softmax(q k^T / sqrt(d)) v over the cached positions 0..pos (flash-decoding): q
        (batch, KV heads, groups, d), the caches (batch, KV heads, length, d), all contiguous.
        Each (sequence, KV head) is `splits` programs, each over its share of the cache; their
        partial outputs then combine, each weighted by exp(its log-sum-exp - the total's): the
        softmax over all positions, from the softmax over each share."""
        b, kv_heads, groups, d = q.shape
        part = torch.empty(b * kv_heads, splits, groups, d, device=q.device, dtype=torch.float32)
        lse = torch.empty(b * kv_heads, splits, groups, device=q.device, dtype=torch.float32)
        wrap_triton(attend_split)[(b * kv_heads, splits)](
            q.contiguous(), k_cache, v_cache, pos, part, lse, k_cache.shape[2],
            SCALE=1 / math.sqrt(d), GROUPS=groups, ROWS=max(16, triton.next_power_of_2(groups)),
            HEAD_DIM=d, BLOCK_N=block_n)
        weight = torch.softmax(lse, dim=1).unsqueeze(-1)  # exp(lse - logsumexp(lse)) per split
        return (weight * part).sum(1).to(q.dtype).view(b, kv_heads, groups, d)
# --8<-- [end:splitkv]


# --8<-- [start:step]
def decode_step(model, cache, rope, tokens, pos, c: Config, layer_fn=decoder_layer):
    """Logits of the next token of each sequence: `tokens` (batch,) at position `pos` (a
    one-element tensor, so that a CUDA graph can replay the step at any position). Writes each
    layer's key and value at `pos` into the cache. `layer_fn`: the layer, eager or compiled."""
    cos, sin = rope[0][pos], rope[1][pos]
    x = model["embed"][tokens]
    for layer, k_cache, v_cache in zip(model["layers"], cache["k"], cache["v"]):
        x = layer_fn(x, layer, k_cache, v_cache, pos, cos, sin, c)
    return rms_norm(x, model["norm"], c.eps) @ model["lm_head"].T


def compiled_layer():
    """The layer compiled: one graph, the same code for all 32 layers (one compile per batch
    size). Inductor fuses the element-wise work and writes the cache in place."""
    return torch.compile(decoder_layer, fullgraph=True, dynamic=False)


def as_cuda_graph(step):
    """`step()` captured once as a CUDA graph: a replay launches every kernel of the step in one
    call, on the same buffers (the step's `tokens` and `pos`: write new values into them, replay,
    read the returned logits buffer)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up off the capture stream (compiles, cuBLAS handles)
        for _ in range(2):
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        logits = step()
    return lambda: graph.replay() or logits


def bytes_per_step(model, cache, batch: int) -> dict:
    """What one step must read from memory: every weight but the embedding table (of which it
    reads one row per sequence), and the whole cache. Activations and logits: a few MB at most."""
    weights = sum(t.nbytes for layer in model["layers"] for t in layer.values())
    weights += model["norm"].nbytes + model["lm_head"].nbytes + batch * model["embed"][0].nbytes
    return {"weights": weights, "kv_cache": sum(t.nbytes for t in cache["k"] + cache["v"])}
# --8<-- [end:step]


# --8<-- [start:check]
TOLERANCE = 0.02  # float32 lands far below; BF16 rounds both paths, in different places


def full_forward(model, tokens, c: Config):
    """Logits at every position of `tokens` (batch, length) with no cache: causal attention over
    keys and values recomputed for the whole sequence, the heads expanded to 32 (the plain way)."""
    b, n = tokens.shape
    cos, sin = rope_tables(c, n, tokens.device)
    x = model["embed"][tokens]
    causal = torch.ones(n, n, dtype=torch.bool, device=tokens.device).tril()
    for layer in model["layers"]:
        qkv = rms_norm(x, layer["attn_norm"], c.eps) @ layer["qkv"].T
        q, k, v = qkv.split([c.heads * c.head_dim, c.kv_heads * c.head_dim,
                             c.kv_heads * c.head_dim], dim=-1)
        heads = lambda t, h: t.view(b, n, h, c.head_dim).transpose(1, 2)  # noqa: E731
        q = rotate(heads(q, c.heads), cos, sin)
        k = rotate(heads(k, c.kv_heads), cos, sin).repeat_interleave(c.heads // c.kv_heads, 1)
        v = heads(v, c.kv_heads).repeat_interleave(c.heads // c.kv_heads, 1)
        attn = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=causal)
        x = x + attn.transpose(1, 2).reshape(b, n, -1) @ layer["o"].T
        gate, up = (rms_norm(x, layer["mlp_norm"], c.eps) @ layer["gate_up"].T).chunk(2, -1)
        x = x + (torch.nn.functional.silu(gate) * up) @ layer["down"].T
    return rms_norm(x, model["norm"], c.eps) @ model["lm_head"].T


def check(c: Config, batch: int, length: int, device, dtype, layer_fn=decoder_layer,
          graph=False):
    """Decode `length` random tokens one at a time with the cache (through one CUDA graph, with
    `graph`: each token and position written into the buffers it was captured on), and compare
    every step's logits with the full forward pass's at that position. Returns the relative
    error ||step - full|| / ||full|| over all positions; raises ValueError above TOLERANCE."""
    model = random_model(c, device, dtype)
    cache, rope = kv_cache(c, batch, length, device, dtype), rope_tables(c, length, device)
    tokens = torch.randint(0, c.vocab, (batch, length), device=device)
    token, pos = tokens[:, 0].clone(), torch.zeros(1, dtype=torch.long, device=device)
    step = lambda: decode_step(model, cache, rope, token, pos, c, layer_fn)  # noqa: E731
    step = as_cuda_graph(step) if graph else step
    steps = []
    for i in range(length):
        token.copy_(tokens[:, i])
        pos.fill_(i)
        steps.append(step().to(torch.float32, copy=True))  # a graph reuses its logits buffer
    steps = torch.stack(steps, dim=1)
    full = full_forward(model, tokens, c).float()
    error = ((steps - full).norm() / full.norm()).item()
    if not error <= TOLERANCE:
        raise ValueError(f"cached decode differs from the full forward pass: {error:.3g}")
    return error
# --8<-- [end:check]


# --8<-- [start:demo]
if __name__ == "__main__":
    if len(sys.argv) > 1:
        print(f"error: {sys.argv[0]} takes no arguments", file=sys.stderr)
        sys.exit(2)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    small = Config(layers=2, hidden=256, heads=8, kv_heads=2, head_dim=32, ffn=512, vocab=1000)
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    error = check(small, batch=3, length=12, device=device, dtype=dtype)
    attention = "split-KV Triton kernel" if device == "cuda" and triton else "PyTorch's SDPA"
    print(f"{device}, {dtype}, attention by {attention}: 12 cached steps vs full forward, "
          f"relative error {error:.2e}")
    if device == "cuda":
        error = check(small, batch=3, length=12, device=device, dtype=dtype,
                      layer_fn=compiled_layer(), graph=True)
        print(f"compiled, one CUDA graph: relative error {error:.2e}")
    print("OK: every cached step matches the full forward pass")
# --8<-- [end:demo]
