"""SAXPY: CUDA C, Numba CUDA (simulator on CPU-only machines), CuPy, NumPy, Numba parallel, runner."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import numpy as np
import pytest
from numba import cuda  # module level: the CUDA simulator swaps this name inside kernels

from conftest import HAS_GPU, SNIPPETS, load_snippet, run_snippet

NUMBA_CUDA = "saxpy/saxpy_numba_cuda.py"
CUPY = "saxpy/saxpy_cupy.py"
NUMPY = "saxpy/saxpy_numpy.py"
NUMBA_CPU = "saxpy/saxpy_numba_cpu.py"
RUNNER = "saxpy/measure_saxpy.py"


@pytest.fixture(scope="module")
def cuda_binary(tmp_path_factory):
    nvcc = shutil.which("nvcc") or pytest.skip("nvcc is not on PATH")
    exe = tmp_path_factory.mktemp("saxpy") / "saxpy"
    # The flags of gpu/saxpy.sh: a compile error for Hopper shows up here, not on the GPU machine.
    proc = subprocess.run([nvcc, "-O3", "-arch=sm_90", "-o", str(exe), str(SNIPPETS / "saxpy/saxpy.cu")],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return exe


# ---------------------------------------------------------------- CUDA C

def test_cuda_c_fails_loudly_without_a_gpu(cuda_binary):
    if HAS_GPU:
        pytest.skip("this machine has a GPU; the gpu tests cover it")
    out = subprocess.run([cuda_binary, "1000"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1
    assert out.stderr.startswith("CUDA error: cudaError")  # e.g. cudaErrorInsufficientDriver
    assert "OK" not in out.stdout


@pytest.mark.parametrize("args", [["0"], ["abc"], ["12x"], ["1000", "5"], ["1", "20", "3"], ["-h"]])
def test_cuda_c_rejects_bad_arguments_before_touching_the_gpu(cuda_binary, args):
    out = subprocess.run([cuda_binary, *args], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and out.stderr.startswith(("error:", "usage:"))


def test_runner_parses_the_cuda_c_output():
    mod = load_snippet(RUNNER)
    text = ("SAXPY y = a*x + y, N = 1024 float32, 132 SMs, 4 blocks x 256 threads\n"
            "saxpy        median 0.004000 ms (min 0.003000, max 0.005000, 20 repeats)  3.1 GB/s\n"
            "device copy  median 0.002000 ms (min 0.001000, max 0.003000, 20 repeats)  4.1 GB/s\n"
            "saxpy / copy bandwidth: 0.750\nOK: all 1024 elements match\n")
    found = mod.parse_cuda_c(text)
    assert found["saxpy"]["median_s"] == pytest.approx(4e-6)
    assert found["device copy"]["min_s"] == pytest.approx(1e-6)
    assert found["launch"] == {"sms": 132, "blocks": 4, "threads": 256}
    with pytest.raises(ValueError):
        mod.parse_cuda_c(text.replace("OK: all", "error:"))  # a run that failed its check


# ---------------------------------------------------------------- Numba CUDA (simulator here)

@pytest.mark.parametrize(("n", "blocks", "threads"), [(1, None, 32), (100, 1, 32), (333, 2, 64)])
def test_numba_cuda_grid_stride_covers_every_element(n, blocks, threads):
    # A grid smaller than the array: each thread must loop over several elements.
    mod = load_snippet(NUMBA_CUDA)
    assert mod.check_saxpy(n, blocks, threads) == 0


def test_numba_cuda_check_detects_a_kernel_that_skips_elements():
    mod = load_snippet(NUMBA_CUDA)

    @cuda.jit
    def no_stride(a, x, y):  # one pass only: elements beyond the grid are never updated
        i = cuda.grid(1)
        if i < y.size:
            y[i] = a * x[i] + y[i]

    original = mod.saxpy
    mod.saxpy = no_stride
    try:
        assert mod.check_saxpy(100, blocks=1, threads=32) == 100 - 32
    finally:
        mod.saxpy = original


def test_numba_cuda_grid_is_capped_by_the_data():
    mod = load_snippet(NUMBA_CUDA)
    assert mod.grid_for(10) == 1
    assert mod.grid_for(10**9) == 32 * getattr(cuda.get_current_device(), "MULTIPROCESSOR_COUNT", 1)


def test_numba_cuda_measure_returns_every_figure():
    mod = load_snippet(NUMBA_CUDA)
    res = mod.measure(48, repeats=10)
    for key in ("saxpy", "device_copy", "h2d_pageable", "h2d_pinned", "d2h_pageable", "d2h_pinned"):
        assert res[key].repeats == 10 and 0 < res[key].min_s <= res[key].median_s <= res[key].max_s


def bad_args(rel, args, capsys):
    """Run a snippet's main() in this process with bad arguments: exit 2, one line, no traceback."""
    with pytest.raises(SystemExit) as exc:
        load_snippet(rel).main([str(a) for a in args])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1 and err.startswith("error:"), err
    return err


