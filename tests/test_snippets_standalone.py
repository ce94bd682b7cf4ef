"""Every snippet a page shows runs after being copied into an empty folder, as a reader would.

For each file a page includes (`--8<-- "snippets/..."`), the test copies it, with its
companions, into a temporary empty folder and runs it there: a lesson runs its own `__main__`
demo (no arguments: a small fixed size; DEMO_ARGS for a program whose default is a measurement),
a companion module without one imports, a tool answers `--help`, and a .c/.cu finds every header
it includes (`-M`) where a page block that runs here compiles it in the repository, and compiles
with the page's flags (PTX only) or plain ones otherwise: each file is compiled once. Companions are
found, not listed: same-folder imports of a .py (`import model`, `from model import ...`) and
`#include "x.h"` of a .c/.cu; the page that shows the file must name each companion. Each page
command runs once per suite: by pytest-codeblocks (`pytest --codeblocks docs/`) in the
repository, except a block that only runs a lesson (`[VAR=value] python snippets/...`), which
this test runs in the empty folder with the page's expected output (conftest.py then deselects
the block; `pytest --codeblocks docs/` alone still runs it in place). The benchmark harness
(`snippets/bench/`, each topic's `benchmark.py`) is not a teaching file and is left out.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT, SNIPPETS, TOOLS

DOCS = ROOT / "docs"
INCLUDE = re.compile(r'--8<--\s+"(?P<path>snippets/[^":]+)(?::[^"]*)?"')
FENCE_OPEN = re.compile(r"^(?P<indent>\s*)(?P<ticks>`{3,}|~{3,})(?P<info>.*)$")
MARKER = re.compile(r"^\s*<!--\s*(?P<body>pytest[.\w-].*?)\s*-->\s*$")
LOCAL_INCLUDE = re.compile(r'^\s*#\s*include\s+"(?P<name>[^"]+)"', re.M)
COMPILERS = {".c": ("gcc", "cc"), ".cu": ("nvcc",)}
TIMEOUT = 600


def is_harness(rel: str) -> bool:
    return rel.startswith("snippets/bench/") or rel.endswith("/benchmark.py")


def pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


def shown() -> dict[str, list[Path]]:
    """Each teaching file a page includes -> the pages that include it."""
    found: dict[str, list[Path]] = {}
    for page in pages():
        for m in INCLUDE.finditer(page.read_text()):
            rel = m["path"]
            if (ROOT / rel).suffix in (".py", ".c", ".cu") and not is_harness(rel) \
                    and (ROOT / rel).is_file() and page not in found.setdefault(rel, []):
                found[rel].append(page)
    return found


def direct_companions(path: Path) -> set[Path]:
    folder = path.parent
    if path.suffix == ".py":
        try:
            tree = ast.parse(path.read_text())
        except SyntaxError:
            return set()
        names = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
        return {folder / f"{n}.py" for n in names if (folder / f"{n}.py").is_file()} - {path}
    return {folder / m["name"] for m in LOCAL_INCLUDE.finditer(path.read_text(errors="replace"))
            if (folder / m["name"]).is_file()}


def companions(rel: str) -> list[str]:
    """The files `rel` needs beside it (closure of same-folder imports or includes)."""
    start = ROOT / rel
    seen, todo = set(), [start]
    while todo:
        for c in direct_companions(todo.pop()):
            if c not in seen and c != start:
                seen.add(c)
                todo.append(c)
    return sorted(str(c.relative_to(ROOT)) for c in seen)


def blocks(page: Path):
    """(index, info, body, markers) for each fenced block; markers: the HTML comments above it."""
    lines = page.read_text().splitlines()
    i, index = 0, 0
    while i < len(lines):
        m = FENCE_OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        markers, j = [], i - 1
        while j >= 0 and (not lines[j].strip() or MARKER.match(lines[j])):
            if lines[j].strip():
                markers.append(MARKER.match(lines[j])["body"])
            j -= 1
        ticks, body, i = m["ticks"], [], i + 1
        while i < len(lines) and not lines[i].strip().startswith(ticks):
            body.append(lines[i])
            i += 1
        yield index, m["info"].strip(), "\n".join(body), markers
        index += 1
        i += 1


def local_command(body: str, named: list[str]) -> str:
    """The page's command as a reader runs it in a folder holding the copied files."""
    for topic in sorted({str(Path(f).parent) for f in named}, key=len, reverse=True):
        body = body.replace(f"{topic}/", "")
        body = re.sub(rf"(?<![\w/]){re.escape(topic)}(?=[\s;&|)]|$)", ".", body)
    return body


def copy_into(folder: Path, named: list[str]) -> None:
    """Each file with its companions; a companion in a folder below the file's (an
    `#include "kernels/x.cuh"`) keeps that relative place, as the include needs it."""
    for rel in named:
        top = Path(rel).parent
        for f in [rel, *companions(rel)]:
            dest = folder / (Path(f).relative_to(top) if Path(f).is_relative_to(top)
                             else Path(f).name)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / f, dest)


