"""The timeline topic's registry: copy in, compute, copy out alone and as a chunked pipeline on
streams (the ideal is the longest stage alone), and a chain of tiny kernels launched one by one
or replayed as a CUDA graph. Run: python snippets/bench/run.py timeline"""
from bench import run  # first: its Ctrl-C handler covers the imports below
import importlib
from pathlib import Path

import numpy as np

from bench.adapters import CTable, Custom, resolve
from bench.registry import Benchmark, Case, Prepared, Variant, exact, per_case

HERE, WORK, LENGTHS = Path(__file__).parent, 2048, (1, 10, 100, 1000)  # as overlap.cu, graphs.cu
PIPELINES = ((1, 1), (4, 1), (4, 2), (4, 4), (8, 2), (8, 4), (16, 2), (16, 4), (16, 8), (32, 3),
             (32, 4), (32, 8), (64, 4), (64, 8), (128, 8))  # overlap.cu's (chunks, streams)
WAYS = {"stream": "one by one", "graph": "one CUDA graph", "compiled": "`torch.compile`"}


def numba(chunks, streams):  # overlap_numba.py's pipeline, from its pinned buffers
    def prepare(p):
        bufs = resolve("overlap_numba:buffers")(p["n"], streams)
        return Prepared(run=lambda: resolve("overlap_numba:pipeline")(*bufs, chunks, p["work"]),
                        record={"extra": {"chunks": chunks, "streams": streams}})
    return Custom(prepare)


def torch(way, length):  # graphs_torch.py's chain: one by one, replayed as a graph, compiled
    def prepare(p):
        lesson = importlib.import_module("graphs_torch")
        x, w = lesson.inputs("cuda")
        compiled = lesson.compiled(length) if way == "compiled" else None
        fn = lesson.graphed(x, w, length) if way == "graph" else (
            (lambda: compiled(x, w)) if compiled else (lambda: lesson.chain(x, w, length)))
        last = {}
        return Prepared(run=lambda: fn().cpu().numpy(), kernel=lambda: last.update(out=fn()),
                        fetch=lambda: last["out"].cpu().numpy(), record={"extra": {"kernels": length}})
    return Custom(prepare)


# --8<-- [start:register]
C = lambda label, group: Variant(f"CUDA C, {label}", group=group, runs=False)  # noqa: E731
VARIANTS = {
    "cuda_c_overlap": Variant("CUDA C (overlap.cu's rows)", measure=CTable(HERE / "overlap.cu")),
    **{f"cuda_c_{s}": C(s.replace("_", " "), "stage") for s in ("copy_in", "compute", "copy_out")},
    **{f"cuda_c_c{c}_s{s}": C(f"{c} chunks on {s} streams", "pipeline") for c, s in PIPELINES},
    **{f"numba_c{c}_s{s}": Variant(f"Numba, {c} chunks on {s} streams", group="pipeline",
                                   measure=numba(c, s)) for c, s in ((1, 1), (8, 4), (32, 4), (64, 8))},
    "cuda_c_graphs": Variant("CUDA C (graphs.cu's rows)", measure=CTable(HERE / "graphs.cu")),
    **{f"cuda_c_{way}_{n}": C(f"{n} kernels, {WAYS[way]}", way) for n in LENGTHS
       for way in ("stream", "graph")},
    **{f"torch_{way}_{n}": Variant(f"PyTorch, {n} kernels, {WAYS[way]}", group=way, measure=torch(way, n))
       for way in WAYS for n in LENGTHS if way != "compiled" or n == 100},  # compiling: seconds each
}
NUMBA, TORCH = ([k for k in VARIANTS if k.startswith(lib)] for lib in ("numba_", "torch_"))
CASES = {"overlap": Case({"n": 2**26, "work": WORK}, variants=("cuda_c_overlap", *NUMBA)),
         "graphs": Case({"n": 1024}, variants=("cuda_c_graphs", *TORCH)),
         "smoke": Case({"n": 1027, "work": 3}, variants=tuple(NUMBA), default=False)}
# --8<-- [end:register]
want = per_case(lambda p: {"numba": (np.arange(p["n"]) % 1000 + p.get("work", 0)).astype(np.float32),
                           "torch": np.arange(256, dtype=np.float32).reshape(16, 16) % 7})
lib = lambda variant: variant.partition("_")[0]  # noqa: E731 - "numba" or "torch": what it checks
BENCHMARK = Benchmark("timeline", VARIANTS, CASES, reference=want,
                      check=lambda v, got, ref: exact(np.asarray(got), ref[lib(v)]),
                      counts=lambda v, p, ref: {"bytes": 8 * p["n"], "flops": 2 * p["work"] * p["n"]}
                      if lib(v) == "numba" else {"bytes": 0, "flops": 0})
if __name__ == "__main__":
    raise SystemExit(run.main(BENCHMARK))
