"""Shared set-up for tests/ and for the code blocks of docs/ (`pytest --codeblocks docs/`).

Without an NVIDIA GPU, Numba's CUDA simulator is switched on here, before anything imports
numba.cuda, and tests marked `gpu` are skipped. With a GPU, nothing is simulated.

A failing page block is reported with its page, line, command, exit status and the end of its
stderr. (pytest-codeblocks 0.18.0 returns the exit status, an int, as the failure's text: plain
pytest prints just that number and pytest-xdist stops with an INTERNALERROR.)
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
SNIPPETS = ROOT / "snippets"
# Test inputs, not pages: a fixture page with a failing block must not run with the suite (a
# test runs it on purpose, naming it, which pytest does not ignore).
collect_ignore = ["tests/fixtures"]


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
# One XLA compilation cache for the run, made by the first process to import this file and
# inherited by pytest-xdist's workers and every process they start: the Keras trainings, the
# climb and the pages' JAX blocks compile the same steps in a dozen fresh processes, and with the
# cache each is compiled once (a 3-epoch train.py under JAX: 10 s of CPU, 6 s with it warm). The
# cache's key is the computation, the compiler's options and JAX's version, so a changed model or
# step is compiled anew.
if "JAX_COMPILATION_CACHE_DIR" not in os.environ:
    os.environ.update(JAX_COMPILATION_CACHE_DIR=tempfile.mkdtemp(prefix="pytest-xla-cache-"),
                      JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",  # the small ones add up
                      JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="-1")
    atexit.register(shutil.rmtree, os.environ["JAX_COMPILATION_CACHE_DIR"], True)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # keep TensorFlow's start-up noise out of outputs
# Page commands say `python ...`: make that the interpreter running the tests.
os.environ["PATH"] = str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")


# How `make test` shares the suite between its two workers (`-n 2 --dist loadfile
# --no-loadscope-reorder`): a worker takes a whole file at a time (its module fixtures are built
# once), in collection order, and the next when it is nearly done. The files that take longest
# are collected first, so that the last one to start is short and both workers end together
# (xdist's own order, most tests first, started the browser visits and the Keras trainings
# late). The list only orders work; a file missing from it runs after those in it.
# (`--dist loadgroup` cannot split a file further here: pytest-xdist 3.8 renames node ids
# through `item._nodeid`, which pytest 9.2 no longer reads.)
LONGEST_FIRST = [  # seconds per file in `make test` on a fresh clone, 2026-12-06 (load 3-5)
    "tests/site/test_site_browser.py",  # 216: the site built, every page visited in Chromium
    "tests/test_keras_train.py",  # 101: two trainings a backend, a Ctrl-C run
    "tests/tools/test_bench_runner.py",  # 60
    "tests/test_matmul.py",  # 42: sgemm.cu built unoptimised, the smoke run
    "tests/test_frameworks.py",  # 37: TensorFlow and JAX training
    "tests/test_keras_climb.py",  # 29
    "tests/test_snippets_standalone.py",  # 26: shown files run copied alone
    "tests/test_mandelbrot.py",  # 25
    "tests/tools/test_doctor.py",  # 23
    "tests/test_reduction.py",  # 21
    "docs/training/cats-vs-dogs.md",  # 16
    "tests/test_saxpy.py",  # 15
    "docs/kernels/matmul.md",  # 15: sgemm.cu built for sm_90a (device optimiser off, see below)
    "tests/tools/test_fault_campaign.py",  # 14
    "tests/test_opencl.py",  # 14: the kernels under qemu
    "docs/setup/check-your-gpu.md",  # 14
    "tests/test_timeline.py",  # 14
    "tests/site/test_site_links.py",  # 14
    "docs/training/climb.md",  # 11: its block runs every step under JAX
    "tests/tools/test_keras_inputs.py",  # 10
    "docs/accelerators/compilers.md",  # 10
    "docs/kernels/mandelbrot.md",  # 10
]


def pytest_collection_modifyitems(config, items):
    if not HAS_GPU:
        skip = pytest.mark.skip(reason="needs an NVIDIA GPU (nvidia-smi found none)")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip)
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))  # stable


# A page block that builds CUDA C builds it here with nvcc's device optimiser (cicc) off: without
# a GPU no device code runs, and cicc is four fifths of such a build (matmul.md's sgemm.cu at -O3
# for sm_90a: 27 s, 7 s without). The source is still compiled and assembled by ptxas for the
# page's target, so an error in it still fails the block. The tests' own builds keep the
# optimiser (test_saxpy reads the vector loads it makes in the PTX).
UNOPTIMISED_DEVICE_CODE = "-Xcicc -O0"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    if HAS_GPU or item.path.suffix != ".md" or "NVCC_APPEND_FLAGS" in os.environ:
        return (yield)
    os.environ["NVCC_APPEND_FLAGS"] = UNOPTIMISED_DEVICE_CODE
    try:
        return (yield)
    finally:
        del os.environ["NVCC_APPEND_FLAGS"]


STDERR_TAIL = 25  # lines of a failing block's stderr shown in the report


def block_failure(path: Path, lineno: int, exc: BaseException) -> str:
    """What a reader needs to see of a failed page block: where, what ran, how it ended."""
    where = f"{os.path.relpath(path, ROOT) if path.is_relative_to(ROOT) else path}, line {lineno}"
    if isinstance(exc, subprocess.CalledProcessError):
        command = exc.cmd if isinstance(exc.cmd, str) else " ".join(map(str, exc.cmd))
        stderr = (exc.stderr or b"").decode(errors="replace").rstrip().splitlines()
        stdout = (exc.output or b"").decode(errors="replace").rstrip().splitlines()
        tail = stderr[-STDERR_TAIL:] or ["(no stderr)"]
        return "\n".join([f"{where}: the block exited with status {exc.returncode}",
                          "command:", *("    " + line for line in command.splitlines()),
                          f"stderr (last {len(tail)} lines):", *("    " + line for line in tail),
                          *([f"stdout (last {min(len(stdout), 10)} lines):",
                             *("    " + line for line in stdout[-10:])] if stdout else [])])
    text = str(exc.args[0]) if exc.args else repr(exc)
    return f"{where}: {text}"


def pytest_configure(config):
    try:
        from pytest_codeblocks.plugin import TestBlock
    except ImportError:  # pytest-codeblocks not installed: nothing to report on
        return

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, (pytest.skip.Exception, pytest.fail.Exception)):
            return super(TestBlock, self).repr_failure(excinfo)
        return block_failure(Path(self.path), self.obj.lineno, excinfo.value)

    TestBlock.repr_failure = repr_failure


def build_site(out: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    if proc.returncode != 0:
        pytest.fail(f"mkdocs build --strict failed:\n{proc.stderr[-4000:]}")
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("WARNING")]
    if warnings:
        pytest.fail("mkdocs build printed warnings:\n" + "\n".join(warnings))


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """The site, built once per run with `mkdocs build --strict` (read-only for the tests).

    Under pytest-xdist the workers share one build: the first to ask builds it while holding a
    lock in the run's common temporary folder, the others wait and reuse it (or fail as it did)."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        out = tmp_path_factory.mktemp("site")
        build_site(out)
        return out
    import fcntl

    shared = tmp_path_factory.getbasetemp().parent  # common to the workers of this run
    out, failed = shared / "built-site", shared / "built-site.failed"
    with open(shared / "built-site.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if failed.exists():
            pytest.fail(failed.read_text())
        if not (out / "index.html").is_file():
            try:
                build_site(out)
            except pytest.fail.Exception as e:
                failed.write_text(str(e))
                raise
    return out


@pytest.fixture(scope="session")
def nvcc_build(tmp_path_factory):
    """Compile a .cu file under snippets/ with nvcc, once per session for the same flags; skips
    when nvcc is not on PATH."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not on PATH")
    built: dict[tuple, Path] = {}

    def build(relpath: str, *flags: str) -> Path:
        if (relpath, flags) not in built:
            exe = tmp_path_factory.mktemp("nvcc") / Path(relpath).stem
            cmd = [nvcc, "-O2", *flags, "-o", str(exe), str(SNIPPETS / relpath)]
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            assert proc.returncode == 0, proc.stderr
            built[relpath, flags] = exe
        return built[relpath, flags]

    return build
