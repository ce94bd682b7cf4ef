"""The snippet contract: every include resolves, every snippet is shown and run by a page or a
test, the site builds."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from helpers import ROOT, SNIPPETS

DOCS = ROOT / "docs"
INCLUDE = re.compile(r'--8<--\s+"(?P<target>[^"]+)"')
FENCE_OPEN = re.compile(r"^(?P<indent>\s*)(?P<ticks>`{3,}|~{3,})(?P<info>.*)$")
COLLECTED_INFO = {"python", "sh", "bash"}  # what pytest-codeblocks executes
IGNORED_PARTS = {"__pycache__", ".ipynb_checkpoints"}


def pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


def snippet_files() -> list[Path]:
    return sorted(p for p in SNIPPETS.rglob("*")  # a package's __init__.py is no sample
                  if p.is_file() and not IGNORED_PARTS & set(p.parts) and p.name != "__init__.py")


def fences(text: str):
    """Yield (info string, body) for each fenced block of a Markdown page."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = FENCE_OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        ticks, body, i = m["ticks"], [], i + 1
        while i < len(lines) and not lines[i].strip().startswith(ticks):
            body.append(lines[i])
            i += 1
        yield m["info"].strip(), "\n".join(body)
        i += 1


def includes() -> list[tuple[Path, str]]:
    return [(page, m["target"]) for page in pages() for m in INCLUDE.finditer(page.read_text())]


def included_paths() -> set[str]:
    return {target.split(":")[0] for _, target in includes()}


@pytest.mark.parametrize(("page", "target"), includes(),
                         ids=[f"{p.relative_to(DOCS)}->{t}" for p, t in includes()])
def test_include_target_exists(page, target):
    path, _, section = target.partition(":")
    file = ROOT / path
    assert file.is_file(), f"{page.name} includes {path}, which does not exist"
    if section:
        text = file.read_text()
        assert f"[start:{section}]" in text and f"[end:{section}]" in text, (
            f"{page.name} includes section {section!r} of {path}, which has no such section")


def is_harness(path: str) -> bool:
    """The harness and the registries: pages show lessons; the benchmarks page shows excerpts
    of these, and their tests are under tests/ (tests/test_bench_*.py and each topic's)."""
    return path.startswith("snippets/bench/") or path.endswith("/benchmark.py")


