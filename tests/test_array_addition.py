"""Array addition: the C, CUDA C and Numba versions, on the CPU and (marked gpu) on a real GPU."""

from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pytest

from helpers import HAS_GPU, SNIPPETS, load_snippet, run_snippet

NUMBA = "array_addition/vector_add_numba.py"


@pytest.fixture(scope="module")
def c_binary(tmp_path_factory):
    gcc = shutil.which("gcc") or pytest.skip("gcc is not on PATH")
    exe = tmp_path_factory.mktemp("c") / "vector_add"
    subprocess.run([gcc, "-O2", "-Wall", "-Werror", "-o", str(exe),
                    str(SNIPPETS / "array_addition/vector_add.c")], check=True)
    return exe


@pytest.mark.parametrize("n", [1, 6, 255, 256, 257, 100_003])
def test_c_version_adds_every_element(c_binary, n):
    out = subprocess.run([c_binary, str(n)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == f"OK: all {n} elements match"
    assert out.stdout.startswith("C = A + B: 8")


@pytest.mark.parametrize("arg", ["0", "-5", "abc", "12x", "99999999999999", "1e6", "nan", "inf",
                                 "", "2147483649"])
def test_c_version_rejects_bad_n(c_binary, arg):
    out = subprocess.run([c_binary, arg], capture_output=True, text=True)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("error: N must be")


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_c_version_help_exits_0(c_binary, flag):
    out = subprocess.run([c_binary, flag], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("usage:")


def test_c_version_rejects_extra_arguments(c_binary):
    out = subprocess.run([c_binary, "6", "7"], capture_output=True, text=True)
    assert out.returncode == 2 and out.stderr.count("\n") == 1


def test_cuda_version_fails_loudly_without_a_gpu(nvcc_build):
    if HAS_GPU:
        pytest.skip("this machine has a GPU; the gpu tests cover it")
    exe = nvcc_build("array_addition/vector_add.cu")
    out = subprocess.run([exe], capture_output=True, text=True)
    assert out.returncode != 0
    assert "CUDA error: cudaError" in out.stderr  # e.g. cudaErrorInsufficientDriver / NoDevice
    assert "OK" not in out.stdout


def test_cuda_version_rejects_bad_n_before_touching_the_gpu(nvcc_build):
    exe = nvcc_build("array_addition/vector_add.cu")
    out = subprocess.run([exe, "0"], capture_output=True, text=True)
    assert out.returncode == 2 and out.stderr.startswith("error: N must be")
    out = subprocess.run([exe, "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("usage:")


def inputs(n):
    return np.arange(1, n + 1, dtype=np.float32), np.arange(7, n + 7, dtype=np.float32)


@pytest.mark.parametrize("n", [1, 6, 33, 257, 1000])
def test_numba_kernel_matches_numpy(n):
    mod = load_snippet(NUMBA)
    a, b = inputs(n)
    np.testing.assert_array_equal(mod.add_on_gpu(a, b), a + b)


def test_numba_kernel_writes_every_element():
    # Poison the output: an element the kernel skips stays NaN and fails the check.
    mod = load_snippet(NUMBA)
    from numba import cuda

    a, b = inputs(300)
    d_c = cuda.to_device(np.full(300, np.nan, dtype=np.float32))
    mod.vector_add[2, 256](cuda.to_device(a), cuda.to_device(b), d_c)
    assert not np.isnan(d_c.copy_to_host()).any()


@pytest.mark.parametrize(("n", "shown"), [("6", "C = A + B: 8 10 12 14 16 18"),
                                          ("12", "C = A + B: 8 10 12 ... 26 28 30")])
def test_numba_demo_prints_the_result_and_checks_it(n, shown):
    out = run_snippet(NUMBA, n, env={**os.environ, "NUMBA_ENABLE_CUDASIM": "1"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [shown, f"OK: all {n} elements match"]


# On a real GPU: the sizes of the issue, including one past 2^28 elements' worth of blocks.
GPU_SIZES = [6, 1_000_003, 2**28]


@pytest.mark.gpu
@pytest.mark.parametrize("n", GPU_SIZES)
def test_cuda_binary_on_gpu(nvcc_build, n):
    exe = nvcc_build("array_addition/vector_add.cu")
    out = subprocess.run([exe, str(n)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == f"OK: all {n} elements match"


@pytest.mark.gpu
@pytest.mark.parametrize("n", GPU_SIZES)
def test_numba_on_gpu(n):
    out = run_snippet(NUMBA, n)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == f"OK: all {n} elements match"
