"""Attention's registry: naive PyTorch ops, our fused Triton kernel, PyTorch's SDPA (one backend at
a time); BF16 (B, H, N, d), B N = 16384, H d = 2048. Run: python snippets/bench/run.py attention"""

import functools, importlib  # noqa: E401

from bench.adapters import Lesson
from bench.registry import Benchmark, Case, Variant
import attention_triton as at

GPU = at.torch is not None and at.torch.cuda.is_available()  # naive, SDPA, memory: GPU only
lesson = importlib.import_module("attention_torch") if GPU else None

def bf16(q, k, v, causal):  # the kernel's BF16 copies: made once for it, in every end-to-end call
    return q.bfloat16(), k.bfloat16(), v.bfloat16(), causal

def row(attend):  # end to end: the casts, the attention, and the wait for it
    return Lesson(None, bf16, attend, get=lambda out: at.torch.cuda.synchronize() or out)

# --8<-- [start:register]
VARIANTS = {"naive": Variant("naive, PyTorch ops", measure=row("attention_torch:naive")),
            "triton": Variant("ours, fused Triton", measure=row(at.attention)),
            **{f"sdpa/{b}": Variant(f"SDPA, {b}", group="library",
                                    measure=row(lambda *a, b=b: lesson.sdpa(b, *a)))
               for b in ("flash", "cudnn", "efficient", "math")}}

def case(n: int, d: int, causal: bool) -> Case:  # a backend that refuses is left out, with why
    why = lesson.refusals(d, causal) if GPU else {}
    return Case({"n": n, "d": d, "causal": causal, "batch": 16384 // n, "heads": 2048 // d},
                tuple(v for v in VARIANTS if v[5:] not in why),
                "; ".join(f"sdpa/{b} unavailable: {w}" for b, w in why.items()))

CASES = {f"d{d}-n{n}{'-causal' * c}": case(n, d, c)
         for d in (128, 64) for c in (False, True) for n in (1024, 2048, 4096, 8192, 16384)}
# --8<-- [end:register]

@functools.lru_cache(maxsize=1)  # every row of a case starts from the same FP32 inputs
def fp32_inputs(n, d, causal, batch, heads):
    return (*lesson.random_qkv(batch, heads, n, d, seed=n + d), causal)

def check(variant, o, ref):  # on 256 query rows of two heads against float32, BF16's bound
    error = at.slice_error(o, *ref)
    return {"metric": "relative_frobenius", "value": min(error, 1e300),
            "ok": error <= at.tolerance("bf16")}

def counts(variant: str, p: dict, ref) -> dict:  # causal: half the (query, key) pairs and FLOPs
    b, h, n, d, causal = p["batch"], p["heads"], p["n"], p["d"], p["causal"]
    tuned = getattr(at.attention_kernel, "best_config", "")  # the autotuner's pick for this case
    extra = {"config": str(tuned)} if variant == "triton" else {}
    if variant == "naive":  # the memory it needs here; past the largest case, until it runs out
        extra["peak_bytes"] = lesson.peak_memory(n, h, d, causal, b)
        if (n, d, causal) == (16384, 128, False):
            extra["beyond"] = lesson.memory_sweep(2 * n, h, d, largest=16 * n)
    return {"flops": 4 * b * h * n * n * d // (1 + causal), "bytes": 8 * b * h * n * d,  # Q K V O
            "extra": extra}

BENCHMARK = Benchmark(  # the reference: float32 from the same BF16 inputs as the kernel's
    "attention", VARIANTS, CASES, check=check, counts=counts, inputs=lambda p: fp32_inputs(**p),
    reference=lambda p: at.reference_slice(*bf16(*fp32_inputs(**p))))
