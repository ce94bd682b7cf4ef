"""Exploration (issue 47): where the batch-1 decode step's time goes, compiled and replayed as one
CUDA graph (76 % of its bandwidth bound on an H100). Prints (1) the step's time, (2) the kernel
time by kernel name from torch.profiler over 20 replays, (3) the weight matrix products alone
(the same 32 x 4 products and the LM head, one graph) against the bytes they read, and a copy.
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
    layer = ld.compiled_layer() if compiled else ld.decoder_layer
    step = ld.as_cuda_graph(functools.partial(ld.decode_step, *args, layer))
    ms = do_bench(step, warmup=10, rep=200)
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
