"""Array addition: the C, CUDA C and Numba versions, on the CPU and (marked gpu) on a real GPU."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

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


def test_c_version_refuses_arrays_larger_than_free_memory(c_binary):
    # 2^31 floats in three arrays is 24 GiB: more than this machine has free, it must be refused
    # before anything is allocated (it used to be OOM-killed silently).
    free_kib = next(int(line.split()[1]) for line in open("/proc/meminfo")
                    if line.startswith("MemAvailable:"))
    if free_kib * 1024 >= 3 * 4 * 2**31:
        pytest.skip("this machine has 24 GiB free")
    out = subprocess.run([c_binary, str(2**31)], capture_output=True, text=True, timeout=30)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and "GiB for three arrays" in out.stderr


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


@pytest.mark.parametrize("n", [1, 6, 33, 257, 1000])
def test_numba_kernel_matches_numpy(n):
    mod = load_snippet(NUMBA)
    a, b = mod.make_inputs(n)
    np.testing.assert_array_equal(mod.add_on_gpu(a, b), a + b)


def test_numba_kernel_writes_every_element():
    # Poison the output: an element the kernel skips stays NaN and fails the check.
    mod = load_snippet(NUMBA)
    from numba import cuda

    a, b = mod.make_inputs(300)
    d_c = cuda.to_device(np.full(300, np.nan, dtype=np.float32))
    mod.vector_add[2, 256](cuda.to_device(a), cuda.to_device(b), d_c)
    assert not np.isnan(d_c.copy_to_host()).any()


def test_numba_format_shortens_long_results():
    mod = load_snippet(NUMBA)
    assert mod.format_result(np.arange(12, dtype=np.float32)) == "C = A + B: 0 1 2 ... 9 10 11"


@pytest.mark.parametrize("arg", ["0", "-1", "many", "1e6", "nan", "inf", "99999999999999999999"])
def test_numba_cli_rejects_bad_n(arg):
    out = run_snippet(NUMBA, arg)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "error:" in out.stderr and "Traceback" not in out.stderr


def test_numba_cli_refuses_more_than_the_machine_holds(monkeypatch, capsys):
    mod = load_snippet(NUMBA)
    monkeypatch.setattr(mod, "host_memory", lambda: 2**30)  # a 1 GiB machine
    with pytest.raises(SystemExit) as exit_:
        mod.main([str(2**27)])  # 4 arrays of 512 MiB
    assert exit_.value.code == 2
    assert "GiB of host memory" in capsys.readouterr().err


def test_copies_run_alone_in_an_empty_folder(tmp_path):
    """What the page tells a reader to copy: vector_add.c with its header, the Numba file alone."""
    for name in ("vector_add.c", "vector_add_common.h", "vector_add_numba.py"):
        shutil.copy(SNIPPETS / "array_addition" / name, tmp_path)
    gcc = shutil.which("gcc")
    if gcc:
        subprocess.run([gcc, "-O2", "-o", "va", "vector_add.c"], cwd=tmp_path, check=True)
        out = subprocess.run(["./va", "1000"], capture_output=True, text=True, cwd=tmp_path)
        assert out.returncode == 0 and out.stdout.endswith("OK: all 1000 elements match\n")
    out = subprocess.run([sys.executable, "vector_add_numba.py", "300"], capture_output=True,
                         text=True, cwd=tmp_path, timeout=300,
                         env={**os.environ, "NUMBA_ENABLE_CUDASIM": "1", "PYTHONPATH": ""})
    assert out.returncode == 0 and out.stdout.endswith("OK: all 300 elements match\n"), out.stderr


def test_numba_cli_help_exits_0():
    out = run_snippet(NUMBA, "--help")
    assert out.returncode == 0 and "number of elements" in out.stdout


@pytest.mark.parametrize("seconds", [1.0, 3.0])  # in `import numba` (about 1.5 s), then in the work
def test_numba_cli_interrupt_is_one_line(seconds):
    out = subprocess.run(["timeout", "--preserve-status", "-s", "INT", str(seconds),
                          sys.executable, str(SNIPPETS / NUMBA), "100000"], capture_output=True,
                         text=True, timeout=60, env={**os.environ, "NUMBA_ENABLE_CUDASIM": "1"})
    assert out.returncode == 130 and out.stderr == "interrupted\n", out.stderr


def test_numba_cli_says_when_there_is_no_gpu():
    if HAS_GPU:
        pytest.skip("this machine has a GPU")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    out = run_snippet(NUMBA, env=env)
    assert out.returncode == 1
    assert out.stderr.strip() == ("error: no CUDA GPU found; to try this on the CPU, "
                                  "set NUMBA_ENABLE_CUDASIM=1")


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
