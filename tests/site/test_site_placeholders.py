"""No placeholder text in the built pages: no `<this repository>`-style stand-in for a name
the project does not know yet, no link (<a href>, src) to the placeholder owner of `site_url`,
no example.com address, no TODO or lorem ipsum. Reads the built HTML; the last test proves the
check fires on each kind."""

from __future__ import annotations

import re
from html import unescape

from sitecheck import label, page_file, page_paths

# A stand-in in angle brackets for a repository, its owner or its address (as text in a page:
# `git clone <this repository>`); templates such as `<topic>/<file>.py` are not placeholders.
ANGLE = re.compile(r"<\s*(?:this|your|the|our)?[ _-]*(?:repo(?:sitory)?|owner|org(?:anisation|anization)?|"
                   r"user(?:name)?|project)[ _-]*(?:url|name|address)?\s*>", re.I)
# Addresses that lead nowhere: the placeholder owner, reserved example domains.
# Links a reader follows or loads (<a href>, src); the canonical <link> and the sitemap carry
# site_url, the address the site is to be published at (mkdocs.yml), and are not checked here.
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
