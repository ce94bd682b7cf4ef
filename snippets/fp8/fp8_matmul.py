"""An FP8 (e4m3) matrix product on an NVIDIA GPU with PyTorch's scaled matmul, next to BF16:
each operand is scaled so that its largest magnitude lands on e4m3's largest finite value, cast
to one byte per element, multiplied on the tensor cores with float32 accumulation, and the two
scales are applied to the result. Both products are compared with a float64 product.
Run: python fp8_matmul.py [N]   (needs an NVIDIA GPU with FP8 tensor cores: Hopper, Ada or newer)
"""
import argparse

# --8<-- [start:imports]
import numpy as np

E4M3_MAX = 448.0  # largest finite float8_e4m3fn: 1.75 * 2^8 (no infinities in this format)
# --8<-- [end:imports]


# --8<-- [start:scale]
def scale_for(amax: float) -> float:
    """The per-tensor scale s with amax / s == E4M3_MAX: x / s uses e4m3's whole range, and
    s * q gives back x (to e4m3's 3 mantissa bits) from its one-byte code q."""
    return max(float(amax), 1e-12) / E4M3_MAX


def relative_error(got, want) -> float:
    """||got - want|| / ||want|| (Frobenius norms), in float64."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.linalg.norm(got - want) / np.linalg.norm(want))
# --8<-- [end:scale]


# --8<-- [start:quantize]
def quantize(t):
    """(q, s): t / s rounded to float8_e4m3fn, and s as a float32 tensor (per-tensor scale)."""
    import torch

    s = torch.tensor(scale_for(t.abs().max().item()), dtype=torch.float32, device=t.device)
    q = (t.float() / s).clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn)
    return q, s


def quantized(a, b):
    """fp8_matmul's operands: a and b's columns as rows (the layout cuBLAS wants), quantised."""
    return (*quantize(a), *quantize(b.t().contiguous()))


def fp8_matmul(a_q, s_a, b_q, s_b, fast_accum=False):
    """(s_a * a_q) @ (s_b * b_q) in BF16. cuBLAS wants the second operand column-major: b_q is
    given as b.T's rows (N x K, row-major) and passed transposed, which is free."""
    import torch

    return torch._scaled_mm(a_q, b_q.t(), scale_a=s_a, scale_b=s_b, out_dtype=torch.bfloat16,
                            use_fast_accum=fast_accum)
# --8<-- [end:quantize]


# --8<-- [start:check]
def dequantized(a_q, s_a, b_q, s_b):
    """What fp8_matmul's operands mean, in float32: a, and b (from its quantised rows b.T)."""
    return a_q.float() * s_a, (b_q.float() * s_b).t()


def errors(a, b, product, dequantised_a, dequantised_b) -> tuple[float, float]:
    """Relative error of `product` against float64 products: of the original a and b (what a
    user gets), and of the operands as the tensor cores saw them (the rounding of the product
    alone). a and b: float32 tensors; the dequantised ones: what the low-precision codes mean."""
    want = (a.double() @ b.double()).cpu().numpy()
    seen = (dequantised_a.double() @ dequantised_b.double()).cpu().numpy()
    got = product.double().cpu().numpy()
    return relative_error(got, want), relative_error(got, seen)
# --8<-- [end:check]


def inputs(n: int, seed: int = 0):
    """Two n x n float32 matrices of standard normal values on the GPU, drawn from `seed`."""
    import torch

    g = torch.Generator(device="cuda").manual_seed(seed)
    return tuple(torch.randn(n, n, device="cuda", generator=g) for _ in range(2))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="FP8 and BF16 products against float64.")
    parser.add_argument("n", nargs="?", type=int, default=1024, help="matrix size (multiple of 16)")
    n = parser.parse_args().n
    if n < 16 or n % 16:
        parser.error(f"n must be a positive multiple of 16 (FP8 products need it), got {n}")
    a, b = inputs(n)  # after the arguments: a wrong n is answered without loading PyTorch
    operands = quantized(a, b)
    fp8 = fp8_matmul(*operands)
    bf16 = a.bfloat16() @ b.bfloat16()
    for name, c, da, db in (("fp8 e4m3", fp8, *dequantized(*operands)),
                            ("bf16", bf16, a.bfloat16(), b.bfloat16())):
        vs_input, vs_seen = errors(a, b, c, da, db)
        print(f"{name:9} relative error {vs_input:.2e} (vs its own operands {vs_seen:.2e})")
