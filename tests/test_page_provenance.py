"""Every page that renders measurements says where and when they were measured (GPU, date,
commit, from each results file it renders), and offers each file it shows as a download
served with the site (hooks/render_data.py's on_files, renderers.page.provenance)."""

from __future__ import annotations

import json

import pytest

from helpers import ROOT
from bench import system
from mkdocs.utils.meta import get_data
from renderers.page import provenance, rendered_files, shown_files

DOCS = ROOT / "docs"


def test_a_page_names_the_run_behind_its_figures_and_offers_its_files():
    page, meta = get_data((DOCS / "kernels" / "saxpy.md").read_text())
    out = provenance(page, DOCS, "kernels/saxpy.md", meta.get("data"))
    doc = json.loads((DOCS / "data" / "saxpy-h100.json").read_text())
    gpu, date, commit = doc["system"]["gpus"][0]["name"], doc["system"]["date"][:10], doc["code"]["commit"][:7]
    assert f"`data/saxpy-h100.json`: {gpu}, {date}, commit `{commit}`" in out
    assert "[saxpy_numba_cuda.py](../snippets/saxpy/saxpy_numba_cuda.py)" in out


def test_a_dirty_tree_is_said_and_a_page_without_figures_or_files_gets_nothing(tmp_path):
    (tmp_path / "data").mkdir()
    doc = json.loads((DOCS / "data" / "saxpy-h100.json").read_text())
    doc["code"]["dirty"] = True
    (tmp_path / "data" / "r.json").write_text(json.dumps(doc))
    out = provenance("<!-- render saxpy_table path=data/r.json -->", tmp_path, "x.md")
    assert "(uncommitted changes)" in out
    assert provenance("# Just words\n", tmp_path, "x.md") == ""


def test_every_page_with_a_results_file_or_a_snippet_gets_a_closing_line():
    def measured(text: str, meta: dict) -> bool:
        return any('"gpu-survival-toolkit/results/' in (DOCS / rel).read_text()[:200]
                   for rel in rendered_files(text, meta.get("data"), meta.get("topic")))

    for page in sorted(DOCS.rglob("*.md")):
        text, meta = get_data(page.read_text())
        if measured(text, meta) or shown_files(text):
            uri = str(page.relative_to(DOCS))
            assert "page-provenance" in provenance(text, DOCS, uri, meta.get("data"), meta.get("topic")), uri


def test_a_planted_change_to_a_source_a_run_executed_is_found(tmp_path):
    """code.sources holds the sha256 of each file the run executed; a file edited or removed
    since is listed, an untouched one is not, and a file that records no sources says so."""
    (tmp_path / "snippets" / "toy").mkdir(parents=True)
    lesson, kernel = tmp_path / "snippets/toy/lesson.py", tmp_path / "snippets/toy/k.cu"
    lesson.write_text("x = 1\n")
    kernel.write_text("__global__ void k() {}\n")
    code = {"commit": "unknown", "dirty": None, "sources": {
        "snippets/toy/lesson.py": system._sha256(lesson),
        "snippets/toy/k.cu": system._sha256(kernel)}}
    assert system.changed_sources(code, tmp_path) == []
    lesson.write_text("x = 2\n")  # the planted change
    assert system.changed_sources(code, tmp_path) == ["snippets/toy/lesson.py"]
    kernel.unlink()
    assert system.changed_sources(code, tmp_path) == ["snippets/toy/lesson.py", "snippets/toy/k.cu"]
    assert system.changed_sources({"commit": "unknown", "dirty": None}, tmp_path) is None


def test_a_comment_docstring_or_demo_edit_leaves_provenance_and_a_statement_change_marks_it(
        tmp_path):
    """A results file records, beside each Python source's sha256, the digest of what it runs
    (`code.syntax`): rewording a comment or a docstring, re-wrapping a line, editing the
    `__main__` demo or the import of the runner's command line leaves the file unmarked; any
    statement that runs when the file is measured marks it. A record without the digest (an
    older results file) is marked by any byte."""
    lesson = tmp_path / "snippets/toy/lesson.py"
    lesson.parent.mkdir(parents=True)
    lesson.write_text('"""A toy lesson."""\nfrom bench import run  # first\nimport math\n\n\n'
                      'def f(x):\n    """Twice x."""\n    return 2 * x  # doubled\n\n\n'
                      'if __name__ == "__main__":\n    print(f(1))\n')
    sources = {"snippets/toy/lesson.py": system._sha256(lesson)}
    code = {"sources": sources, "syntax": system.syntax_hashes(sources, tmp_path)}
    lesson.write_text('"""A toy lesson, reworded."""\nimport math\n\n\ndef f(x):\n'
                      '    return 2 * x\n\n\nif __name__ == "__main__":\n    print(f(2))\n')
    assert system._sha256(lesson) != sources["snippets/toy/lesson.py"]
    assert system.changed_sources(code, tmp_path) == []
    assert system.changed_sources({"sources": sources}, tmp_path) == ["snippets/toy/lesson.py"]
    for change in ("return 3 * x", "return 2 * x + 0", "return (2 * x, 1)[0]"):
        lesson.write_text(lesson.read_text().replace("return 2 * x", change))
        assert system.changed_sources(code, tmp_path) == ["snippets/toy/lesson.py"], change
        lesson.write_text(lesson.read_text().replace(change, "return 2 * x"))
    lesson.write_text(lesson.read_text().replace("import math", "import cmath"))
    assert system.changed_sources(code, tmp_path) == ["snippets/toy/lesson.py"]


