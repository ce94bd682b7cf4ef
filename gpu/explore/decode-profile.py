"""Exploration (issue 47): where the batch-1 decode step's time goes, compiled and replayed as one
CUDA graph (76 % of its bandwidth bound on an H100). Prints (1) the step's time, (2) the kernel
time by kernel name from torch.profiler over 20 replays, (3) the weight matrix products alone
(the same 32 x 4 products and the LM head, one graph) against the bytes they read, and a copy,
(4) one layer's attention over the cache in each candidate form at batch 1, 8 and 64 (which form
reads the cache nearest the copy's bandwidth: SDPA's backends, and the lesson's split-KV kernel
with its split count, a quarter and four times it, and smaller tiles), with the kernels the
lesson's form runs.
Run: python gpu/explore/decode-profile.py   (from the repository root, a GPU with 40 GB)"""
import collections, functools, sys  # noqa: E401
sys.path.insert(0, "snippets/decode")
import torch
from triton.testing import do_bench
import llama_decode as ld

C, CONTEXT = ld.Config(), 1024
model = ld.random_model(C, "cuda")
cache = ld.kv_cache(C, 1, CONTEXT + 1, "cuda", new=torch.randn)
args = (model, cache, ld.rope_tables(C, CONTEXT + 1, "cuda"),
        torch.randint(0, C.vocab, (1,), device="cuda"), torch.tensor([CONTEXT], device="cuda"), C)
read = sum(ld.bytes_per_step(model, cache, 1).values())
x = torch.empty(2**28, device="cuda"); y = torch.empty_like(x)  # noqa: E702
copy_ms = do_bench(lambda: y.copy_(x), warmup=20, rep=200)
bw = 8 * 2**28 / copy_ms / 1e6  # GB/s: 1 GiB read + 1 GiB written
print(f"copy: {bw:.0f} GB/s; step reads {read / 1e9:.3f} GB: bound {read / bw / 1e6:.3f} ms")
for compiled in (False, True):
    try:  # a failing step (the lesson's attention kernel, a compile) prints one line; on we go
        layer = ld.compiled_layer() if compiled else ld.decoder_layer
        step = ld.as_cuda_graph(functools.partial(ld.decode_step, *args, layer))
        ms = do_bench(step, warmup=10, rep=200)
    except Exception as e:
        print(f"{'compiled' if compiled else 'eager'}+graph failed: {type(e).__name__}: "
              f"{str(e).splitlines()[0][:150] if str(e) else ''}", flush=True)
        continue
    print(f"{'compiled' if compiled else 'eager'}+graph: {ms:.3f} ms, {read / ms / 1e6:.0f} GB/s, "
          f"{100 * read / bw / 1e6 / ms:.1f} % of bound", flush=True)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(20):
            step()
        torch.cuda.synchronize()
    per = collections.defaultdict(lambda: [0.0, 0])
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            per[e.name][0] += e.device_time / 20 / 1000
            per[e.name][1] += 1
    total = sum(t for t, _ in per.values())
    print(f"  kernel time {total:.3f} ms a step; by kernel (ms a step, launches a step):")
    for name, (t, n) in sorted(per.items(), key=lambda kv: -kv[1][0])[:14]:
        print(f"  {t:7.3f} {n // 20:5d}  {name[:100]}")
    del step
weights = [w for layer in model["layers"] for w in (layer["qkv"], layer["o"], layer["gate_up"],
           layer["down"])] + [model["lm_head"]]
v = torch.randn(1, C.hidden, device="cuda", dtype=torch.bfloat16)
vf = torch.randn(1, C.ffn, device="cuda", dtype=torch.bfloat16)
gemvs = ld.as_cuda_graph(lambda: [(vf if w.shape[1] == C.ffn else v) @ w.T for w in weights])
wbytes = sum(w.nbytes for w in weights)
ms = do_bench(gemvs, warmup=10, rep=200)
print(f"the weight products alone, one graph: {ms:.3f} ms, {wbytes / ms / 1e6:.0f} GB/s = "
      f"{100 * wbytes / ms / 1e6 / bw:.1f} % of the copy")
for w in (model["layers"][0]["qkv"], model["layers"][0]["o"], model["layers"][0]["gate_up"],
          model["layers"][0]["down"], model["lm_head"]):
    a = vf if w.shape[1] == C.ffn else v
    ms = do_bench(lambda: a @ w.T, warmup=20, rep=200)
    print(f"  {tuple(w.shape)}: {ms * 1000:.1f} us, {w.nbytes / ms / 1e6:.0f} GB/s")

# Issue 47, the attention over the cache alone: one layer's attention (this token's queries, the
# groups of four as rows, against a cache with every position written) in each form, over the
# 32 layers' caches in one CUDA graph (so no cache is still in L2 from the call before), at
# batch 1, 8 and 64: microseconds a layer and GB/s against the layer's K and V bytes, after each
# form's relative error against float32. One form failing prints one line; the others go on.
import contextlib  # noqa: E402
import math  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

F = torch.nn.functional


