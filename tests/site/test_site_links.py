"""Links of the built site: every internal link and anchor resolves; external links are listed.

Internal links and every asset a page loads are checked by LinkChecker (a maintained link
checker, `linkchecker` in the test dependencies), run against the site served on 127.0.0.1 with
external checking off. Anchors (`page/#section`) are checked by reading the built pages: LinkChecker
can check them (its AnchorCheck plugin), but it downloads and parses the whole page again for
every distinct `page#anchor`, measured here at about 0.45 s of CPU each, several minutes for the
site's few hundred table-of-contents links. External links are written to one report,
build/site-checks/external-links.tsv, and must use https; nothing is fetched from the network.
"""

from __future__ import annotations

import csv
import io
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import pytest

from conftest import ROOT
from sitecheck import label, page_file, page_paths, serve, site_server  # noqa: F401

REPORT = ROOT / "build" / "site-checks" / "external-links.tsv"
ALLOWED_EXTERNAL_SCHEMES = {"https", "mailto"}
LINKCHECKER_CONFIG = """\
[checking]
threads=4
# Faster than LinkChecker's default throttle (about 3 requests a second to one host): allowed
# because the test server answers with a "LinkChecker" header.
maxrequestspersecond=200
"""


def linkchecker_command() -> list[str]:
    beside = Path(sys.executable).parent / "linkchecker"
    found = str(beside) if beside.is_file() else shutil.which("linkchecker")
    if found is None:
        pytest.skip("linkchecker is not installed (it is in the test dependencies)")
    return [found]


def run_linkchecker(urls: list[str], tmp_path: Path) -> list[dict]:
    """Check `urls` and everything they link to on the same host; one dict per URL checked."""
    config = tmp_path / "linkcheckerrc"
    config.write_text(LINKCHECKER_CONFIG)
    config.chmod(0o644)
    cmd = [*linkchecker_command(), "--config", str(config), "--no-status", "--no-robots",
           "--verbose", "--output", "csv", "--ignore-url", "^data:", *urls]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    if proc.returncode not in (0, 1):  # 1: broken links found
        pytest.fail(f"linkchecker failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    body = "\n".join(line for line in proc.stdout.splitlines() if not line.startswith("#"))
    csv.field_size_limit(sys.maxsize)  # charts are inline data: URLs, listed though ignored
    rows = list(csv.DictReader(io.StringIO(body), delimiter=";"))
    assert rows, f"linkchecker reported nothing:\n{proc.stderr[-2000:]}"
    return rows


def broken(rows: list[dict]) -> list[str]:
    return [f"{r['url'] or r['urlname']} on {r['parentname'] or '(start)'}: {r['result']}"
            for r in rows if r["valid"] != "True"]


def external(rows: list[dict]) -> list[tuple[str, str]]:
    """(url, page it is on) for each link LinkChecker left unchecked as outside the site."""
    return sorted({(r["url"] or r["urlname"], r["parentname"]) for r in rows
                   if "outside of the domain filter" in r["infostring"]
                   and not (r["url"] or r["urlname"]).startswith("data:")})


class _Anchors(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.links = set(), []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for name in ("id", "name"):
            if attrs.get(name):
                self.ids.add(attrs[name])
        if tag in ("a", "area") and attrs.get("href"):
            self.links.append(attrs["href"])


def broken_anchors(site: Path, prefix: str = "/") -> list[str]:
    """Links to `page#fragment` within the site whose page has no element with that id."""
    base = "http://site.invalid" + prefix
    parsed = {}
    for path in page_paths(site):
        parser = _Anchors()
        parser.feed(page_file(site, path).read_text(encoding="utf-8"))
        parsed[path] = parser
    problems = []
    for path, parser in parsed.items():
        for href in parser.links:
            url = urlsplit(urljoin(base + path, href))
            if url.netloc != "site.invalid" or not url.fragment:
                continue
            target = url.path.removeprefix(prefix)
            if target.endswith("index.html"):
                target = target.removesuffix("index.html")
            if target not in parsed:
                continue  # not a page (a file, or a missing page LinkChecker reports)
            if unquote(url.fragment) not in parsed[target].ids:
                problems.append(f"{label(path)}: {href}")
    return problems


def test_internal_links_and_assets_resolve(site_server, tmp_path):
    rows = run_linkchecker([site_server.url(p) for p in page_paths(site_server.root)], tmp_path)
    checked = [r for r in rows if r["valid"] == "True" and "200" in r["result"]]
    assert len(checked) >= len(page_paths(site_server.root))  # it really crawled
    assert not broken(rows)
    write_external_report(external(rows), site_server)


def write_external_report(links, server) -> None:
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    lines = ["url\tscheme\ton page"]
    for url, parent in links:
        lines.append(f"{url}\t{urlsplit(url).scheme}\t{parent.removeprefix(server.base) or '/'}")
    REPORT.write_text("\n".join(lines) + "\n")


def test_external_links_use_https(site_server, tmp_path):
    if not REPORT.is_file():
        test_internal_links_and_assets_resolve(site_server, tmp_path)
    rows = [line.split("\t") for line in REPORT.read_text().splitlines()[1:]]
    insecure = [f"{url} on {page}" for url, scheme, page in rows
                if scheme not in ALLOWED_EXTERNAL_SCHEMES]
    assert not insecure, f"external links must use https (listed in {REPORT})"


def test_every_anchor_resolves(site_server):
    assert not broken_anchors(site_server.root, site_server.prefix)


def test_the_link_checks_catch_broken_links(tmp_path):
    site = tmp_path / "site"
    (site / "b").mkdir(parents=True)
    (site / "index.html").write_text(
        '<a href="b/#there">ok</a> <a href="b/#nowhere">bad anchor</a> '
        '<a href="missing/">missing page</a> <a href="http://example.invalid/">insecure</a>')
    (site / "b" / "index.html").write_text('<h2 id="there">There</h2>')
    server, httpd = serve(site)
    try:
        rows = run_linkchecker([server.url("")], tmp_path)
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert [b for b in broken(rows) if "missing/" in b]
    assert [u for u, _ in external(rows)] == ["http://example.invalid/"]
    assert broken_anchors(site) == ["(home): b/#nowhere"]
