"""Every page that renders measurements says where and when they were measured (GPU, date,
commit, from each results file it renders), and offers each file it shows as a download
served with the site (hooks/render_data.py's on_files, renderers.page.provenance)."""

from __future__ import annotations

import json

import pytest

from helpers import ROOT
from bench import system
from renderers.page import provenance, shown_files

DOCS = ROOT / "docs"


def test_a_page_names_the_run_behind_its_figures_and_offers_its_files():
    page = (DOCS / "kernels" / "saxpy.md").read_text()
    out = provenance(page, DOCS, "kernels/saxpy.md")
    doc = json.loads((DOCS / "data" / "saxpy-h200.json").read_text())
    gpu, date, commit = doc["system"]["gpus"][0]["name"], doc["system"]["date"][:10], doc["code"]["commit"][:7]
    assert f"`data/saxpy-h200.json`: {gpu}, {date}, commit `{commit}`" in out
    assert "[saxpy_numba_cuda.py](../snippets/saxpy/saxpy_numba_cuda.py)" in out


def test_a_dirty_tree_is_said_and_a_page_without_figures_or_files_gets_nothing(tmp_path):
    (tmp_path / "data").mkdir()
    doc = json.loads((DOCS / "data" / "saxpy-h200.json").read_text())
    doc["code"]["dirty"] = True
    (tmp_path / "data" / "r.json").write_text(json.dumps(doc))
    out = provenance("<!-- render saxpy_table path=data/r.json -->", tmp_path, "x.md")
    assert "(uncommitted changes)" in out
    assert provenance("# Just words\n", tmp_path, "x.md") == ""


def test_every_page_with_a_results_file_or_a_snippet_gets_a_closing_line():
    import re

    def measured(text: str) -> bool:
        return any('"gpu-survival-toolkit/results/' in (DOCS / rel).read_text()[:200]
                   for rel in re.findall(r"\bpath=(data/[\w.-]+\.json)\b", text))

    for page in sorted(DOCS.rglob("*.md")):
        text = page.read_text()
        if measured(text) or shown_files(text):
            uri = str(page.relative_to(DOCS))
            assert "page-provenance" in provenance(text, DOCS, uri), uri


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


def test_a_run_records_its_topic_folder_and_the_harness_it_imported():
    import subprocess
    import sys

    # A fresh process, as a run is: what it imported is what this test expects, not what
    # other tests of this worker imported.
    proc = subprocess.run([sys.executable, "-c", "import json, sys; from bench import system; "
                           "print(json.dumps(system.source_hashes(sys.argv[1])))",
                           str(ROOT / "snippets" / "saxpy")], capture_output=True, text=True,
                          check=True, timeout=60)
    hashes = json.loads(proc.stdout)
    assert "snippets/saxpy/saxpy_numba_cuda.py" in hashes and "snippets/saxpy/saxpy.cu" in hashes
    assert "snippets/bench/system.py" in hashes  # imported by the process
    assert all(not name.startswith("snippets/mandelbrot/") for name in hashes)
    assert system.changed_sources({"sources": hashes}) == []


@pytest.mark.parametrize("rel", sorted(
    str(p.relative_to(DOCS)) for p in (DOCS / "data").glob("*.json")
    if '"gpu-survival-toolkit/results/' in p.read_text()[:200]))
def test_results_whose_code_changed_since_they_were_measured_are_said_on_their_pages(rel):
    """Every results file: the files its run executed that differ now from what it measured
    (by sha256). Each page that renders it names them; a file that records none says so."""
    doc = json.loads((DOCS / rel).read_text())
    stale = system.changed_sources(doc["code"], ROOT)
    pages = [p for p in sorted(DOCS.rglob("*.md")) if f"path={rel}" in p.read_text()]
    for page in pages:
        out = provenance(page.read_text(), DOCS, str(page.relative_to(DOCS)))
        said = out.split(f"`{rel}`")[1].split("; `data/")[0].split(";")[1:]
        if stale:
            assert "code changed since: " + ", ".join(f"`{f}`" for f in stale) in out, page
        elif stale is None:
            assert any("the code it ran is not recorded" in s for s in said), page
        else:
            assert not any("changed since" in s or "not recorded" in s for s in said), page
