"""LLM decode through Llama 3.1 8B's shape, batch 1, 8, 64, against bytes read / the bandwidth of a
large torch copy_ in the same run. Run: python snippets/bench/run.py decode   (a CUDA GPU)"""

import functools, gc, numpy as np, torch  # noqa: E401
from bench.adapters import Built, DeviceCopy
from bench.registry import Benchmark, Case, Variant, exact, per_case
import llama_decode as ld

C, CONTEXT = ld.Config(), 1024  # 1,024 tokens in the cache; the step writes and reads one more
model = functools.cache(functools.partial(ld.random_model, C, "cuda"))
layer = functools.cache(lambda compiled, split_kv: functools.partial(  # split_kv: a bool argument
    ld.compiled_layer() if compiled else ld.decoder_layer, split_kv=split_kv))  # compiles apart

@per_case
def session(p):  # random keys and values at positions 0..CONTEXT-1; the cache's bytes, measured
    gc.collect()  # the last case's cache freed now, not inside the count below
    before = torch.cuda.memory_allocated()
    cache = ld.kv_cache(C, p["batch"], CONTEXT + 1, "cuda", new=torch.randn)
    allocated = torch.cuda.memory_allocated() - before  # what the allocator handed out for it
    rope, pos = ld.rope_tables(C, CONTEXT + 1, "cuda"), torch.tensor([CONTEXT], device="cuda")
    tokens = torch.randint(0, C.vocab, (p["batch"],), device="cuda")
    read = ld.bytes_per_step(model(), cache, p["batch"])  # 2 FLOPs a 2-byte weight a sequence
    extra = {**read, "kv_cache_allocated": allocated, "kv_positions": CONTEXT + 1,
             "config": vars(C)}
    return (model(), cache, rope, tokens, pos, C), {
        "bytes": sum(read.values()), "flops": read["weights"] * p["batch"], "extra": extra}

def step(compiled: bool, graph: bool, split_kv: bool, p):  # the case's step, built now
    made = functools.partial(ld.decode_step, *session(p)[0], layer(compiled, split_kv))
    return ld.as_cuda_graph(made) if graph else made

step_row = lambda compiled, graph, split_kv=True: Built(  # noqa: E731 - end to end: a step, waited
    step, (compiled, graph, split_kv), get=lambda out: torch.cuda.synchronize() or out)

# --8<-- [start:register]
VARIANTS = {
    "eager": Variant("eager PyTorch", step="1", measure=step_row(False, False)),
    "eager_graph": Variant("eager, one CUDA graph", step="2", measure=step_row(False, True)),
    "compiled": Variant("`torch.compile`", step="3", measure=step_row(True, False)),
    "compiled_graph": Variant("`torch.compile`, one CUDA graph", step="4",
                              measure=step_row(True, True)),
    "compiled_graph_sdpa": Variant("`torch.compile`, one CUDA graph, SDPA's attention (not split)",
                                   step="4", measure=step_row(True, True, split_kv=False)),
    "torch_copy": Variant("PyTorch `copy_`", group="copy", measure=DeviceCopy("torch")),
}
CASES = {"copy": Case({"n": 2**28}, variants=("torch_copy",)),  # 1 GiB read, 1 GiB written
         **{f"batch-{b}": Case({"batch": b, "context": CONTEXT}, variants=tuple(VARIANTS)[:5])
            for b in (1, 8, 64)}}
# --8<-- [end:register]

def inputs(p):  # the copy's (1 GiB of ones); a step makes its own on the GPU
    return (np.ones(p["n"], np.float32),) if "n" in p else ()

def reference(p):  # a step's: the eager step with SDPA's attention, PyTorch's own
    return inputs(p)[0] if "n" in p else step(False, False, False, p)().float().cpu()

def check(variant, got, ref):  # a step vs eager: two BF16 roundings of 32 layers, a few % apart
    if variant == "torch_copy":
        return exact(got, ref)
    error = ((got.float().cpu() - ref).norm() / ref.norm()).item()
    return {"metric": "relative_error", "bound": 0.1, "value": error, "ok": error <= 0.1}

BENCHMARK = Benchmark(  # counts: the copy's bytes read and written; a step's, from its session
    "decode", VARIANTS, CASES, reference, check, inputs=inputs,
    counts=lambda variant, p, ref: {"bytes": 8 * p["n"]} if "n" in p else session(p)[1])