@pytest.mark.parametrize("snippet", [s for s in snippet_files()
                                     if not is_harness(str(s.relative_to(ROOT)))],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_every_lesson_is_included_by_a_page(snippet):
    assert str(snippet.relative_to(ROOT)) in included_paths(), (
        f"{snippet.relative_to(ROOT)} is on no page: include it or delete it")


def shown_lines(target: str) -> int:
    """Lines a page shows for one include: a section's, or the whole file's."""
    path, _, section = target.partition(":")
    text = (ROOT / path).read_text()
    if section:
        text = text.split(f"[start:{section}]", 1)[1].split(f"[end:{section}]", 1)[0]
    return len(text.splitlines())


def test_pages_show_lessons_not_the_harness():
    """No page includes a registry or a harness file whole, and harness lines are at most a
    tenth of the code lines the site shows."""
    whole = [(page.name, target) for page, target in includes()
             if ":" not in target and is_harness(target)]
    assert whole == [], whole
    lines = {"harness": 0, "lessons": 0}
    for _, target in includes():
        lines["harness" if is_harness(target.split(":")[0]) else "lessons"] += shown_lines(target)
    share = lines["harness"] / (lines["harness"] + lines["lessons"])
    assert share <= 0.10, lines


def test_no_collected_fence_holds_an_include():
    offenders = [f"{page.relative_to(DOCS)} ({info})" for page in pages()
                 for info, body in fences(page.read_text())
                 if info in COLLECTED_INFO and "--8<--" in body]
    assert not offenders, ("these fences would make pytest-codeblocks run a bare --8<-- line; "
                           f"give them a title=: {offenders}")


# Every program under snippets/ runs somewhere in the suite: a page's bash block names it, a test
# names it (and runs or imports it), or it needs a GPU and names the GPU test that runs it.
RUNNABLE = {".py", ".c", ".cu"}

# Runnable snippets that need a GPU to run at all, each with the test that runs it on one
# (`pytest -m gpu` on the GPU machine). Everything else must run in the CPU-only suite.
# PyTorch is not in the CPU test environment (its Linux wheel brings 18 CUDA wheels).
GPU_ONLY: dict[str, str] = {
    "snippets/frameworks/train_pytorch.py": "tests/test_frameworks.py::test_pytorch_on_the_gpu",
    "snippets/frameworks/parallel_pytorch.py": "tests/test_frameworks.py::test_pytorch_on_the_gpu",
}


def runnable_snippets() -> list[str]:
    """Every program under snippets/: a .py with a __main__ block, a .c/.cu with main()."""
    found = []
    for path in snippet_files():
        if path.suffix not in RUNNABLE:
            continue
        text = path.read_text(errors="replace")
        if (path.suffix == ".py" and '__name__ == "__main__"' in text) or (
                path.suffix != ".py" and re.search(r"\bint\s+main\s*\(", text)):
            found.append(str(path.relative_to(ROOT)))
    return found


def page_commands() -> str:
    return "\n".join(body for page in pages() for info, body in fences(page.read_text())
                     if info in ("bash", "sh"))


def not_run(snippets: list[str], commands: str, tests: str) -> list[str]:
    """The snippets no page command and no test names (by path under snippets/, or by file
    name in a test), and that are not GPU-only."""
    return [s for s in snippets if s not in GPU_ONLY and s not in commands
            and s.removeprefix("snippets/") not in commands
            and Path(s).name not in tests]


def test_every_runnable_snippet_is_run_by_a_page_or_a_test():
    tests = "\n".join(p.read_text() for p in (ROOT / "tests").rglob("test_*.py"))
    missing = not_run(runnable_snippets(), page_commands(), tests)
    assert not missing, ("runnable snippets that no page command or test runs (add one, or list "
                         f"it in GPU_ONLY with its GPU test): {missing}")


def test_not_run_names_what_nothing_runs():
    snippets = ["snippets/a/x.py", "snippets/a/y.py", "snippets/b/z.cu", *GPU_ONLY]
    assert not_run(snippets, "python snippets/a/x.py 3", "run_snippet('b/z.cu')") == [
        "snippets/a/y.py"]


@pytest.mark.parametrize(("snippet", "gpu_test"), sorted(GPU_ONLY.items()))
def test_gpu_only_snippets_name_their_gpu_test(snippet, gpu_test):
    assert snippet in runnable_snippets(), f"{snippet} is not a runnable snippet: drop it from GPU_ONLY"
    test_file = ROOT / gpu_test.split("::")[0]
    assert test_file.is_file(), f"{snippet}: its GPU test {gpu_test} does not exist"
    text = test_file.read_text()
    assert Path(snippet).name in text, f"{gpu_test} never names {Path(snippet).name}"
    assert "pytest.mark.gpu" in text or "HAS_GPU" in text, f"{gpu_test} has no GPU-only test"


def test_runnable_snippets_are_found():
    found = runnable_snippets()
    assert "snippets/bench/run.py" in found and "snippets/bench/timing.py" not in found
    assert any(f.endswith(".cu") for f in found)


def test_fence_parser_sees_collected_blocks():
    # Guards the checks above: a parser that found no fences would pass them all.
    text = "```bash\necho hi\n```\n\n```python title=\"x.py\"\n--8<-- \"x.py\"\n```\n"
    assert list(fences(text)) == [("bash", "echo hi"), ('python title="x.py"', '--8<-- "x.py"')]


def test_site_builds_strictly(built_site):
    assert (built_site / "index.html").is_file()
    assert (built_site / "kernels" / "array-addition" / "index.html").is_file()


def test_renderers_import_without_the_gpu_libraries():
    """`make serve` and `make build` use the lighter site environment (pyproject's site group:
    no Numba, CuPy, PyTorch, TensorFlow, JAX, Keras, PyOpenCL or Triton), so no renderer may
    need them, directly or through a snippet it imports."""
    code = (
        "import sys\n"
        "GPU = {'numba', 'numba_cuda', 'cupy', 'torch', 'tensorflow', 'jax', 'keras', 'pyopencl',"
        " 'triton'}\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in GPU:\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}')\n"
        "sys.meta_path.insert(0, Block())\n"
        "import renderers\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
