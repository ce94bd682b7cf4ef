"""Mandelbrot: every variant of the registry against pure Python, the CUDA kernels on the
simulator, the benchmark's work counts, the image tool and --sass, the renderers, the notebook; and (marked gpu)
the kernels at full size."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
import subprocess
import sys

import numpy as np
import pytest

from helpers import ROOT, load_benchmark, run_snippet
from bench import run

# benchmark.py imports the lesson as plain `mandelbrot`, as a run of the script does. Numba's
# on-disk cache (cache=True) records the defining module's name, so the tests use that module
# rather than importing the same file under a second name.
bm = load_benchmark("mandelbrot")
mb = bm.mb
REGISTRY = bm.BENCHMARK.variants
CPU_VARIANTS = [k for k, v in REGISTRY.items() if v.device == "cpu" and k != "python"]
GPU_VARIANTS = [k for k, v in REGISTRY.items() if v.device == "gpu"]


def test_the_registry_names_every_variant_of_the_lesson():
    assert tuple(REGISTRY) == mb.VARIANTS
    assert GPU_VARIANTS == list(mb.KERNELS) and all(REGISTRY[k].label for k in REGISTRY)


def python_counts(width, height, iterations):
    xs, ys = mb.coordinates(width, height)
    return mb.mandelbrot_python(xs, ys, iterations)


@pytest.mark.parametrize(("width", "height", "iterations"), [(1, 1, 5), (7, 5, 1), (33, 17, 50)])
@pytest.mark.parametrize("variant", CPU_VARIANTS)
def test_cpu_variants_match_pure_python_exactly(variant, width, height, iterations):
    expected = python_counts(width, height, iterations)
    got = mb.compute(variant, width, height, iterations)
    assert got.dtype == np.int32 and got.shape == (height, width)
    np.testing.assert_array_equal(got, expected)


def test_counts_look_like_the_set():
    counts = python_counts(31, 21, 30)
    assert counts.max() == 30  # the centre row passes through the set
    assert counts[0, 0] < 3  # the corner (-2, -1) escapes at once
    assert (counts >= 0).all()


@pytest.mark.parametrize(("width", "height", "iterations"),
                         [(48, 32, 40), (37, 11, 41), (9, 5, 3), (5, 3, 1)])  # partial blocks;
@pytest.mark.parametrize("variant", ["cuda_f64", "cuda_f64_fast", "cuda_f64_chunk"])  # iterations
def test_cuda_f64_kernels_match_cpu_exactly(variant, width, height, iterations):  # not a multiple of 4 or 8
    np.testing.assert_array_equal(mb.compute(variant, width, height, iterations),
                                  mb.compute("njit", width, height, iterations))


@pytest.mark.parametrize("value", [0.0, 1.5, 3.999999999999999, 4.0, 4.000000000000001, 1e300,
                                   float("inf")])
def test_escape_test_on_the_bits_equals_the_float_test(value):
    assert (mb.bits64(value) > mb.FOUR_BITS) == (value > 4.0)


@pytest.mark.parametrize("k", [1, 3, 8])
def test_chunked_kernels_count_exactly_as_the_tested_ones(k, monkeypatch):
    """A chunk's untested iterations, rolled back where z escaped, give the counts of the kernels
    that test every iteration: float64 the CPU's, float32 the plain float32 kernel's (30
    iterations: the escaped pixels overflow to inf and nan within a chunk, which must not
    hide their escape)."""
    for dtype, reference in ((np.float64, "njit"), (np.float32, "cuda_f32")):
        monkeypatch.setitem(mb.KERNELS, "chunk", (mb.chunked_kernel(dtype, k), dtype, (8, 16)))
        np.testing.assert_array_equal(mb.compute("chunk", 37, 11, 30),
                                      mb.compute(reference, 37, 11, 30))


def test_the_registry_builds_the_sweep_or_the_pick(monkeypatch):
    """MANDELBROT_TUNE=1: every candidate of the sweep and nothing else; MANDELBROT_PICKED: each
    chunked kernel at the chunk length and block picked (gpu/mandelbrot.sh's rule)."""
    def registry(**env):
        monkeypatch.setattr(mb, "KERNELS", dict(mb.KERNELS))  # the registry adds its rows here
        for key, text in env.items():
            monkeypatch.setenv(key, text)
        spec = importlib.util.spec_from_file_location("mandelbrot_registry", bm.__file__)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    tune = registry(MANDELBROT_TUNE="1")
    assert list(tune.VARIANTS) == [f"{k}/{c}" for k in ("cuda_f64_chunk", "cuda_f32_chunk")
                                   for c in bm.SWEEP]
    assert mb.KERNELS["cuda_f32_chunk/k16_16x16"][1:] == (np.float32, (16, 16))
    assert tune.VARIANTS["cuda_f32_chunk/k16_16x16"].label == "Numba CUDA float32, chunked, k = 16, 16 x 16"
    monkeypatch.delenv("MANDELBROT_TUNE")
    picked = registry(MANDELBROT_PICKED="cuda_f64_chunk=k16_16x16,cuda_f32_chunk=k4_8x16")
    assert picked.VARIANTS["cuda_f64_chunk"].label == "Numba CUDA float64, chunked"
    assert picked.VARIANTS["cuda_f32_chunk"].label == "Numba CUDA float32, chunked"
    assert mb.KERNELS["cuda_f64_chunk"][2] == (16, 16)


def test_cuda_f32_differs_on_few_pixels_only():
    f32 = mb.compute("cuda_f32", 48, 32, 60)
    f64 = mb.compute("njit", 48, 32, 60)
    assert mb.differing_fraction(f32, f64) <= bm.F32_TOLERANCE
    assert bm.check("cuda_f32", f32, f64)["ok"]


@pytest.mark.parametrize("variant", GPU_VARIANTS)
def test_kernel_writes_every_pixel(variant):
    # Poison the output: a pixel the grid does not cover keeps -1 and fails.
    from numba import cuda

    kernel, dtype, threads = mb.KERNELS[variant]
    xs, ys = mb.coordinates(35, 9, dtype)
    d_counts = cuda.to_device(np.full((9, 35), -1, dtype=np.int32))
    kernel[mb.blocks_for(35, 9, threads), threads](cuda.to_device(xs), cuda.to_device(ys), 3,
                                                   d_counts)
    assert (d_counts.copy_to_host() >= 0).all()


def test_blocks_cover_the_image():
    assert mb.blocks_for(1536, 1024, (32, 8)) == (48, 128)
    assert mb.blocks_for(33, 9, (32, 8)) == (2, 2)
    assert mb.blocks_for(33, 9, (8, 16)) == (5, 1)


def test_warp_iterations_count_the_slowest_pixel_of_each_warp():
    ref = np.zeros((4, 32), dtype=np.int32)
    ref[0, 0] = 10  # one slow pixel in the first row
    assert bm.warp_iterations(ref, (32, 8)) == 32 * 10  # one warp (row 0) waits for it
    assert bm.warp_iterations(ref, (8, 16)) == 32 * 10  # one warp (8 x 4 pixels) waits for it
    ref[:, 0] = 10  # a slow column: every row's warp waits, but only one 8 x 4 warp
    assert bm.warp_iterations(ref, (32, 8)) == 4 * 32 * 10
    assert bm.warp_iterations(ref, (8, 16)) == 32 * 10
    assert bm.warp_iterations(np.ones((3, 5), dtype=np.int32), (8, 16)) == 32  # partial block


def test_work_counts_follow_the_documented_formula():
    p = {"width": 9, "height": 6, "iterations": 12}
    ref = python_counts(9, 6, 12)
    c = bm.counts("cuda_f64", p, ref)
    escaped = int((ref < 12).sum())
    assert c["work"]["pixel_iterations"] == int(ref.sum())
    assert c["flops"] == 8 * int(ref.sum()) + 3 * escaped
    assert c["bytes"] == 9 * 6 * 4 + (9 + 6) * 8


def test_check_flags_a_wrong_result():
    ref = python_counts(8, 8, 10)
    bad = ref.copy()
    bad[3, 3] += 1
    assert bm.check("njit", ref, ref) == {"metric": "differing_fraction", "value": 0.0, "ok": True}
    assert not bm.check("cuda_f64", bad, ref)["ok"]
    assert not bm.check("njit", ref[:4], ref)["ok"]  # wrong shape


def image_tool():
    spec = importlib.util.spec_from_file_location("mandelbrot_image", ROOT / "tools/mandelbrot_image.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool


def test_image_tool_writes_the_picture_of_the_deep_case(tmp_path, monkeypatch, capsys):
    from bench.runner import Case

    monkeypatch.setitem(sys.modules, "benchmark", bm)  # the registry the tool imports
    monkeypatch.setitem(bm.CASES, "deep", Case({"width": 24, "height": 16, "iterations": 30}))
    png = tmp_path / "m.png"
    assert image_tool().main([str(png)]) == 0
    assert capsys.readouterr().out == f"image written to {png}\n"
    import matplotlib.pyplot as plt

    rgba = plt.imread(png)
    assert rgba.shape == (16, 24, 4)
    assert (rgba[8, 14, :3] == 0).all()  # a point of the set (x = -0.17, y = 0.07) is black
    assert rgba[0, 0, :3].any()  # the corner (-2, -1) escapes at once: coloured


BAD_IMAGES = {"extension": "build/m.jpg", "folder": "docs", "missing folder": "no/such/m.png",
              "unwritable folder": "/proc/m.png"}


@pytest.mark.parametrize("png", list(BAD_IMAGES.values()), ids=list(BAD_IMAGES))
def test_bad_image_names_are_one_line_before_any_work(png, monkeypatch, capsys):
    monkeypatch.setattr(bm, "reference", lambda p: pytest.fail("computed before checking"))
    monkeypatch.setitem(sys.modules, "benchmark", bm)
    with pytest.raises(SystemExit) as exit_:
        image_tool().main([png])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.startswith("error: ") and err.count("\n") == 1


def test_sass_is_refused_on_the_simulator_before_any_work(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(mb.config, "ENABLE_CUDASIM", 1)
    monkeypatch.setattr(bm.BENCHMARK, "setup", lambda *a: pytest.fail("launched a kernel"))
    with pytest.raises(SystemExit) as exit_:
        run.main(bm.BENCHMARK, ["--sass", str(tmp_path / "s.txt")])
    assert exit_.value.code == 2
    assert capsys.readouterr().err == "error: --sass needs an NVIDIA GPU (not the CUDA simulator)\n"


def test_options_as_a_reader_sees_them():
    out = subprocess.run([sys.executable, str(ROOT / "tools/mandelbrot_image.py"), "m.jpg"],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert (out.returncode, out.stderr) == (2, "error: m.jpg: the file name must end in .png\n")
    out = run_snippet("bench/run.py", "mandelbrot", "--help")
    assert out.returncode == 0 and "--sass TXT" in out.stdout and "--output" in out.stdout


def execute_notebook(output, **env):
    """Execute the page's notebook with `jupyter execute` (nbclient's command line), the same
    tool gpu/mandelbrot.sh runs on the GPU machine; returns the executed notebook."""
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("nbclient")
    jupyter = os.path.join(os.path.dirname(sys.executable), "jupyter")
    source = ROOT / "docs" / "kernels" / "mandelbrot-notebook.ipynb"
    proc = subprocess.run([jupyter, "execute", "--timeout=120", f"--output={output}",
                           str(source)], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **env})
    assert proc.returncode == 0, proc.stderr[-2000:]
    return nbformat.read(f"{output}.ipynb", as_version=4)


def test_notebook_runs_on_the_cpu(tmp_path):
    nb = execute_notebook(tmp_path / "executed", MANDELBROT_NB_WIDTH="24",
                          MANDELBROT_NB_HEIGHT="16")
    text = json.dumps(nb.cells[4]["outputs"])
    assert "24 x 16 pixels" in text and "cuda_f64_fast" in text
    assert not [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
                if o.output_type == "error"]


def test_committed_notebook_has_outputs_and_no_errors():
    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.read(ROOT / "docs" / "kernels" / "mandelbrot-notebook.ipynb", as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code), "commit the notebook executed"
    assert any(o.get("output_type") == "display_data" for c in code for o in c.outputs)
    assert not [o for c in code for o in c.outputs if o.output_type == "error"]


@pytest.mark.gpu
@pytest.mark.parametrize("iterations", [20, 1000, 999])
@pytest.mark.parametrize("variant", GPU_VARIANTS)
def test_kernels_at_full_size_on_gpu(variant, iterations):
    got = mb.compute(variant, 1536, 1024, iterations)
    ref = mb.compute("njit_parallel", 1536, 1024, iterations)
    assert bm.check(variant, got, ref)["ok"]
    if variant != "cuda_f32":
        np.testing.assert_array_equal(got, ref)


@pytest.mark.gpu
def test_chunked_f64_kernel_clears_the_bar_on_the_large_case():
    """The chunked float64 kernel, checked pixel for pixel, then timed as the runner times it."""
    from bench import timing
    from renderers.mandelbrot import BAR_PIXEL_ITERATIONS as BAR  # the page's bar (issue 48)

    p = bm.CASES["large"].params
    prepared = bm.BENCHMARK.setup("cuda_f64_chunk", p)
    prepared.kernel()
    ref = bm.reference(p)
    assert bm.check("cuda_f64_chunk", prepared.fetch(), ref)["ok"]
    stats = timing.time_cuda(prepared.kernel, repeats=10, warmup=2, calls=5)
    rate = int(ref.sum(dtype=np.int64)) / stats.median_s
    print(f"\nBAR cuda_f64_chunk large: {rate:.4g} pixel-iterations/s, median "
          f"{stats.median_s * 1e3:.4f} ms, spread {stats.max_s / stats.min_s:.4f}, bar "
          f"{BAR:.3g}")
    assert rate >= BAR


@pytest.mark.gpu
@pytest.mark.parametrize("iterations", [1000, 999])
def test_chunked_f32_kernel_counts_as_the_plain_one_at_full_size(iterations):
    np.testing.assert_array_equal(mb.compute("cuda_f32_chunk", 1536, 1024, iterations),
                                  mb.compute("cuda_f32", 1536, 1024, iterations))


SASS = """===== cuda_f64 mandelbrot_kernel_f64
        /*0330*/                   ULDC.64 UR8, c[0x0][0x280] ;
.L_x_2:
        /*0340*/                   DMUL R14, R10, R10 ;
        /*0350*/                   DMUL R16, R12, R12 ;
        /*0360*/                   DADD R22, R14, R16 ;
        /*0370*/                   DSETP.GT.AND P0, PT, R22, 4, PT ;
        /*0380*/               @P0 BRA `(.L_x_1) ;
        /*0390*/                   IADD3 R21, P0, R21, 0x1, RZ ;
        /*03a0*/                   DMUL R10, R12, R10 ;
        /*03b0*/                   DADD R12, -R14, R16 ;
        /*03c0*/                   DADD R10, R10, R10 ;
        /*03d0*/                   DADD R12, R4, R12 ;
        /*03e0*/                   DADD R10, R2, R10 ;
        /*03f0*/              @!P0 BRA `(.L_x_2) ;
.L_x_1:
        /*0400*/                   EXIT ;
===== cuda_f64_fast mandelbrot_kernel_f64_fast
.L_x_5:
""" + "".join(f"""        /*{0x500 + 0x80 * k:04x}*/                   DMUL R18, R16, R16 ;
        /*{0x510 + 0x80 * k:04x}*/                   DMUL R20, R14, R14 ;
        /*{0x520 + 0x80 * k:04x}*/                   DADD R22, R18, R20 ;
        /*{0x530 + 0x80 * k:04x}*/                   ISETP.GT.U32.AND P1, PT, R22, RZ, PT ;
        /*{0x540 + 0x80 * k:04x}*/               @P1 BRA `(.L_x_1) ;
        /*{0x550 + 0x80 * k:04x}*/                   DMUL R14, R14, R16 ;
        /*{0x560 + 0x80 * k:04x}*/                   DFMA R14, R14, 2, R6 ;
        /*{0x570 + 0x80 * k:04x}*/                   DADD R16, R8, R18 ;
""" for k in range(2)) + """        /*0600*/              @!P0 BRA `(.L_x_5) ;
.L_x_6:
        /*0610*/                   DMUL R18, R16, R16 ;
        /*0620*/              @!P0 BRA `(.L_x_6) ;
===== cuda_f32_chunk mandelbrot_kernel_chunked
.L_x_9:
""" + "".join(f"""        /*{0x700 + 0x60 * k:04x}*/                   FMUL R18, R16, R16 ;
        /*{0x710 + 0x60 * k:04x}*/                   FMUL R20, R14, R14 ;
        /*{0x720 + 0x60 * k:04x}*/                   FMUL R14, R14, R16 ;
        /*{0x730 + 0x60 * k:04x}*/                   FFMA R14, R14, 2, R6 ;
        /*{0x740 + 0x60 * k:04x}*/                   FADD R16, R18, -R20 ;
        /*{0x750 + 0x60 * k:04x}*/                   FADD R16, R16, R4 ;
""" for k in range(4)) + """        /*0880*/                   FMUL R18, R16, R16 ;
        /*0890*/                   FMUL R20, R14, R14 ;
        /*08a0*/                   FADD R18, R18, R20 ;
        /*08b0*/                   FSETP.GTU.AND P1, PT, R18, 4, PT ;
        /*08c0*/                   IADD3 R21, P0, R21, 0x4, RZ ;
        /*08d0*/              @!P1 BRA `(.L_x_9) ;
"""


def test_sass_loops_count_fp64_instructions_per_iteration():
    from bench.sass import loops as sass_loops

    loops = sass_loops(SASS)
    assert loops["cuda_f64"] == {"precision": "FP64", "iterations_per_trip": 1, "float": 9,
                                 "other": 3, "float_ops": {"DADD": 5, "DMUL": 3, "DSETP": 1},
                                 "ops": {"BRA": 2, "DADD": 5, "DMUL": 3, "DSETP": 1, "IADD3": 1}}
    # the main loop (two iterations per trip), not the one-DMUL loop after it
    assert loops["cuda_f64_fast"]["iterations_per_trip"] == 2
    assert loops["cuda_f64_fast"]["float"] == 6 and loops["cuda_f64_fast"]["other"] == 2.5
    f32 = sass_loops(SASS.replace("DMUL", "FMUL").replace("DADD", "FADD").replace("DSETP", "FSETP")
                     .replace("DFMA", "FFMA"))
    assert f32["cuda_f64"]["precision"] == "FP32" and f32["cuda_f64"]["float"] == 9
    # a chunk of 4 iterations and its one test: 4 x 3 + 2 products, 4 x 6 + 4 float instructions
    assert loops["cuda_f32_chunk"]["iterations_per_trip"] == 4
    assert loops["cuda_f32_chunk"]["float"] == 7 and loops["cuda_f32_chunk"]["other"] == 0.5
    assert loops["cuda_f32_chunk"]["ops"]["FMUL"] == 14 / 4
    with pytest.raises(ValueError, match="no loop"):
        sass_loops("===== cuda_f64 k\n        /*0000*/                   EXIT ;\n")
    with pytest.raises(ValueError, match="not 3 per iteration"):  # 4 products: a miscount
        sass_loops(SASS.split("===== cuda_f32_chunk")[0].replace("DADD R22", "DMUL R22"))


def synthetic_results(tmp_path, kernel_s, spread=1.05):
    """A results file with one CPU and three GPU kernels of the large case, two of the deep case,
    and the Nsight Compute figures of those two."""
    from bench import results

    p = {"width": 6144, "height": 4096, "iterations": 1000}
    extra = {"params": p, "work": {"pixel_iterations": 10**10}, "calls_per_sample": 1,
             "error": {"metric": "differing_fraction", "value": 0.0}}

    def stats(t):
        return {"median_s": t, "min_s": t / spread, "max_s": t, "repeats": 10,
                "clock": "host", "spread": spread}

    gpu = {**extra, "work": {"pixel_iterations": 10**10, "warp_iterations": 2 * 10**10}}
    ms = [results.measurement("large", "njit_parallel", "cpu", "kernel", stats(2.0), **extra),
          results.measurement("large", "cuda_f64", "gpu", "kernel", stats(0.01), **gpu),
          results.measurement("large", "cuda_f64_chunk", "gpu", "kernel", stats(kernel_s), **gpu),
          results.measurement("large", "cuda_f64_chunk", "gpu", "end_to_end", stats(0.05), **gpu),
          results.measurement("large", "cuda_f32_chunk", "gpu", "kernel", stats(kernel_s / 2), **gpu),
          *(results.measurement("deep", v, "gpu", "kernel", stats(0.001),
                                **{**gpu, "params": {**p, "width": 1536, "height": 1024},
                                   "work": {"pixel_iterations": 10**9, "warp_iterations": 32 * 10**8}})
            for v in ("cuda_f32", "cuda_f64_chunk"))]
    system = {"date": "2026-11-29T00:00:00+00:00", "command": "python x",
              "host": {"cpu": "test CPU", "cores": 16}, "libraries": {},
              "gpus": [{"name": "NVIDIA H200", "memory_mib": 143771, "driver": "580",
                        "compute_capability": "9.0"}]}
    (tmp_path / "data").mkdir(exist_ok=True)
    results.write_results(tmp_path / "data" / "r.json", "mandelbrot", system, ms,
                          variants=bm.BENCHMARK.described())  # the labels, as run.py writes them
    (tmp_path / "data" / "specs.json").write_text(
        (ROOT / "docs" / "data" / "mandelbrot-gpu-specs.json").read_text())
    from bench.sass import loops as sass_loops

    (tmp_path / "data" / "loops.json").write_text(json.dumps({"loops": sass_loops(SASS)}))
    stalls = {f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio": 0.5
              for r in ("math_pipe_throttle", "wait", "not_selected", "selected", "short_scoreboard",
                        "dispatch_stall", "branch_resolving", "no_instruction")}
    ncu = {v: {**stalls, "smsp__inst_executed.sum": 15e8 * n, "sm__inst_executed_pipe_fma.sum": 9e8 * n,
               "sm__inst_executed_pipe_fp64.sum": 6.5e8 * (n - 1), "sm__inst_executed_pipe_alu.sum": 3e8,
               "smsp__issue_active.avg.per_cycle_active": 0.95 / n,
               "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active": 60.0,
               "sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active": 90.0 * (n - 1),
               "sm__warps_active.avg.pct_of_peak_sustained_active": 88.0,
               "launch__registers_per_thread": 30.0}
           for v, n in (("cuda_f32", 1), ("cuda_f64_chunk", 2), ("cuda_f64", 3))}  # cuda_f64: no deep row
    (tmp_path / "data" / "ncu.json").write_text(json.dumps({"variants": ncu}))
    return tmp_path


@pytest.fixture(scope="module")
def mandelbrot_renderers():
    import renderers

    return renderers


@pytest.mark.parametrize(("kernel_s", "of_bar"), [(0.004, "119%"), (0.01, "48%")])
def test_ceiling_table_and_bar(tmp_path, mandelbrot_renderers, kernel_s, of_bar):
    docs = synthetic_results(tmp_path, kernel_s)
    text = mandelbrot_renderers.get("mandelbrot_ceiling")(
        docs, path="data/r.json", specs="data/specs.json", loops="data/loops.json")
    # plain kernel: 9 FP64 of 12 instructions: pipe 34e12 / 2 / 9, issue 67e12 / 2 / 12; 1e10 / 0.01 s
    assert "| Numba CUDA float64 | 9 FP64 | 3 | 1.89e12 | 2.79e12 | FP64 pipe | 1e12 | 53% | 50.0% |" in text
    # the chunked float32 kernel: 7 FP32 of 7.5 instructions, bound by the issue (67e12 / 2 / 7.5)
    assert ("| 7 FP32 | 0.5 | 4.79e12 | 4.47e12 | issue | " + f"{2e10 / kernel_s:.3g}".replace("e+", "e")) in text
    assert text.count("\n| Numba") == 2  # the plain float64 and chunked float32 have their loops here
    mix = mandelbrot_renderers.get("mandelbrot_mix")(docs, path="data/r.json", loops="data/loops.json")
    assert "| Opcode | Numba CUDA float64 | Numba CUDA float32, chunked |" in mix
    assert "| Iterations per trip | 1 | 4 |" in mix  # then the float opcodes, then the rest:
    assert mix.index("| `FSETP` |") < mix.index("| `BRA` | 2 | 0.25 |") < mix.index("| `IADD3` | 1 | 0.25 |")
    assert "| `DMUL` | 3 |  |" in mix and "| `FMUL` |  | 3.5 |" in mix
    value = mandelbrot_renderers.get_value
    assert value("mandelbrot.of_bar")(docs, path="data/r.json") == of_bar
    assert value("mandelbrot.bar")(docs) == "2.1e12"
    assert value("mandelbrot.ratio")(docs, "cuda_f32_chunk", "cuda_f64_chunk", "large",
                                     path="data/r.json") == "2.00"
    spec = value("mandelbrot.spec")
    assert spec(docs, path="data/r.json", specs="data/specs.json", field="fp64_tflops") == "34"


def test_profile_table_per_warp_iteration(tmp_path, mandelbrot_renderers):
    docs = synthetic_results(tmp_path, 0.005)
    text = mandelbrot_renderers.get("mandelbrot_profile")(docs, path="data/r.json",
                                                          ncu="data/ncu.json")
    assert text.count("\n| ") == 1 + 9 + 8  # the header, a row per figure and per stall reason
    assert "|  | Numba CUDA float32 | Numba CUDA float64, chunked |" in text
    # 10^8 warp-iterations on the deep case: 15e8 instructions are 15 per iteration
    assert "| Warp instructions per iteration | 15 | 30 |" in text
    assert "| FP64 pipe busy | 0% | 90% |" in text and "| Stall: math pipe throttle | 0.50 | 0.50 |" in text
    ncu = json.loads((docs / "data/ncu.json").read_text())  # an ncu that lacked a metric: "–"
    del ncu["variants"]["cuda_f32"]["sm__inst_executed_pipe_fp64.sum"]
    (docs / "data/ncu.json").write_text(json.dumps(ncu))
    text = mandelbrot_renderers.get("mandelbrot_profile")(docs, path="data/r.json", ncu="data/ncu.json")
    assert "| FP64 pipe instructions per iteration | – | 6.5 |" in text


def test_picked_names_the_fastest_candidate_of_the_tuning_run(tmp_path, mandelbrot_renderers):
    from bench import results

    def row(variant, seconds):
        return results.measurement("large", variant, "gpu", "kernel", {
            "median_s": seconds, "min_s": seconds, "max_s": seconds, "repeats": 10, "clock": "cuda",
            "spread": 1.0}, params={"width": 6144, "height": 4096, "iterations": 1000},
            work={"pixel_iterations": 10**10}, calls_per_sample=1)
    names = {f"cuda_f64_chunk/{c}": {"label": f"Numba CUDA float64, chunked, {c}", "device": "gpu"}
             for c in ("k4", "k8", "k16")}
    (tmp_path / "data").mkdir()
    results.write_results(tmp_path / "data/t.json", "mandelbrot", {
        "date": "2026-12-06T00:00:00+00:00", "command": "x", "host": {"cpu": "c", "cores": 1},
        "libraries": {}, "gpus": []}, [row("cuda_f64_chunk/k4", 3.0), row("cuda_f64_chunk/k8", 2.0),
                                       row("cuda_f64_chunk/k16", 2.5)], variants=names)
    picked = mandelbrot_renderers.get_value("mandelbrot.picked")
    assert picked(tmp_path, "cuda_f64_chunk", path="data/t.json") == "k8"


def test_predictions_name_each_kernel_by_its_label(tmp_path, mandelbrot_renderers):
    import shutil

    docs = synthetic_results(tmp_path, 0.005)
    shutil.copy(ROOT / "docs/data/mandelbrot-predictions.csv", docs / "data")
    text = mandelbrot_renderers.get("mandelbrot_predictions")(docs, path="data/r.json")
    assert text.count("\n| Numba CUDA") == 4 and "| Numba CUDA float64, tuned | bound by the FP64 pipe" in text
    with (docs / "data/mandelbrot-predictions.csv").open("a") as csv:
        csv.write('cuda_f16,"a kernel the registry does not have"\n')
    with pytest.raises(KeyError, match="cuda_f16"):
        mandelbrot_renderers.get("mandelbrot_predictions")(docs, path="data/r.json")


def test_chart_leaves_out_what_it_is_told_and_no_more(tmp_path, mandelbrot_renderers):
    docs = synthetic_results(tmp_path, 0.005)
    chart = mandelbrot_renderers.get("mandelbrot_chart")
    alt = chart(docs, path="data/r.json", case="large", alt="Bars.", without="cuda_f64")
    assert "Numba CUDA float64:" not in alt and "Numba CUDA float64, chunked" in alt
    with pytest.raises(ValueError, match="no such variant"):
        chart(docs, path="data/r.json", case="large", alt="Bars.", without="cuda_f64_fats")


def page_table(docs, path, case, where="render mandelbrot_case {} "):
    """The page's per-case table directive (or another), rendered from another results file."""
    from renderers.page import render_markdown

    lines = map(str.strip, (ROOT / "docs/kernels/mandelbrot.md").read_text().splitlines())  # a folded block indents its lines
    line = next(l for l in lines
                if l.startswith("<!-- render ") and where.format(case) in l)
    return render_markdown(line, docs, "mandelbrot.md", data=path.removeprefix("data/"), topic="mandelbrot")


def test_values_and_tables_read_labels_from_the_file(tmp_path, mandelbrot_renderers):
    docs = synthetic_results(tmp_path, 0.005, spread=1.5)
    value, path = mandelbrot_renderers.get_value, "data/r.json"
    table = page_table(docs, path, "large")
    assert table.count("\n| Numba") == 5 and "| 400 |" in table and "chunked, end to end" in table
    summary = page_table(docs, path, "", "render mandelbrot_summary{}")
    assert "| `large` | 6144 x 4096 pixels, 1000 iterations | Numba @njit(parallel=True): 2 s | " \
           "5 ms | 400 | 50 ms | 40 | 2e12 |" in summary
    from renderers.table import cell

    kernel = "case=large phase=kernel variant={}"
    assert cell(docs, path, "{over_cpu:ratio}", kernel.format("cuda_f64")) == "200"
    assert cell(docs, path, "{base[s]:/{s}:ratio}", "case=large phase=end_to_end variant=cuda_f64_chunk",
                join="base=case={case} phase=kernel variant=cuda_f64") == "0.2"
    assert cell(docs, path, "{label}", "case=large phase=kernel device=cpu", "s") \
        == "Numba @njit(parallel=True)"
    assert value("machine.host")(docs, path=path, field="cpu") == "test CPU"
    assert value("machine.host")(docs, path=path, field="gpu") == "NVIDIA H200"
    assert value("mandelbrot.spread_count")(docs, path=path, above="1.2") == "6 of 6"
    assert value("mandelbrot.spread_count")(docs, path=path, above="1.6") == "0 of 6"
    assert value("mandelbrot.widest_spread")(docs, path=path).startswith("1.50 (large, Numba CUDA")
    with pytest.raises(ValueError, match="no row where 'case=large phase=kernel variant=cuda_f32'"):
        cell(docs, path, "{s:time}", kernel.format("cuda_f32"))  # (the deep case has one)
    with pytest.raises(Exception, match="data/missing.json not found"):
        page_table(docs, "data/missing.json", "large")


def results_cells(nb) -> list[int]:
    """The notebook's code cells that only read the results file (and print what they read)."""
    return [i for i, c in enumerate(nb.cells) if c.cell_type == "code"
            and "doc" in c.source and "mb.compute" not in c.source and "plt." not in c.source]


def test_committed_notebook_shows_the_current_results_file():
    """The notebook's figures are the results file's: re-running its results cells on the
    committed file must print exactly what the committed notebook shows (date, every time,
    every ratio). Execute the notebook again (gpu/mandelbrot.sh) whenever the file changes."""
    import contextlib
    import io

    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.read(ROOT / "docs" / "kernels" / "mandelbrot-notebook.ipynb", as_version=4)
    cells = results_cells(nb)
    assert cells, "no cell of the notebook reads the results file: the check checks nothing"
    from bench import results, system

    scope = {"HERE": ROOT / "docs" / "kernels", "RESULTS": "../data/mandelbrot-h100.json",
             "results": results, "system": system, "os": os, "Path": Path}
    for i in cells:
        shown = "".join(o.get("text", "") for o in nb.cells[i].outputs
                        if o.get("output_type") == "stream" and o.get("name") == "stdout")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(nb.cells[i].source, f"notebook cell {i}", "exec"), scope)
        assert out.getvalue() == shown, (
            f"notebook cell {i} shows figures other than docs/data/mandelbrot-h100.json's: "
            "execute the notebook again")
