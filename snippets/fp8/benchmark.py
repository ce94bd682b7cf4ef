"""FP8 (e4m3, per-tensor scales, torch._scaled_mm) against BF16 (torch.matmul), registered with
the benchmark runner, at 2048, 4096 and 8192.

Run it with:  python snippets/bench/run.py fp8 --output fp8.json   (needs an FP8-capable GPU)
`kernel` times the product on operands already in their format; `end_to_end` starts from the
float32 matrices on the device (the casts, and for FP8 the scales, included). The error of each
product is measured against float64 products: of the original float32 inputs (`value`) and of
the operands as the tensor cores saw them (`vs_operands`).
"""

from __future__ import annotations

from bench import run  # first: its Ctrl-C handler covers the imports below

import sys

from bench.runner import Benchmark, Case, Prepared, Variant

# --8<-- [start:register]
VARIANTS = {
    "bf16": Variant("BF16 `torch.matmul`"),
    "fp8_e4m3": Variant("FP8 e4m3 `torch._scaled_mm`, per-tensor scales"),
    "fp8_e4m3_fast": Variant("FP8 e4m3, `use_fast_accum=True`"),
}
CASES = {f"n-{n}": Case({"n": n}) for n in (2048, 4096, 8192)}
# --8<-- [end:register]


def reference(p: dict) -> dict:
    import torch

    g = torch.Generator(device="cuda").manual_seed(p["n"])
    a, b = (torch.randn(p["n"], p["n"], device="cuda", generator=g) for _ in range(2))
    return {"a": a, "b": b}


def operands(variant: str, a, b):
    """What the product is given, and what those operands mean as numbers (dequantised)."""
    from fp8_matmul import quantize

    if variant == "bf16":
        a16, b16 = a.bfloat16(), b.bfloat16()
        return (a16, b16), (a16, b16)
    a_q, s_a = quantize(a)
    bt_q, s_b = quantize(b.t().contiguous())
    return (a_q, s_a, bt_q, s_b), (a_q.float() * s_a, (bt_q.float() * s_b).t())


def product(variant: str, ops):
    import torch

    from fp8_matmul import fp8_matmul

    if variant == "bf16":
        return ops[0] @ ops[1]
    if variant == "fp8_e4m3":
        return fp8_matmul(*ops)
    a_q, s_a, bt_q, s_b = ops
    return torch._scaled_mm(a_q, bt_q.t(), scale_a=s_a, scale_b=s_b, out_dtype=torch.bfloat16,
                            use_fast_accum=True)


def check(variant: str, result, ref: dict) -> dict:
    from fp8_matmul import errors

    vs_input, vs_operands = errors(ref["a"], ref["b"], result,
                                   *operands(variant, ref["a"], ref["b"])[1])
    # Rounding both operands and the result gives about one unit roundoff u (rms, relative):
    # twice u flags a wrong product, not rounding. e4m3 keeps 4 significant bits, BF16 8.
    u = 2**-4 if variant.startswith("fp8") else 2**-8
    return {"metric": "relative_error", "value": vs_input, "vs_operands": vs_operands,
            "ok": vs_input < 2 * u}


def counts(variant: str, p: dict, ref) -> dict:
    n = p["n"]
    size = 2 if variant == "bf16" else 1  # bytes per operand element; the result is BF16
    return {"flops": 2 * n**3, "bytes": 2 * size * n * n + 2 * n * n}


def setup(variant: str, p: dict) -> Prepared:
    ref = reference(p)
    ops = operands(variant, ref["a"], ref["b"])[0]
    last = {}

    def kernel():
        last["c"] = product(variant, ops)

    def from_float32():  # host-clock timed: wait for the device before returning
        import torch

        c = product(variant, operands(variant, ref["a"], ref["b"])[0])
        torch.cuda.synchronize()
        return c
    return Prepared(run=from_float32, kernel=kernel, fetch=lambda: last["c"])


BENCHMARK = Benchmark(name="fp8", variants=VARIANTS, cases=CASES, setup=setup,
                      reference=reference, check=check, counts=counts)

if __name__ == "__main__":
    sys.exit(run.main(BENCHMARK))