def probs(q, k, pos):  # the scores masked after `pos` and normalised, as the lesson had them
    scores = (q @ k.transpose(-1, -2)).float() / math.sqrt(C.head_dim)
    later = torch.arange(k.shape[2], device=q.device) > pos
    return scores.masked_fill(later, float("-inf")).softmax(-1).to(q.dtype)


def sdpa(backend=None, mask=True):
    def attend(q, k, v, vt, pos):
        written = torch.arange(k.shape[2], device=q.device).view(1, -1) <= pos
        with sdpa_kernel(backend) if backend else contextlib.nullcontext():
            return F.scaled_dot_product_attention(q, k, v, attn_mask=written if mask else None)
    return attend


@torch.compile(fullgraph=True, dynamic=False)
def mul_sum(q, k, v, vt, pos):  # an element-wise product and a sum: one Triton reduction
    return (probs(q, k, pos).unsqueeze(-1) * v.unsqueeze(2)).sum(-2)


def splitkv(scale=1, block_n=64):  # the lesson's kernel, its split count times `scale`
    def attend(q, k, v, vt, pos):
        splits = max(1, int(ld.split_count(q.shape[0], q.shape[1]) * scale))
        return ld.splitkv_attention(q, k, v, pos, splits, block_n)
    return attend


FORMS = {  # the lesson's forms first: a run cut short by its timeout still prints them
    "split-KV Triton kernel, torch.compile (the lesson)":
        torch.compile(splitkv(), fullgraph=True, dynamic=False),
    "split-KV Triton kernel, eager (its combine: 4 torch ops)": splitkv(),
    "sdpa with the mask, default backend (the CPU path; the GPU's before split-KV)": sdpa(),
    "split-KV Triton kernel, splits / 4": splitkv(1 / 4),
    "split-KV Triton kernel, splits x 4": splitkv(4),
    "split-KV Triton kernel, tiles of 32 keys": splitkv(block_n=32),
    "p @ v (the lesson before: cuBLAS)": lambda q, k, v, vt, pos: probs(q, k, pos) @ v,
    "(v^T @ p^T)^T": lambda q, k, v, vt, pos:
        (v.transpose(-1, -2) @ probs(q, k, pos).transpose(-1, -2)).transpose(-1, -2),
    "p @ vt^T, V cached as (head dim, length)":
        lambda q, k, v, vt, pos: probs(q, k, pos) @ vt.transpose(-1, -2),
    "sdpa with the mask, efficient": sdpa(SDPBackend.EFFICIENT_ATTENTION),
    "sdpa with the mask, cudnn": sdpa(SDPBackend.CUDNN_ATTENTION),
    "mul + sum, torch.compile": mul_sum,
    "sdpa flash, NO mask (not a valid step: a split-KV kernel's rate)":
        sdpa(SDPBackend.FLASH_ATTENTION, mask=False),
}
pos, graph = torch.tensor([CONTEXT], device="cuda"), None
for batch in (1, 8, 64):
    ks = ld.kv_cache(C, batch, CONTEXT + 1, "cuda", new=torch.randn)
    ks, vs = ks["k"], ks["v"]
    vts = [v.transpose(-1, -2).contiguous() for v in vs]
    q = torch.randn(batch, C.kv_heads, C.heads // C.kv_heads, C.head_dim, device="cuda",
                    dtype=torch.bfloat16)
    kv_bytes = ks[0].nbytes + vs[0].nbytes
    ref = F.softmax(q.float() @ ks[0].float().transpose(-1, -2) / math.sqrt(C.head_dim), -1) \
        @ vs[0].float()
    print(f"attention over the cache, batch {batch}: K and V {kv_bytes / 2**20:.1f} MiB a layer",
          flush=True)
    for name, form in FORMS.items():
        try:
            out = form(q, ks[0], vs[0], vts[0], pos).float()
            error = ((out - ref).norm() / ref.norm()).item()
            graph = ld.as_cuda_graph(lambda: [form(q, k, v, vt, pos)  # noqa: B023
                                              for k, v, vt in zip(ks, vs, vts)])
            us = do_bench(graph, warmup=5, rep=100) * 1000 / C.layers
            print(f"  {us:8.1f} us a layer, {kv_bytes / us / 1e3:5.0f} GB/s "
                  f"({100 * kv_bytes / us / 1e3 / bw:4.1f} % of the copy), error {error:.1e}: "
                  f"{name}", flush=True)
            if batch == 1 and name.endswith("(the lesson)"):
                with torch.profiler.profile(
                        activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
                    graph()
                    torch.cuda.synchronize()
                names = collections.Counter(e.name[:90] for e in prof.events()
                                            if e.device_type == torch.autograd.DeviceType.CUDA)
                for kernel, n in names.most_common(6):
                    print(f"      {n // C.layers} a layer: {kernel}")
        except Exception as e:  # a backend that refuses these shapes, a compile that fails
            print(f"  failed: {name}: {type(e).__name__}: {str(e).splitlines()[0][:150]}",
                  flush=True)
    del ks, vs, vts, graph
    torch.cuda.empty_cache()
