"""Run 3 sweep: matmul_triton.py's tile configurations with B stored N x K (the layout of run 3),
at 4096^3 on the H200, against torch.matmul on the same BF16 tensors. Prints one line a config.
Run from the repository root:  PYTHONPATH=snippets/matmul python3 gpu/explore/triton-layout-sweep.py"""
import torch

import matmul_triton as mt

n = 4096
a = torch.randn(n, n, device="cuda").to(torch.bfloat16)
bt = torch.randn(n, n, device="cuda").to(torch.bfloat16)  # B^T, N x K
b = bt.T  # the K x N view the kernel gets
c = torch.empty(n, n, device="cuda", dtype=torch.float32)


def time_ms(fn, calls=50):
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    best = []
    for _ in range(10):
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        best.append(start.elapsed_time(end) / calls)
    return sorted(best)[5]


ref = time_ms(lambda: torch.matmul(a, b, out=None))
print(f"torch.matmul bf16 (B^T stored): {ref:.3f} ms {2 * n**3 / ref / 1e9:.1f} TFLOP/s")
EXTRA = [(128, 256, 128, 8, 8, 3), (128, 128, 64, 8, 8, 4), (64, 256, 64, 8, 4, 4),
         (128, 256, 64, 8, 8, 5), (256, 128, 64, 8, 8, 3), (128, 128, 128, 8, 8, 3)]
for cfg in [*mt.CONFIGS, *EXTRA]:
    try:
        ms = time_ms(lambda: mt.matmul_into(a, b, c, cfg))
    except Exception as exc:  # a tile too large for shared memory
        print(f"triton {cfg} failed: {str(exc).splitlines()[0][:100]}")
        continue
    print(f"triton {cfg} {ms:.3f} ms {2 * n**3 / ms / 1e9:.1f} TFLOP/s {100 * ref / ms:.1f}% of torch")
