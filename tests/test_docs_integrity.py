"""The snippet contract: every include resolves, every snippet is shown and really run (recorded by
conftest.py), the site builds."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import conftest
from conftest import (GPU_ONLY, ROOT, RUN_LOG, SNIPPETS, full_run, not_executed, runnable_snippets,
                      snippets_in_command)

DOCS = ROOT / "docs"
INCLUDE = re.compile(r'--8<--\s+"(?P<target>[^"]+)"')
FENCE_OPEN = re.compile(r"^(?P<indent>\s*)(?P<ticks>`{3,}|~{3,})(?P<info>.*)$")
COLLECTED_INFO = {"python", "sh", "bash"}  # what pytest-codeblocks executes
IGNORED_PARTS = {"__pycache__", ".ipynb_checkpoints"}


def pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


def snippet_files() -> list[Path]:
    return sorted(p for p in SNIPPETS.rglob("*")
                  if p.is_file() and not IGNORED_PARTS & set(p.parts))


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


@pytest.mark.parametrize("snippet", snippet_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_snippet_is_included_by_a_page(snippet):
    assert str(snippet.relative_to(ROOT)) in included_paths(), (
        f"{snippet.relative_to(ROOT)} is on no page: include it or delete it")


def test_no_collected_fence_holds_an_include():
    offenders = [f"{page.relative_to(DOCS)} ({info})" for page in pages()
                 for info, body in fences(page.read_text())
                 if info in COLLECTED_INFO and "--8<--" in body]
    assert not offenders, ("these fences would make pytest-codeblocks run a bare --8<-- line; "
                           f"give them a title=: {offenders}")


# "Executed" means executed: conftest.py records every snippet the session really runs and,
# at the end of a full run, fails naming the runnable ones nobody ran (see its docstring).
# The tests below check that recorder and the GPU-only list it exempts.

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


@pytest.mark.parametrize(("command", "cwd", "expected"), [
    ([sys.executable, str(SNIPPETS / "bench/run.py"), "x"], None, {"snippets/bench/run.py"}),
    ([sys.executable, str(SNIPPETS / "bench/run.py"), "--help"], None, set()),  # usage only
    ("python snippets/bench/run.py -h", ROOT, set()),
    ("NUMBA_ENABLE_CUDASIM=1 python snippets/bench/run.py mandelbrot --output x.json", ROOT,
     {"snippets/bench/run.py", "snippets/mandelbrot/benchmark.py"}),
    ("cd snippets/bench && python run.py x  # a comment", ROOT, {"snippets/bench/run.py"}),
    ("python snippets/bench/no_such_file.py", ROOT, set()),
    ("python run.py", ROOT, set()),  # not a snippet from here
    (["ls", str(SNIPPETS / "bench")], None, set()),  # a folder is not a program
    ("echo 'unbalanced", ROOT, set()),
])
def test_commands_are_traced_to_snippet_files(command, cwd, expected):
    assert snippets_in_command(command, cwd) == expected


def test_subprocesses_are_recorded_in_the_run_log():
    log = Path(os.environ[RUN_LOG])
    target = "snippets/bench/run.py"
    conftest._EXECUTED.discard(target)
    subprocess.run([sys.executable, "-c", "pass", str(ROOT / target)], check=True)
    assert target in log.read_text().split()


def test_full_run_is_only_a_whole_suite_run():
    def config(**opts):
        option = SimpleNamespace(**{"file_or_dir": [], "keyword": "", "markexpr": "",
                                    "deselect": None, "lf": False, **opts})
        return SimpleNamespace(option=option, rootpath=ROOT, getini=lambda name: ["tests", "docs"],
                               getoption=lambda name, default=None: True)

    session = SimpleNamespace(shouldstop=False)
    os.environ.pop("SNIPPETS_RUN_CHECK", None)
    assert full_run(config(), session)
    assert full_run(config(file_or_dir=["docs", "tests/"]), session)
    assert not full_run(config(file_or_dir=["tests/test_docs_integrity.py"]), session)
    assert not full_run(config(keyword="saxpy"), session)
    assert not full_run(config(markexpr="gpu"), session)
    assert not full_run(config(), SimpleNamespace(shouldstop="-x: stopped after a failure"))


def test_not_executed_names_what_was_not_run():
    everything = set(runnable_snippets())
    assert not_executed(everything) == []
    missing = not_executed(everything - {"snippets/bench/run.py"} - set(GPU_ONLY))
    assert missing == ["snippets/bench/run.py"]  # GPU-only files are never reported


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
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "hooks"), str(ROOT / "snippets")])}
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