@pytest.mark.parametrize("arg", ["0", "-3", "x"])
def test_numba_cuda_cli_rejects_bad_n(arg, capsys):
    bad_args(NUMBA_CUDA, [arg], capsys)


def test_numba_cuda_cli_says_when_there_is_no_gpu():
    if HAS_GPU:
        pytest.skip("this machine has a GPU")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    out = run_snippet(NUMBA_CUDA, "100", env=env)
    assert out.returncode == 1 and out.stderr.startswith("error: no CUDA GPU found")


def test_cupy_cli_says_when_it_cannot_run(capsys):
    if HAS_GPU:
        pytest.skip("this machine has a GPU")
    assert load_snippet(CUPY).main(["100"]) == 1
    assert capsys.readouterr().err.strip() == "error: CuPy is not installed or found no CUDA GPU"
    bad_args(CUPY, ["0"], capsys)


# ---------------------------------------------------------------- CPU versions

@pytest.mark.parametrize("rel", [NUMPY, NUMBA_CPU])
def test_cpu_versions_measure_and_check(rel):
    mod = load_snippet(rel)
    res = mod.measure(1001, repeats=10)
    assert res["saxpy"].repeats == 10 and res["saxpy"].median_s > 0


@pytest.mark.parametrize("rel", [NUMPY, NUMBA_CPU])
def test_cpu_versions_refuse_a_wrong_result(rel, monkeypatch):
    mod = load_snippet(rel)
    monkeypatch.setattr(mod, "saxpy", lambda a, x, y: None)  # "computes" nothing
    with pytest.raises(RuntimeError):
        mod.measure(100, repeats=10)


@pytest.mark.parametrize("rel", [NUMPY, NUMBA_CPU])
@pytest.mark.parametrize("args", [["0"], ["ten"], ["100", "--repeats", "0"]])
def test_cpu_clis_reject_bad_arguments(rel, args, capsys):
    bad_args(rel, args, capsys)


# ---------------------------------------------------------------- the runner

def test_runner_writes_a_valid_results_file(tmp_path):
    mod = load_snippet(RUNNER)
    from bench.results import load_results

    out = tmp_path / "saxpy.json"
    assert mod.main(["--sizes", "5", "--cpu-sizes", "8:10:2", "--repeats", "10", "--out", str(out),
                     "--no-transfers", "--note", "a test run"]) == 0
    doc = load_results(out)
    assert "a test run" in doc["notes"]
    kernels = [m for m in doc["measurements"] if m["phase"] == "kernel"]
    seen = {(m["case"], m["variant"], m["params"]["n"]) for m in kernels}
    for n in (256, 1024):
        assert {("saxpy", "numpy", n), ("saxpy", "numba_parallel", n), ("read", "numba_parallel", n),
                ("copy", "numba_parallel", n)} <= seen
    for m in kernels:
        assert m["bytes"] == {"saxpy": 12, "copy": 8, "read": 4}[m["case"]] * m["params"]["n"]
        if m["case"] == "saxpy" and m["device"] == "gpu":  # each names its copy, same run
            c = m["ceiling"]
            assert (c["case"], c["variant"], m["params"]["n"]) in seen
    if not HAS_GPU:  # the simulator stood in for the GPU, and the file says so
        assert ("saxpy", "numba_cuda", 32) in seen
        assert any("simulator" in note for note in doc["notes"])


