"""Why the GPU is idle: the pipeline lessons (CUDA C compiled, Numba on the simulator), the graph
lessons, the registry, the trace tool on traces made here, the page rendered from results made
here, and (on a GPU) the bars: the best pipeline within 90 % of its ideal, a graph's kernels at
most a third of the cost of launching them one by one."""

from __future__ import annotations

import copy
import gzip
import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from numba import cuda  # module level: the CUDA simulator swaps this name inside kernels

from helpers import HAS_GPU, ROOT, SNIPPETS, load_benchmark, load_snippet

OVERLAP = "timeline/overlap_numba.py"
TOOL = ROOT / "tools" / "timeline_trace.py"
PAGE = ROOT / "docs" / "kernels" / "timeline.md"


def run(cmd, *args, timeout=120, **kw):
    return subprocess.run([*map(str, cmd), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, **kw)


@pytest.fixture(scope="module")
def registry():
    return load_benchmark("timeline").BENCHMARK


# ---------------------------------------------------------------- CUDA C

@pytest.mark.parametrize("lesson", ["overlap", "graphs"])
def test_cuda_c_lesson_fails_loudly_without_a_gpu_and_takes_no_arguments(nvcc_build, lesson):
    exe = nvcc_build(f"timeline/{lesson}.cu", "-arch=sm_90")
    bad = run([exe], "5")
    assert bad.returncode == 2 and bad.stdout == "" and bad.stderr.count("\n") == 1
    if HAS_GPU:
        pytest.skip("this machine has a GPU; the gpu tests cover it")
    out = run([exe])
    assert out.returncode == 1 and out.stderr.startswith("CUDA error: cudaError")
    assert "OK" not in out.stdout


GROUPS = {"overlap": ("stage", "pipeline"), "graphs": ("stream", "graph")}


@pytest.mark.parametrize("lesson", ["overlap", "graphs"])
def test_registry_names_every_row_of_the_c_table(nvcc_build, registry, lesson):
    runner = nvcc_build("bench/runner.cu", f'-DLESSON="{SNIPPETS}/timeline/{lesson}.cu"', "-arch=sm_90")
    rows = run([runner], "--list").stdout.split()
    assert rows == list(dict.fromkeys(rows))
    assert set(rows) == {k for k, v in registry.variants.items()
                         if k.startswith("cuda_c_") and not v.runs and v.group in GROUPS[lesson]}


# ---------------------------------------------------------------- Numba on the simulator

@pytest.mark.parametrize("n,chunks,streams", [(1, 1, 1), (5, 8, 2), (1027, 3, 2), (1027, 8, 4)])
def test_numba_pipeline_covers_every_element(n, chunks, streams):
    assert load_snippet(OVERLAP).check(n, chunks, streams, work=3) == 0


def test_numba_check_detects_a_pipeline_that_skips_the_last_chunk(monkeypatch):
    mod = load_snippet(OVERLAP)
    whole = mod.pipeline
    monkeypatch.setattr(mod, "pipeline", lambda hi, ho, di, do, ss, chunks, work: (whole(
        hi[:-10], ho[:-10], di[:-10], do[:-10], ss, chunks, work), ho)[1])
    assert mod.check(100, 4, 2, work=3) == 10


def test_registry_numba_row_runs_the_lesson_and_is_checked(registry):
    params = registry.cases["smoke"].params
    got = registry.setup("numba_c8_s2", params).run()
    ref = registry.reference(params)
    assert registry.check("numba_c8_s2", got, ref)["ok"]
    assert not registry.check("numba_c8_s2", got + 1, ref)["ok"]


# ---------------------------------------------------------------- the trace tool

def chrome_trace(path: Path) -> Path:
    """Kernels with four gaps: the host synchronising, loading input, in Python, launching."""
    ev = [{"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:GPU:0"}},
          {"ph": "M", "pid": 1, "tid": 1, "name": "thread_name",
           "args": {"name": "Stream #13(Compute)"}},
          {"ph": "M", "pid": 1, "tid": 2, "name": "thread_name", "args": {"name": "XLA Modules"}},
          {"ph": "M", "pid": 2, "name": "process_name", "args": {"name": "/host:CPU"}},
          {"ph": "X", "pid": 1, "tid": 2, "ts": 0, "dur": 3000, "name": "jit_train_step"}]  # no work
    gpu = lambda ts, dur, name="fusion": {"ph": "X", "pid": 1, "tid": 1, "ts": ts, "dur": dur,
                                          "name": name}
    host = lambda ts, dur, name: {"ph": "X", "pid": 2, "tid": 1, "ts": ts, "dur": dur, "name": name}
    ev += [gpu(0, 100), gpu(100, 50, "MemcpyH2D"), gpu(150, 100),  # warm-up, before the middle
           gpu(1000, 50), gpu(1150, 50), gpu(1400, 50), gpu(1650, 50), gpu(1705, 45), gpu(1750, 50),
           host(1050, 100, "cudaStreamSynchronize"), host(1200, 200, "$keras numpy_iterator __next__"),
           host(1450, 200, "$train.py:12 log_metrics"), host(0, 3000, "$train.py:1 main compile"),
           host(0, 3000, "$epoch_iterator.py:1 enumerate_epoch")]  # context: names no gap
    path.write_bytes(gzip.compress(json.dumps({"traceEvents": ev}).encode()))
    return path


