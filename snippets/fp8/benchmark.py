"""FP8 (e4m3, per-tensor scales) against BF16: `kernel` times the product on operands already in
their format, `end_to_end` starts from the float32 matrices on the device (casts and scales
included). Run: python snippets/bench/run.py fp8   (an FP8-capable GPU)"""
from functools import partial

from bench.adapters import Lesson, resolve
from bench.registry import Benchmark, Case, Variant, per_case
import fp8_matmul as fp8

# put (untimed in `kernel`), multiply; end to end waits for the device, as a copy back would
row = lambda put, product: Lesson(  # noqa: E731
    None, put, product, get=lambda c: resolve("torch.cuda:synchronize")() or c)
bf16 = row(lambda a, b: (a.bfloat16(), b.bfloat16()), lambda a16, b16: a16 @ b16)
# --8<-- [start:register]
VARIANTS = {
    "bf16": Variant("BF16 `torch.matmul`", measure=bf16),
    "fp8_e4m3": Variant("FP8 e4m3 `torch._scaled_mm`, per-tensor scales",
                        measure=row(fp8.quantized, fp8.fp8_matmul)),
    "fp8_e4m3_fast": Variant("FP8 e4m3, `use_fast_accum=True`",
                             measure=row(fp8.quantized, partial(fp8.fp8_matmul, fast_accum=True))),
}
CASES = {f"n-{n}": Case({"n": n}) for n in (2048, 4096, 8192)}
# --8<-- [end:register]
inputs = per_case(lambda p: fp8.inputs(p["n"], seed=p["n"]))  # a and b: rows' and reference's


def check(variant: str, result, ref: tuple) -> dict:  # ref: the inputs a and b
    seen = VARIANTS[variant].measure.put(*ref)  # the operands as the tensor cores saw them
    seen = seen if variant == "bf16" else fp8.dequantized(*seen)  # what FP8 codes and scales mean
    vs_input, vs_operands = fp8.errors(*ref, result, *seen)
    # Rounding both operands and the result gives about one unit roundoff u (rms, relative):
    # twice u flags a wrong product, not rounding. e4m3 keeps 4 significant bits, BF16 8.
    u = 2**-4 if variant.startswith("fp8") else 2**-8
    return {"metric": "relative_error", "value": vs_input, "vs_operands": vs_operands,
            "ok": vs_input < 2 * u}


def counts(variant: str, p: dict, ref) -> dict:
    n, size = p["n"], 2 if variant == "bf16" else 1  # bytes per operand element; result BF16
    return {"flops": 2 * n**3, "bytes": 2 * size * n * n + 2 * n * n}


BENCHMARK = Benchmark("fp8", VARIANTS, CASES, inputs, check, counts, inputs)
