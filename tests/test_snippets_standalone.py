"""Every snippet a page shows runs as a reader runs it: copied, with the companions its page names,
into an empty folder (the shape of Polars' tests/docs/test_user_guide.py: one test, one file each).

Each file runs once per suite. Where a page block that runs on this machine runs it (`python
snippets/x.py ...`) or compiles it, pytest-codeblocks runs that block in the repository, and the
copy here only has to find its companions (a C file's headers: `-M`). Any other file runs here: a
lesson its `__main__` demo, a tool `--help`; a module without a demo is imported, unless another
shown file imports it (its run is that file's). Companions are the same-folder imports and
`#include "..."` files; the page must name each. No shown file imports the harness: the editable
install makes `bench` and `renderers` importable from any folder, so that is read, not run.
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
from pytest_codeblocks.main import extract_from_file

from helpers import ROOT, TOOLS

HARNESS = {"bench", "renderers"}  # the project's own packages (pyproject.toml)
NOT_HERE = ("torch", "cupy")  # not in the CPU test environment (see README): they run on the GPU
COMPILER = {".py": "python", ".c": "gcc", ".cu": "nvcc"}
INCLUDE = re.compile(r'--8<--\s+"(snippets/[^":]+\.(?:py|c|cu))(?::[^"]*)?"')
SHOWN: dict[str, list[Path]] = {}  # file -> the pages that show it; the harness is not taught
for page in sorted((ROOT / "docs").rglob("*.md")):
    for rel in dict.fromkeys(INCLUDE.findall(page.read_text())):
        if not rel.startswith("snippets/bench/") and not rel.endswith("/benchmark.py"):
            SHOWN.setdefault(rel, []).append(page)
# A program whose default run is a measurement runs at its smallest (34 s of CPU by default);
# the softmax demo on one row, not two: on the simulator a row is a block of threads run in
# Python, 7 s of CPU each.
DEMO_ARGS = {"snippets/keras/profile_step.py": ["--cases", "no-augmentation", "--batch-sizes", "8"],
             "snippets/reduction/softmax_numba.py": ["1", "100"]}


def imports(path: Path) -> set[str]:
    """Top-level module names a .py imports; `#include "..."` names of a .c/.cu."""
    if path.suffix != ".py":
        return set(re.findall(r'^\s*#\s*include\s+"([^"]+)"', path.read_text(), re.M))
    nodes = list(ast.walk(ast.parse(path.read_text())))
    return ({a.name.split(".")[0] for n in nodes if isinstance(n, ast.Import) for a in n.names}
            | {n.module.split(".")[0] for n in nodes
               if isinstance(n, ast.ImportFrom) and n.level == 0 and n.module})


def companions(path: Path) -> set[Path]:
    """The files `path` needs beside it: its same-folder imports or includes, and theirs."""
    found, todo = set(), [path]
    while todo:  # Python finds modules in the script's folder; C, beside the including file
        here = todo.pop()
        near = [here.parent / n for n in imports(here)] if here.suffix != ".py" else \
            [path.parent / f"{m}.py" for m in imports(here)]
        new = {f.resolve() for f in near if f.is_file()} - found - {path}
        found |= new
        todo += new
    return found


def page_runs(rel: str) -> bool:
    """Whether a page block that pytest-codeblocks runs on this machine runs or compiles `rel`."""
    tool = COMPILER[Path(rel).suffix]
    runs = re.compile(rf"(^|[;&|]\s*)(\w+=\S+\s+)*{tool}\b.*?\s{re.escape(rel)}\b", re.M)

    def skipped(text: str) -> bool:  # as pytest-codeblocks reads the marks above a block
        mark = eval(text, {"sys": sys, "pytest": pytest}).mark
        return mark.name == "skip" or (mark.name == "skipif" and bool(mark.args[0]))

    return any(block.syntax in ("bash", "sh") and runs.search(block.code.replace("\\\n", " "))
               and not any(skipped(m) for m in block.marks)
               for page in SHOWN[rel] for block in extract_from_file(page))


IMPORTED = {str(c.relative_to(ROOT)) for rel in SHOWN for c in companions(ROOT / rel)}


@pytest.mark.parametrize("rel", sorted(SHOWN))
def test_shown_snippet_runs_copied_alone(tmp_path, rel):
    path = ROOT / rel
    for c in companions(path):  # an include may sit a folder down (`#include "kernels/x.cuh"`)
        (tmp_path / c.relative_to(path.parent)).parent.mkdir(exist_ok=True)
        shutil.copy2(c, tmp_path / c.relative_to(path.parent))
        for page in SHOWN[rel]:
            prose = [line for line in page.read_text().splitlines() if "--8<--" not in line]
            assert c.name in "\n".join(prose), \
                f"{page.relative_to(ROOT)} shows {rel}: say that it needs {c.name} beside it"
    shutil.copy2(path, tmp_path)
    if path.suffix == ".py":
        assert not imports(path) & HARNESS, f"{rel} imports the harness"
    missing = [m for m in NOT_HERE if m in imports(path) and importlib.util.find_spec(m) is None]
    demo = path.suffix == ".py" and 'if __name__ == "__main__":' in path.read_text()
    if path.suffix == ".py" and page_runs(rel) or rel in IMPORTED and not demo:
        return  # its page block runs it, or the file that imports it does
    if path.suffix != ".py":
        command = [COMPILER[path.suffix], "-M" if page_runs(rel) else "-c", path.name,
                   "-o", os.devnull]
    elif not demo:
        command = [sys.executable, "-c", f"import {path.stem}"]
    else:
        args = ["--help"] if rel in TOOLS else DEMO_ARGS.get(rel, [])
        command = [sys.executable, path.name, *args]
    need = missing[0] if missing and rel not in TOOLS else command[0]  # a tool answers --help first
    if need != command[0] or shutil.which(need) is None:
        pytest.skip(f"{rel} needs {need}, which is not installed here")
    kept = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
            if p and not Path(p).resolve().is_relative_to(ROOT)]  # nothing from the repository
    proc = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join(kept)))
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, \
        f"{' '.join(command[1:])} in an empty folder:\n{proc.stdout[-1500:]}{proc.stderr[-2500:]}"
    assert proc.stdout.strip() or not demo, f"{rel} printed nothing"  # a demo's result, a usage