def test_a_harness_module_that_only_gains_names_leaves_provenance(tmp_path):
    """A results file records a digest per top-level name of each harness module it ran
    (`code.definitions`): a new adapter and the import it needs leave the file unmarked; a
    changed or removed definition, a changed statement, or a new name that the recorded code
    uses (shadowing a built-in or an import it relied on) mark it."""
    module = tmp_path / "snippets/bench/toy.py"
    module.parent.mkdir(parents=True)
    original = ('"""A toy harness module."""\nimport math\nfrom typing import Any\n\n'
                'LIMIT = 3\n\n\ndef kept(x: Any) -> int:\n    return len(str(math.floor(x)))\n')
    module.write_text(original)
    sources = {"snippets/bench/toy.py": system._sha256(module)}
    code = {"sources": sources, "syntax": system.syntax_hashes(sources, tmp_path),
            "definitions": system.definition_hashes(sources, tmp_path)}
    added = original.replace("from typing import Any\n", "from typing import Any\nimport cmath\n")
    added += "\n\nclass Added:\n    def run(self):\n        return cmath.sqrt(LIMIT)\n"
    module.write_text(added)
    assert system.changed_sources(code, tmp_path) == []
    assert system.changed_sources({**code, "definitions": {}}, tmp_path) == [
        "snippets/bench/toy.py"]  # an older record (no definitions): any statement marks it
    for change in (added.replace("LIMIT = 3", "LIMIT = 4"),  # a recorded definition changed
                   added.replace("import math\n", "import math\nimport os\nos.getpid()\n"),
                   added.replace("LIMIT = 3\n", ""),  # removed
                   added + "\n\ndef len(x):\n    return 0\n",  # shadows what kept() calls
                   added + "\n\nLIMIT = 5\n"):  # bound twice
        module.write_text(change)
        assert system.changed_sources(code, tmp_path) == ["snippets/bench/toy.py"], change


def run_hashes(code: str, topic: str = "saxpy") -> dict:
    """source_hashes as a run records it: a fresh process that ran `code` first (what it
    imported is then what the test expects, not what other tests of this worker imported)."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", f"import json, sys; {code}; from bench import "
                           "system; print(json.dumps(system.source_hashes(sys.argv[1])))",
                           str(ROOT / "snippets" / topic)], capture_output=True, text=True,
                          check=True, timeout=120, cwd=ROOT / "snippets" / topic)
    return json.loads(proc.stdout)


def test_a_run_records_its_measured_path_and_nothing_else():
    hashes = run_hashes("sys.path.insert(0, '.'); import benchmark; from bench import timing")
    assert {"snippets/saxpy/benchmark.py", "snippets/saxpy/saxpy_common.py",
            "snippets/saxpy/saxpy.cu", "snippets/bench/timing.py",
            "snippets/bench/adapters.py", "snippets/bench/runner.py"} <= hashes.keys()
    # the command line, the writers and the machine's description are not on it
    assert not {"snippets/bench/cli.py", "snippets/bench/run.py", "snippets/bench/results.py",
                "snippets/bench/system.py"} & hashes.keys()
    assert all(not name.startswith("snippets/mandelbrot/") for name in hashes)
    assert system.changed_sources({"sources": hashes}) == []


def test_a_cli_fix_leaves_provenance_and_a_timing_change_marks_it(tmp_path):
    """A whitespace or argument-parsing change to the harness's CLI changes no page's closing
    line; a change to a timing file marks the results it measured."""
    import shutil

    shutil.copytree(ROOT / "snippets", tmp_path / "snippets",
                    ignore=shutil.ignore_patterns("__pycache__"))
    code = {"sources": run_hashes("sys.path.insert(0, '.'); import benchmark")}
    cli = tmp_path / "snippets/bench/cli.py"
    cli.write_text(cli.read_text().replace("def ", "def  ", 1) + "\n# reworded help\n")
    run = tmp_path / "snippets/bench/run.py"
    run.write_text(run.read_text() + "\n")
    assert system.changed_sources(code, tmp_path) == []
    timing = tmp_path / "snippets/bench/timing.py"
    timing.write_text(timing.read_text() + "\nMIN_REPEATS = 11\n")
    assert system.changed_sources(code, tmp_path) == ["snippets/bench/timing.py"]
    # results files measured before 2026-12-03 recorded the CLI too: it is ignored there as well
    old = {"sources": {**code["sources"], "snippets/bench/cli.py": "0" * 64}}
    assert system.changed_sources(old, tmp_path) == ["snippets/bench/timing.py"]




def test_a_page_shows_the_results_of_one_card():
    """Rows of two cards on one page would compare two machines: the results files a page names
    (front matter, render calls, roofline points) all come from one GPU model. A file named
    with a path under docs/data/ counts; CPU-only runs name no GPU."""
    import re

    for page in sorted(DOCS.rglob("*.md")):
        cards = {}
        for name in set(re.findall(r"[\w.-]+\.json", page.read_text())):
            path = DOCS / "data" / name
            doc = json.loads(path.read_text()) if path.is_file() else {}
            if str(doc.get("schema", "")).startswith("gpu-survival-toolkit/results/"):
                for gpu in doc["system"].get("gpus") or []:
                    cards[name] = gpu["name"]
        assert len(set(cards.values())) <= 1, f"{page.relative_to(DOCS)} shows two cards: {cards}"
