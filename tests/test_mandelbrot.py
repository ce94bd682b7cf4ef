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
@pytest.mark.parametrize("variant", ["cuda_f64", "cuda_f64_fast"])  # iterations not a multiple of 4
def test_cuda_f64_kernels_match_cpu_exactly(variant, width, height, iterations):
    np.testing.assert_array_equal(mb.compute(variant, width, height, iterations),
                                  mb.compute("njit", width, height, iterations))


@pytest.mark.parametrize("value", [0.0, 1.5, 3.999999999999999, 4.0, 4.000000000000001, 1e300,
                                   float("inf")])
def test_escape_test_on_the_bits_equals_the_float_test(value):
    assert (mb.bits64(value) > mb.FOUR_BITS) == (value > 4.0)


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
        bm.run.main(bm.BENCHMARK, ["--sass", str(tmp_path / "s.txt")])
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
def test_fast_f64_kernel_clears_the_bar_on_the_large_case():
    """The tuned float64 kernel, checked pixel for pixel, then timed as the runner times it."""
    from bench import timing

    p = bm.CASES["large"].params
    prepared = bm.BENCHMARK.setup("cuda_f64_fast", p)
    prepared.kernel()
    ref = bm.reference(p)
    assert bm.check("cuda_f64_fast", prepared.fetch(), ref)["ok"]
    stats = timing.time_cuda(prepared.kernel, repeats=10, warmup=2, calls=5)
    rate = int(ref.sum(dtype=np.int64)) / stats.median_s
    print(f"\nBAR cuda_f64_fast large: {rate:.4g} pixel-iterations/s, median "
          f"{stats.median_s * 1e3:.4f} ms, spread {stats.max_s / stats.min_s:.4f}, bar "
          f"{bm.F64_BAR:.3g}")
    assert rate >= bm.F64_BAR


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
"""


def test_sass_loops_count_fp64_instructions_per_iteration():
    from bench.sass import loops as sass_loops

    loops = sass_loops(SASS)
    assert loops["cuda_f64"] == {"precision": "FP64", "iterations_per_trip": 1, "float": 9,
                                 "other": 3, "float_ops": {"DADD": 5, "DMUL": 3, "DSETP": 1}}
    # the main loop (two iterations per trip), not the one-DMUL loop after it
    assert loops["cuda_f64_fast"]["iterations_per_trip"] == 2
    assert loops["cuda_f64_fast"]["float"] == 6 and loops["cuda_f64_fast"]["other"] == 2.5
    f32 = sass_loops(SASS.replace("DMUL", "FMUL").replace("DADD", "FADD").replace("DSETP", "FSETP")
                     .replace("DFMA", "FFMA"))
    assert f32["cuda_f64"]["precision"] == "FP32" and f32["cuda_f64"]["float"] == 9
    with pytest.raises(ValueError, match="no loop"):
        sass_loops("===== cuda_f64 k\n        /*0000*/                   EXIT ;\n")


def synthetic_results(tmp_path, kernel_s, spread=1.05):
    """A results file with one CPU and two GPU measurements of the large case."""
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
          results.measurement("large", "cuda_f64_fast", "gpu", "kernel", stats(kernel_s), **gpu),
          results.measurement("large", "cuda_f64_fast", "gpu", "end_to_end", stats(0.05), **gpu)]
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
    return tmp_path


@pytest.fixture(scope="module")
def mandelbrot_renderers():
    import renderers

    return renderers


@pytest.mark.parametrize(("kernel_s", "of_bar"), [(0.005, "133%"), (0.01, "67%")])
def test_ceiling_table_and_bar(tmp_path, mandelbrot_renderers, kernel_s, of_bar):
    docs = synthetic_results(tmp_path, kernel_s)
    text = mandelbrot_renderers.get("mandelbrot_fp64_ceiling")(
        docs, path="data/r.json", specs="data/specs.json", loops="data/loops.json")
    # plain kernel: 9 FP64 instructions, ceiling 34e12 / 2 / 9; measured 1e10 / 0.01 s
    assert ("| Numba CUDA float64 | 1 | 5 DADD + 3 DMUL + 1 DSETP | 9 FP64 | 3 | 1.89e12 | 1e12 "
            "| 53% | 50.0% |") in text
    assert "| Numba CUDA float64, tuned | 2 | 4 DADD + 2 DFMA + 6 DMUL | 6 FP64 | 2.5 | 2.83e12 |" in text
    value = mandelbrot_renderers.get_value
    assert value("mandelbrot.of_bar")(docs, path="data/r.json") == of_bar
    assert value("mandelbrot.bar")(docs) == "1.5e12"
    spec = value("mandelbrot.spec")
    assert spec(docs, path="data/r.json", specs="data/specs.json", field="fp64_tflops") == "34"


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
    assert table.count("\n| Numba") == 4 and "| 400 |" in table and "tuned, end to end" in table
    summary = page_table(docs, path, "", "render mandelbrot_summary{}")
    assert "| `large` | 6144 x 4096 pixels, 1000 iterations | Numba @njit(parallel=True): 2 s | " \
           "5 ms | 400 | 50 ms | 40 | 2e12 |" in summary
    from renderers.table import cell

    kernel = "case=large phase=kernel variant={}"
    assert cell(docs, path, "{over_cpu:ratio}", kernel.format("cuda_f64")) == "200"
    assert cell(docs, path, "{base[s]:/{s}:ratio}", "case=large phase=end_to_end variant=cuda_f64_fast",
                join="base=case={case} phase=kernel variant=cuda_f64") == "0.2"
    assert cell(docs, path, "{label}", "case=large phase=kernel device=cpu", "s") \
        == "Numba @njit(parallel=True)"
    assert value("machine.host")(docs, path=path, field="cpu") == "test CPU"
    assert value("machine.host")(docs, path=path, field="gpu") == "NVIDIA H200"
    assert value("mandelbrot.spread_count")(docs, path=path, above="1.2") == "3 of 3"
    assert value("mandelbrot.spread_count")(docs, path=path, above="1.6") == "0 of 3"
    assert value("mandelbrot.widest_spread")(docs, path=path).startswith("1.50 (large, Numba CUDA")
    with pytest.raises(ValueError, match="no row has variant=cuda_f32"):
        cell(docs, path, "{s:time}", kernel.format("cuda_f32"))
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

    scope = {"HERE": ROOT / "docs" / "kernels", "RESULTS": "../data/mandelbrot-h200.json",
             "results": results, "system": system, "os": os, "Path": Path}
    for i in cells:
        shown = "".join(o.get("text", "") for o in nb.cells[i].outputs
                        if o.get("output_type") == "stream" and o.get("name") == "stdout")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(nb.cells[i].source, f"notebook cell {i}", "exec"), scope)
        assert out.getvalue() == shown, (
            f"notebook cell {i} shows figures other than docs/data/mandelbrot-h200.json's: "
            "execute the notebook again")