def test_tool_names_each_gap_by_what_the_host_did(tmp_path):
    out = tmp_path / "t.json"
    got = run([sys.executable, TOOL], chrome_trace(tmp_path / "trace.json.gz"), "--label", "x",
              "--output", out, "--window", "0.0015", env={**os.environ, "PYTHONPATH": str(SNIPPETS)})
    assert got.returncode == 0, got.stderr
    t = json.loads(out.read_text())["traces"]["x"]
    assert [g[2] for g in t["gaps"]] == ["synchronisation", "input", "host Python", "small kernels"]
    assert t["ms"]["synchronisation"] == pytest.approx(0.1)
    assert t["ms"]["small kernels"] == pytest.approx(0.005)
    assert t["ms"]["copies"] == 0  # the copy lies in the warm-up, before the window's start


def test_tool_reads_an_nsys_sqlite_export_and_adds_to_its_output(tmp_path):
    db = sqlite3.connect(tmp_path / "t.sqlite")
    db.executescript("""
        create table StringIds (id integer, value text);
        insert into StringIds values (1, 'k'), (2, 'cudaDeviceSynchronize'), (3, 'step');
        create table CUPTI_ACTIVITY_KIND_KERNEL (start integer, end integer, shortName integer);
        insert into CUPTI_ACTIVITY_KIND_KERNEL values (0, 1000, 1), (5000, 6000, 1), (9000, 9500, 1);
        create table CUPTI_ACTIVITY_KIND_MEMCPY (start integer, end integer);
        insert into CUPTI_ACTIVITY_KIND_MEMCPY values (6000, 7000);
        create table CUPTI_ACTIVITY_KIND_RUNTIME (start integer, end integer, nameId integer);
        insert into CUPTI_ACTIVITY_KIND_RUNTIME values (7000, 9000, 2);
        create table NVTX_EVENTS (start integer, end integer, text text);
        insert into NVTX_EVENTS values (0, 9500, 'step');""")
    db.commit()
    db.close()
    out, env = tmp_path / "t.json", {**os.environ, "PYTHONPATH": str(SNIPPETS)}
    out.write_text(json.dumps({"traces": {"other": {}}}))
    got = run([sys.executable, TOOL, tmp_path / "t.sqlite", "--label", "n", "--output", out,
               "--window", "0.000005", "--add"], env=env)
    assert got.returncode == 0, got.stderr
    traces = json.loads(out.read_text())["traces"]
    assert set(traces) == {"other", "n"}
    assert traces["n"]["gaps"] == [[0.002, 0.004, "synchronisation"]]  # ms from the middle, 5000 ns
    assert traces["n"]["copies"] == [[0.001, 0.002]]