def reader_env() -> dict:
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    kept = [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
            if p and not Path(p).resolve().is_relative_to(ROOT)]  # nothing from the repository
    env["PYTHONPATH"] = os.pathsep.join(kept)
    env.pop("SNIPPETS_RUN_LOG", None)
    return env


def run_here(command, folder: Path) -> subprocess.CompletedProcess:
    shell = isinstance(command, str)
    return subprocess.run(command, shell=shell, executable="/bin/bash" if shell else None,
                          cwd=folder, env=reader_env(), capture_output=True, text=True,
                          timeout=TIMEOUT)


def report(proc: subprocess.CompletedProcess, what: str) -> str:
    out = (proc.stdout[-1500:] + "\n" + proc.stderr[-2500:]).strip()
    return f"{what} exited {proc.returncode} in an empty folder:\n{out}"


def runs_here(markers: list[str]) -> bool:
    """Whether pytest-codeblocks runs a block with these markers on this machine."""
    for text in markers:
        if not text.startswith("pytest.mark."):
            continue  # pytest-codeblocks:expected-output and the like
        mark = eval(text, {"sys": sys, "pytest": pytest}).mark  # as pytest-codeblocks does
        if mark.name == "skip" or (mark.name == "skipif" and mark.args and mark.args[0]):
            return False
    return True


# ---- the tests ----

SHOWN = shown()
PYTHON_FILES = sorted(f for f in SHOWN if f.endswith(".py"))
MISSING = ("torch", "cupy")  # not in the CPU test environment (see README): their files run on the GPU
# A program whose default run is a measurement, not a small demo, runs alone at its smallest:
# profile_step.py profiles three cases at two batch sizes by default (34 s of CPU; 12 s here).
# tests/test_keras_train.py runs its other two cases in the repository. (An entry for a file no
# page shows any more does nothing.)
DEMO_ARGS = {
    "snippets/keras/profile_step.py": ["--cases", "no-augmentation", "--batch-sizes", "8"],
}


def page_runs(rel: str) -> list:
    """The page blocks that run this lesson and nothing else (`[VAR=value ...] python
    snippets/...`, one line), as pytest-codeblocks collects them, where they run here."""
    from pytest_codeblocks.main import extract_from_file

    alone = re.compile(rf"^(?:\w+=\S+\s+)*python\s+{re.escape(rel)}$")
    return [(page, block) for page in SHOWN.get(rel, [])
            for block in extract_from_file(page)
            if block.syntax in ("bash", "sh") and alone.match(block.code.strip())
            and runs_here(block.marks)]


PAGE_RUNS = {rel: page_runs(rel) for rel in PYTHON_FILES if rel not in TOOLS}
# The page blocks that the test below runs (copied alone): pytest-codeblocks does not run them
# again in the same session (conftest.py deselects them), so each runs once per suite.
RUN_HERE = {rel: {(str(page), block.lineno) for page, block in runs}
            for rel, runs in PAGE_RUNS.items() if runs}


@pytest.mark.parametrize("rel", PYTHON_FILES)
def test_shown_python_file_runs_alone(tmp_path, rel):
    """A lesson runs its demo (as its page runs it, where a page block runs it alone: the same
    command and the page's expected output); a companion module imports; a tool answers --help."""
    copy_into(tmp_path, [rel])
    text = (ROOT / rel).read_text()
    needs = [m for m in MISSING if re.search(rf"^\s*(import|from) {m}\b", text, re.M)
             and rel not in TOOLS]  # a tool answers --help before its slow imports
    if needs and importlib.util.find_spec(needs[0]) is None:
        pytest.skip(f"{rel} needs {needs[0]}, which the CPU test environment does not have")
    for page, block in PAGE_RUNS.get(rel, []):
        command = local_command(block.code.strip(), [rel])
        proc = run_here(command, tmp_path)
        where = f"{page.relative_to(ROOT)}, line {block.lineno}: {command}"
        assert proc.returncode == 0, report(proc, where)
        if block.expected_output is not None:
            want, got = block.expected_output, proc.stdout
            if block.expected_output_ignore_whitespace:
                want, got = re.sub(r"\s+", "", want), re.sub(r"\s+", "", got)
            assert got == want, (f"{where}: the page shows\n{block.expected_output}"
                                 f"but it printed\n{proc.stdout}")
    if PAGE_RUNS.get(rel):
        return
    program = 'if __name__ == "__main__":' in text
    if not program:
        command = [sys.executable, "-c", f"import {Path(rel).stem}"]
    elif rel in TOOLS:
        command = [sys.executable, Path(rel).name, "--help"]
    else:
        command = [sys.executable, Path(rel).name, *DEMO_ARGS.get(rel, [])]
    proc = run_here(command, tmp_path)
    assert proc.returncode == 0, report(proc, " ".join(map(str, command[1:])))
    assert "Traceback" not in proc.stderr
    if program:  # a demo shows its result; a tool its usage
        assert proc.stdout.strip(), report(proc, " ".join(map(str, command[1:])))


