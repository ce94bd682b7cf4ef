"""snippets/troubleshooting/oob_kernel.cu: the planted out-of-bounds kernel of the troubleshooting
page. CPU CI compiles it with nvcc and checks that, without a GPU, it stops at its first CUDA call
with the CUDA error's name; on a GPU, compute-sanitizer must find the stray write."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from helpers import HAS_GPU, SNIPPETS

SOURCE = SNIPPETS / "troubleshooting" / "oob_kernel.cu"
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    if shutil.which("nvcc") is None:
        pytest.skip("needs nvcc")
    out = tmp_path_factory.mktemp("oob") / "oob_kernel"
    build = subprocess.run(["nvcc", "-arch=sm_90", "-lineinfo", "-o", str(out), str(SOURCE)],
                           capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    return out


def run(binary, *args, timeout=120):
    return subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=timeout)


@needs_nvcc
@pytest.mark.skipif(HAS_GPU, reason="checks the behaviour without a GPU")
def test_without_a_gpu_it_stops_with_the_cuda_error(binary):
    out = run(binary)
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.startswith("CUDA error: cudaError") and "cudaMalloc" in out.stderr


@pytest.mark.gpu
@pytest.mark.skipif(shutil.which("compute-sanitizer") is None, reason="needs compute-sanitizer")
def test_compute_sanitizer_finds_the_stray_write(binary):
    out = subprocess.run(["compute-sanitizer", "--error-exitcode", "99", str(binary), "1000"],
                         capture_output=True, text=True, timeout=300)
    # Recorded on the H200 (gpu/logs/h200-2026-12-01c/troubleshooting-sanitizer.txt): the stray
    # thread's read of x[n] comes first and is reported with the kernel, thread and source line.
    assert out.returncode == 99, out.stdout + out.stderr
    assert "Invalid __global__ read of size 4 bytes" in out.stdout
    assert "oob_kernel.cu:" in out.stdout and "is out of bounds" in out.stdout
    assert "ERROR SUMMARY:" in out.stdout


@pytest.mark.gpu
def test_a_far_stray_write_is_an_illegal_address(binary):
    out = run(binary, "1000", "--far")
    assert out.returncode == 1 and "cudaErrorIllegalAddress" in out.stderr
