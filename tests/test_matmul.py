"""SGEMM kernels: every Numba kernel on the simulator at an odd size, the CUDA C file with nvcc,
the benchmark's results file, and the committed H200 results against the issue's bars."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys

import numpy as np
import pytest

from conftest import HAS_GPU, ROOT, SNIPPETS, load_snippet, run_snippet

NUMBA = "matmul/sgemm_numba.py"
BENCH = "matmul/bench_matmul.py"
CUDA = "matmul/sgemm.cu"
RESULTS = ROOT / "docs/data/matmul-h200.json"
KERNELS = ["naive", "coalesced", "smem", "blocktile_1d", "blocktile_2d", "vectorized", "warptile"]


@pytest.fixture(scope="module")
def sg():
    return load_snippet(NUMBA)


@pytest.mark.parametrize("kernel", KERNELS)
def test_kernel_matches_float64_at_an_odd_size(sg, kernel):
    # 37 x 29 x 23: no dimension is a multiple of any tile (simulator tiles are 4..16).
    a, b = sg.make_inputs(37, 29, 23, seed=7)
    c, err = sg.run_checked(kernel, a, b)
    assert not np.isnan(c).any(), "an element of C was never written"
    assert err <= sg.tolerance(23)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-5)


def test_kernels_list_is_the_progression(sg):
    assert list(sg.KERNELS) == KERNELS


def test_unwritten_or_wrong_output_fails_the_check(sg):
    a, b = sg.make_inputs(5, 4, 3)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    c = (a @ b).astype(np.float32)
    assert sg.relative_error(c, ref) <= sg.tolerance(3)
    c[2, 1] = np.nan  # one element the kernel skipped
    assert sg.relative_error(c, ref) == math.inf
    # TF32-sized errors (inputs rounded to 10 bits) are far outside the float32 bound.
    noisy = ref * (1 + 3e-4 * np.random.default_rng(0).standard_normal(ref.shape))
    assert sg.relative_error(noisy, ref) > sg.tolerance(3)


@pytest.mark.parametrize("args", [["0"], ["5", "-1"], ["abc"], ["--kernel", "nope"], ["20000"]])
def test_numba_cli_rejects_bad_arguments(sg, args, capsys):
    with pytest.raises(SystemExit) as exit_:
        sg.main(args)
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert err.count("\n") == 1 and err.startswith("error:")


def test_numba_cli_says_when_there_is_no_gpu():
    if HAS_GPU:
        pytest.skip("this machine has a GPU")
    import os

    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    out = run_snippet(NUMBA, "8", env=env)
    assert out.returncode == 1 and "no CUDA GPU found" in out.stderr


def test_benchmark_writes_a_valid_results_file(tmp_path):
    out_file = tmp_path / "m.json"
    out = run_snippet(BENCH, "--sizes", "9x7x5", "--kernels", "naive", "smem",
                      "--budget", "0.001", "--out", str(out_file))
    assert out.returncode == 0, out.stderr
    sys.path.insert(0, str(SNIPPETS))
    from bench.results import load_results

    doc = load_results(out_file)
    rows = {m["variant"]: m for m in doc["measurements"]}
    assert set(rows) == {"numba/naive", "numba/smem"}
    for m in rows.values():
        assert m["flops"] == 2 * 9 * 7 * 5 and m["bytes"] == 4 * (9 * 5 + 5 * 7 + 9 * 7)
        assert m["error"]["passed"] and m["repeats"] >= 3
    assert out.stdout.splitlines()[-1].endswith("2 measurements, 0 failed")


@pytest.mark.parametrize("arg", [["--sizes", "0"], ["--sizes", "4x4"], ["--budget", "-1"],
                                 ["--cuda-binary", "/nonexistent"]])
def test_benchmark_rejects_bad_arguments(arg, capsys):
    bench = load_snippet(BENCH)
    with pytest.raises(SystemExit) as exit_:
        bench.main(arg)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.startswith("error:") and err.count("\n") == 1


def test_cuda_file_fails_loudly_without_a_gpu(nvcc_build):
    if HAS_GPU:
        pytest.skip("this machine has a GPU; gpu/matmul.sh covers it")
    exe = nvcc_build(CUDA, "-arch=sm_90")
    out = subprocess.run([exe, "64"], capture_output=True, text=True)
    assert out.returncode != 0
    assert "CUDA error: cudaError" in out.stderr
    assert "OK" not in out.stdout
    # bad arguments are refused before any CUDA call, in one line, with exit status 2
    for bad in (["0"], ["12x7"], ["--kernel", "nope", "8"], ["--repeats", "x", "8"]):
        out = subprocess.run([exe, *bad], capture_output=True, text=True)
        assert out.returncode == 2 and out.stderr.startswith("error:"), bad
    assert subprocess.run([exe, "--help"], capture_output=True, text=True).returncode == 0


@pytest.mark.gpu
def test_cuda_kernels_on_gpu(nvcc_build):
    exe = nvcc_build(CUDA, "-arch=sm_90")
    out = subprocess.run([exe, "--repeats", "3", "--budget", "0.01", "257", "100x130x67"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "FAILED" not in out.stdout


def test_gpu_script_is_valid_bash():
    assert subprocess.run(["bash", "-n", str(ROOT / "gpu/matmul.sh")]).returncode == 0


def test_renderer_tiles_match_the_gpu_sources():
    sys.path.insert(0, str(ROOT / "hooks"))
    from renderers import matmul as r

    cu = (SNIPPETS / CUDA).read_text()
    const = {k: int(v) for k, v in re.findall(r"\b(B[MN]1?|T[MN]1?|TILE)\s*=\s*(\d+)", cu)}
    assert r.TILES["smem"][:2] == (const["TILE"], const["TILE"])
    assert r.TILES["blocktile_1d"] == (const["BM1"], const["BN1"], const["TM1"], 1)
    assert r.TILES["blocktile_2d"] == (const["BM"], const["BN"], const["TM"], const["TN"])
    py = (SNIPPETS / NUMBA).read_text().split("if not SIMULATOR:")[1].split("else:")[0]
    assert "BM, BN, BK, TM, TN = 128, 128, 8, 8, 8" in py
    assert '{"warptile", launch_warptile<128, 128, 16, 64, 32, 2, 2, 4, 4, 256>}' in cu


def test_committed_h200_results_meet_the_bars():
    doc = json.loads(RESULTS.read_text())
    assert doc["system"]["gpus"][0]["name"] == "NVIDIA H200"
    rows = doc["measurements"]
    # every published kernel passed its check at every size, in both languages
    sizes = {(m["params"]["m"], m["params"]["n"], m["params"]["k"]) for m in rows}
    assert {(n, n, n) for n in (1024, 2048, 4096, 8192)} <= sizes and len(sizes) >= 5
    for lang in ("numba", "cuda_c"):
        for kernel in KERNELS:
            for size in sizes:
                ms = [m for m in rows if m["variant"] == f"{lang}/{kernel}"
                      and (m["params"]["m"], m["params"]["n"], m["params"]["k"]) == size]
                assert len(ms) == 1 and ms[0]["error"]["passed"], (lang, kernel, size)

    def t(variant):
        (m,) = [m for m in rows if m["variant"] == variant and m["params"]["m"] == 4096
                and m["params"]["n"] == 4096 and m["params"]["k"] == 4096]
        return m["median_s"]

    best_numba = max(t("cublas_fp32") / t(f"numba/{k}") for k in KERNELS)
    best_c = max(t("cuda_c/cublas_fp32") / t(f"cuda_c/{k}") for k in KERNELS)
    assert best_numba >= 0.40 and best_c >= 0.75
