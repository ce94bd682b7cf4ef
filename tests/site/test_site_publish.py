"""What publishing needs: site_url and repository links, a sitemap listing every page, a 404
page that works at any depth, a description of its own on every page, and a workflow that builds
strictly and deploys to GitHub Pages. These read the built files; no browser needed."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from html import unescape
from urllib.parse import urlsplit

import yaml

from conftest import ROOT
from sitecheck import content_pages, label, mkdocs_config, page_file, site_url

WORKFLOW = ROOT / ".github" / "workflows" / "publish.yml"
META = re.compile(r'<meta\s+name="description"\s+content="([^"]*)"')


def test_site_url_is_unset_or_a_real_address():
    """Unset until the address is known (mkdocs.yml); once set, an https address ending in /.
    A made-up owner is caught in the built files by test_site_placeholders."""
    assert not site_url() or (urlsplit(site_url()).scheme == "https" and site_url().endswith("/"))


def test_every_page_links_to_the_repository_when_one_is_named(built_site):
    """A repository link in extra.social (none until its address is known: see mkdocs.yml)
    must reach every page's footer."""
    links = [s["link"] for s in (mkdocs_config().get("extra") or {}).get("social", [])
             if "github.com" in s["link"]]
    for repo in links:
        missing = [label(p) for p in content_pages(built_site)
                   if f'href="{repo}"' not in page_file(built_site, p).read_text()]
        assert not missing, repo


def test_sitemap_lists_every_page_once_the_address_is_known(built_site):
    """With site_url, every page at its address; without, no address at all (MkDocs writes an
    empty urlset rather than guess one)."""
    root = ET.parse(built_site / "sitemap.xml").getroot()
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    listed = {loc.text for loc in root.findall("s:url/s:loc", ns)}
    expected = {site_url() + p for p in content_pages(built_site)} if site_url() else set()
    assert listed == expected


def test_canonical_urls_only_with_a_known_address(built_site):
    """Each page's canonical link is its address under site_url; none when site_url is unset."""
    wrong = []
    for p in content_pages(built_site):
        found = re.findall(r'<link rel="canonical" href="([^"]*)">', page_file(built_site, p).read_text())
        if found != ([site_url() + p] if site_url() else []):
            wrong.append((label(p), found))
    assert not wrong


def test_every_page_has_its_own_description(built_site):
    """Search engines and link previews show it; the site-wide default says nothing about a
    page. Set it with `description:` in the page's front matter (a notebook: in its metadata)."""
    default = " ".join(mkdocs_config()["site_description"].split())
    problems = {}
    for path in content_pages(built_site):
        found = META.findall(page_file(built_site, path).read_text())
        text = " ".join(unescape(found[0]).split()) if found else ""
        if not text:
            problems[label(path)] = "no description"
        elif text == default:
            problems[label(path)] = "only the site-wide description"
    assert not problems


def test_404_page_works_at_any_depth(built_site):
    page = (built_site / "404.html").read_text()
    assert "404" in page
    prefix = urlsplit(site_url()).path or "/"  # unset: links start at the server's root
    # GitHub Pages serves 404.html for any missing path, so its links must be absolute.
    assets = re.findall(r'<link rel="stylesheet" href="([^"]+)"', page)
    assert assets and all(href.startswith(prefix) for href in assets), assets


def test_publish_workflow_builds_strictly_and_deploys_to_pages():
    workflow = yaml.safe_load(WORKFLOW.read_text())
    steps = [s for job in workflow["jobs"].values() for s in job.get("steps", [])]
    uses = [s.get("uses", "").split("@")[0] for s in steps]
    assert "actions/upload-pages-artifact" in uses and "actions/deploy-pages" in uses
    runs = "\n".join(s.get("run", "") for s in steps)
    assert "make build" in runs
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^build:.*\n\t.*mkdocs build --strict", makefile, re.M)
    assert {"pages": "write", "id-token": "write"}.items() <= workflow["permissions"].items()
    upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-pages"))
    site_dir = mkdocs_config().get("site_dir", "site")
    assert upload["with"]["path"] == site_dir
    if True in workflow:  # YAML 1.1 reads the key `on` as True
        workflow["on"] = workflow.pop(True)
    assert "main" in workflow["on"]["push"]["branches"]
