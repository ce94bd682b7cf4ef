import time, json, os, sys, subprocess
def sh(c):
    r = subprocess.run(c, shell=True, capture_output=True, text=True, timeout=60)
    return (r.stdout + r.stderr).strip()
print("== tools")
for c in ["nvidia-smi -L", "nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,power.limit,memory.total --format=csv",
          "which nsys ncu nvcc cuobjdump gcc cc g++ 2>&1", "nsys --version", "ncu --version | tail -1", "nvcc --version | tail -2",
          "ls /usr/local/ | head -30", "ls -d /opt/nvidia/* /usr/local/cuda*/nsight* 2>&1 | head",
          "find / -maxdepth 6 -name 'nsys' -type f 2>/dev/null | head", "nproc", "cat /proc/cpuinfo | grep 'model name' | head -1",
          "python3 -m pip list 2>/dev/null | grep -i -E 'torch|triton|jax|cupy|numba|numpy|nvtx|flash|cudnn|keras|tensorboard|perfetto|xprof|nvidia' "]:
    print("$", c); print(sh(c))
print("== python")
import torch, triton
print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(), "triton", triton.__version__)
import triton.language as tl
print("tl.make_tensor_descriptor", hasattr(tl, "make_tensor_descriptor"), "triton.set_allocator", hasattr(triton, "set_allocator"))
try:
    import cupy; print("cupy", cupy.__version__)
except Exception as e: print("cupy", e)
try:
    import jax; print("jax", jax.__version__, jax.devices())
except Exception as e: print("jax", e)
try:
    import nvtx; print("nvtx module present")
except Exception as e: print("nvtx", e)
print("torch.cuda.nvtx", hasattr(torch.cuda, "nvtx"))
dev = "cuda"
def bench(fn, n=20):
    fn(); torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ts = []
    for _ in range(n):
        s.record(); fn(); e.record(); e.synchronize(); ts.append(s.elapsed_time(e))
    ts.sort(); return ts[len(ts)//2] * 1e-3
print("== SDPA backends (bf16)")
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
for d in (64, 128):
    for N in (4096, 16384):
        for causal in (False, True):
            B, H = (4, 16) if N == 4096 else (1, 16)
            q, k, v = (torch.randn(B, H, N, d, device=dev, dtype=torch.bfloat16) for _ in range(3))
            flops = 4 * B * H * N * N * d * (0.5 if causal else 1)
            row = []
            for be in (SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH):
                if be == SDPBackend.MATH and N > 4096: continue
                try:
                    with sdpa_kernel(be):
                        t = bench(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), 10)
                    row.append(f"{be.name}={flops/t/1e12:.0f}")
                except Exception as ex:
                    row.append(f"{be.name}=ERR({str(ex).splitlines()[0][:80]})")
            print(f"d={d} N={N} causal={causal} B={B} H={H}:", " ".join(row), "TFLOP/s")
            del q, k, v
torch.cuda.empty_cache()
print("== copy bandwidth (torch copy_, 4 GiB)")
a = torch.empty(1 << 30, device=dev, dtype=torch.float32); b = torch.empty_like(a)
t = bench(lambda: b.copy_(a)); print(f"copy {2*a.nbytes/t/1e9:.0f} GB/s")
del a, b
print("== launch cost: 1000 tiny adds, eager vs CUDA graph")
x = torch.zeros(1024, device=dev)
def chain():
    for _ in range(1000): x.add_(1.0)
t_eager = bench(chain, 5)
g = torch.cuda.CUDAGraph(); s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    chain()
torch.cuda.current_stream().wait_stream(s)
with torch.cuda.graph(g): chain()
t_graph = bench(g.replay, 5)
print(f"eager {t_eager/1000*1e6:.2f} us/kernel, graph {t_graph/1000*1e6:.2f} us/kernel")
print("== torch.compile")
try:
    f = torch.compile(lambda t: torch.sin(t) * 2 + 1, mode="reduce-overhead")
    for _ in range(3): f(x)
    torch.cuda.synchronize(); print("torch.compile reduce-overhead OK")
except Exception as ex: print("torch.compile FAILED", str(ex).splitlines()[0][:200])
print("== torch.profiler")
try:
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
        chain(); torch.cuda.synchronize()
    p.export_chrome_trace("/tmp/tp.json"); print("torch.profiler trace bytes", os.path.getsize("/tmp/tp.json"))
    ev = json.load(open("/tmp/tp.json"))["traceEvents"]; cats = {}
    for e in ev: cats[e.get("cat")] = cats.get(e.get("cat"), 0) + 1
    print("categories", cats)
except Exception as ex: print("torch.profiler FAILED", ex)
print("== jax.profiler")
try:
    os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"
    import jax, jax.numpy as jnp
    f = jax.jit(lambda a: jnp.sin(a) @ a)
    a = jnp.ones((1024, 1024)); f(a).block_until_ready()
    with jax.profiler.trace("/tmp/jt", create_perfetto_trace=True):
        for _ in range(5): f(a).block_until_ready()
    print(sh("find /tmp/jt -type f | xargs ls -la"))
except Exception as ex: print("jax.profiler FAILED", repr(ex)[:300])
print("== nsys smoke")
if sh("which nsys"):
    print(sh("cd /tmp && timeout 60 nsys profile -t cuda,nvtx -o /tmp/ns --force-overwrite true python3 -c \"import torch; x=torch.ones(10,device='cuda'); [x.add_(1) for _ in range(100)]; torch.cuda.synchronize()\" 2>&1 | tail -5; ls -la /tmp/ns*; timeout 60 nsys stats -r cuda_gpu_trace -f csv /tmp/ns.nsys-rep 2>&1 | head -5"))