def test_runner_table_divides_by_the_right_ceiling():
    mod = load_snippet(RUNNER)
    base = {"phase": "kernel", "min_s": 1, "max_s": 1, "repeats": 10}
    ms = [dict(base, case="saxpy", variant="numba_cuda", device="gpu", params={"n": 8},
               bytes=96, median_s=1.0, ceiling={"case": "copy", "variant": "numba_cuda"}),
          dict(base, case="copy", variant="numba_cuda", device="gpu", params={"n": 8}, bytes=64,
               median_s=0.5),
          dict(base, case="copy", variant="cuda_c", device="gpu", params={"n": 8}, bytes=64,
               median_s=0.1)]
    [(variant, _, n, _, gbs, frac)] = mod.bandwidth_table(ms)
    assert (variant, n) == ("numba_cuda", 8)
    assert frac == pytest.approx(96 / 128)  # against its own toolkit's copy, not CUDA C's


@pytest.mark.parametrize("text", ["0:4", "5:3", "a:b", "1:2:0", "1:2:3:4", "33"])
def test_runner_rejects_bad_sizes(text, capsys):
    assert bad_args(RUNNER, ["--sizes", text], capsys).startswith("error: argument --sizes")


def test_runner_rejects_a_missing_binary(capsys, tmp_path):
    bad_args(RUNNER, ["--cuda-binary", tmp_path / "nothing"], capsys)


def test_runner_size_ranges():
    mod = load_snippet(RUNNER)
    assert mod.exponents("10:28:2") == list(range(10, 29, 2))
    assert mod.exponents("10:15:2") == [10, 12, 14, 15]
    assert mod.exponents("7") == [7]


# ---------------------------------------------------------------- on a real GPU: the bars

@pytest.mark.gpu
def test_cuda_c_reaches_90_percent_of_the_copy(cuda_binary):
    out = subprocess.run([cuda_binary, str(2**28)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    found = load_snippet(RUNNER).parse_cuda_c(out.stdout)
    ratio = (3 / found["saxpy"]["median_s"]) / (2 / found["device copy"]["median_s"])
    assert ratio >= 0.9, out.stdout


@pytest.mark.gpu
def test_numba_cuda_reaches_90_percent_of_the_copy():
    mod = load_snippet(NUMBA_CUDA)
    n = 2**28
    assert mod.check_saxpy(n) == 0
    res = mod.measure(n, repeats=20, transfers=False)
    ratio = (mod.saxpy_bytes(n) / res["saxpy"].median_s) / (mod.copy_bytes(n) / res["device_copy"].median_s)
    assert ratio >= 0.9, ratio


@pytest.mark.gpu
def test_cupy_matches_numpy_on_the_gpu():
    out = run_snippet(CUPY, str(2**20))
    if "CuPy is not installed" in out.stderr:
        pytest.skip("CuPy is not installed")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == f"OK: all {2**20} elements match"


def test_committed_results_hold_their_checks():
    # Every committed SAXPY results file: valid, checked, and no version faster than its ceiling.
    mod = load_snippet(RUNNER)  # puts snippets/ on sys.path
    from bench.results import load_results

    files = sorted((SNIPPETS.parent / "docs" / "data").glob("saxpy-*.json"))
    assert files, "no committed SAXPY results file"
    for f in files:
        doc = load_results(f)
        assert all(m.get("error", {}).get("value", 0) == 0 for m in doc["measurements"]), f.name
        for variant, device, n, ms, gbs, frac in mod.bandwidth_table(doc["measurements"]):
            if device == "gpu":
                assert frac is not None and frac <= 1.10, (f.name, variant, frac)
        json.dumps(doc)  # plain JSON, no NaN sneaking in