@pytest.mark.parametrize("args", [["missing.json"], ["{bad}", "--window", "-1"], ["{bad}"]])
def test_tool_answers_bad_input_with_one_line(tmp_path, args):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    got = run([sys.executable, TOOL, *[a.replace("{bad}", str(bad)) for a in args], "--label", "x",
               "--output", tmp_path / "o.json"], env={**os.environ, "PYTHONPATH": str(SNIPPETS)})
    assert got.returncode == 2 and got.stderr.count("\n") == 1 and "Traceback" not in got.stderr
    assert not (tmp_path / "o.json").exists()


def test_trace_jax_records_a_program_and_keeps_its_exit_code(tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text("import sys\nimport jax.numpy as jnp\nprint(float(jnp.ones(8).sum()), "
                    "sys.argv[1:])\nraise SystemExit(3)\n")
    got = run([sys.executable, SNIPPETS / "timeline/trace_jax.py", tmp_path / "tr", prog, "a"],
              timeout=300, cwd=tmp_path)
    assert got.returncode == 3 and "8.0 ['a']" in got.stdout, got.stderr[-2000:]
    assert list((tmp_path / "tr").rglob("perfetto_trace.json.gz"))
    assert run([sys.executable, SNIPPETS / "timeline/trace_jax.py", tmp_path]).returncode == 2


# ---------------------------------------------------------------- the page, from results made here

def measurement(base: dict, case: str, variant: str, seconds: float, **extra) -> dict:
    m = copy.deepcopy(base)
    m.update(case=case, variant=variant, phase="kernel", median_s=seconds, min_s=seconds,
             max_s=seconds, extra=extra)
    return m


@pytest.fixture(scope="module")
def made_docs(tmp_path_factory, registry):
    """A docs folder whose results hold stages of 10, 8 and 9 ms, pipelines, and chains."""
    doc = json.loads((ROOT / "docs/data/saxpy-h100.json").read_text())  # its system and schema
    base = next(m for m in doc["measurements"] if m["phase"] == "kernel" and m["device"] == "gpu")
    doc["benchmark"] = "timeline"
    doc["variants"] = {k: {"label": v.label, "device": v.device, "step": v.step, "group": v.group}
                       for k, v in registry.variants.items()}
    ms = [measurement(base, "overlap", k, s / 1e3) for k, s in
          (("cuda_c_copy_in", 10), ("cuda_c_compute", 8), ("cuda_c_copy_out", 9))]
    ms += [measurement(base, "overlap", f"cuda_c_c{c}_s{s}", (27 if s == 1 else 10 + 8 / c) / 1e3,
                       chunks=c, streams=s) for c, s in ((1, 1), (4, 1), (8, 2), (16, 4))]
    ms += [measurement(base, "overlap", f"numba_c{c}_s{s}", t, chunks=c, streams=s)
           for c, s, t in ((1, 1, 40e-3), (8, 2, 12.5e-3))]
    ms += [measurement(base, "graphs", f"{lib}_{way}_{n}", n * us * 1e-6, kernels=n)
           for lib in ("cuda_c", "torch") for n in (1, 1000)
           for way, us in (("stream", 4.0), ("graph", 4.0 if n == 1 else 1.0))]
    ms += [{**measurement(base, "graphs", "cuda_c_stream_100", 500e-6, kernels=100),
            "spread": 3.3}]  # the unsteady row the page names
    doc["measurements"] = ms
    docs = tmp_path_factory.mktemp("docs")
    (docs / "data").mkdir()
    (docs / "data/timeline-h100.json").write_text(json.dumps(doc))
    (docs / "data/machine-h100.json").write_text((ROOT / "docs/data/machine-h100.json").read_text())
    tmp = tmp_path_factory.mktemp("trace")
    got = run([sys.executable, TOOL], chrome_trace(tmp / "t.json.gz"), "--label", "train.py",
              "--output", docs / "data/timeline-trace-h100.json", "--window", "0.0015",
              env={**os.environ, "PYTHONPATH": str(SNIPPETS)})
    assert got.returncode == 0, got.stderr
    got = run([sys.executable, TOOL], tmp / "t.json.gz", "--label", "pipeline", "--add", "--output",
              docs / "data/timeline-trace-h100.json", env={**os.environ, "PYTHONPATH": str(SNIPPETS)})
    assert got.returncode == 0, got.stderr
    return docs


def test_page_renders_the_figures_the_results_hold(made_docs):
    from renderers.page import render_page

    html = render_page(PAGE.read_text(), made_docs, "kernels/timeline.md")
    assert "<!-- render" not in html and "{{" not in html
    assert "10.00</span> ms" in html or "10.00 ms" in html.replace("</span>", "")  # the ideal
    text = html.replace("</span>", "")
    assert "37 %" in text  # one chunk on one stream: 10 of 27 ms
    assert "16 chunks on 4 streams" in text and "95 %" in text  # 10 / 10.5 ms
    assert "25 %" in text and "100 %" in text  # a graph of 1000 kernels, of one kernel
    assert re.search(r"took\s+(<[^>]*>)?3\.3\s+times", text)  # the unsteady row's spread
    assert "idle: synchronisation" in text


def test_the_unsteady_row_the_page_names_is_the_one_that_stands_out():
    """timeline.md: the CUDA C one-by-one chain of 100 kernels stands above both neighbours in
    the committed run, and its samples were unsteady (slowest over fastest above 2)."""
    from bench.results import load_results

    doc = load_results(ROOT / "docs/data/timeline-h100.json")
    per_kernel = {n: medians(doc, "graphs")[f"cuda_c_stream_{n}"] / n for n in (10, 100, 1000)}
    assert per_kernel[100] > max(per_kernel[10], per_kernel[1000])
    spread = next(m["spread"] for m in doc["measurements"] if m["case"] == "graphs"
                  and m["variant"] == "cuda_c_stream_100" and m["phase"] == "kernel")
    assert spread > 2


# ---------------------------------------------------------------- on a GPU

@pytest.fixture(scope="module")
def gpu_results():
    """The results file of gpu/timeline.sh (TIMELINE_RESULTS), or the committed one."""
    from bench.results import load_results

    return load_results(Path(os.environ.get("TIMELINE_RESULTS", ROOT / "docs/data/timeline-h100.json")))


def medians(doc: dict, case: str) -> dict[str, float]:
    """{variant: median seconds} of a case's C rows (kernel phase: timed by the C runner)."""
    return {m["variant"]: m["median_s"] for m in doc["measurements"]
            if m["case"] == case and m["phase"] == "kernel" and m["variant"].startswith("cuda_c_")}


@pytest.mark.gpu
def test_bar_best_pipeline_within_90_percent_of_the_ideal(gpu_results):
    got = medians(gpu_results, "overlap")
    ideal = max(got[f"cuda_c_{s}"] for s in ("copy_in", "compute", "copy_out"))
    best = min((k for k in got if gpu_results["variants"][k]["group"] == "pipeline"), key=got.get)
    print(f"\nbest pipeline {best}: {100 * ideal / got[best]:.1f} % of the ideal (goal 95 %)")
    assert ideal / got[best] >= 0.90


@pytest.mark.gpu
def test_bar_graph_at_most_a_third_of_launches_per_kernel(gpu_results):
    got = medians(gpu_results, "graphs")
    ratio = got["cuda_c_graph_1000"] / got["cuda_c_stream_1000"]
    print(f"\nCUDA C, 1000 kernels: a graph costs {100 * ratio:.1f} % of launching one by one")
    assert ratio <= 1 / 3


@pytest.mark.gpu
def test_torch_lesson_on_the_gpu():
    got = run([sys.executable, SNIPPETS / "timeline/graphs_torch.py", "10"], timeout=300)
    assert got.returncode == 0 and "OK" in got.stdout, got.stderr[-2000:]


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="needs an NVIDIA GPU")
def test_numba_pipeline_on_the_gpu_at_full_work():
    assert load_snippet(OVERLAP).check(1 << 22, 16, 4) == 0
