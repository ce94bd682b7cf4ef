"""Shared test set-up for tests/ and for the code blocks of docs/.

Without an NVIDIA GPU, Numba's CUDA simulator is switched on here, before anything imports
numba.cuda, and tests marked `gpu` are skipped. With a GPU, nothing is simulated.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
SNIPPETS = ROOT / "snippets"


def gpu_present() -> bool:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return False
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and "GPU" in out.stdout


HAS_GPU = gpu_present()
if not HAS_GPU:
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # keep TensorFlow's start-up noise out of outputs
# Page commands say `python ...`: make that the interpreter running the tests.
os.environ["PATH"] = str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")


def pytest_collection_modifyitems(config, items):
    if HAS_GPU:
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU (nvidia-smi found none)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def load_snippet(relpath: str):
    """Import a snippet file (for example "array_add/vector_add_numba.py") as a module."""
    path = SNIPPETS / relpath
    name = "snippet_" + relpath.replace("/", "_").removesuffix(".py")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def run_snippet(relpath: str, *args: str, timeout: float = 300, **kwargs):
    """Run a Python snippet as a reader would; returns the CompletedProcess."""
    return subprocess.run([sys.executable, str(SNIPPETS / relpath), *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT, **kwargs)


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """The site, built once per session with `mkdocs build --strict`."""
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    if proc.returncode != 0:
        pytest.fail(f"mkdocs build --strict failed:\n{proc.stderr[-4000:]}")
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("WARNING")]
    if warnings:
        pytest.fail("mkdocs build printed warnings:\n" + "\n".join(warnings))
    return out


@pytest.fixture
def nvcc_build(tmp_path):
    """Compile a .cu file under snippets/ with nvcc; skips when nvcc is not on PATH."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not on PATH")

    def build(relpath: str, *flags: str) -> Path:
        exe = tmp_path / Path(relpath).stem
        cmd = [nvcc, "-O2", *flags, "-o", str(exe), str(SNIPPETS / relpath)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        return exe

    return build
