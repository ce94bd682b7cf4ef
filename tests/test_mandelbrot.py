"""Mandelbrot: every variant against pure Python, the CUDA kernels on the simulator, the CLI,
the benchmark's work counts, the notebook; and (marked gpu) the kernels at full size."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from types import SimpleNamespace

import numpy as np
import pytest
from bench import runner

from helpers import HAS_GPU, ROOT, run_snippet

SNIPPET = "mandelbrot/mandelbrot.py"
# Loaded the way run.py loads it: the topic folder goes on sys.path and benchmark.py imports the
# snippet as plain `mandelbrot`. Numba's on-disk cache (cache=True) records the defining module's
# name, so importing the same file under a second name would leave cache entries that a script
# run or the notebook cannot load.
bm = SimpleNamespace(**runner.load("mandelbrot").check.__globals__)  # benchmark.py's names
mb = bm.mb
CPU_VARIANTS = ["numpy", "njit", "njit_parallel"]
GPU_VARIANTS = list(mb.GPU_VARIANTS)


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


BAD_ARGUMENTS = {
    "zero": ["--width", "0"], "negative": ["--height", "-3"], "wrong type": ["--iterations", "x"],
    "float": ["--width", "1e8"], "huge": ["--iterations", "1e20"], "nan": ["--width", "nan"],
    "inf": ["--height", "inf"], "too many iterations": ["--iterations", "100000000000"],
    "too many pixels": ["--width", "32768", "--height", "32768"],
    "unknown variant": ["--variants", "cuda_f16"], "no variant": ["--variants", ","],
    "image extension": ["--image", "build/m.jpg"], "image folder": ["--image", "docs"],
    "image missing folder": ["--image", "no/such/folder/m.png"],
    "image unwritable folder": ["--image", "/proc/m.png"],
    "sass extension": ["--sass", "build/s.sass"],
}


@pytest.mark.parametrize("args", list(BAD_ARGUMENTS.values()), ids=list(BAD_ARGUMENTS))
def test_cli_rejects_bad_arguments_in_one_line(args, capsys):
    with pytest.raises(SystemExit) as exit_:
        mb.main(args)
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert err.startswith("error: ") and err.count("\n") == 1


def test_cli_error_as_a_reader_sees_it():
    out = run_snippet(SNIPPET, "--width", "-1")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr == "error: argument --width: must be from 1 to 32768, got -1\n"


def test_snippet_runs_alone_in_an_empty_folder(tmp_path):
    """A reader copies mandelbrot.py alone and runs it (CUDA variants on the simulator)."""
    import shutil

    shutil.copy(ROOT / "snippets" / SNIPPET, tmp_path)
    out = subprocess.run([sys.executable, "mandelbrot.py", "--width", "9", "--height", "7",
                          "--variants", "njit,cuda_f64,cuda_f64_fast", "--image", "m.png"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=300,
                         env={**os.environ, "NUMBA_ENABLE_CUDASIM": "1", "PYTHONPATH": ""})
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("matches the reference") == 3 and (tmp_path / "m.png").is_file()


def test_cli_help_exits_0():
    out = run_snippet(SNIPPET, "--help")
    assert out.returncode == 0 and "--iterations" in out.stdout


def test_bad_image_path_is_refused_before_any_work(monkeypatch):
    monkeypatch.setattr(mb, "compute", lambda *a: pytest.fail("computed before checking"))
    with pytest.raises(SystemExit):
        mb.main(["--image", "/proc/m.png"])


@pytest.mark.parametrize("moment", ["importing", "computing"])
def test_ctrl_c_prints_one_line_and_keeps_the_earlier_image(tmp_path, moment):
    png = tmp_path / "m.png"
    png.write_bytes(b"earlier image")
    proc = subprocess.Popen([sys.executable, str(ROOT / "snippets" / SNIPPET), "--width", "400",
                             "--height", "300", "--iterations", "1000", "--variants", "python",
                             "--image", str(png)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        if moment == "computing":  # the reference is done; pure Python runs for minutes
            assert "pixel-iterations" in proc.stdout.readline()
        else:  # NumPy, imported after the handler, is loaded: Numba's import is still to come
            maps = f"/proc/{proc.pid}/maps"
            deadline = time.monotonic() + 60
            while "_multiarray_umath" not in open(maps).read() and time.monotonic() < deadline:
                time.sleep(0.005)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert (proc.returncode, err) == (130, "interrupted\n")
    assert png.read_bytes() == b"earlier image"


def test_failed_write_keeps_the_earlier_image(tmp_path, monkeypatch):
    png = tmp_path / "m.png"
    png.write_bytes(b"earlier image")

    def disk_full(path, data):
        open(path, "wb").write(data[:4])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(mb.Path, "write_bytes", disk_full)
    with pytest.raises(OSError):
        mb.write_atomically(png, b"a new image")
    monkeypatch.undo()
    assert png.read_bytes() == b"earlier image"


def test_cli_writes_the_image(tmp_path):
    png = tmp_path / "m.png"
    out = run_snippet(SNIPPET, "--width", "30", "--height", "20", "--variants", "njit",
                      "--image", png)
    assert out.returncode == 0, out.stderr
    assert "njit: matches the reference" in out.stdout
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_reports_a_mismatch(monkeypatch, capsys):
    real = mb.compute

    def broken(variant, *args):
        counts = real(variant, *args)
        if variant == "numpy":
            counts[0, 0] += 1
        return counts

    monkeypatch.setattr(mb, "compute", broken)
    assert mb.main(["--width", "10", "--height", "10", "--variants", "numpy"]) == 1
    assert "MISMATCH" in capsys.readouterr().out


def test_cli_says_when_there_is_no_gpu():
    if HAS_GPU:
        pytest.skip("this machine has a GPU")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    out = run_snippet(SNIPPET, "--width", "8", "--height", "8", "--variants", "cuda_f64", env=env)
    assert out.returncode == 1
    assert out.stderr.startswith("error: no CUDA GPU found")


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
    prepared = bm.setup("cuda_f64_fast", p)
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
    from renderers.mandelbrot import sass_loops

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


def test_bar_is_the_same_in_test_and_renderer():
    from renderers.mandelbrot import BAR_PIXEL_ITERATIONS, BAR_VARIANT

    assert (BAR_PIXEL_ITERATIONS, BAR_VARIANT) == (bm.F64_BAR, "cuda_f64_fast")


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
    results.write_results(tmp_path / "data" / "r.json", "mandelbrot", system, ms)
    (tmp_path / "data" / "specs.json").write_text(
        (ROOT / "docs" / "data" / "mandelbrot-gpu-specs.json").read_text())
    (tmp_path / "data" / "sass.txt").write_text(SASS)
    return tmp_path


@pytest.fixture(scope="module")
def mandelbrot_renderers():
    import renderers

    return renderers


@pytest.mark.parametrize(("kernel_s", "verdict"), [(0.005, "met"), (0.05, "**not met**")])
def test_bars_renderer_checks_the_throughput_bar(tmp_path, mandelbrot_renderers, kernel_s,
                                                 verdict):
    docs = synthetic_results(tmp_path, kernel_s)
    text = mandelbrot_renderers.get("mandelbrot_fp64_ceiling")(
        docs, path="data/r.json", specs="data/specs.json", sass="data/sass.txt")
    assert f"against a bar of 1.5e12: {verdict}." in text
    # plain kernel: 9 FP64 instructions, ceiling 34e12 / 2 / 9; measured 1e10 / 0.01 s
    assert "| Numba CUDA float64 | 9 FP64 | 3 | 1.89e12 | 1e12 | 53% | 50.0% |" in text
    assert "| Numba CUDA float64, tuned | 6 FP64 | 2.5 | 2.83e12 |" in text
    assert "one trip through its main loop runs 2 iterations, with 4 DADD + 2 DFMA + 6 DMUL FP64" in text
    spread = mandelbrot_renderers.get("mandelbrot_spread")(docs, path="data/r.json")
    assert "below 1.2 for all 3 GPU timings; the widest is 1.050" in spread


def test_renderers_fall_back_and_flag_wide_spread(tmp_path, mandelbrot_renderers):
    docs = synthetic_results(tmp_path, 0.005, spread=1.5)
    get, path = mandelbrot_renderers.get, "data/missing.json|data/r.json"
    headline = get("mandelbrot_headline")(docs, path=path)
    assert "No GPU results yet" in headline and "400 times as fast as" in headline
    assert ", on an NVIDIA H200, runs" in headline and "on 16 vCPUs of a test CPU" in headline
    table = get("mandelbrot_table")(docs, path=path, case="large")
    assert table.count("\n| Numba") == 4 and "| 400 |" in table and "tuned, end to end" in table
    assert "in 3 of 3 GPU timings" in get("mandelbrot_spread")(docs, path=path)
    with pytest.raises(FileNotFoundError):
        get("mandelbrot_table")(docs, path="data/missing.json", case="large")
