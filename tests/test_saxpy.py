"""SAXPY: CUDA C, Numba CUDA (simulator on CPU-only machines), NumPy, Numba parallel, the
benchmark registry, Little's law, and (on a GPU) the bars: every fastest kernel at or above
the fastest device copy of its round, in each of three rounds."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from numba import cuda  # module level: the CUDA simulator swaps this name inside kernels

from bench.results import share_of_best
from helpers import HAS_GPU, ROOT, SNIPPETS, load_benchmark, load_snippet

COMMON = "saxpy/saxpy_common.py"
NUMBA_CUDA = "saxpy/saxpy_numba_cuda.py"
NUMPY = "saxpy/saxpy_numpy.py"
NUMBA_CPU = "saxpy/saxpy_numba_cpu.py"
LITTLE = "saxpy/littles_law.py"
SHOW_PTX = "saxpy/show_ptx.py"
ROUNDS = ("gpu-1", "gpu-2", "gpu-3")


def run(rel_or_cmd, *args, timeout=300, **kw):
    cmd = [sys.executable, str(SNIPPETS / rel_or_cmd), *args] if isinstance(rel_or_cmd, str) \
        else [*rel_or_cmd, *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)


@pytest.fixture(scope="module")
def cuda_binary(nvcc_build):
    # For Hopper, as gpu/saxpy.sh builds it: a compile error shows up here, not on the GPU machine.
    return nvcc_build("saxpy/saxpy.cu", "-arch=sm_90")


@pytest.fixture(scope="module")
def bench_module():
    return load_benchmark("saxpy")


# The registry's Numba SAXPY variants: each is a kernel (or launch) of the lesson, by the same
# name without its "numba_" prefix. A variant added to benchmark.py is tested here unchanged.
NUMBA_VARIANTS = [k.removeprefix("numba_") for k, v in
                  load_benchmark("saxpy").BENCHMARK.variants.items()
                  if k.startswith("numba_") and v.device == "gpu" and not v.group]


# ---------------------------------------------------------------- CUDA C

def test_cuda_c_fails_loudly_without_a_gpu(cuda_binary):
    if HAS_GPU:
        pytest.skip("this machine has a GPU; the gpu tests cover it")
    out = run([str(cuda_binary)], timeout=60)
    assert out.returncode == 1
    assert out.stderr.startswith("CUDA error: cudaError")  # e.g. cudaErrorInsufficientDriver
    assert "OK" not in out.stdout


@pytest.mark.parametrize("args", [["1000"], ["-5"], ["--bench"]])
def test_cuda_c_lesson_takes_no_arguments(cuda_binary, args):
    out = run([str(cuda_binary)], *args, timeout=60)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("error:")


def test_cuda_c_kernels_use_16_byte_accesses():
    nvcc = shutil.which("nvcc") or pytest.skip("nvcc is not on PATH")
    ptx = subprocess.run([nvcc, "-O3", "-arch=sm_90", "-ptx", "-o", "-",
                          str(SNIPPETS / "saxpy/saxpy.cu")], capture_output=True, text=True,
                         timeout=600).stdout
    float4 = ptx.split(".entry _Z12saxpy_float4")[1].split(".entry")[0]
    one = ptx.split(".entry _Z9saxpy_one")[1].split(".entry")[0]
    assert "ld.global.nc.v4.f32" in float4 and "st.global.v4.f32" in float4
    assert "v4" not in one


# ---------------------------------------------------------------- Numba CUDA (simulator on CPU)

@pytest.mark.parametrize("variant", NUMBA_VARIANTS)
@pytest.mark.parametrize("n", [1, 3, 4, 5, 257, 1027])
def test_numba_kernels_cover_every_element(variant, n):
    mod = load_snippet(NUMBA_CUDA)
    assert mod.check(variant, n) == 0


def test_numba_check_detects_a_kernel_that_skips_elements(monkeypatch):
    mod = load_snippet(NUMBA_CUDA)

    @cuda.jit
    def half(a, x, y):
        i = cuda.grid(1)
        if i < y.size // 2:
            y[i] = a * x[i] + y[i]
    monkeypatch.setitem(mod.KERNELS, "one", half)
    assert mod.check("one", 100) == 50


def test_numba_grids():
    mod = load_snippet(NUMBA_CUDA)
    assert mod.blocks_for("one", 1000) == 4
    assert mod.blocks_for("vector", 1000) == 1  # 250 threads of four elements
    assert mod.blocks_for("vector", 4 * 256 + 3) == 1  # the leftovers ride on the first threads
    assert mod.blocks_for("vector", 3) == 1
    assert mod.blocks_for("grid_stride", 10**9) == 32 * getattr(
        cuda.get_current_device(), "MULTIPROCESSOR_COUNT", 1)


def test_numba_vector_rejects_a_view_that_is_not_contiguous():
    mod = load_snippet(NUMBA_CUDA)
    d = cuda.to_device(np.zeros(64, np.float32))
    with pytest.raises(ValueError, match="aligned"):
        mod.saxpy("vector", np.float32(2), d[::2], d[::2])


# ---------------------------------------------------------------- the lessons' demos

@pytest.mark.parametrize("rel", [NUMPY, NUMBA_CPU, NUMBA_CUDA])
def test_demo_checks_and_says_ok(rel):
    out = run(rel, "1003", env=dict(os.environ, NUMBA_ENABLE_CUDASIM="1"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "OK: all 1003 elements match"


@pytest.mark.parametrize("rel", [NUMPY, NUMBA_CPU])
@pytest.mark.parametrize("n", [1, 7, 1000])
def test_cpu_versions_match_numpy(rel, n):
    assert load_snippet(COMMON).mismatches(load_snippet(rel).saxpy, n) == 0


def test_common_check_counts_the_elements_a_kernel_missed():
    common = load_snippet(COMMON)

    def half(a, x, y):
        y[: y.size // 2] += a * x[: y.size // 2]
    assert common.mismatches(half, 101) == 51
    assert common.mismatches(lambda a, x, y: None, 10) == 10  # y = 0 only where x = 0: none here


def test_littles_law_prints_the_page_output():
    out = run(LITTLE)
    assert out.returncode == 0 and out.stdout.splitlines()[0] == "To stream 3.35 TB/s over 132 SMs:"


def test_show_ptx_finds_vector_accesses():
    show = load_snippet(SHOW_PTX)
    ptx = "\tld.global.v4.f32 \t{%f1, %f2, %f3, %f4}, [%rd1];\n\tst.global.f32 \t[%rd2], %f5;"
    assert show.global_accesses(ptx) == ["ld.global.v4.f32", "st.global.f32"]
    assert show.global_accesses("LDG.E.128 R4, desc[UR4][R2.64] ;", sass=True) == ["LDG.E.128"]


def test_show_ptx_without_nvrtc_is_one_line():
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    out = run(SHOW_PTX, env=env, cwd=SNIPPETS / "saxpy")
    if out.returncode == 0:
        pytest.skip("this machine has NVRTC: the PTX was compiled")
    assert out.returncode == 1 and out.stdout == "", out.stderr
    assert out.stderr.startswith("cannot compile PTX here") and out.stderr.count("\n") == 1, \
        out.stderr


# ---------------------------------------------------------------- Little's law

def test_littles_law_scalar_accesses_fall_short_and_vector_ones_do_not():
    """The page's reading: on the H100 (3.35 TB/s) 4-byte accesses fall short at 1,000 ns and
    hold a little more than needed at 500 ns; on the H200 (4.8 TB/s) they fall short at both."""
    mod = load_snippet(LITTLE)
    scalar = mod.bytes_in_flight_per_sm(*mod.ACCESSES["one float per thread (x[i], y[i])"], 2048)
    h100_500ns = mod.bytes_needed(3.35e12, 500e-9) / 132
    assert h100_500ns < scalar < 1.5 * h100_500ns
    assert scalar < mod.bytes_needed(4.8e12, 500e-9) / 132
    need_per_sm = mod.bytes_needed(3.35e12, 1000e-9) / 132
    scalar = mod.bytes_in_flight_per_sm(*mod.ACCESSES["one float per thread (x[i], y[i])"], 2048)
    vector = mod.bytes_in_flight_per_sm(*mod.ACCESSES["one float4 per thread (16-byte loads)"],
                                        2048)
    assert scalar < need_per_sm < vector
    assert vector == 4 * scalar


# ---------------------------------------------------------------- the benchmark registration

def test_benchmark_smoke_case_writes_a_valid_results_file(tmp_path):
    out_file = tmp_path / "saxpy.json"
    out = run(["python", str(SNIPPETS / "bench/run.py")], "saxpy", "--cases", "smoke",
              "--variants", "numba_vector,numba_copy,numpy,cpu_copy,cpu_read", "--compile-runs",
              "0", "--output", str(out_file), env=dict(os.environ, NUMBA_ENABLE_CUDASIM="1"),
              timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    from bench.results import load_results

    doc = load_results(out_file)
    found = {(m["variant"], m["phase"]) for m in doc["measurements"]}
    assert {("numba_vector", "kernel"), ("numba_vector", "end_to_end"), ("numba_copy", "kernel"),
            ("numpy", "kernel"), ("cpu_read", "kernel")} <= found
    assert all(m["error"]["value"] == 0 for m in doc["measurements"])
    # the topic's C lesson is on its measured path though no row of this run compiled it
    assert {"snippets/saxpy/saxpy.cu", "snippets/saxpy/benchmark.py"} <= doc["code"]["sources"].keys()


def fake_runner(monkeypatch, tmp_path, script: str):
    """The C runner replaced by a shell script (the real one needs a GPU)."""
    from bench import adapters

    fake = tmp_path / "bench-saxpy"
    fake.write_text("#!/bin/sh\n" + script)
    fake.chmod(0o755)
    monkeypatch.setattr(adapters, "runner_binary", lambda lesson, flags=(): fake)


def test_benchmark_reads_the_cuda_c_runner_through_bench_lines(bench_module, tmp_path,
                                                               monkeypatch):
    from bench import runner

    line = {"variant": "cuda_c_float4", "phase": "kernel", "samples_s": [1e-3] * 10,
            "calls_per_sample": 10, "error": {"metric": "mismatched_elements", "value": 0,
                                              "ok": True}, "bytes": 12e3, "flops": 2e3}
    copy = dict(line, variant="cuda_c_copy_float4", bytes=8e3, flops=0)
    fake_runner(monkeypatch, tmp_path, f"echo 'BENCH {json.dumps(line)}'\n"
                                       f"echo 'BENCH {json.dumps(copy)}'\n")
    bench = bench_module.BENCHMARK
    prep = bench.setup("cuda_c", {"n": 1000})
    found, problem = runner.measure_external(bench, "gpu-1", "cuda_c", {"n": 1000}, None,
                                             prep.external)
    assert problem == ""
    assert [m["variant"] for m in found] == ["cuda_c_float4", "cuda_c_copy_float4"]
    assert found[0]["calls_per_sample"] == 10
    doc = {"variants": bench.described(), "measurements": found}
    ratios = share_of_best(doc, "copy")["gpu-1"]
    assert ratios["cuda_c_float4"] == pytest.approx(1.5)  # 12 kB vs 8 kB in the same time


def test_benchmark_reports_a_failing_runner(bench_module, tmp_path, monkeypatch):
    fake_runner(monkeypatch, tmp_path, "echo 'CUDA error: cudaErrorNoDevice' >&2\nexit 1\n")
    with pytest.raises(RuntimeError, match="exited 1: CUDA error"):
        bench_module.BENCHMARK.setup("cuda_c", {"n": 10}).external()


def test_every_row_that_runs_names_its_lesson(bench_module):
    for key, v in bench_module.VARIANTS.items():
        assert (v.measure is not None) == v.runs, key


def test_fastest_copy_is_one_ceiling_per_round(bench_module):
    def row(case, variant, nbytes, seconds):
        return {"case": case, "variant": variant, "device": "gpu", "phase": "kernel",
                "bytes": nbytes, "median_s": seconds}
    rows = [row("r1", "numba_copy", 8, 2.0), row("r1", "cuda_c_copy_float4", 8, 1.0),
            row("r1", "numba_vector", 12, 1.5), row("r2", "cupy_copy", 8, 4.0),
            row("r2", "cupy_raw", 12, 6.0)]
    doc = {"variants": bench_module.BENCHMARK.described(), "measurements": rows}
    ratios = share_of_best(doc, "copy")
    assert ratios["r1"]["numba_vector"] == pytest.approx(1.0)  # 8 B/s over the 8 B/s copy kernel
    assert ratios["r2"]["cupy_raw"] == pytest.approx(1.0)


# ---------------------------------------------------------------- on a GPU: the bars

BARS = ("cuda_c_float4", "numba_vector", "cupy_raw")


@pytest.fixture(scope="module")
def gpu_results(tmp_path_factory):
    """The results file of gpu/saxpy.sh (SAXPY_RESULTS), or three rounds measured here."""
    given = os.environ.get("SAXPY_RESULTS")
    if given:
        path = Path(given)
    else:
        path = tmp_path_factory.mktemp("saxpy") / "saxpy.json"
        out = run(["python", str(SNIPPETS / "bench/run.py")], "saxpy", "--cases",
                  ",".join(ROUNDS), "--variants", "cuda_c,numba_vector,numba_copy,cupy_raw,"
                  "cupy_copy", "--compile-runs", "0", "--output", str(path), timeout=600)
        assert out.returncode == 0, out.stderr[-2000:]
    from bench.results import load_results

    return load_results(path)


@pytest.mark.gpu
@pytest.mark.parametrize("variant", BARS)
def test_bar_at_or_above_the_fastest_copy_in_three_rounds(variant, gpu_results, bench_module):
    ratios = share_of_best(gpu_results, "copy")
    got = [ratios[r][variant] for r in ROUNDS]
    print(f"\n{variant}: " + ", ".join(f"{r} {v:.4f}" for r, v in zip(ROUNDS, got))
          + " of the fastest copy")
    assert all(v >= 1.0 for v in got), got


# ---------------------------------------------------------------- the page's renderers

@pytest.fixture(scope="module")
def renderers():
    import renderers as package

    return package


def test_progression_renders_every_step_for_both_toolkits(renderers):
    out = renderers.get("saxpy_progression")(ROOT / "docs", path="data/saxpy-h100.json")
    rows = [line for line in out.splitlines() if line.startswith("| ") and "GB/s" in line]
    assert len(rows) == 4 and all(line.count("GB/s") == 2 for line in rows)


def test_table_shows_the_spread_of_three_rounds(renderers):
    out = renderers.get("saxpy_table")(ROOT / "docs", path="data/saxpy-h100.json")
    row = next(line for line in out.splitlines() if line.startswith("| CUDA C, `float4`"))
    assert " – " in row  # lowest – highest over the rounds
    assert "| Numba, one element per thread |" not in out  # steps 1-3: the progression's


def test_table_rows_come_from_the_results_file(renderers, tmp_path):
    """A variant the registry adds shows up once measured, with its label: no renderer edit."""
    doc = json.loads((ROOT / "docs/data/saxpy-h100.json").read_text())
    doc["variants"]["numba_new"] = {"label": "Numba, a new launch", "device": "gpu", "step": "",
                                    "group": ""}
    m = next(m for m in doc["measurements"] if (m["case"], m["variant"], m["phase"])
             == ("gpu-1", "numba_one", "kernel"))
    doc["measurements"].append(dict(m, variant="numba_new"))
    (tmp_path / "data").mkdir()
    (tmp_path / "data/saxpy.json").write_text(json.dumps(doc))
    out = renderers.get("saxpy_table")(tmp_path, path="data/saxpy.json")
    row = next(line for line in out.splitlines() if line.startswith("| Numba, a new launch |"))
    from bench.results import share_of_best

    share = share_of_best(doc, "copy")["gpu-1"]["numba_new"]
    want = f"{m['bytes'] / m['median_s'] / 1e9:,.0f} | {100 * share:.1f}&nbsp;% | one round"
    assert want in row, row


def test_values_render_one_figure(renderers):
    args = {"docs_dir": ROOT / "docs", "path": "data/saxpy-h100.json"}
    assert renderers.get_value("cell")(show="{n:pow2}", where="case=gpu-1", **args) == "2<sup>28</sup>"
    fastest = lambda show: renderers.get_value("cell")(  # noqa: E731 - as the page asks
        show=show, where="case=gpu-1 phase=kernel group=copy", sort="-gbs", **args)
    doc = json.loads((ROOT / "docs/data/saxpy-h100.json").read_text())
    copies = [m for m in doc["measurements"] if m["case"] == "gpu-1" and m["phase"] == "kernel"
              and doc["variants"][m["variant"]]["group"] == "copy"]
    best = max(copies, key=lambda m: m["bytes"] / m["median_s"])
    assert fastest("{label}") == doc["variants"][best["variant"]]["label"]
    assert fastest("{gbs:,.0f}") == f"{best['bytes'] / best['median_s'] / 1e9:,.0f}"


def test_ncu_table_comes_from_the_report_of_the_committed_log(renderers):
    """The page's table reads the JSON that tools/structure_logs.py wrote from the ncu log
    (tests/test_structured_logs.py checks they agree)."""
    import json

    kernels = {k["kernel"]: k for k in json.loads(
        (ROOT / "docs/data/saxpy-ncu-h100.json").read_text())["kernels"]}
    assert kernels["saxpy"]["block"] == 128 and kernels["saxpy_float4"]["block"] == 256
    assert kernels["saxpy"]["occupancy_pct"] < kernels["saxpy_one"]["occupancy_pct"]
    from renderers.page import render_markdown

    lines = map(str.strip, (ROOT / "docs/kernels/saxpy.md").read_text().splitlines())  # a folded block indents its lines
    line = next(l for l in lines
                if "saxpy-ncu-h100.json" in l and l.startswith("<!-- render"))
    out = render_markdown(line, ROOT / "docs", "saxpy.md")
    assert "| `saxpy_float4` | 256 |" in out
