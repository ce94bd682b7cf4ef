"""Timeline registry: pipelines vs their longest stage, chains vs graphs. Run: run.py timeline"""
import functools
from importlib import import_module as lesson  # a row loads its lesson when measured
from pathlib import Path

import numpy as np

from bench.adapters import Built, CTable, Custom
from bench.registry import Benchmark, Case, Prepared, Variant, exact, per_case

HERE, WORK, LENGTHS = Path(__file__).parent, 2048, (1, 10, 100, 1000)  # as overlap.cu, graphs.cu
PIPELINES = ((1, 1), (4, 1), (4, 2), (4, 4), (8, 2), (8, 4), (16, 2), (16, 4), (16, 8), (32, 3),
             (32, 4), (32, 8), (64, 4), (64, 8), (128, 8))  # overlap.cu's (chunks, streams)
WAYS = {"stream": "one by one", "graph": "one CUDA graph", "compiled": "`torch.compile`"}

def numba(chunks, streams):  # overlap_numba.py's pipeline, from its pinned buffers
    def prepare(p):
        pipe = lesson("overlap_numba")
        run = functools.partial(pipe.pipeline, *pipe.buffers(p["n"], streams), chunks, p["work"])
        return Prepared(run=run, record={"extra": {"chunks": chunks, "streams": streams}})
    return Custom(prepare)

def chain(way, length, p):  # graphs_torch.py's chain: one by one, replayed as a graph, compiled
    t = lesson("graphs_torch")
    x, w = t.inputs("cuda")
    return (t.graphed(x, w, length) if way == "graph"  # captured once, here
            else functools.partial(t.compiled(length), x, w) if way == "compiled"
            else functools.partial(t.chain, x, w, length))

torch = lambda way, length: Built(chain, (way, length), get=lambda out: out.cpu().numpy(),  # noqa
                                  record={"extra": {"kernels": length}})

def c_row(label, group):  # a row of a CUDA C lesson's table: its CTable row reports it
    return Variant(f"CUDA C, {label}", group=group, runs=False)

VARIANTS = {
    "cuda_c_overlap": Variant("CUDA C (overlap.cu's rows)", measure=CTable(HERE / "overlap.cu")),
    **{f"cuda_c_{s}": c_row(s.replace("_", " "), "stage")
       for s in ("copy_in", "compute", "copy_out")},
    **{f"cuda_c_c{c}_s{s}": c_row(f"{c} chunks on {s} streams", "pipeline") for c, s in PIPELINES},
    **{f"numba_c{c}_s{s}": Variant(f"Numba, {c} chunks on {s} streams", group="pipeline",
                                   measure=numba(c, s)) for c, s in PIPELINES[::4]},
    "cuda_c_graphs": Variant("CUDA C (graphs.cu's rows)", measure=CTable(HERE / "graphs.cu")),
    **{f"cuda_c_{w}_{n}": c_row(f"{n} kernels, {WAYS[w]}", w) for n in LENGTHS
       for w in ("stream", "graph")},
    **{f"torch_{w}_{n}": Variant(f"PyTorch, {n} kernels, {WAYS[w]}", group=w, measure=torch(w, n))
       for w in WAYS for n in LENGTHS if w != "compiled" or n == 100},  # compiling: seconds each
}
NUMBA, TORCH = (tuple(k for k in VARIANTS if k.startswith(lib)) for lib in ("numba_", "torch_"))
CASES = {"overlap": Case({"n": 2**26, "work": WORK}, variants=("cuda_c_overlap", *NUMBA)),
         "graphs": Case({"n": 1024}, variants=("cuda_c_graphs", *TORCH)),
         "smoke": Case({"n": 1027, "work": 3}, variants=NUMBA, default=False)}
want = per_case(lambda p: {"numba": (np.arange(p["n"]) % 1000 + p.get("work", 0)).astype("f4"),
                           "torch": np.arange(256, dtype="f4").reshape(16, 16) % 7})  # inputs() x
BENCHMARK = Benchmark("timeline", VARIANTS, CASES, reference=want,  # numba_* or torch_*: its result
                      check=lambda v, got, ref: exact(np.asarray(got), ref[v.partition("_")[0]]),
                      counts=lambda v, p, ref: {"bytes": 8 * p["n"], "flops": 2 * p["work"]
                                                * p["n"]} if v[0] == "n" else {})  # chains: none
