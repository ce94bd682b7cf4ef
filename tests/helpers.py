"""What the tests share: importing a snippet file as a module, running one as a reader would.

Snippet files are not packages: a lesson imports its companions by their plain names from its
own folder, so loading one puts that folder on sys.path first (here, in the tests, and nowhere
in the snippets themselves).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

from conftest import HAS_GPU, ROOT, SNIPPETS, UNOPTIMISED_DEVICE_CODE  # noqa: F401 - re-exported

TOOLS = {  # programs readers run for their output: they keep the whole bad-input contract
    "snippets/bench/run.py", "snippets/doctor/gpu_doctor.py", "snippets/aws/choose_instance.py",
    "snippets/aws/refresh_prices.py", "snippets/keras/train.py", "snippets/keras/predict.py",
    "snippets/keras/make_dataset.py", "snippets/opencl/register_intel_cpu.py",
}


def load_snippet(relpath: str):
    """Import a snippet file (for example "array_addition/vector_add_numba.py") as a module."""
    path = SNIPPETS / relpath
    folder = str(path.parent)
    if folder not in sys.path:  # its companions import by their plain names
        sys.path.insert(0, folder)
    name = "snippet_" + relpath.replace("/", "_").removesuffix(".py")
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_benchmark(topic: str):
    """A topic's benchmark.py as a module (its BENCHMARK is the registry)."""
    return load_snippet(f"{topic}/benchmark.py")


def run_snippet(relpath: str, *args: str, timeout: float = 300, **kwargs):
    """Run a Python snippet as a reader would; returns the CompletedProcess."""
    return subprocess.run([sys.executable, str(SNIPPETS / relpath), *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT, **kwargs)


def run_to(stdout: str, relpath: str, *args, **kwargs) -> subprocess.CompletedProcess:
    """Run a tool with stdout on /dev/full, or on a pipe whose reader is gone (`| head` does that)."""
    read, write = os.pipe()
    os.close(read)
    with open(os.devnull if stdout == "closed pipe" else stdout, "w") as full:
        target = write if stdout == "closed pipe" else full
        try:
            return subprocess.run([sys.executable, str(SNIPPETS / relpath), *map(str, args)],
                                  stdout=target, stderr=subprocess.PIPE, text=True, timeout=300,
                                  cwd=ROOT, **kwargs)
        finally:
            os.close(write)


FULL = "error: cannot write to standard output (/dev/full): No space left on device\n"


def repo_with_a_stale_index(tree) -> None:
    """A git repository of 200 committed files in `tree` whose index's stat data is stale, so
    that `git status` wants to rewrite the index (larger than a small file-size limit)."""
    import time

    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(tree)]
    for i in range(200):
        (tree / f"file{i:03d}.txt").write_text(f"{i}\n")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "x"]):
        subprocess.run([*git, *args], check=True)
    later = time.time() + 5
    for f in tree.glob("file*.txt"):
        os.utime(f, (later, later))
