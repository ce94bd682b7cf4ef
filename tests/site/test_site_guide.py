"""The site as a guide (issue 42): pages a reader finishes, a path from the home page to a running
kernel, every file a page asks for one click away, and no research notes in what a reader reads.

Each page's height and the searches are checked in test_site_browser.py, from the visits and the
search session it makes anyway (a second module using them could run on another xdist worker and
visit every page again); this file reads the built files, or makes one page load.
"""

from __future__ import annotations

import re
from html import unescape
from urllib.parse import urljoin, urlsplit

import pytest
import yaml

from conftest import ROOT
from sitecheck import (  # noqa: F401 - fixtures are used by name
    WIDE_VIEWPORT, browser, chromium_path, content_pages, label, new_context, page_file,
    site_server,
)

FIRST_KERNEL = "kernels/array-addition/"
NEXT_PRESSES = 3  # "Next" from the home page reaches the first kernel within this many pages

# Notes about the research, not about the subject: where something could not be read, when it
# was searched for, what this build does not know.
RESEARCH_NOTES = re.compile(
    r"(?:readable|reachable|found|available|accessible) from here|searched again|"
    r"this build names|not readable here|not reachable here", re.I)

# The files a page asks the reader to fetch: (page, the file it must link, as a site path).
FILES = [
    ("setup/check-your-gpu/", "snippets/doctor/gpu_doctor.py"),
    ("setup/gpus-on-aws/", "data/aws-instances.csv"),
    ("kernels/mandelbrot-notebook/", "kernels/mandelbrot-notebook/mandelbrot-notebook.ipynb"),
    ("", "snippets/array_addition/vector_add_numba.py"),
]

HREF = re.compile(r'<a\b[^>]*\bhref="([^"]+)"')
NEXT = re.compile(r'<a\b[^>]*class="md-footer__link md-footer__link--next"[^>]*href="([^"]+)"|'
                  r'<a\b[^>]*href="([^"]+)"[^>]*class="md-footer__link md-footer__link--next"')


def article_text(html: str) -> str:
    """What a reader reads of a page: its article, tags and scripts dropped."""
    start = html.find('<article')
    body = html[start:html.find('</article>', start)] if start >= 0 else html
    body = re.sub(r"<(script|style)\b.*?</\1>", " ", body, flags=re.S)
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", body)).split())


def site_path(page: str, href: str) -> str:
    """An href of `page` as a path from the site's root."""
    return urlsplit(urljoin("http://site/" + page, href)).path.lstrip("/")


# ---------------------------------------------------------------- the start path


def test_next_from_home_reaches_the_first_kernel(built_site):
    page, seen = "", []
    for _ in range(NEXT_PRESSES):
        found = NEXT.search(page_file(built_site, page).read_text())
        assert found, f"{label(page)} has no Next link"
        page = site_path(page, found.group(1) or found.group(2))
        seen.append(page)
        if page == FIRST_KERNEL:
            return
    pytest.fail(f"Next from the home page goes {seen}, not to {FIRST_KERNEL}")


def test_home_first_screen_runs_a_kernel_without_a_gpu(browser, site_server):
    """The command that runs a kernel on the simulator is on the home page's first screen, as
    a page block the suite runs (a fenced `bash` block with no skip mark)."""
    source = (ROOT / "docs" / "index.md").read_text()
    command = "NUMBA_ENABLE_CUDASIM=1 python snippets/array_addition/vector_add_numba.py"
    block = re.search(r"(<!--pytest[^\n]*-->\n)?```bash\n(" + re.escape(command) + r"[^\n]*)\n```",
                      source)
    assert block and not block.group(1), "the simulator command is not a block the suite runs"
    context = new_context(browser, site_server, "light", viewport=WIDE_VIEWPORT)
    try:
        page = context.new_page()
        page.goto(site_server.url(""), wait_until="load")
        code = page.locator(".md-content pre code", has_text=command).first
        box = code.bounding_box()
        assert box and box["y"] + box["height"] <= WIDE_VIEWPORT["height"], box
    finally:
        context.close()


# ---------------------------------------------------------------- what a reader reads


def test_no_page_holds_a_research_note(built_site):
    notes = {}
    for page in content_pages(built_site):
        text = article_text(page_file(built_site, page).read_text())
        hits = [text[max(0, m.start() - 60):m.end() + 20] for m in RESEARCH_NOTES.finditer(text)]
        if hits:
            notes[label(page)] = hits
    assert not notes


def test_the_research_note_check_fires():
    html = "<article><p>The vendor's page was not readable from here (searched again 2026).</p></article>"
    assert len(RESEARCH_NOTES.findall(article_text(html))) == 2


# ---------------------------------------------------------------- files one click away


@pytest.mark.parametrize(("page", "file"), FILES, ids=[f for _, f in FILES])
def test_a_page_links_the_file_it_asks_for(built_site, page, file):
    hrefs = {site_path(page, h) for h in HREF.findall(page_file(built_site, page).read_text())}
    assert file in hrefs, f"{label(page)} does not link {file}"
    assert (built_site / file).is_file(), f"{file} is linked but not in the built site"


def test_every_shown_file_is_linked_from_its_page(built_site):
    """Each file a page includes (its lessons) is a download linked from that page."""
    from renderers.page import shown_files

    missing = {}
    for md in (ROOT / "docs").rglob("*.md"):
        rel = md.relative_to(ROOT / "docs").with_suffix("").as_posix()
        page = "" if rel == "index" else rel.removesuffix("/index") + "/"
        hrefs = {site_path(page, h) for h in HREF.findall(page_file(built_site, page).read_text())}
        lost = [f for f in shown_files(md.read_text()) if f not in hrefs or not (built_site / f).is_file()]
        if lost:
            missing[label(page)] = lost
    assert not missing


def test_the_published_build_names_its_repository_from_ci():
    """repo_url and site_url are read from the environment the publishing workflow sets, from
    GitHub's own variables: never typed."""
    text = (ROOT / "mkdocs.yml").read_text()
    assert re.search(r"^repo_url: !ENV \[REPO_URL, null\]$", text, re.M)
    assert re.search(r"^site_url: !ENV \[SITE_URL, null\]$", text, re.M)
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "publish.yml").read_text())
    steps = [s for job in workflow["jobs"].values() for s in job.get("steps", [])]
    build = next(s for s in steps if "make build" in s.get("run", ""))
    assert build["env"]["REPO_URL"] == "${{ github.server_url }}/${{ github.repository }}"
    assert build["env"]["SITE_URL"].startswith("${{ steps.pages.outputs.base_url }}")
    pages = next(i for i, s in enumerate(steps) if s.get("id") == "pages")
    assert pages < steps.index(build)  # the address is known before the build
