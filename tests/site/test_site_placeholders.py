"""No placeholder text in the built site: no `<this repository>`-style stand-in for a name the
project does not know yet, no link (<a href>, src) to an example.com address, no TODO or lorem
ipsum, and the made-up owner `gpu-survival-toolkit` of an earlier `site_url` nowhere in any
built file (pages, sitemap, search index). The last tests prove each check fires."""

from __future__ import annotations

import re
from html import unescape

from sitecheck import label, page_file, page_paths

# A stand-in in angle brackets for a repository, its owner or its address (as text in a page:
# `git clone <this repository>`); templates such as `<topic>/<file>.py` are not placeholders.
ANGLE = re.compile(r"<\s*(?:this|your|the|our)?[ _-]*(?:repo(?:sitory)?|owner|org(?:anisation|anization)?|"
                   r"user(?:name)?|project)[ _-]*(?:url|name|address)?\s*>", re.I)
# Links a reader follows or loads (<a href>, src) to addresses that lead nowhere.
FAKE_URL = re.compile(r"""(?:<a\b[^>]*?\bhref|\bsrc)\s*=\s*["'](https?://(?:[^"'/]*\.)?(?:example\.(?:com|org|net)|"""
                      r"""github\.com/gpu-survival-toolkit|gpu-survival-toolkit\.github\.io)[^"']*)""", re.I)
WORDS = re.compile(r"\b(?:TODO|TBD|FIXME|XXX|lorem ipsum)\b")
TAG = re.compile(r"<[^>]+>")


def placeholders(html: str) -> list[str]:
    """What in one built page is placeholder text or a link that leads nowhere."""
    found = [m.group(1) for m in FAKE_URL.finditer(html)]
    body = re.sub(r"<script\b.*?</script>", " ", html, flags=re.S | re.I)
    text = unescape(TAG.sub(" ", body))
    found += [m.group(0) for m in ANGLE.finditer(text)]
    found += [m.group(0) for m in WORDS.finditer(text)]
    return found


# The placeholder owner's addresses, anywhere in any built text file (canonical links, sitemap).
FAKE_HOST = re.compile(r"gpu-survival-toolkit\.github\.io|github\.com/gpu-survival-toolkit", re.I)
TEXT_FILES = {".html", ".xml", ".json", ".js", ".txt"}


def fake_hosts(site) -> dict[str, list[str]]:
    found = {}
    for f in site.rglob("*"):
        if f.suffix in TEXT_FILES and f.is_file():
            hits = FAKE_HOST.findall(f.read_text(errors="replace"))
            if hits:
                found[f.relative_to(site).as_posix()] = sorted(set(hits))
    return found


def test_no_built_file_names_the_placeholder_owner(built_site):
    assert not fake_hosts(built_site)


def test_the_owner_check_fires(tmp_path):
    (tmp_path / "sitemap.xml").write_text(
        "<urlset><url><loc>https://gpu-survival-toolkit.github.io/gpu-survival-toolkit/</loc></url></urlset>")
    (tmp_path / "ok.html").write_text('<a href="../x/">x</a>')
    assert list(fake_hosts(tmp_path)) == ["sitemap.xml"]


def test_no_page_holds_a_placeholder(built_site):
    bad = {label(p): placeholders(page_file(built_site, p).read_text())
           for p in page_paths(built_site)}
    assert not {p: f for p, f in bad.items() if f}


def test_the_placeholder_check_fires():
    page = ('<p>Run <code>git clone &lt;this repository&gt; &amp;&amp; make</code></p>'
            '<a href="https://github.com/gpu-survival-toolkit/gpu-survival-toolkit">source</a>'
            '<a href="https://www.example.com/x">x</a><p>TODO: write this</p>'
            '<p>clone &lt;repo-url&gt; first</p>')
    found = placeholders(page)
    assert "<this repository>" in found and "<repo-url>" in found and "TODO" in found
    assert any("github.com/gpu-survival-toolkit" in f for f in found)
    assert any("example.com" in f for f in found)
    ok = '<p>python snippets/&lt;topic&gt;/&lt;file&gt;.py --help</p><a href="../x/">x</a>'
    assert placeholders(ok) == []
