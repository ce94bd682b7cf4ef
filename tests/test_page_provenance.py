"""Every page that renders measurements says where and when they were measured (GPU, date,
commit, from each results file it renders), and offers each file it shows as a download
served with the site (hooks/render_data.py's on_files, renderers.page.provenance)."""

from __future__ import annotations

import json

from helpers import ROOT
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
