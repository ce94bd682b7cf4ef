"""MkDocs hook: keep diagram source and long listings out of the search index.

Material's search indexes every text node of a page, so a search for a term used in a diagram
or a 200-line listing previewed raw Mermaid or a whole file, and a page that merely lists a term
in code ranked with the page about it. Elements marked `data-search-exclude` are skipped by
Material's search plugin; this marks each Mermaid block and each code block longer than
MAX_INDEXED_LINES lines. Short code (a command, a one-line error message) stays searchable.
"""

from __future__ import annotations

import re

MAX_INDEXED_LINES = 12

_MERMAID = re.compile(r'<(pre|div) class="mermaid"')
_HIGHLIGHT = re.compile(r'<div class="(language-\w+ )?highlight"(.*?)</div>', re.S)


def _mark_long_listing(match: re.Match) -> str:
    block = match.group(0)
    if block.count("\n") <= MAX_INDEXED_LINES:
        return block
    return block.replace('highlight"', 'highlight" data-search-exclude', 1)


def mark(html: str) -> str:
    html = _MERMAID.sub(lambda m: f'<{m.group(1)} class="mermaid" data-search-exclude', html)
    return _HIGHLIGHT.sub(_mark_long_listing, html)


def on_page_content(html, page, config, files):  # noqa: ARG001 - MkDocs hook signature
    return mark(html)
