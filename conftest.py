"""Shared test set-up for tests/ and for the code blocks of docs/.

Without an NVIDIA GPU, Numba's CUDA simulator is switched on here, before anything imports
numba.cuda, and tests marked `gpu` are skipped. With a GPU, nothing is simulated.

It also records which runnable snippets the suite really executes: a program run in a
subprocess (by a test or a page's bash block) whose command line names the file (or, for
`bench/run.py <topic>`, the topic's benchmark.py), a file loaded with `load_snippet` or run with
`run_snippet`, a file a test reports with `record_executed`, and any module under snippets/ that
ended up in `sys.modules`. A run that only asks for `--help` does not count. At the end of a full run (`pytest`, every testpath, no -k/-m/-x),
the session fails naming each runnable snippet that was not executed and is not in `GPU_ONLY`.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
SNIPPETS = ROOT / "snippets"
RUNNABLE = {".py", ".c", ".cu"}
IGNORED_PARTS = {"__pycache__", ".ipynb_checkpoints"}

# Runnable snippets that need a GPU to run at all, each with the test that runs it on one
# (`pytest -m gpu` on the GPU machine). Everything else must run in the CPU-only suite.
GPU_ONLY: dict[str, str] = {
    # "snippets/<topic>/<file>": "tests/test_<topic>.py::test_<name>",  (why it needs a GPU)
    # PyTorch is not in the CPU test environment (its Linux wheel brings 18 CUDA wheels):
    "snippets/frameworks/train_pytorch.py": "tests/test_frameworks.py::test_pytorch_on_the_gpu",
    "snippets/frameworks/parallel_pytorch.py": "tests/test_frameworks.py::test_pytorch_on_the_gpu",
}


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


def runnable_snippets() -> list[str]:
    """Every program under snippets/: a .py with a __main__ block, a .c/.cu with main()."""
    found = []
    for path in sorted(SNIPPETS.rglob("*")):
        if path.suffix not in RUNNABLE or IGNORED_PARTS & set(path.parts) or not path.is_file():
            continue
        text = path.read_text(errors="replace")
        if (path.suffix == ".py" and '__name__ == "__main__"' in text) or (
                path.suffix != ".py" and re.search(r"\bint\s+main\s*\(", text)):
            found.append(str(path.relative_to(ROOT)))
    return found


RUN_LOG = "SNIPPETS_RUN_LOG"  # file every test process appends executed snippets to
_EXECUTED: set[str] = set()


def record_executed(*paths) -> None:
    """Count snippet files (paths under snippets/, absolute or relative to ROOT) as executed."""
    names = set()
    for p in paths:
        path = Path(p) if Path(p).is_absolute() else ROOT / p
        try:
            names.add(str(path.resolve().relative_to(ROOT)))
        except ValueError:
            continue
    names = {n for n in names if n.startswith("snippets/")} - _EXECUTED
    if not names:
        return
    _EXECUTED.update(names)
    log = os.environ.get(RUN_LOG)
    if log:
        with open(log, "a") as f:  # one short append per line: safe across processes
            f.write("".join(n + "\n" for n in sorted(names)))


def snippets_in_command(args, cwd=None) -> set[str]:
    """Snippet files a command line runs (for bench/run.py <topic>: that topic's benchmark.py).

    A command that asks for --help runs nothing worth counting and names none."""
    if isinstance(args, (str, bytes, os.PathLike)):
        text = os.fsdecode(args)
        try:
            tokens = shlex.split(text, comments=True)
        except ValueError:
            tokens = text.split()
    else:
        tokens = [os.fsdecode(a) for a in args]
    if "--help" in tokens or "-h" in tokens:  # printing usage is not running the program
        return set()
    base = Path(cwd) if cwd else Path.cwd()
    found = set()
    for i, token in enumerate(tokens):
        if i and tokens[i - 1] == "cd":  # `cd snippets/x && python file.py`
            base = base / token
            continue
        path = Path(token) if Path(token).is_absolute() else base / token
        try:
            rel = path.resolve().relative_to(SNIPPETS)
        except (ValueError, OSError):
            continue
        if path.suffix in RUNNABLE and path.is_file():
            found.add(f"snippets/{rel}")
        if str(rel) == "bench/run.py" and i + 1 < len(tokens):
            topic = SNIPPETS / tokens[i + 1] / "benchmark.py"
            if re.fullmatch(r"\w+", tokens[i + 1]) and topic.is_file():
                found.add(str(topic.relative_to(ROOT)))
    return found


_popen_init = subprocess.Popen.__init__


def _recording_popen_init(self, args, *rest, **kwargs):
    try:
        record_executed(*snippets_in_command(args, kwargs.get("cwd")))
    except Exception:  # recording must never break a test's subprocess
        pass
    _popen_init(self, args, *rest, **kwargs)


def pytest_configure(config):
    if not os.environ.get(RUN_LOG):  # the first process; xdist workers inherit the variable
        fd, log = tempfile.mkstemp(prefix="snippets-run-", suffix=".log")
        os.close(fd)
        os.environ[RUN_LOG] = log
        config._snippets_run_log = log
    subprocess.Popen.__init__ = _recording_popen_init


def _record_imported_modules() -> None:
    record_executed(*(m.__file__ for m in list(sys.modules.values())
                      if getattr(m, "__file__", None) and str(m.__file__).startswith(str(SNIPPETS))))


def full_run(config, session) -> bool:
    """Whether this session ran the whole suite, so that an unexecuted snippet is a finding."""
    forced = os.environ.get("SNIPPETS_RUN_CHECK")
    if forced in ("0", "1"):
        return forced == "1"
    opt = config.option
    paths = {os.path.normpath(a) for a in (opt.file_or_dir or [])}
    testpaths = {os.path.normpath(t) for t in config.getini("testpaths")}
    return (config.rootpath == ROOT and (not paths or paths == testpaths)
            and not opt.keyword and not opt.markexpr and not getattr(opt, "deselect", None)
            and not getattr(opt, "lf", False) and not session.shouldstop
            and bool(config.getoption("codeblocks", False)))


def not_executed(executed: set[str]) -> list[str]:
    return [s for s in runnable_snippets() if s not in executed and s not in GPU_ONLY]


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    _record_imported_modules()
    log = getattr(session.config, "_snippets_run_log", None)
    if log is None:  # an xdist worker: the first process checks
        return
    executed = set(Path(log).read_text().split())
    Path(log).unlink(missing_ok=True)
    os.environ.pop(RUN_LOG, None)
    if exitstatus not in (0, 1) or not full_run(session.config, session):
        return
    missing = not_executed(executed)
    if missing:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        lines = ["runnable snippets the suite never executed (run each in a test or a page's "
                 "bash block, or list it in GPU_ONLY in conftest.py with its GPU test):",
                 *(f"  {m}" for m in missing)]
        if reporter:
            reporter.write_sep("=", "snippets not executed", red=True)
            for line in lines:
                reporter.write_line(line)
        else:
            print("\n".join(lines), file=sys.stderr)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def load_snippet(relpath: str):
    """Import a snippet file (for example "array_addition/vector_add_numba.py") as a module."""
    path = SNIPPETS / relpath
    record_executed(path)
    name = "snippet_" + relpath.replace("/", "_").removesuffix(".py")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def run_snippet(relpath: str, *args: str, timeout: float = 300, **kwargs):
    """Run a Python snippet as a reader would; returns the CompletedProcess."""
    if not {"--help", "-h"} & {str(a) for a in args}:
        record_executed(SNIPPETS / relpath)
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
