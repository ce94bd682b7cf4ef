"""LLM decode through Llama 3.1 8B's shape, batch 1, 8, 64, against bytes read / the bandwidth of a
large torch copy_ in the same run. Run: python snippets/bench/run.py decode   (a CUDA GPU)"""
from bench import run  # first: its Ctrl-C handler covers the imports below

import functools, gc, numpy as np  # noqa: E401
from bench.adapters import Custom, DeviceCopy
from bench.registry import Benchmark, Case, Prepared, Variant, exact, per_case
import llama_decode as ld

C, CONTEXT = ld.Config(), 1024  # 1,024 tokens in the cache; the step writes and reads one more
model = functools.cache(lambda: ld.random_model(C, "cuda"))
layer = functools.cache(lambda compiled, split_kv: functools.partial(  # split_kv: a bool argument
    ld.compiled_layer() if compiled else ld.decoder_layer, split_kv=split_kv))  # compiles apart


@per_case
def session(p):  # random keys and values at positions 0..CONTEXT-1; the cache's bytes, measured
    import torch
    gc.collect()  # the last case's cache freed now, not inside the count below
    before = torch.cuda.memory_allocated()
    cache = ld.kv_cache(C, p["batch"], CONTEXT + 1, "cuda", new=torch.randn)
    allocated = torch.cuda.memory_allocated() - before  # what the allocator handed out for it
    args = (model(), cache, ld.rope_tables(C, CONTEXT + 1, "cuda"), torch.randint(
        0, C.vocab, (p["batch"],), device="cuda"), torch.tensor([CONTEXT], device="cuda"), C)
    read = ld.bytes_per_step(model(), cache, p["batch"])  # 2 FLOPs a 2-byte weight a sequence
    counts = {"bytes": sum(read.values()), "flops": read["weights"] * p["batch"], "extra": {
        **read, "kv_cache_allocated": allocated, "kv_positions": CONTEXT + 1, "config": vars(C)}}
    return {"counts": counts, "step": lambda on, split_kv=True: functools.partial(
        ld.decode_step, *args, layer(on, split_kv))}


def step_row(compiled: bool, graph: bool, split_kv=True):  # the first call timed apart
    def prepare(p):
        import time, torch  # noqa: E401
        t0, step, last = time.perf_counter(), session(p)["step"](compiled, split_kv), {}
        step = ld.as_cuda_graph(step) if graph else step
        step(), torch.cuda.synchronize()
        return Prepared(run=lambda: (step(), torch.cuda.synchronize())[0], kernel=lambda: last.update(
            out=step()), fetch=lambda: last["out"], record={"extra": {"first_call_s": time.perf_counter() - t0}})
    return Custom(prepare)


# --8<-- [start:register]
VARIANTS = {
    "eager": Variant("eager PyTorch", step="1", measure=step_row(False, False)),
    "eager_graph": Variant("eager, one CUDA graph", step="2", measure=step_row(False, True)),
    "compiled": Variant("`torch.compile`", step="3", measure=step_row(True, False)),
    "compiled_graph": Variant("`torch.compile`, one CUDA graph", step="4", measure=step_row(True, True)),
    "compiled_graph_sdpa": Variant("`torch.compile`, one CUDA graph, SDPA's attention (not split)",
                                   step="4", measure=step_row(True, True, split_kv=False)),
    "torch_copy": Variant("PyTorch `copy_`", group="copy", measure=DeviceCopy("torch")),
}
CASES = {"copy": Case({"n": 2**28}, variants=("torch_copy",)),  # 1 GiB read, 1 GiB written
         **{f"batch-{b}": Case({"batch": b, "context": CONTEXT}, variants=tuple(VARIANTS)[:5]) for b in (1, 8, 64)}}
# --8<-- [end:register]
inputs = lambda p: (np.ones(p["n"], np.float32),) if "n" in p else ()  # noqa: E731
# the reference: the eager step with SDPA's attention, PyTorch's own (our kernel is checked too)
reference = lambda p: inputs(p)[0] if "n" in p else session(p)["step"](False, False)().float().cpu()  # noqa
check = lambda v, got, ref: exact(got, ref) if v == "torch_copy" else {  # noqa: E731 - vs eager:
    "metric": "relative_error", "bound": 0.1,  # two BF16 roundings of 32 layers: a few % apart
    "value": (e := ((got.float().cpu() - ref).norm() / ref.norm()).item()), "ok": e <= 0.1}
counts = lambda v, p, ref: {"bytes": 8 * p["n"]} if "n" in p else session(p)["counts"]  # noqa: E731
BENCHMARK = Benchmark("decode", VARIANTS, CASES, reference, check, counts, inputs)
if __name__ == "__main__":
    raise SystemExit(run.main(BENCHMARK))