def ptx_only(command: str) -> str:
    """nvcc's -arch=sm_NN[a] as PTX only: every file is still compiled and its device code
    generated, but ptxas (most of the time of a large kernel file) is not run. The page's own
    command, run by pytest-codeblocks, builds the real binary."""
    return re.sub(r"-arch=sm_(\w+)", r"-arch=compute_\1 -code=compute_\1", command)


def page_compile_lines(rel: str):
    """(compiler line, whether its block runs here) for each page line that compiles `rel`."""
    for page in shown()[rel]:
        for _, info, body, markers in blocks(page):
            for line in re.split(r"\n|&&|;", body.replace("\\\n", " ")):
                words = line.split()
                if words and words[0] in COMPILERS[Path(rel).suffix] and any(
                        w.endswith(rel) for w in words):
                    yield line.strip(), info in ("bash", "sh") and runs_here(markers)


def compile_command(rel: str) -> str:
    """In the empty folder: only the includes, `-M`, when a page block that runs here compiles
    the file (in the repository, with the page's flags: that is the compile check); else the
    page's compiler line for this file (its flags), or a plain one."""
    name = Path(rel).name
    lines = list(page_compile_lines(rel))
    if any(here for _, here in lines):
        return f"{COMPILERS[Path(rel).suffix][0]} -M {name} > /dev/null"
    for line, _ in lines:
        return "mkdir -p build && " + ptx_only(local_command(line, [rel]))
    exe = Path(rel).stem
    return f"{COMPILERS[Path(rel).suffix][0]} -O2 -o {exe} {name}" + (
        " -lm" if rel.endswith(".c") else "")


C_FILES = sorted(f for f in shown() if not f.endswith(".py"))


@pytest.mark.parametrize("rel", C_FILES)
def test_shown_c_or_cuda_file_compiles_in_an_empty_folder(tmp_path, rel):
    command = compile_command(rel)
    compiler = command.split("&&")[-1].split()[0]
    if shutil.which(compiler) is None:
        pytest.skip(f"{compiler} is not on PATH")
    copy_into(tmp_path, [rel])
    proc = run_here(command, tmp_path)
    assert proc.returncode == 0, report(proc, command)


MENTIONS = [(rel, page, c) for rel, ps in sorted(shown().items()) for page in ps
            for c in companions(rel)]


@pytest.mark.parametrize(("rel", "page", "companion"), MENTIONS,
                         ids=[f"{p.relative_to(DOCS)}:{Path(r).name}+{Path(c).name}"
                              for r, p, c in MENTIONS])
def test_page_names_each_companion(rel, page, companion):
    text = "\n".join(line for line in page.read_text().splitlines() if "--8<--" not in line)
    assert Path(companion).name in text, (
        f"{page.relative_to(DOCS)} shows {rel}, which needs {Path(companion).name} beside it; "
        "say so on the page, next to the first file")


# ---- the helpers above, checked on known inputs ----

def test_companions_are_found_from_imports_and_includes(tmp_path, monkeypatch):
    topic = tmp_path / "snippets" / "t"
    topic.mkdir(parents=True)
    (topic / "train.py").write_text("import os\nimport model\nfrom data import load\n")
    (topic / "model.py").write_text("from layers import dense\n")
    (topic / "layers.py").write_text("import numpy\n")
    (topic / "data.py").write_text("")
    (topic / "k.cu").write_text('#include <stdio.h>\n#include "k.h"\nint main() {}\n')
    (topic / "k.h").write_text('#include "common.h"\n')
    (topic / "common.h").write_text("")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert companions("snippets/t/train.py") == [
        "snippets/t/data.py", "snippets/t/layers.py", "snippets/t/model.py"]
    assert companions("snippets/t/k.cu") == ["snippets/t/common.h", "snippets/t/k.h"]
    assert companions("snippets/t/data.py") == []


def test_page_commands_become_local_commands():
    body = ("mkdir -p build\nnvcc -O2 -o build/k snippets/t/k.cu\ncd snippets/t && ls")
    assert local_command(body, ["snippets/t/k.cu"]) == (
        "mkdir -p build\nnvcc -O2 -o build/k k.cu\ncd . && ls")


def test_there_are_shown_snippets():
    assert len(PYTHON_FILES) >= 20 and len(C_FILES) >= 3  # a broken scan would pass vacuously
    assert not set(DEMO_ARGS) & TOOLS  # a tool answers --help, never a demo's arguments
