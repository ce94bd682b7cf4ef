"""Every page that renders measurements says where and when they were measured (GPU, date,
commit, from each results file it renders), and offers each file it shows as a download
served with the site (hooks/render_data.py's on_files, renderers.page.provenance)."""

from __future__ import annotations

import json

import pytest

from helpers import ROOT
from renderers.page import changed_since, provenance, shown_files

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


def test_results_whose_code_changed_since_they_were_measured_are_listed_and_said():
    """Each results file: the files its run executed (topic folder, timing harness) that differ
    now from the commit it recorded. The page's closing line names them."""
    head = __import__("subprocess").run(["git", "-C", str(ROOT), "rev-parse", "HEAD"],
                                        capture_output=True, text=True).stdout.strip()
    if not head:
        pytest.skip("not a git checkout")
    assert changed_since(head, "saxpy", ROOT) == []  # nothing changed since HEAD (committed)
    old = changed_since("fc668b2", "saxpy", ROOT)  # before the structure step
    assert old and "snippets/saxpy/saxpy_numba_cuda.py" in old
    assert changed_since("0" * 40, "saxpy", ROOT) is None  # a commit this checkout lacks
    page = (DOCS / "kernels" / "saxpy.md").read_text()
    doc = json.loads((DOCS / "data" / "saxpy-h200.json").read_text())
    stale = changed_since(doc["code"]["commit"], "saxpy", ROOT)
    out = provenance(page, DOCS, "kernels/saxpy.md")
    if stale:
        assert "code changed since: " + ", ".join(f"`{f}`" for f in stale) in out
    elif stale == []:
        assert "code changed since" not in out.split("data/saxpy-h200.json")[1].split(";")[0]
