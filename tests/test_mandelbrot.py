"""Mandelbrot: every variant against pure Python, the CUDA kernels on the simulator, the CLI,
the benchmark's work counts, the notebook; and (marked gpu) the kernels at full size."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from conftest import HAS_GPU, ROOT, load_snippet, run_snippet

SNIPPET = "mandelbrot/mandelbrot.py"
bm = load_snippet("mandelbrot/benchmark.py")
# The snippet module as benchmark.py and the notebook import it: plain `mandelbrot`. Numba's
# on-disk cache (cache=True) records the defining module's name, so importing the same file under
# a second name would leave cache entries that a script run or the notebook cannot load.
mb = bm.mb
CPU_VARIANTS = ["numpy", "njit", "njit_parallel"]


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


@pytest.mark.parametrize(("width", "height"), [(48, 32), (37, 11)])  # 37 x 11: partial blocks
def test_cuda_f64_matches_cpu_exactly(width, height):
    np.testing.assert_array_equal(mb.compute("cuda_f64", width, height, 40),
                                  mb.compute("njit", width, height, 40))


def test_cuda_f32_differs_on_few_pixels_only():
    f32 = mb.compute("cuda_f32", 48, 32, 60)
    f64 = mb.compute("njit", 48, 32, 60)
    assert mb.differing_fraction(f32, f64) <= bm.F32_TOLERANCE
    assert bm.check("cuda_f32", f32, f64)["ok"]


@pytest.mark.parametrize("variant", ["cuda_f64", "cuda_f32"])
def test_kernel_writes_every_pixel(variant):
    # Poison the output: a pixel the grid does not cover keeps -1 and fails.
    from numba import cuda

    kernel, dtype = mb.KERNELS[variant]
    xs, ys = mb.coordinates(35, 9, dtype)
    d_counts = cuda.to_device(np.full((9, 35), -1, dtype=np.int32))
    kernel[mb.blocks_for(35, 9), mb.THREADS](cuda.to_device(xs), cuda.to_device(ys), 3, d_counts)
    assert (d_counts.copy_to_host() >= 0).all()


def test_blocks_cover_the_image():
    assert mb.blocks_for(1536, 1024) == (48, 128)
    assert mb.blocks_for(33, 9) == (2, 2)


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


@pytest.mark.parametrize("args", [["--width", "0"], ["--height", "-3"], ["--iterations", "x"],
                                  ["--variants", "cuda_f16"], ["--variants", ","]])
def test_cli_rejects_bad_arguments_in_one_line(args, capsys):
    with pytest.raises(SystemExit) as exit_:
        mb.main(args)
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert err.startswith("error: ") and err.count("\n") == 1


def test_cli_error_as_a_reader_sees_it():
    out = run_snippet(SNIPPET, "--width", "-1")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr == "error: argument --width: must be at least 1, got -1\n"


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


def test_notebook_runs_on_the_cpu():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    path = ROOT / "docs" / "kernels" / "mandelbrot-notebook.ipynb"
    nb = nbformat.read(path, as_version=4)
    saved = {k: os.environ.get(k) for k in ("MANDELBROT_NB_WIDTH", "MANDELBROT_NB_HEIGHT")}
    os.environ.update(MANDELBROT_NB_WIDTH="24", MANDELBROT_NB_HEIGHT="16")
    try:
        nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                                resources={"metadata": {"path": str(path.parent)}}).execute()
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    text = json.dumps(nb.cells[4]["outputs"])
    assert "24 x 16 pixels" in text and "cuda_f64" in text
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
@pytest.mark.parametrize("iterations", [20, 1000])
@pytest.mark.parametrize("variant", ["cuda_f64", "cuda_f32"])
def test_kernels_at_full_size_on_gpu(variant, iterations):
    got = mb.compute(variant, 1536, 1024, iterations)
    ref = mb.compute("njit_parallel", 1536, 1024, iterations)
    assert bm.check(variant, got, ref)["ok"]
    if variant == "cuda_f64":
        np.testing.assert_array_equal(got, ref)


def synthetic_results(tmp_path, kernel_s, spread=1.05):
    """A results file with one CPU and two GPU measurements of the large case."""
    import sys

    sys.path.insert(0, str(ROOT / "snippets"))
    from bench import results

    p = {"width": 6144, "height": 4096, "iterations": 1000}
    extra = {"params": p, "work": {"pixel_iterations": 10**10}, "calls_per_sample": 1,
             "error": {"metric": "differing_fraction", "value": 0.0}}

    def stats(t):
        return {"median_s": t, "min_s": t / spread, "max_s": t, "repeats": 10,
                "clock": "host", "spread": spread}

    ms = [results.measurement("large", "njit_parallel", "cpu", "kernel", stats(2.0), **extra),
          results.measurement("large", "cuda_f64", "gpu", "kernel", stats(kernel_s), **extra),
          results.measurement("large", "cuda_f64", "gpu", "end_to_end", stats(0.05), **extra)]
    system = {"date": "2026-11-29T00:00:00+00:00", "command": "python x",
              "host": {"cpu": "test CPU", "cores": 16}, "libraries": {},
              "gpus": [{"name": "NVIDIA H200", "memory_mib": 143771, "driver": "580",
                        "compute_capability": "9.0"}]}
    (tmp_path / "data").mkdir(exist_ok=True)
    results.write_results(tmp_path / "data" / "r.json", "mandelbrot", system, ms)
    (tmp_path / "data" / "specs.json").write_text(
        (ROOT / "docs" / "data" / "mandelbrot-gpu-specs.json").read_text())
    return tmp_path


@pytest.fixture(scope="module")
def mandelbrot_renderers():
    import sys

    sys.path.insert(0, str(ROOT / "hooks"))
    import renderers

    return renderers


@pytest.mark.parametrize(("kernel_s", "verdict"), [(0.005, "met"), (0.05, "**not met**")])
def test_bars_renderer_checks_the_throughput_bar(tmp_path, mandelbrot_renderers, kernel_s,
                                                 verdict):
    docs = synthetic_results(tmp_path, kernel_s)
    text = mandelbrot_renderers.get("mandelbrot_bars")(docs, path="data/r.json",
                                                       specs="data/specs.json")
    assert f"against a bar of 1e12: {verdict};" in text
    assert "of the 1.89e12 that the datasheet's 34 TFLOP/s allow" in text
    assert "Spread (max/min) below 1.2 for all 2 GPU timings." in text


def test_renderers_fall_back_and_flag_wide_spread(tmp_path, mandelbrot_renderers):
    docs = synthetic_results(tmp_path, 0.005, spread=1.5)
    get, path = mandelbrot_renderers.get, "data/missing.json|data/r.json"
    headline = get("mandelbrot_headline")(docs, path=path)
    assert "Stand-in results" in headline and "400 times as fast as" in headline
    table = get("mandelbrot_table")(docs, path=path, case="large")
    assert table.count("\n| Numba") == 3 and "| 400 |" in table and "float64, end to end" in table
    assert "in 2 of 2 GPU timings" in get("mandelbrot_bars")(docs, path=path,
                                                             specs="data/specs.json")
    with pytest.raises(FileNotFoundError):
        get("mandelbrot_table")(docs, path="data/missing.json", case="large")
